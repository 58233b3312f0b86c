/**
 * Secrets kept out of what providers print and store: every form of a secret (a registry login, an
 * s3Config accessSecret, the API key; see the client's `redact.ts` for the forms) becomes
 * `[redacted]`. The redaction itself is the client's, so the client's errors and the providers'
 * agree on what counts as a leak.
 */
import { REDACTED, redactText, redactValue, type Secret } from "../../client";

export { REDACTED, redactValue, type Secret };

/** `text` with every form of each secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly unknown[]): string {
  return redactText(text, secrets);
}

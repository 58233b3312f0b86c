/**
 * Secrets kept out of what providers print and store: every form of a secret (a registry login, an
 * s3Config accessSecret, the API key; see the client's `redact.ts` for the forms) becomes
 * `[redacted]`. The redaction itself is the client's, so the client's errors and the providers'
 * agree on what counts as a leak.
 */
import { REDACTED, redactText, redactValue, type Secret, secretEnvValues } from "../../client";

export { REDACTED, redactValue, type Secret };

/** `text` with every form of each secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly unknown[]): string {
  return redactText(text, secrets);
}

/** The API key as a value never to return or throw; none when it is unset or empty. */
export function apiKeySecrets(settings: { apiKey?: unknown } | undefined): string[] {
  return typeof settings?.apiKey === "string" && settings.apiKey !== "" ? [settings.apiKey] : [];
}

/**
 * Values never to return or throw outside `env`: every env value of the given argument sets (given
 * or injected by the service), and the API key. An env value that also stands in a set's plain
 * arguments is no secret of the program's: redacting it would rewrite those arguments.
 */
export function envSecretsOf(
  sets: readonly Record<string, unknown>[],
  settings: { apiKey?: string } | undefined,
): string[] {
  const values = new Set(sets.flatMap((set) => secretEnvValues(set.env)));
  const plain = sets.map((set) => {
    const { env: _env, __provider: _provider, ...rest } = set;
    return JSON.stringify(rest);
  });
  const secret = [...values].filter((value) => !plain.some((text) => text.includes(value)));
  return [...secret, ...apiKeySecrets(settings)];
}

/**
 * A service object as outputs: every field with the secrets redacted, except `env`, kept as is (the
 * engine stores it as a secret output), and the fields named in `asAnswered`, kept as the service
 * answered them: values it picks from its own vocabulary (`SECURE`, `QUEUE`, GPU and data centre
 * ids) that the next diff compares. They hold a secret only when an env value equals one by chance,
 * and redacting them then made the next preview plan a replacement. `__provider` left out.
 */
export function redactedOutsideEnv(
  record: Record<string, unknown>,
  secrets: readonly unknown[],
  asAnswered: readonly string[] = [],
): Record<string, unknown> {
  const { env, __provider: _provider, ...rest } = record;
  const clean = redactValue(rest, secrets) as Record<string, unknown>;
  for (const key of asAnswered) if (rest[key] !== undefined) clean[key] = rest[key];
  return env === undefined ? clean : { ...clean, env };
}

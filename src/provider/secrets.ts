/**
 * Keeps secrets out of what the providers hand to the Pulumi provider host. The host prints a
 * failed operation's error as `${e}: ${e.stack}` on stderr and sends `e.message` over gRPC to
 * the engine, so every error a provider operation throws goes through {@link redactError}: every
 * form of the given secrets (a registry login, an s3Config accessSecret, the API key; see
 * `client/redact.ts` for the forms) becomes `[redacted]`, and the error is rebuilt as a plain
 * `Error` without `cause` or the service's response `body`, where a service echoing the request
 * would otherwise leave a copy.
 *
 * The redaction itself is the client's (`client/redact.ts`), so the client's errors and the
 * providers' agree on what counts as a leak.
 */

import { MIN_REDACTED_LENGTH, REDACTED, redactText, redactValue, type Secret } from "../client/redact";

export { MIN_REDACTED_LENGTH, REDACTED, redactValue, type Secret };

/** `text` with every form of each secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly unknown[]): string {
  return redactText(text, secrets);
}

/**
 * A fresh plain `Error` safe to hand to the provider host: the same `name`, `message` and stack
 * with the secrets redacted, and the `code` string. A partial failure keeps `id` and
 * `properties` as they are: the engine records the resource from them, and a registry password
 * echoed there as an input must stay the real value for the next diff (keeping other secrets
 * out of them is the operation's job).
 */
export function redactError(error: unknown, secrets: readonly unknown[]): Error {
  const source = error instanceof Error ? error : new Error(String(error));
  const extra = source as { code?: unknown; id?: unknown; properties?: unknown };
  // A 401 is about what the user set: say where the key comes from.
  const hint =
    extra.code === "authentication_error" && !source.message.includes("runpod:apiKey")
      ? " Check the API key: the secret stack config runpod:apiKey, or the environment variable RUNPOD_API_KEY."
      : "";
  const fresh: Error & { code?: string; id?: unknown; properties?: unknown } = new Error(
    redact(source.message, secrets) + hint,
  );
  fresh.name = source.name;
  fresh.stack = redact(source.stack ?? `${source.name}: ${source.message}`, secrets) + hint;
  if (typeof extra.code === "string") fresh.code = extra.code;
  if (extra.id !== undefined) fresh.id = extra.id;
  if (extra.properties !== undefined) fresh.properties = extra.properties;
  return fresh;
}

/**
 * The `reasons` of a partial failure (an error with `id`): the engine prints ONLY these, joined
 * as a list (`InitError.Error()` in pkg/resource/plugin/provider_plugin.go: go-multierror's
 * "1 error occurred:\n\t* <reason>"), and records init errors only from them; with none it prints
 * "resource init failed". One entry holding the whole message reads best: the message's lines
 * (what happened, worker error, timeline, hint) stay together under one bullet.
 */
export function withReasons<E extends Error>(error: E): E & { reasons?: string[] } {
  const e = error as E & { id?: unknown; reasons?: string[] };
  if (e.id !== undefined && (!Array.isArray(e.reasons) || e.reasons.length === 0)) e.reasons = [e.message];
  return e;
}

/**
 * Runs a provider operation; whatever it throws reaches the host redacted (`redactError`: the
 * secrets become `[redacted]`, no `cause`, no response body) and, for a partial failure, with
 * `reasons` holding the redacted message ({@link withReasons}). The host sends `e.message` as the
 * gRPC status message, which the engine prints for a plain error (`resourceStateAndError`), and
 * packs `e.reasons || []` for a partial failure (`sdk/nodejs/cmd/dynamic-provider/index.ts`).
 */
export async function withProviderErrors<T>(secrets: readonly unknown[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw withReasons(redactError(error, secrets));
  }
}

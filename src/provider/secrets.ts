/**
 * Keeps secrets out of what the providers hand to the Pulumi provider host. The host prints a
 * failed operation's error as `${e}: ${e.stack}` on stderr and sends `e.message` over gRPC to
 * the engine, so every error a provider operation throws goes through {@link redactError}: the
 * given secret values (a registry password, an s3Config accessSecret) become `[redacted]`, and
 * the error is rebuilt as a plain `Error` without `cause` or the service's response `body`,
 * where a service echoing the request would otherwise leave a copy.
 */

import { MIN_REDACTED_LENGTH, REDACTED } from "../client/errors";

export { MIN_REDACTED_LENGTH, REDACTED };

/**
 * The forms worth redacting of each secret of at least `MIN_REDACTED_LENGTH` characters: as is,
 * and as it reads inside JSON text (quotes, backslashes and control characters escaped).
 */
function usable(secrets: readonly unknown[]): string[] {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (typeof s !== "string" || s.length < MIN_REDACTED_LENGTH) continue;
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  // Longest first, so a form that contains another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each secret replaced by `[redacted]`. */
export function redact(text: string, secrets: readonly unknown[]): string {
  return usable(secrets).reduce((acc, secret) => acc.split(secret).join(REDACTED), text);
}

/**
 * A fresh plain `Error` safe to hand to the provider host: the same `name`, `message` and stack
 * with the secrets redacted, and the `code` string. A partial failure keeps `id` and
 * `properties` (the engine records the resource from them; they never hold these secrets).
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

/** Runs `fn`; whatever it throws is rethrown through {@link redactError}. */
export async function withRedactedErrors<T>(secrets: readonly unknown[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw redactError(error, secrets);
  }
}

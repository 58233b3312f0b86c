/**
 * What the providers share, in one module: Pulumi's unknown sentinel, the wording of values and
 * errors in messages, and the passage every provider operation's result and error take before the
 * provider host sees them (secrets redacted, `reasons` on partial failures).
 *
 * Keeping secrets out: the host prints a failed operation's error as `${e}: ${e.stack}` on stderr
 * (which the CLI shows under the stack: an expected failure prints as `error: <message>`, with no
 * stack dump; see `printsAsOneLine`) and sends `e.message` over gRPC to the engine, so every error a provider operation throws goes
 * through {@link redactError}: every form of the given secrets (a registry login, an s3Config
 * accessSecret, the API key; see the client's `redact.ts` for the forms) becomes `[redacted]`,
 * and the error is rebuilt as a plain `Error` without `cause` or the service's response `body`,
 * where a service echoing the request would otherwise leave a copy. The redaction itself is the
 * client's, so the client's errors and the providers' agree on what counts as a leak.
 */
import { REDACTED, redactText, redactValue, type Secret } from "../client";

export { REDACTED, redactValue, type Secret };

// ---------------------------------------------------------------------------------------------
// Values not known yet
// ---------------------------------------------------------------------------------------------

/**
 * What Pulumi passes for a value not known yet (a preview, or an output of a resource not yet
 * created). Check and diff skip such values instead of judging them.
 */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when `value` is Pulumi's unknown sentinel. */
export const isUnknown = (value: unknown): boolean => value === UNKNOWN;

/** True when `value` holds Pulumi's unknown sentinel anywhere. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Wording
// ---------------------------------------------------------------------------------------------

/** A value's JSON type in words, for messages: `missing`, `null`, `an array of 2 items`, `a string`. */
export function describeType(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** Control characters: C0 (NUL..US), DEL and C1, which terminals act on (ESC starts ANSI sequences). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** As {@link CONTROL}, sparing line feed and tab (a worker's error text may be a multi-line trace). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_BUT_LF_TAB = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text the service or a worker wrote, made safe to print inside a message and to store: every
 * control character shown as its escape (`\u001b`), so an ANSI sequence cannot recolour or erase
 * the terminal and a `\n` cannot forge a line of the `pulumi up` output; then cut to `maxChars`
 * (saying how much was cut). `multiline` keeps line feeds and tabs.
 */
export function printable(text: string, maxChars: number, multiline = false): string {
  const escaped = text.replace(
    multiline ? CONTROL_BUT_LF_TAB : CONTROL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  if (escaped.length <= maxChars) return escaped;
  return `${escaped.slice(0, maxChars)}... [${escaped.length - maxChars} more characters]`;
}

/** An error's message (or the thrown value as text), for quoting inside another message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// ---------------------------------------------------------------------------------------------
// Check failures as the engine prints them
// ---------------------------------------------------------------------------------------------

/** Longest value, as JSON, a check failure may name its property for (the engine prints it whole). */
const PRINTABLE_VALUE_CHARS = 120;

/**
 * Check failures made to read well where the engine prints them. The engine prints a failure
 * with a property as `property <p> value <v> has a problem: <reason>`, `<v>` being the program's
 * value under that top-level key, whole and unredacted (`issueCheckFailures`, step_generator.go).
 * So a failure keeps its property only when that value is given, plain, short and top-level; for
 * a missing value or a nested path (both print `{<nil>}`), a secret (`secretKeys`) or a large
 * value the property is left empty and the reason names the field. (An unknown argument's
 * failure has no property in each `args.ts`: its value may be a secret the host cannot tell.)
 */
export function forEngine<F extends { property: string; reason: string }>(
  failures: readonly F[],
  news: Record<string, unknown>,
  secretKeys: readonly string[] = [],
): F[] {
  return failures.map((failure) => {
    const { property, reason } = failure;
    if (property === "") return failure;
    const top = property.split(/[.[]/)[0] as string;
    const value = news[top];
    const json = JSON.stringify(value) ?? "";
    // A missing value prints `{<nil>}`: the reason says the field is required instead.
    const given = value !== undefined && value !== null;
    const printable =
      given && top === property && !secretKeys.includes(top) && json.length <= PRINTABLE_VALUE_CHARS;
    if (printable) return failure;
    return {
      ...failure,
      property: "",
      reason: reason.includes(property) ? reason : `${property}: ${reason}`,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// What the host sees
// ---------------------------------------------------------------------------------------------

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
  if (!isProgrammingError(source)) printsAsOneLine(fresh);
  return fresh;
}

/** JavaScript's own error types for a bug in code (ours or a dependency's): their stack helps a report. */
const PROGRAMMING_ERRORS = [TypeError, ReferenceError, RangeError, SyntaxError, EvalError, URIError];
const isProgrammingError = (error: Error) => PROGRAMMING_ERRORS.some((type) => error instanceof type);

/**
 * Makes the line the provider host prints for a failed check, diff, read or delete read
 * `error: <message>` instead of a stack dump. The host writes `${e}: ${e.stack}` to its stderr
 * (sdk/nodejs/cmd/dynamic-provider/index.ts, the `catch` of `check`, `diff`, `read`, `delete`),
 * and the CLI shows every line of that under the stack in `Diagnostics:` (`newPlugin`'s `runtrace`,
 * pkg/resource/plugin/plugin.go). The message itself is what the engine prints under the
 * resource (the gRPC status message); the stack of an expected failure only buries it. Create
 * and update print nothing (`grpcResponseFromError`).
 */
function printsAsOneLine(error: Error): void {
  error.stack = error.message;
  Object.defineProperty(error, "toString", { value: () => "error", enumerable: false, configurable: true });
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

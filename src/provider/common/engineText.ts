/**
 * Text as the engine and the provider host show it: check failures made to read well where the
 * engine prints them, and the passage every provider operation's error takes before the provider
 * host sees it (secrets redacted, `reasons` on partial failures).
 *
 * Keeping secrets out: the host prints a failed operation's error as `${e}: ${e.stack}` on stderr
 * (which the CLI shows under the stack: an expected failure prints as `error: <message>`, with no
 * stack dump; see `printsAsOneLine`) and sends `e.message` over gRPC to the engine, so every error a provider operation throws goes
 * through {@link redactError}: every form of the given secrets becomes `[redacted]` (`redaction.ts`),
 * and the error is rebuilt as a plain `Error` without `cause` or the service's response `body`,
 * where a service echoing the request would otherwise leave a copy. Control characters other than
 * the message's own line feeds and tabs are escaped there too (`printable`): the last guard for
 * text the service sent; each value is also made one printable line where it enters a message
 * (`boundEntry`, the client's `describeBody`), so a CR/LF inside it cannot forge a line.
 */
import { redact } from "./redaction";
import { LISTED_AT_MOST, printable } from "./wording";

// ---------------------------------------------------------------------------------------------
// Check failures as the engine prints them
// ---------------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_IN_VALUE = /[\u0000-\u001f\u007f-\u009f]/;

/** Longest value, as JSON, a check failure may name its property for (the engine prints it whole). */
const PRINTABLE_VALUE_CHARS = 120;

/**
 * Check failures made to read well where the engine prints them. The engine prints a failure
 * with a property as `property <p> value <v> has a problem: <reason>`, `<v>` being the program's
 * value under that top-level key, whole and unredacted (`issueCheckFailures`, step_generator.go).
 * So a failure keeps its property only when that value is given, plain, short and top-level; for
 * a missing value or a nested path (both print `{<nil>}`), a secret (`secretKeys`), a large
 * value or a string with a control character (printed raw, a newline forges a line) the property is left empty and the reason names the field. (An unknown argument's
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
    // A control character (a newline, an escape) in a value printed raw would forge or recolour lines.
    const printable =
      given &&
      top === property &&
      !secretKeys.includes(top) &&
      json.length <= PRINTABLE_VALUE_CHARS &&
      !(typeof value === "string" && CONTROL_IN_VALUE.test(value));
    if (printable) return failure;
    return {
      ...failure,
      property: "",
      reason: reason.includes(property) ? reason : `${property}: ${reason}`,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Bounded text: what the service sends never makes a message unbounded
// ---------------------------------------------------------------------------------------------

/**
 * Longest message or reason, in characters, a provider operation hands to the host. The host
 * sends the message as the gRPC status message and the reasons inside the status details; a
 * client with a smaller receive limit than the service's answers (a list of 50,000 workers) would
 * lose the whole status, and with it a partial failure's id: an orphaned resource.
 */
// Room for the longest part a message has by design (a worker log tail, 8 KB) and its lines around.
export const MESSAGE_MAX_CHARS = 10_000;

/**
 * `text` cut to at most `max` characters: its head (what happened, to which resource) and its
 * tail (what to do next) kept, the middle replaced by a note of how much was left out.
 */
export function boundText(text: string, max: number = MESSAGE_MAX_CHARS): string {
  if (text.length <= max) return text;
  const note = (n: number) => `\n[... ${n} characters left out ...]\n`;
  const room = max - note(text.length).length;
  const tail = Math.floor(room / 3);
  const head = room - tail;
  return text.slice(0, head) + note(text.length - head - tail) + text.slice(text.length - tail);
}

// ---------------------------------------------------------------------------------------------
// What the host sees
// ---------------------------------------------------------------------------------------------

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
  // Lines by design are kept; every other control character (ESC, BEL, CR) a value brought is escaped.
  const shown = (text: string) =>
    boundText(printable(redact(text, secrets) + hint, Number.POSITIVE_INFINITY, true));
  const fresh: Error & { code?: string; id?: unknown; properties?: unknown } = new Error(
    shown(source.message),
  );
  fresh.name = source.name;
  fresh.stack = shown(source.stack ?? `${source.name}: ${source.message}`);
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
  // Every reason bounded, and few of them: the engine packs them all into one gRPC status.
  if (Array.isArray(e.reasons)) {
    const reasons = e.reasons
      .slice(0, LISTED_AT_MOST)
      .map((r) => boundText(printable(String(r), Number.POSITIVE_INFINITY, true)));
    const more = e.reasons.length - reasons.length;
    e.reasons = more > 0 ? [...reasons, `and ${more} more`] : reasons;
  }
  e.message = boundText(e.message);
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

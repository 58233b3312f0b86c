/**
 * The wording of values and errors inside messages: a value's type in words, text from the
 * service or a worker made safe to print, an error quoted inside another message.
 */

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

// Service-sourced lists in messages (kept free of the client, so a lookup the package root loads
// can use them without loading it).

/** How many entries of a service-sourced list a message names before "and N more". */
export const LISTED_AT_MOST = 5;

/** Longest single entry (an id, a status) a message repeats from the service, in characters. */
const ENTRY_MAX_CHARS = 80;

/** One entry the service sent, shortened to a line's worth: `abc...(1000 characters)`. */
export function boundEntry(entry: string): string {
  return entry.length <= ENTRY_MAX_CHARS
    ? entry
    : `${entry.slice(0, ENTRY_MAX_CHARS)}...(${entry.length} characters)`;
}

/** `a, b, c, d, e and 49995 more`: the first few entries of a service-sourced list, each bounded. */
export function listSome(
  entries: readonly string[],
  shown: number = LISTED_AT_MOST,
  separator = ", ",
): string {
  const named = entries.slice(0, shown).map(boundEntry);
  const more = entries.length - named.length;
  return named.join(separator) + (more > 0 ? ` and ${more} more` : "");
}

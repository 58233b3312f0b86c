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

/**
 * Text the service or a worker wrote, made safe to print inside a message and to store (control
 * characters escaped, cut to a length): the one rule, kept beside the client's errors, which use
 * it too.
 */
import { printable } from "../../client/printable";

export { printable };

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

/**
 * One entry the service sent (an id, a status, a release's origin), made one printable line
 * (control characters escaped, so a CR/LF in it cannot forge a line) and shortened to a line's
 * worth: `abc...(1000 characters)`.
 */
export function boundEntry(entry: string): string {
  const shown = printable(entry);
  return shown.length <= ENTRY_MAX_CHARS
    ? shown
    : `${shown.slice(0, ENTRY_MAX_CHARS)}...(${shown.length} characters)`;
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

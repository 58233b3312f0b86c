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
export { printable } from "../../client/printable";

/** An error's message (or the thrown value as text), for quoting inside another message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Small value helpers shared by the providers: Pulumi's unknown sentinel and the wording used
 * in field-level failures and error messages, and what every provider operation passes through
 * before the host sees it (redacted values, `reasons` of partial failures).
 */

/**
 * What Pulumi passes for a value not known yet (a preview, or an output of a resource not yet
 * created). Check and diff skip such values instead of judging them.
 */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when `value` is Pulumi's unknown sentinel. */
export const isUnknown = (value: unknown): boolean => value === UNKNOWN;

/** A value's JSON type in words, for messages: `missing`, `null`, `an array of 2 items`, `a string`. */
export function describeType(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** An error's message (or the thrown value as text), for quoting inside another message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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

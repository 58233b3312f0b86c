/**
 * Builds request paths safely: every interpolated value is percent-encoded as one path segment,
 * and values that would change the path's meaning ("", ".", "..") are rejected.
 *
 * ```ts
 * path`/status/${jobId}` // "/status/abc%2Fdef" for jobId "abc/def"
 * ```
 */
import { ValidationError } from "./errors";

/** Tagged template for request paths; throws `ValidationError` on an empty, "." or ".." parameter. */
export function path(strings: TemplateStringsArray, ...params: unknown[]): string {
  let out = strings[0] ?? "";
  for (let i = 0; i < params.length; i++) {
    out += encodeSegment(params[i]) + (strings[i + 1] ?? "");
  }
  return out;
}

/** Percent-encodes one path segment; rejects values that are not a usable id. */
export function encodeSegment(value: unknown): string {
  if (typeof value !== "string" && typeof value !== "number") {
    throw new ValidationError(
      `path parameter must be a string, got ${value === null ? "null" : typeof value}`,
    );
  }
  const text = String(value);
  if (text === "" || text === "." || text === "..") {
    throw new ValidationError(
      `path parameter must be a non-empty id other than "." and "..", got ${JSON.stringify(text)}`,
    );
  }
  return encodeURIComponent(text);
}

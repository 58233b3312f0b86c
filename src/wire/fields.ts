/**
 * What the REST v2 wire schemas share: field builders whose errors name the field, and the mark
 * of the cross-field rules the v2 document answers with 400 (rather than the schema's 422), so
 * the emulator can tell them apart ({@link isBadRequestRule}), and how a parsed query is written
 * on the wire ({@link queryToWire}) and read back ({@link queryFromWire}).
 */
import { z } from "zod";

/** `params` of an issue the v2 document answers with 400 (its other validation failures are 422s). */
export const BAD_REQUEST_RULE = { status: 400 } as const;

/** True when `issue` is one of the document's 400 rules (exactly one of gpu or cpu; CUDA set vs floor). */
export function isBadRequestRule(issue: z.core.$ZodIssue): boolean {
  return issue.code === "custom" && (issue.params as { status?: unknown } | undefined)?.status === 400;
}

/** Adds an issue at `path` that the service answers with 400 ({@link BAD_REQUEST_RULE}). */
export function badRequest(ctx: z.core.$RefinementCtx, path: string | string[], message: string): void {
  ctx.addIssue({
    code: "custom",
    path: typeof path === "string" ? [path] : path,
    params: BAD_REQUEST_RULE,
    message,
  });
}

export const str = (field: string) => z.string({ error: `${field} must be a string` });
export const nonEmpty = (field: string) => str(field).min(1, { error: `${field} must not be empty` });
export const int = (field: string) => z.int({ error: `${field} must be an integer` });
export const bool = (field: string) => z.boolean({ error: `${field} must be true or false` });
export const strings = (field: string) =>
  z.array(str(field), { error: `${field} must be an array of strings` });
export const cudaVersion = (field: string) =>
  str(field).regex(/^\d+\.\d+$/, { error: `${field} must be a CUDA version as major.minor, e.g. "12.4"` });

/** A parsed query as query-string values: lists comma-separated (`style: form`), the rest as text. */
export function queryToWire(query: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    out[key] = Array.isArray(value) ? value.join(",") : String(value);
  }
  return out;
}

/**
 * A query string's values (fastify's `request.query`) in the shape a query schema parses: each
 * present parameter as `read` gives it (a number or boolean where well formed; a malformed one
 * stays text, so the schema names it).
 */
export function queryFromWire(
  raw: Record<string, string | string[] | undefined>,
  read: (key: string, value: string | string[]) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== undefined) out[key] = read(key, value);
  return out;
}

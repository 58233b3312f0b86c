/**
 * Turns zod results into this package's errors, in one place, so the client, the providers and
 * the emulator report bad input and malformed answers the same way.
 *
 * A request error names the dotted path of the first offending field and what is allowed
 * (`policy.ttl must be at least 10000 ms`); a response error names the API path and the field.
 */
import type { z } from "zod";
import { ResponseValidationError, ValidationError } from "./errors";
import { redactEnvMaps } from "./redact";

type IssuePath = (string | number)[];

/** Dotted form of a zod path: `["policy", "ttl"]` -> `policy.ttl`, `["a", 0]` -> `a[0]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** The value at `path` inside `value`, or undefined. */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function toPath(path: readonly PropertyKey[]): IssuePath {
  return path.map((key) => (typeof key === "number" ? key : String(key)));
}

/**
 * Message of one zod issue with the field's full dotted path. Schema messages start with the
 * field's own name (`ttl must be ...`); that name is replaced by the full path (`policy.ttl must
 * be ...`). Other messages are prefixed with the path. `prefix` is prepended to the path.
 */
export function describeIssue(
  issue: z.core.$ZodIssue,
  prefix: readonly PropertyKey[] = [],
  root?: { value: unknown },
): string {
  const path: PropertyKey[] = [...prefix, ...issue.path];
  const message = issue.message;
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => formatPath([...path, k]));
    return `unknown field${keys.length > 1 ? "s" : ""} ${keys.join(", ")}: not allowed here`;
  }
  // A missing field: say so, whatever the schema's type message is.
  if (issue.code === "invalid_type" && root !== undefined && valueAt(root.value, issue.path) === undefined) {
    return path.length === 0 ? "a value is required" : `${formatPath(path)} is required`;
  }
  const dotted = formatPath(path);
  if (dotted === "") return message;
  if (message.startsWith(`${dotted} `)) return message;
  const leaf = path[path.length - 1];
  if (typeof leaf === "string" && message.startsWith(`${leaf} `)) {
    return `${dotted}${message.slice(leaf.length)}`;
  }
  return `${dotted}: ${message}`;
}

/**
 * Parses caller input strictly. On failure throws `ValidationError` whose `path` is the first
 * offending field and whose message names it; further issues are appended to the message.
 * @param what  names the call in the message, e.g. `endpoint("abc").run body`.
 * @param prefix  path of `value` inside a larger input, prepended to every reported path.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what?: string,
  prefix: readonly PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationErrorFrom(result.error, what, prefix, { value });
}

/** Builds the `ValidationError` for a failed zod parse (see `parseInput`). */
export function validationErrorFrom(
  error: z.ZodError,
  what?: string,
  prefix: readonly PropertyKey[] = [],
  root?: { value: unknown },
): ValidationError {
  const issues = error.issues;
  const first = issues[0];
  const messages = issues.slice(0, 5).map((issue) => describeIssue(issue, prefix, root));
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : "";
  const head = what ? `Invalid ${what}: ` : "";
  return new ValidationError(
    `${head}${messages.join("; ")}${more}`,
    toPath([...prefix, ...(first?.path ?? [])]),
    {
      cause: error,
    },
  );
}

/**
 * Parses a 2xx answer loosely (unknown fields pass). On failure throws `ResponseValidationError`
 * naming the request (`GET /v2/abc/status/...`) and the offending field of the body.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  body: unknown,
  where: { method: string; path: string },
): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const field = first ? formatPath(first.path) : "";
  const detail = first ? `${field === "" ? "body" : field}: ${first.message}` : "unexpected shape";
  throw new ResponseValidationError(
    `${where.method} ${where.path} answered with an unexpected body (${detail}); ` +
      "the service may have changed, or something other than the service answered",
    // The body as answered, less the values of any `env` map (tokens) in it.
    { path: first ? toPath(first.path) : [], body: redactEnvMaps(body), cause: result.error },
  );
}

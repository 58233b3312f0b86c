/**
 * Errors of the emulator's HTTP surface and how each dialect writes them:
 * - `v1` (REST v1 management) and `job` (the job interface): `application/json` `{"message": "..."}`.
 * - `v2` (REST v2 management): `application/problem+json` `{type, title, status, detail, errors?}`.
 * Both bodies are typed against the client's error schemas (`V1ErrorBody`, `V2Problem`), so the
 * emulator cannot drift from what the client parses.
 */
import { STATUS_CODES } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { describeIssue } from "../../client/validate";
import { isBadRequestRule } from "../../wire/fields";
import type { V1ErrorBody, V2Problem } from "../../wire/schemas";

/** Which interface a request belongs to, deciding its error shape and its rate-limit row. */
export type Dialect = "v1" | "v2" | "job";

/** An error carrying the HTTP status (and headers) to answer with. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: string[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** The body and content type of an error answer in `dialect`. */
export function errorPayload(
  dialect: Dialect,
  status: number,
  message: string,
  errors?: string[],
): { contentType: string; body: V2Problem | V1ErrorBody } {
  if (dialect === "v2") {
    return {
      contentType: "application/problem+json",
      body: {
        type: "about:blank",
        title: STATUS_CODES[status] ?? "Error",
        status,
        detail: message,
        ...(errors ? { errors } : {}),
      } satisfies V2Problem,
    };
  }
  return { contentType: "application/json", body: { message } satisfies V1ErrorBody };
}

/** Sends `error` in the dialect's shape. */
export function sendError(reply: FastifyReply, dialect: Dialect, error: HttpError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const { contentType, body } = errorPayload(dialect, error.statusCode, error.message, error.errors);
  return reply.code(error.statusCode).type(contentType).send(body);
}

/** Parses `value` with `schema` or throws a 400 (or `status`) naming the offending fields. */
export function parse<S extends z.ZodType>(schema: S, value: unknown, status = 400): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const messages = result.error.issues.map((issue) => describeIssue(issue, []));
  throw new HttpError(status, messages.slice(0, 5).join("; "), messages);
}

/**
 * Parses a REST v2 request part (body or query) as the document answers: 400 when only its
 * cross-field rules fail (marked in the wire schemas), else 422 "Request validation failed" with
 * the individual failures in `errors`.
 */
export function parseV2<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const status = result.error.issues.every(isBadRequestRule) ? 400 : 422;
  try {
    return parse(schema, value, status);
  } catch (err) {
    if (err instanceof HttpError && status === 422) {
      throw new HttpError(422, `Request validation failed: ${err.message}`, err.errors);
    }
    throw err;
  }
}

/** An integer query parameter, or undefined when absent; a bad one is a 400 naming it. */
export function queryInt(
  request: FastifyRequest,
  name: string,
  schema: z.ZodType<number>,
): number | undefined {
  const raw = (request.query as Record<string, string | string[] | undefined>)[name];
  if (raw === undefined || raw === "") return undefined;
  const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  const value = /^-?\d+(\.\d+)?$/.test(text ?? "") ? Number(text) : text;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new HttpError(
    400,
    issue ? describeIssue(issue, issue.message.startsWith(`${name} `) ? [] : [name]) : `${name}: invalid`,
  );
}

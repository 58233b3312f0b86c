/**
 * Errors into answers: each dialect's error shape (`errors.ts`); a closing engine is 503 with
 * Retry-After; fastify's own 4xx keep their status; anything else is a 500 that says no more.
 * Unrouted paths: v2 ones get what v2 would answer (`unservedV2.ts`), others 404.
 */
import type { FastifyInstance } from "fastify";
import { EngineClosedError } from "../jobs/engine";
import { HttpError, sendError } from "./errors";
import { dialectOf, pathOf } from "./requestPath";
import { unservedV2 } from "./unservedV2";

/** Sets the app's error and not-found handlers. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const dialect = dialectOf(request.url);
    if (error instanceof HttpError) return sendError(reply, dialect, error);
    if (error instanceof EngineClosedError) {
      return sendError(reply, dialect, new HttpError(503, error.message, undefined, { "retry-after": "1" }));
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, dialect, new HttpError(error.statusCode, error.message));
    }
    return sendError(reply, dialect, new HttpError(500, "internal error of the emulator"));
  });

  app.setNotFoundHandler((request, reply) => {
    const dialect = dialectOf(request.url);
    if (dialect === "v2") return unservedV2(request, reply);
    sendError(reply, dialect, new HttpError(404, `no such path: ${request.method} ${pathOf(request.url)}`));
  });
}

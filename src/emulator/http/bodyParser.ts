/**
 * Request bodies: JSON whatever the content type says (curl -d sends form encoding), empty is
 * undefined, malformed JSON 400; a body over the route's limit is drained (bounded) and gets 413
 * with `Connection: close`.
 */
import type { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { MB } from "../../wire/limits";
import { HttpError } from "./errors";
import { pathOf } from "./requestPath";

/** Most bytes of an oversized body read and discarded before answering 413. */
export const OVERSIZED_DRAIN_MAX_BYTES = 64 * MB;
/** Longest time spent discarding an oversized body before answering 413, ms of real time. */
export const OVERSIZED_DRAIN_MAX_MS = 10_000;

/**
 * Reads a body up to `limit` bytes. A larger one is read on and discarded, at most
 * {@link OVERSIZED_DRAIN_MAX_BYTES} and {@link OVERSIZED_DRAIN_MAX_MS}, so that the client has
 * finished sending when the 413 goes out: answering while it still writes makes Node clients see
 * `EPIPE` / `ECONNRESET` instead of the status.
 */
function readBody(payload: Readable, limit: number, declared: number): Promise<Buffer | "too large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let tooLarge = declared > limit;
    let discarded = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Buffer | "too large" | Error) => {
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onError);
      payload.removeListener("close", onClose);
      if (timer) clearTimeout(timer);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const startDraining = () => {
      tooLarge = true;
      chunks.length = 0;
      timer = setTimeout(() => finish("too large"), OVERSIZED_DRAIN_MAX_MS);
    };
    const onData = (chunk: Buffer) => {
      if (tooLarge) {
        discarded += chunk.length;
        if (discarded > OVERSIZED_DRAIN_MAX_BYTES) finish("too large");
        return;
      }
      received += chunk.length;
      if (received > limit) {
        startDraining();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(tooLarge ? "too large" : Buffer.concat(chunks));
    const onError = (err: Error) => finish(err);
    const onClose = () =>
      finish(
        tooLarge
          ? "too large"
          : new HttpError(400, "body: the client closed the connection before sending it whole"),
      );
    if (tooLarge) startDraining();
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onError);
    payload.on("close", onClose);
    payload.resume();
  });
}

/** Parses every request body as JSON, within the route's `bodyLimit` (1 MB unless the route says). */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (request, payload, done) => {
    const limit = request.routeOptions.bodyLimit ?? MB;
    const declared = Number(request.headers["content-length"] ?? 0);
    readBody(payload, limit, Number.isFinite(declared) ? declared : 0).then(
      (body) => {
        if (body === "too large") {
          done(
            new HttpError(
              413,
              `body: larger than the ${limit / MB} MB (${limit} bytes) allowed for ${request.method} ${request.routeOptions.url ?? pathOf(request.url)}`,
              undefined,
              { connection: "close" },
            ),
            undefined,
          );
          return;
        }
        const text = body.toString("utf8").trim();
        if (text === "") return done(null, undefined);
        try {
          done(null, JSON.parse(text));
        } catch (err) {
          done(new HttpError(400, `body: not valid JSON (${(err as Error).message})`), undefined);
        }
      },
      (err: Error) => done(err, undefined),
    );
  });
}

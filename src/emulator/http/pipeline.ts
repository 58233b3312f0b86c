/**
 * The request pipeline every route runs behind, in order:
 * 1. injected latency; a client that hung up meanwhile is dropped;
 * 2. auth: 401 for a wrong or missing key;
 * 3. the job interface's unknown endpoint id, or a load-balancer endpoint's: 404;
 * 4. faults decided before acting (429/503 with Retry-After, 500, reset);
 * 5. rate limits (429 + Retry-After), with `RateLimit` / `RateLimit-Policy` on REST v2 answers;
 * 6. the body: read up to the route's limit; an oversized body is drained (bounded) and gets 413
 *    with `Connection: close`; malformed JSON 400;
 * 7. the route, then faults decided after acting (a 500 over a POST that did its work, or a reset).
 * REST v2 paths the emulator does not serve get what v2 would answer (see `v2Document.ts`).
 */
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { limitedOperationFor, MB, type RateLimitRule, type RateLimitTable } from "../../wire/limits";
import { KeyChecker } from "../auth";
import type { FaultDecision, FaultInjector } from "../faults";
import { EngineClosedError, type JobEngine } from "../jobs/engine";
import type { RateLimitEnforcer } from "../rateLimit";
import { type Dialect, errorPayload, HttpError, sendError } from "./errors";
import { loadFastify } from "./loadFastify";
import { isV2ManagementPath, v2DocumentPath } from "./v2Document";

/** Rate-limit table row applied to management calls (both dialects share it). */
export const MANAGEMENT_RATE_LIMIT_ROW = "management";
/** Most bytes of an oversized body read and discarded before answering 413. */
export const OVERSIZED_DRAIN_MAX_BYTES = 64 * MB;
/** Longest time spent discarding an oversized body before answering 413, ms of real time. */
export const OVERSIZED_DRAIN_MAX_MS = 10_000;

/** What a route tells the pipeline about itself (fastify `config`). */
export interface RouteMeta {
  /** Management routes: their dialect. Job routes leave it out. */
  dialect?: "v1" | "v2";
  /** Job routes: the operation segment (`run`, `status`, ...), naming the rate-limit row. */
  op?: string;
  /** A v2 document path the emulator routes only to answer 405/501 (so no `:id` route takes it). */
  unserved?: boolean;
}

/** Dependencies of the pipeline. */
export interface PipelineDeps {
  engine: JobEngine;
  keys: KeyChecker;
  faults?: FaultInjector;
  limiter?: RateLimitEnforcer;
  rateLimits?: RateLimitTable;
  /** Counts every request seen (for `stats()`), by interface: the job API or REST management (v1, v2). */
  onRequest?: (dialect: Dialect) => void;
}

declare module "fastify" {
  interface FastifyRequest {
    emulatorFault?: FaultDecision;
  }
}

function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The dialect of a path: `/v1...` v1; `/v2/<management segment>...` v2; the rest the job interface. */
export function dialectOf(url: string): Dialect {
  const path = pathOf(url);
  if (path === "/v1" || path.startsWith("/v1/")) return "v1";
  if (isV2ManagementPath(path)) return "v2";
  return "job";
}

const WINDOW_NAMES: Record<number, string> = { 60: "minute", 3600: "hour", 86400: "day" };

/**
 * `RateLimit` / `RateLimit-Policy` as the v2 document describes them (and the client's
 * `exhaustedWindowMs` reads): one member per window, named `minute` / `hour` / `day` when it is
 * one, else by its length (`"10s"`); `r` requests remaining and `t` seconds until reset; `q` the
 * quota and `w` the window in seconds.
 */
export function rateLimitHeaders(
  rule: RateLimitRule,
  remaining: number,
  resetMs: number,
): Record<string, string> {
  const w = Math.ceil(rule.windowMs / 1000);
  const name = WINDOW_NAMES[w] ?? `${w}s`;
  return {
    RateLimit: `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetMs / 1000))}`,
    "RateLimit-Policy": `"${name}";q=${rule.requests};w=${w}`,
  };
}

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

/** The answer to a v2 document path the emulator does not serve: 501, 405 with Allow, or 404. */
function unservedV2(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = pathOf(request.url);
  const found = v2DocumentPath(path);
  if (!found) {
    return sendError(reply, "v2", new HttpError(404, `no such path: ${request.method} ${path}`));
  }
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (found.methods.includes(method)) {
    return sendError(
      reply,
      "v2",
      new HttpError(
        501,
        `${request.method} ${found.template} is in the REST v2 document but the emulator does not implement it; ` +
          "it serves /v2/registries, /v2/network-volumes, /v2/serverless (with releases, workers and worker logs), " +
          "/v2/templates and /v2/catalog",
      ),
    );
  }
  return sendError(
    reply,
    "v2",
    new HttpError(405, `${request.method} is not allowed on ${found.template}`, undefined, {
      allow: found.methods.join(", "),
    }),
  );
}

/** Routes that v2 paths which a `:id` route would otherwise take (`/v2/registries/delegations`). */
function registerUnservedV2Routes(app: FastifyInstance): void {
  const config: RouteMeta = { dialect: "v2", unserved: true };
  for (const url of ["/v2/registries/delegations", "/v2/registries/delegations/:id"]) {
    app.all(url, { config }, async (request, reply) => unservedV2(request, reply));
  }
}

/** Creates the fastify app with the pipeline in place and no service routes yet. */
export function createApp(deps: PipelineDeps): FastifyInstance {
  const { engine, keys, faults, limiter, rateLimits } = deps;
  const Fastify = loadFastify();
  const app = Fastify({
    logger: false,
    bodyLimit: 1 * MB,
    forceCloseConnections: true,
    return503OnClosing: false,
  });

  // Bodies: JSON whatever the content type says (curl -d sends form encoding); empty is undefined.
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

  app.addHook("onRequest", async (request, reply) => {
    const meta = request.routeOptions.config as RouteMeta;
    const dialect = dialectOf(request.url);
    deps.onRequest?.(dialect);
    if (faults) {
      const latency = faults.latencyMs();
      if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
    }
    // The client hung up already (say during the latency, while the request was "on the wire"):
    // nothing arrived, nothing to do, and no rate-limit slot to take, whose release would wait for
    // a `close` already past.
    if (request.raw.socket.destroyed || reply.raw.destroyed) return reply.hijack();
    // The job interface also takes a bare key; load-balancer endpoints (`/lb/...`) only `Bearer <key>`.
    const loadBalanced = pathOf(request.url).startsWith("/lb/");
    const key = KeyChecker.extract(request.headers.authorization, dialect === "job" && !loadBalanced);
    if (!keys.matches(key)) {
      reply.header("www-authenticate", "Bearer");
      return sendError(
        reply,
        dialect,
        new HttpError(401, "missing or invalid API key: send Authorization: Bearer <API key>"),
      );
    }
    const routed = meta.dialect !== undefined || meta.op !== undefined;
    // A v2 management path nothing serves: unmatched, routed only to answer 405/501, or taken by a
    // job route's endpoint id (`/v2/pods/health`). It still counts against the management limit.
    const unserved = dialect === "v2" && (!routed || meta.unserved === true || meta.dialect !== "v2");
    if (!routed && !unserved) return; // v1 or job path: 404 from the not-found handler
    const endpointId = (request.params as { endpointId?: string }).endpointId;
    if (dialect === "job" && endpointId !== undefined && !engine.has(endpointId)) {
      return sendError(reply, dialect, new HttpError(404, `endpoint ${endpointId} not found`));
    }
    if (dialect === "job" && endpointId !== undefined && engine.isLoadBalancer(endpointId)) {
      // As on the service: a load-balancer endpoint has no job interface.
      return sendError(
        reply,
        dialect,
        new HttpError(
          404,
          `endpoint ${endpointId} is a LOAD_BALANCER endpoint: it has no /v2/${endpointId}/${meta.op ?? "..."} (the job interface is for QUEUE endpoints); send HTTP requests to its requestUrls.base, /lb/${endpointId}/...`,
        ),
      );
    }
    if (faults && !faults.inactive && !unserved) {
      const decision = faults.decide(request.method);
      if (decision.kind !== "none" && decision.when === "before") {
        if (decision.kind === "reset") {
          request.raw.socket.destroy();
          return reply.hijack();
        }
        const headers = decision.kind === "500" ? undefined : { "retry-after": "1" };
        const message =
          decision.kind === "429"
            ? "too many requests (injected fault); retry after 1 s"
            : decision.kind === "503"
              ? "service unavailable (injected fault); nothing was done, retry after 1 s"
              : "internal error (injected fault)";
        return sendError(reply, dialect, new HttpError(Number(decision.kind), message, undefined, headers));
      }
      if (decision.kind !== "none") request.emulatorFault = decision;
    }
    if (limiter && rateLimits) {
      const row = dialect === "job" ? limitedOperationFor(meta.op ?? "") : MANAGEMENT_RATE_LIMIT_ROW;
      const rule = rateLimits[row];
      if (rule) {
        const admission = limiter.acquire(`${dialect === "job" ? endpointId : "management"}|${row}`, rule);
        const headers =
          dialect === "v2" ? rateLimitHeaders(rule, admission.remaining, admission.resetMs) : {};
        if (!admission.ok) {
          const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
          const what =
            admission.reason === "rate"
              ? `more than ${rule.requests} requests in ${rule.windowMs / 1000} s`
              : `more than ${rule.concurrent} requests in flight`;
          return sendError(
            reply,
            dialect,
            new HttpError(
              429,
              `rate limit of ${row} exceeded (${what}); retry after ${seconds} s`,
              undefined,
              {
                ...headers,
                "retry-after": String(seconds),
              },
            ),
          );
        }
        reply.headers(headers);
        // `close` ends every path: an answer sent (success or error), an injected reset, the client
        // leaving. The socket was open at the check above (no await since), so it has not fired yet;
        // `release` is idempotent.
        reply.raw.once("close", admission.release);
      }
    }
    if (unserved) return unservedV2(request, reply);
  });

  // Faults after acting: a 500 over a POST that did its work, or a reset before the answer. Only a
  // request that was really acted on (a success answer, < 400) gets one; a refused request (400
  // validation, 404, 413, 429 rate limit or queue full) keeps its real answer.
  app.addHook("onSend", async (request, reply, payload) => {
    const fault = request.emulatorFault;
    if (!fault || fault.kind === "none" || fault.when !== "after") return payload;
    if (reply.statusCode >= 400) return payload;
    request.emulatorFault = undefined; // apply once, even if onSend were to run again
    faults?.recordAfter(fault);
    if (fault.kind === "reset") {
      request.raw.socket.destroy();
      return payload;
    }
    const { contentType, body } = errorPayload(
      dialectOf(request.url),
      500,
      "internal error (injected fault, after the request was acted on)",
    );
    reply.code(500).type(contentType);
    return JSON.stringify(body);
  });

  registerUnservedV2Routes(app);
  return app;
}

/**
 * What every request passes before its route, in order (the `onRequest` hook), and the faults
 * applied after a route acted (the `onSend` hook):
 * 1. injected latency; a client that hung up meanwhile is dropped;
 * 2. auth: 401 for a wrong or missing key;
 * 3. the job interface's unknown endpoint id, or a load-balancer endpoint's: 404;
 * 4. faults decided before acting (429/503 with Retry-After, 500, reset);
 * 5. rate limits (429 + Retry-After), with `RateLimit` / `RateLimit-Policy` on REST v2 answers;
 * then, after the route, faults decided after acting (a 500 over a POST that did its work, or a reset).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { limitedOperationFor, type RateLimitRule, type RateLimitTable } from "../../wire/limits";
import { KeyChecker } from "../auth";
import type { FaultDecision, FaultInjector } from "../faults";
import type { JobEngine } from "../jobs/engine";
import type { RateLimitEnforcer } from "../rateLimit";
import { type Dialect, errorPayload, HttpError, sendError } from "./errors";
import { dialectOf, pathOf } from "./requestPath";
import type { RouteMeta } from "./routeMeta";
import { unservedV2 } from "./unservedV2";

/** Dependencies of the pipeline (`createApp`), which its guards use. */
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

/** Rate-limit table row applied to management calls (both dialects share it). */
export const MANAGEMENT_RATE_LIMIT_ROW = "management";

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

/** One request as the guards see it. */
interface Guarded {
  request: FastifyRequest;
  reply: FastifyReply;
  dialect: Dialect;
  meta: RouteMeta;
  /** The job interface's endpoint id, when the route has one. */
  endpointId?: string;
  /** A v2 path nothing serves: it still counts against the management limit, then gets its 405/501/404. */
  unserved: boolean;
}

/** 401 for a wrong or missing key (the job interface also takes a bare key; `/lb/...` only `Bearer <key>`). */
function authenticate(keys: KeyChecker, { request, reply, dialect }: Guarded): FastifyReply | undefined {
  const loadBalanced = pathOf(request.url).startsWith("/lb/");
  const key = KeyChecker.extract(request.headers.authorization, dialect === "job" && !loadBalanced);
  if (keys.matches(key)) return undefined;
  reply.header("www-authenticate", "Bearer");
  return sendError(
    reply,
    dialect,
    new HttpError(401, "missing or invalid API key: send Authorization: Bearer <API key>"),
  );
}

/** 404 for a job route naming an unknown endpoint, or a load-balancer endpoint (it has no job interface). */
function requireQueueEndpoint(engine: JobEngine, g: Guarded): FastifyReply | undefined {
  const { reply, dialect, endpointId, meta } = g;
  if (dialect !== "job" || endpointId === undefined) return undefined;
  if (!engine.has(endpointId)) {
    return sendError(reply, dialect, new HttpError(404, `endpoint ${endpointId} not found`));
  }
  if (!engine.isLoadBalancer(endpointId)) return undefined;
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

/** Applies a fault decided before acting; remembers one decided after acting for {@link faultAfterHook}. */
function injectFaultBefore(
  faults: FaultInjector,
  { request, reply, dialect }: Guarded,
): FastifyReply | undefined {
  const decision = faults.decide(request.method);
  if (decision.kind === "none") return undefined;
  if (decision.when !== "before") {
    request.emulatorFault = decision;
    return undefined;
  }
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

/** Takes a rate-limit slot (freed when the answer is sent or the client leaves), or answers 429. */
function admitRateLimited(deps: PipelineDeps, g: Guarded): FastifyReply | undefined {
  const { limiter, rateLimits } = deps;
  const { reply, dialect, meta, endpointId } = g;
  if (!limiter || !rateLimits) return undefined;
  const row = dialect === "job" ? limitedOperationFor(meta.op ?? "") : MANAGEMENT_RATE_LIMIT_ROW;
  const rule = rateLimits[row];
  if (!rule) return undefined;
  const admission = limiter.acquire(`${dialect === "job" ? endpointId : "management"}|${row}`, rule);
  const headers = dialect === "v2" ? rateLimitHeaders(rule, admission.remaining, admission.resetMs) : {};
  if (!admission.ok) {
    const seconds = Math.max(1, Math.ceil(admission.retryAfterMs / 1000));
    const what =
      admission.reason === "rate"
        ? `more than ${rule.requests} requests in ${rule.windowMs / 1000} s`
        : `more than ${rule.concurrent} requests in flight`;
    return sendError(
      reply,
      dialect,
      new HttpError(429, `rate limit of ${row} exceeded (${what}); retry after ${seconds} s`, undefined, {
        ...headers,
        "retry-after": String(seconds),
      }),
    );
  }
  reply.headers(headers);
  // `close` ends every path: an answer sent (success or error), an injected reset, the client
  // leaving. The socket was open when the request was checked (no await since), so it has not
  // fired yet; `release` is idempotent.
  reply.raw.once("close", admission.release);
  return undefined;
}

/** The `onRequest` hook: the guards above, in order; the first that answers ends the request. */
export function requestGuardHook(deps: PipelineDeps) {
  const { engine, keys, faults } = deps;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
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
    const routed = meta.dialect !== undefined || meta.op !== undefined;
    // A v2 management path nothing serves: unmatched, routed only to answer 405/501, or taken by a
    // job route's endpoint id (`/v2/pods/health`). It still counts against the management limit.
    const unserved = dialect === "v2" && (!routed || meta.unserved === true || meta.dialect !== "v2");
    const endpointId = (request.params as { endpointId?: string }).endpointId;
    const g: Guarded = { request, reply, dialect, meta, endpointId, unserved };
    const denied = authenticate(keys, g);
    if (denied) return denied;
    if (!routed && !unserved) return undefined; // v1 or job path: 404 from the not-found handler
    const answered =
      requireQueueEndpoint(engine, g) ??
      (faults && !faults.inactive && !unserved ? injectFaultBefore(faults, g) : undefined) ??
      admitRateLimited(deps, g);
    if (answered) return answered;
    if (unserved) return unservedV2(request, reply);
    return undefined;
  };
}

/**
 * The `onSend` hook: a fault decided after acting. Only a request that was really acted on (a
 * success answer, < 400) gets one; a refused request (400 validation, 404, 413, 429 rate limit or
 * queue full) keeps its real answer.
 */
export function faultAfterHook(faults: FaultInjector | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
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
  };
}

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
 *
 * The parts: `guards.ts` (steps 1-5 and the faults after acting), `bodyParser.ts` (6),
 * `errorHandling.ts` (errors and unrouted paths into answers), `unservedV2.ts`; what a route tells
 * the pipeline: `routeMeta.ts`. Routes are registered by `server.ts`, one call per interface.
 */
import type { FastifyInstance } from "fastify";
import { MB } from "../../wire/limits";
import { installJsonBodyParser } from "./bodyParser";
import { installErrorHandlers } from "./errorHandling";
import { faultAfterHook, type PipelineDeps, requestGuardHook } from "./guards";
import { loadFastify } from "./loadFastify";

export { OVERSIZED_DRAIN_MAX_BYTES, OVERSIZED_DRAIN_MAX_MS } from "./bodyParser";
export { MANAGEMENT_RATE_LIMIT_ROW, type PipelineDeps, rateLimitHeaders } from "./guards";
export { dialectOf } from "./requestPath";

/** Creates the fastify app with the pipeline in place and no service routes yet. */
export function createApp(deps: PipelineDeps): FastifyInstance {
  const Fastify = loadFastify();
  const app = Fastify({
    logger: false,
    bodyLimit: 1 * MB,
    forceCloseConnections: true,
    return503OnClosing: false,
  });
  installJsonBodyParser(app);
  installErrorHandlers(app);
  app.addHook("onRequest", requestGuardHook(deps));
  app.addHook("onSend", faultAfterHook(deps.faults));
  return app;
}

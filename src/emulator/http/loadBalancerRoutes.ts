/**
 * Load-balancer endpoints (`type: "LOAD_BALANCER"`): every request under
 * `<origin>/lb/<endpointId>/...` (the endpoint's `requestUrls.base`; the service serves them at
 * `https://<id>.api.runpod.ai`) goes to one of its ready workers, which run the built-in model
 * server (`jobs/builtinServer.ts`). The pipeline has already checked the key (`Authorization:
 * Bearer <key>`, 401 otherwise); faults and rate limits do not apply here.
 *
 * - Unknown id (or a queue endpoint's): 404 `{"error": "no load-balancer endpoint <id>"}`.
 * - Health, `GET <HEALTH_CHECK_PATH of the current release, else /ping>`, answered by the load
 *   balancer from the workers' states: 200 `{"status":"healthy"}` when a worker is ready; 204 while
 *   none is ready and one initializes (a cold worker is started when none is); 503 `{"error"}`
 *   when none is ready nor can become ready (every worker unhealthy, `workers.max` 0).
 * - Any other request waits for a ready worker (warming a cold one), up to the emulator's
 *   `loadBalancerRequestWaitMs` of its clock, then 503 `{"error":"no worker became ready within
 *   <n> ms ..."}`; when no worker can become ready at all it answers that 503 at once.
 * - On the worker, the release's env decides as for queue jobs: `RUNPOD_EMULATOR_LATENCY_MS=<n>`
 *   delays the answer n ms of the emulator clock; `RUNPOD_EMULATOR_FAIL=<text>` answers 500
 *   `{"error": "<text>"}` (and logs `error: <text>`). Every served request is one line of the
 *   worker's container log: `POST /v1/chat/completions 200`.
 * - An answer of the built-in server that is an event stream (a completion with `"stream": true`)
 *   goes out as `text/event-stream`.
 * - No header names the worker or version: a client reads `/v2/serverless/<id>/workers`.
 */
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../clock";
import { builtinServerAnswer, sseFrames } from "../jobs/builtinServer";
import { sleep } from "../jobs/builtinWorker";
import { type JobEngine, MISBEHAVE_ENV } from "../jobs/engine";
import type { ServerlessStore } from "../serverless";
import { clientGone } from "./jobRoutes";

/** Path prefix of the load-balancer endpoints: `<origin>/lb/<endpointId>`. */
export const LOAD_BALANCER_PREFIX = "/lb";

/** Dependencies of the load-balancer routes. */
export interface LoadBalancerDeps {
  engine: JobEngine;
  serverless: ServerlessStore;
  clock: Clock;
  /** How long a request waits for a ready worker, ms of `clock`. */
  requestWaitMs: number;
}

/** The endpoint id and the path under its base of a `/lb/<id>/...` URL (query left out). */
function splitUrl(url: string): { path: string } {
  const q = url.indexOf("?");
  const full = q === -1 ? url : url.slice(0, q);
  const rest = full.slice(LOAD_BALANCER_PREFIX.length + 1); // "<id>/..."
  const slash = rest.indexOf("/");
  return { path: slash === -1 ? "/" : rest.slice(slash) };
}

/**
 * Answers with `events` as an OpenAI server-sent event stream (`text/event-stream`, one
 * `data: <json>` event each, then `data: [DONE]`), written frame by frame.
 */
export function sendEventStream(reply: FastifyReply, status: number, events: readonly unknown[]) {
  return reply
    .code(status)
    .header("content-type", "text/event-stream; charset=utf-8")
    .header("cache-control", "no-cache")
    .send(Readable.from(sseFrames(events)));
}

export function registerLoadBalancerRoutes(app: FastifyInstance, deps: LoadBalancerDeps): void {
  const { engine, serverless, clock, requestWaitMs } = deps;

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id: string };
    const lb = serverless.loadBalancer(id);
    if (!lb) return reply.code(404).send({ error: `no load-balancer endpoint ${id}` });
    const { path } = splitUrl(request.url);
    const method = request.method;

    if ((method === "GET" || method === "HEAD") && path === lb.healthPath) {
      const health = engine.lbHealth(id);
      if (health.state === "ready") return reply.code(200).send({ status: "healthy" });
      if (health.state === "starting") return reply.code(204).send();
      return reply.code(503).send({ error: health.reason });
    }

    const gone = clientGone(reply);
    const served = await engine.lbWorker(id, requestWaitMs, gone);
    if ("timedOut" in served) {
      return reply.code(503).send({
        error: `no worker became ready within ${requestWaitMs} ms (the emulator's loadBalancerRequestWaitMs)`,
      });
    }
    if ("unavailable" in served) {
      return reply.code(503).send({ error: `no worker can serve this request: ${served.unavailable}` });
    }
    const { worker } = served;
    const env = worker.release.env;
    const latency = Number(env[MISBEHAVE_ENV.latencyMs] ?? 0);
    if (Number.isFinite(latency) && latency > 0) {
      try {
        await sleep(clock, latency, gone);
      } catch {
        worker.done();
        return reply.hijack(); // the client went away meanwhile
      }
    }
    let status: number;
    let body: unknown;
    let events: unknown[] | undefined;
    const fail = env[MISBEHAVE_ENV.fail];
    if (fail !== undefined) {
      const message = fail || "handler failed";
      engine.logRequest(worker.id, `${MISBEHAVE_ENV.fail} is set: this release fails every request`);
      engine.logRequest(worker.id, `error: ${message}`);
      status = 500;
      body = { error: message };
    } else {
      ({ status, body, events } = builtinServerAnswer(
        {
          method,
          path,
          query: { ...(request.query as Record<string, unknown>) },
          headers: request.headers,
          body: request.body ?? null,
        },
        env,
        clock.now(),
      ));
    }
    engine.logRequest(worker.id, `${method} ${path} ${status}`);
    worker.done(); // after its log line: a worker leaving once it is done closes its log
    if (events) return sendEventStream(reply, status, events);
    return reply.code(status).send(body);
  };

  app.register(async (scope) => {
    // Bodies are the worker's business: JSON when they parse, else null (never a 400 here).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, raw, done) => {
      const text = (raw as Buffer).toString("utf8").trim();
      if (text === "") return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(null, undefined);
      }
    });
    scope.all(`${LOAD_BALANCER_PREFIX}/:id`, handle);
    scope.all(`${LOAD_BALANCER_PREFIX}/:id/*`, handle);
  });
}

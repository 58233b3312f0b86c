/**
 * The emulator's HTTP surface (fastify), one port for everything:
 * - `/v1/...`: REST v1 management, errors `{"message": "..."}`.
 * - `/v2/registries`, `/v2/network-volumes`: REST v2 management, errors `application/problem+json`,
 *   wrapped lists, `dataCenter`, 201 on create. These two ids are reserved: no endpoint may use them.
 * - `/v2/{endpointId}/...`: the job interface, errors `{"message": "..."}`.
 *
 * Per request, in order: injected latency, auth (401), unknown endpoint (404), faults decided
 * before acting, rate limit (429 + Retry-After), the route, then faults decided after acting.
 * Oversized bodies get 413 (what the service's gateway answers), malformed JSON 400, and a body
 * that fails its schema 400 (v2 management: 422, as its OpenAPI document states) naming the field.
 */
import { STATUS_CODES } from "node:http";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { z } from "zod";
import { describeIssue } from "../client/validate";
import {
  limitedOperationFor,
  MB,
  type RateLimitRule,
  type RateLimitTable,
  RUN_PAYLOAD_LIMIT_BYTES,
  RUNSYNC_PAYLOAD_LIMIT_BYTES,
  SYNC_WAIT_DEFAULT_MS,
} from "../wire/limits";
import {
  ContainerRegistryAuthCreateInputSchema,
  isTerminalStatus,
  JobRequestSchema,
  NetworkVolumeCreateInputSchema,
  NetworkVolumeUpdateInputSchema,
  StatusTtlSchema,
  SyncWaitSchema,
  type V1ErrorBody,
  V2NetworkVolumeCreateInputSchema,
  V2NetworkVolumeUpdateInputSchema,
  type V2Problem,
} from "../wire/schemas";
import { KeyChecker } from "./auth";
import type { FaultDecision, FaultInjector } from "./faults";
import {
  EngineClosedError,
  type JobEngine,
  type JobRecord,
  NotRetryableError,
  QueueFullError,
} from "./jobs/engine";
import type { RateLimiter } from "./rateLimit";
import { DuplicateNameError, type ManagementStore, ShrinkError, type StoredVolume } from "./store";

/** Rate-limit table row applied to management calls when the table has one (none by default). */
export const MANAGEMENT_RATE_LIMIT_ROW = "management";

/** How long `/stream` waits for a first chunk when none is buffered, ms of the emulator clock. */
export const STREAM_WAIT_DEFAULT_MS = 10_000;

type Dialect = "v1" | "v2" | "job";

interface RouteMeta {
  dialect: Dialect;
  /** Job-interface operation segment (`run`, `status`, ...). */
  op?: string;
}

/** Dependencies of the server. */
export interface ServerDeps {
  engine: JobEngine;
  store: ManagementStore;
  keys: KeyChecker;
  faults?: FaultInjector;
  limiter?: RateLimiter;
  rateLimits?: RateLimitTable;
  /** Counts every request seen (for `stats()`). */
  onRequest?: () => void;
}

/** An error carrying the HTTP status to answer with. */
class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: string[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

declare module "fastify" {
  interface FastifyRequest {
    emulatorFault?: FaultDecision;
  }
}

function dialectOf(url: string): Dialect {
  if (url.startsWith("/v1/") || url === "/v1") return "v1";
  if (/^\/v2\/(registries|network-volumes)(\/|\?|$)/.test(url)) return "v2";
  return "job";
}

/** Renames and/or grows a volume for either dialect: 404 when absent, 400 when it would shrink. */
async function updateVolume(
  store: ManagementStore,
  id: string,
  input: Parameters<ManagementStore["updateVolume"]>[1],
) {
  try {
    const updated = await store.updateVolume(id, input);
    if (!updated) throw new HttpError(404, `network volume ${id} not found`);
    return updated;
  } catch (err) {
    if (err instanceof ShrinkError) throw new HttpError(400, err.message);
    throw err;
  }
}

/** Sends an error in the dialect's shape. */
function sendError(reply: FastifyReply, dialect: Dialect, error: HttpError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  reply.code(error.statusCode);
  if (dialect === "v2") {
    const title = STATUS_CODES[error.statusCode] ?? "Error";
    return reply.type("application/problem+json").send({
      type: "about:blank",
      title,
      status: error.statusCode,
      detail: error.message,
      ...(error.errors ? { errors: error.errors } : {}),
    } satisfies V2Problem);
  }
  return reply.type("application/json").send({ message: error.message } satisfies V1ErrorBody);
}

/** Parses `value` with `schema` or throws a 400 (or `status`) naming the offending fields. */
function parse<S extends z.ZodType>(
  schema: S,
  value: unknown,
  status = 400,
  prefix: PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const messages = result.error.issues.map((issue) => describeIssue(issue, prefix));
  throw new HttpError(status, messages.slice(0, 5).join("; "), messages);
}

/** An integer query parameter, or undefined when absent. */
function queryInt(request: FastifyRequest, name: string, schema: z.ZodType<number>): number | undefined {
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

/** Aborted when the client goes away before the answer is sent. */
function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

function rateLimitHeaders(rule: RateLimitRule, remaining: number, resetMs: number): Record<string, string> {
  const w = Math.ceil(rule.windowMs / 1000);
  return {
    RateLimit: `"default";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetMs / 1000))}`,
    "RateLimit-Policy": `"default";q=${rule.requests};w=${w}`,
  };
}

function v1Volume(v: StoredVolume) {
  return { id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenterId };
}

function v2Volume(v: StoredVolume) {
  return { id: v.id, name: v.name, size: v.size, dataCenter: v.dataCenterId, type: v.type };
}

/** v2 create body on the wire: `dataCenter` in place of the client shape's `dataCenterId`. */
const V2VolumeCreateWireSchema = V2NetworkVolumeCreateInputSchema.omit({ dataCenterId: true }).extend({
  dataCenter: z
    .string({ error: "dataCenter must be a string" })
    .min(1, { error: "dataCenter must not be empty" }),
});

/** Builds the fastify app (not listening yet). */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const { engine, store, keys, faults, limiter, rateLimits } = deps;
  const app = Fastify({
    logger: false,
    bodyLimit: 1 * MB,
    forceCloseConnections: true,
    return503OnClosing: false,
  });

  // Bodies: JSON whatever the content type says (curl -d sends form encoding); empty is undefined.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === "") return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new HttpError(400, `body: not valid JSON (${(err as Error).message})`), undefined);
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const dialect = (request.routeOptions.config as Partial<RouteMeta>).dialect ?? dialectOf(request.url);
    if (error instanceof HttpError) return sendError(reply, dialect, error);
    if (error instanceof EngineClosedError) {
      return sendError(reply, dialect, new HttpError(503, error.message, undefined, { "retry-after": "1" }));
    }
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      const limit = request.routeOptions.bodyLimit ?? MB;
      return sendError(
        reply,
        dialect,
        new HttpError(
          413,
          `body: larger than the ${limit / MB} MB (${limit} bytes) allowed for ${request.method} ${request.routeOptions.url ?? request.url}`,
        ),
      );
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, dialect, new HttpError(error.statusCode, error.message));
    }
    return sendError(reply, dialect, new HttpError(500, "internal error of the emulator"));
  });

  app.setNotFoundHandler((request, reply) => {
    sendError(
      reply,
      dialectOf(request.url),
      new HttpError(404, `no such path: ${request.method} ${request.url.split("?")[0]}`),
    );
  });

  // Latency, auth, unknown endpoint, faults before acting, rate limits.
  app.addHook("onRequest", async (request, reply) => {
    deps.onRequest?.();
    const meta = request.routeOptions.config as Partial<RouteMeta>;
    const dialect = meta.dialect ?? dialectOf(request.url);
    if (faults) {
      const latency = faults.latencyMs();
      if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
    }
    // The client hung up already (say during the latency, while the request was "on the wire"):
    // nothing arrived, nothing to do, and no rate-limit slot to take, whose release would wait for
    // a `close` already past.
    if (request.raw.socket.destroyed || reply.raw.destroyed) return reply.hijack();
    const key = KeyChecker.extract(request.headers.authorization, dialect === "job");
    if (!keys.matches(key)) {
      reply.header("www-authenticate", "Bearer");
      return sendError(
        reply,
        dialect,
        new HttpError(401, "missing or invalid API key: send Authorization: Bearer <API key>"),
      );
    }
    if (!meta.dialect) return; // unknown path: 404 from the not-found handler
    const endpointId = (request.params as { endpointId?: string }).endpointId;
    if (dialect === "job" && endpointId !== undefined && !engine.has(endpointId)) {
      return sendError(reply, dialect, new HttpError(404, `endpoint ${endpointId} not found`));
    }
    if (faults && !faults.inactive) {
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
      const rule = row ? rateLimits[row] : undefined;
      if (rule && row) {
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
    const dialect = (request.routeOptions.config as Partial<RouteMeta>).dialect ?? "job";
    reply.code(500);
    if (dialect === "v2") {
      reply.type("application/problem+json");
      return JSON.stringify({
        type: "about:blank",
        title: "Internal Server Error",
        status: 500,
        detail: "internal error (injected fault, after the request was acted on)",
      });
    }
    reply.type("application/json");
    return JSON.stringify({ message: "internal error (injected fault, after the request was acted on)" });
  });

  registerJobRoutes(app, engine);
  registerV1Routes(app, store);
  registerV2Routes(app, store);
  return app;
}

// -------------------------------------------------------------------------------------------------
// Job interface
// -------------------------------------------------------------------------------------------------

function registerJobRoutes(app: FastifyInstance, engine: JobEngine): void {
  const job = (op: string): { config: RouteMeta } => ({ config: { dialect: "job", op } });
  type P = { endpointId: string; jobId: string };

  const findJob = (request: FastifyRequest): JobRecord => {
    const { endpointId, jobId } = request.params as P;
    const found = engine.get(endpointId, jobId);
    if (!found)
      throw new HttpError(
        404,
        `job ${jobId} not found on endpoint ${endpointId} (unknown, purged, or its result expired)`,
      );
    return found;
  };

  const submit = (request: FastifyRequest, kind: "run" | "sync"): JobRecord => {
    const { endpointId } = request.params as P;
    if (request.body === undefined) throw new HttpError(400, "body: a JSON object with input is required");
    const body = parse(JobRequestSchema, request.body);
    try {
      return engine.submit(endpointId, body, kind);
    } catch (err) {
      if (err instanceof QueueFullError)
        throw new HttpError(429, err.message, undefined, { "retry-after": "1" });
      throw err;
    }
  };

  app.post("/v2/:endpointId/run", { ...job("run"), bodyLimit: RUN_PAYLOAD_LIMIT_BYTES }, async (request) => {
    const created = submit(request, "run");
    return { id: created.id, status: created.status };
  });

  app.post(
    "/v2/:endpointId/runsync",
    { ...job("runsync"), bodyLimit: RUNSYNC_PAYLOAD_LIMIT_BYTES },
    async (request, reply) => {
      const wait = queryInt(request, "wait", SyncWaitSchema) ?? SYNC_WAIT_DEFAULT_MS;
      const created = submit(request, "sync");
      await engine.waitTerminal(created, wait, clientGone(reply));
      return engine.statusBody(created);
    },
  );

  app.get("/v2/:endpointId/status/:jobId", job("status"), async (request) => {
    const ttl = queryInt(request, "ttl", StatusTtlSchema);
    const found = findJob(request);
    if (ttl !== undefined) engine.setResultTtl(found, ttl);
    return engine.statusBody(found);
  });

  const statusSync = async (request: FastifyRequest, reply: FastifyReply) => {
    const wait = queryInt(request, "wait", SyncWaitSchema) ?? SYNC_WAIT_DEFAULT_MS;
    const ttl = queryInt(request, "ttl", StatusTtlSchema);
    const found = findJob(request);
    await engine.waitTerminal(found, wait, clientGone(reply));
    if (ttl !== undefined) engine.setResultTtl(found, ttl);
    return engine.statusBody(found);
  };
  app.get("/v2/:endpointId/status-sync/:jobId", job("status-sync"), statusSync);
  app.post("/v2/:endpointId/status-sync/:jobId", job("status-sync"), statusSync);

  const stream = async (request: FastifyRequest, reply: FastifyReply) => {
    const wait = queryInt(request, "wait", z.int().min(0).max(300_000)) ?? STREAM_WAIT_DEFAULT_MS;
    const found = findJob(request);
    await engine.waitFor(
      found,
      (j) => j.chunks.length > 0 || isTerminalStatus(j.status),
      wait,
      clientGone(reply),
    );
    return { status: found.status, stream: engine.drainStream(found) };
  };
  app.get("/v2/:endpointId/stream/:jobId", job("stream"), stream);
  app.post("/v2/:endpointId/stream/:jobId", job("stream"), stream);

  app.get("/v2/:endpointId/health", job("health"), async (request) => {
    return engine.health((request.params as P).endpointId);
  });

  app.post("/v2/:endpointId/cancel/:jobId", job("cancel"), async (request) => {
    const found = engine.cancel(findJob(request));
    return { id: found.id, status: found.status };
  });

  app.post("/v2/:endpointId/retry/:jobId", job("retry"), async (request) => {
    try {
      const found = engine.retry(findJob(request));
      return { id: found.id, status: found.status };
    } catch (err) {
      if (err instanceof NotRetryableError) throw new HttpError(400, err.message);
      throw err;
    }
  });

  app.post("/v2/:endpointId/purge-queue", job("purge-queue"), async (request) => {
    return { removed: engine.purgeQueue((request.params as P).endpointId), status: "completed" };
  });
}

// -------------------------------------------------------------------------------------------------
// Management, REST v1
// -------------------------------------------------------------------------------------------------

function registerV1Routes(app: FastifyInstance, store: ManagementStore): void {
  const v1 = { config: { dialect: "v1" } satisfies RouteMeta };
  type P = { id: string };
  const body = (request: FastifyRequest) => {
    if (request.body === undefined) throw new HttpError(400, "body: a JSON object is required");
    return request.body;
  };

  app.get("/v1/containerregistryauth", v1, async () =>
    store.listRegistryAuths().map(({ id, name }) => ({ id, name })),
  );

  app.post("/v1/containerregistryauth", v1, async (request) => {
    const input = parse(ContainerRegistryAuthCreateInputSchema, body(request));
    try {
      const created = await store.createRegistryAuth(input);
      return { id: created.id, name: created.name };
    } catch (err) {
      if (err instanceof DuplicateNameError) throw new HttpError(400, err.message);
      throw err;
    }
  });

  app.get("/v1/containerregistryauth/:id", v1, async (request) => {
    const found = store.getRegistryAuth((request.params as P).id);
    if (!found) throw new HttpError(404, `container registry auth ${(request.params as P).id} not found`);
    return { id: found.id, name: found.name };
  });

  app.delete("/v1/containerregistryauth/:id", v1, async (request, reply) => {
    const id = (request.params as P).id;
    if (!(await store.deleteRegistryAuth(id)))
      throw new HttpError(404, `container registry auth ${id} not found`);
    return reply.code(204).send();
  });

  app.get("/v1/networkvolumes", v1, async () => store.listVolumes().map(v1Volume));

  app.post("/v1/networkvolumes", v1, async (request) => {
    const input = parse(NetworkVolumeCreateInputSchema, body(request));
    return v1Volume(await store.createVolume(input));
  });

  app.get("/v1/networkvolumes/:id", v1, async (request) => {
    const found = store.getVolume((request.params as P).id);
    if (!found) throw new HttpError(404, `network volume ${(request.params as P).id} not found`);
    return v1Volume(found);
  });

  const update = async (request: FastifyRequest) => {
    const id = (request.params as P).id;
    const input = parse(NetworkVolumeUpdateInputSchema, body(request));
    return v1Volume(await updateVolume(store, id, input));
  };
  app.patch("/v1/networkvolumes/:id", v1, update);
  app.post("/v1/networkvolumes/:id/update", v1, update);

  app.delete("/v1/networkvolumes/:id", v1, async (request, reply) => {
    const id = (request.params as P).id;
    if (!(await store.deleteVolume(id))) throw new HttpError(404, `network volume ${id} not found`);
    return reply.code(204).send();
  });
}

// -------------------------------------------------------------------------------------------------
// Management, REST v2
// -------------------------------------------------------------------------------------------------

function registerV2Routes(app: FastifyInstance, store: ManagementStore): void {
  const v2 = { config: { dialect: "v2" } satisfies RouteMeta };
  type P = { id: string };
  const body = (request: FastifyRequest) => {
    if (
      request.body === undefined ||
      request.body === null ||
      typeof request.body !== "object" ||
      Array.isArray(request.body)
    ) {
      throw new HttpError(400, "the request body must be a JSON object");
    }
    return request.body;
  };
  /** v2 answers schema failures with 422 and the list of failures. */
  const validate = <S extends z.ZodType>(schema: S, value: unknown) => {
    try {
      return parse(schema, value, 422);
    } catch (err) {
      if (err instanceof HttpError)
        throw new HttpError(422, `Request validation failed: ${err.message}`, err.errors);
      throw err;
    }
  };

  app.get("/v2/registries", v2, async () => ({
    registries: store.listRegistryAuths().map(({ id, name }) => ({ id, name })),
  }));

  app.post("/v2/registries", v2, async (request, reply) => {
    const input = validate(ContainerRegistryAuthCreateInputSchema, body(request));
    try {
      const created = await store.createRegistryAuth(input);
      return reply.code(201).send({ id: created.id, name: created.name });
    } catch (err) {
      if (err instanceof DuplicateNameError) throw new HttpError(400, err.message);
      throw err;
    }
  });

  app.get("/v2/registries/:id", v2, async (request) => {
    const found = store.getRegistryAuth((request.params as P).id);
    if (!found) throw new HttpError(404, `registry ${(request.params as P).id} not found`);
    return { id: found.id, name: found.name };
  });

  app.delete("/v2/registries/:id", v2, async (request, reply) => {
    const id = (request.params as P).id;
    if (!(await store.deleteRegistryAuth(id))) throw new HttpError(404, `registry ${id} not found`);
    return reply.code(204).send();
  });

  app.get("/v2/network-volumes", v2, async () => ({ networkVolumes: store.listVolumes().map(v2Volume) }));

  app.post("/v2/network-volumes", v2, async (request, reply) => {
    const input = validate(V2VolumeCreateWireSchema, body(request));
    const { dataCenter, ...rest } = input;
    return reply.code(201).send(v2Volume(await store.createVolume({ ...rest, dataCenterId: dataCenter })));
  });

  app.get("/v2/network-volumes/:id", v2, async (request) => {
    const found = store.getVolume((request.params as P).id);
    if (!found) throw new HttpError(404, `network volume ${(request.params as P).id} not found`);
    return v2Volume(found);
  });

  app.patch("/v2/network-volumes/:id", v2, async (request) => {
    const id = (request.params as P).id;
    const input = validate(V2NetworkVolumeUpdateInputSchema, body(request));
    return v2Volume(await updateVolume(store, id, input));
  });

  app.delete("/v2/network-volumes/:id", v2, async (request, reply) => {
    const id = (request.params as P).id;
    if (!(await store.deleteVolume(id))) throw new HttpError(404, `network volume ${id} not found`);
    return reply.code(204).send();
  });
}

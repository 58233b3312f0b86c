/**
 * The job interface, `/v2/{endpointId}/...`: run, runsync, status, status-sync, stream, health,
 * cancel, retry and purge-queue, over the job engine. Errors are `{"message"}`. Each route names
 * its operation (`config.op`), which the pipeline uses for the rate-limit row; the pipeline has
 * already answered 404 for an unknown endpoint id before a handler runs.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import {
  MAX_JOB_INPUT_NESTING,
  nestingDepth,
  RUN_PAYLOAD_LIMIT_BYTES,
  RUNSYNC_PAYLOAD_LIMIT_BYTES,
  SYNC_WAIT_DEFAULT_MS,
} from "../../wire/limits";
import { isTerminalStatus, JobRequestSchema, StatusTtlSchema, SyncWaitSchema } from "../../wire/schemas";
import { type JobEngine, type JobRecord, NotRetryableError, QueueFullError } from "../jobs/engine";
import { HttpError, parse, queryInt } from "./errors";
import type { RouteMeta } from "./routeMeta";

/** How long `/stream` waits for a first chunk when none is buffered, ms of the emulator clock. */
export const STREAM_WAIT_DEFAULT_MS = 10_000;

/** Aborted when the client goes away before the answer is sent. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function registerJobRoutes(app: FastifyInstance, engine: JobEngine): void {
  const job = (op: string): { config: RouteMeta } => ({ config: { op } });
  type P = { endpointId: string; jobId: string };

  const findJob = (request: FastifyRequest): JobRecord => {
    const { endpointId, jobId } = request.params as P;
    const found = engine.get(endpointId, jobId);
    if (!found && engine.retention.wasEvicted(endpointId, jobId)) {
      throw new HttpError(
        404,
        `job ${jobId} on endpoint ${endpointId}: its result was evicted early, oldest first, because the ` +
          `emulator keeps at most ${engine.retention.maxBytes} bytes of results (retention.maxBytes) and ` +
          `${engine.retention.maxJobs} finished jobs (retention.maxJobs)`,
      );
    }
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
    // Before anything recursive (validation, the worker's copy) touches it.
    if (
      nestingDepth((request.body as { input?: unknown }).input, MAX_JOB_INPUT_NESTING) > MAX_JOB_INPUT_NESTING
    ) {
      throw new HttpError(
        400,
        `input: nested more than ${MAX_JOB_INPUT_NESTING} levels deep; the emulator accepts at most ${MAX_JOB_INPUT_NESTING}`,
      );
    }
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

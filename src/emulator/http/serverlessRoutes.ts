/**
 * The sub-resources of a REST v2 serverless endpoint that are not CRUD (the CRUD is in the
 * management table): `/releases`, `/workers`, and `/workers/{workerId}/logs`, the worker's log as
 * Server-Sent Events.
 *
 * The log stream, as the v2 document describes `getWorkerLogs`:
 * - each event is `id: <ts>/<seq>` and `data: {"ts","source","line"}` (the document's example id
 *   format), with `Cache-Control: no-cache`, `Connection: keep-alive`, `X-Accel-Buffering: no`;
 * - backfill: after `Last-Event-ID` when given (one of our ids resumes after that line; a bare
 *   timestamp after that time), else from `since` (lines at or after it), else the last `tail`
 *   lines (default 100, 0..5000); `source` keeps one source;
 * - then live lines as the worker writes them. The stream ends when the worker is gone (replaced
 *   in a rollout, removed, or the emulator stops), so reading a replaced worker's log returns its
 *   whole kept log and ends.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { LOG_SOURCES, WORKER_LOG_TAIL_MAX, type WorkerLogEvent } from "../../wire/workerLogs";
import { eventId, type LogLine, parseCursor, type WorkerLogs } from "../jobs/workerLogs";
import type { ServerlessStore } from "../serverless";
import { HttpError, parse } from "./errors";
import type { RouteMeta } from "./routeMeta";

/**
 * The worker-log query as it arrives (strings): `source`, `tail` 0..5000 (default 100), `since`
 * RFC 3339. The client's typed twin of what it sends is `WorkerLogsQueryInputSchema`; this one
 * parses the query string, with the same source names and bound from the wire module.
 */
const WorkerLogQuerySchema = z.strictObject({
  source: z.enum(LOG_SOURCES, { error: "source must be container or system" }).optional(),
  tail: z.coerce
    .number({ error: `tail must be an integer 0..${WORKER_LOG_TAIL_MAX}` })
    .pipe(
      z
        .int({ error: "tail must be an integer" })
        .min(0, { error: "tail must be at least 0" })
        .max(WORKER_LOG_TAIL_MAX, { error: `tail must be at most ${WORKER_LOG_TAIL_MAX}` }),
    )
    .optional(),
  since: z.iso.datetime({ offset: true, error: "since must be an RFC 3339 date-time" }).optional(),
});

/** `tail` when the query gives none (the document's default). */
export const WORKER_LOG_TAIL_DEFAULT = 100;

export function registerServerlessRoutes(app: FastifyInstance, serverless: ServerlessStore): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  type P = { id: string; workerId?: string };
  const notFound = (id: string) => new HttpError(404, `serverless endpoint ${id} not found`);

  app.get("/v2/serverless/:id/releases", options, async (request) => {
    const { id } = request.params as P;
    const answer = serverless.releases(id);
    if (!answer) throw notFound(id);
    return answer;
  });

  app.get("/v2/serverless/:id/workers", options, async (request) => {
    const { id } = request.params as P;
    const answer = serverless.workers(id);
    if (!answer) throw notFound(id);
    return answer;
  });

  app.get("/v2/serverless/:id/workers/:workerId/logs", options, async (request, reply) => {
    const { id, workerId } = request.params as Required<P>;
    if (!serverless.workers(id)) throw notFound(id);
    if (!serverless.hasWorkerLog(id, workerId)) {
      throw new HttpError(404, `worker ${workerId} of serverless endpoint ${id} not found`);
    }
    sendLogStream(request, reply, serverless.logs, workerId);
  });
}

/**
 * Answers `request` with the log `logId` of `logs` as Server-Sent Events: the backfill chosen by
 * `Last-Event-ID`, `since` or `tail`, then live lines until the log closes. Shared by worker
 * logs and pod logs (the document gives both streams the same query and event shape).
 */
export function sendLogStream(
  request: FastifyRequest,
  reply: FastifyReply,
  logs: WorkerLogs,
  logId: string,
): void {
  const query = validateQuery(request);
  const wanted = (line: LogLine) => query.source === undefined || line.source === query.source;
  let backfill = logs.lines(logId).filter(wanted);
  const lastEventId = request.headers["last-event-id"];
  const cursor =
    typeof lastEventId === "string" && lastEventId !== ""
      ? parseCursor(lastEventId)
      : query.since !== undefined
        ? { fromAt: Date.parse(query.since), inclusive: true }
        : undefined;
  if (typeof lastEventId === "string" && lastEventId !== "" && cursor === undefined) {
    throw new HttpError(400, "Last-Event-ID: expected an event id of this stream or an RFC 3339 time");
  }
  if (cursor && "afterSeq" in cursor) backfill = backfill.filter((l) => l.seq > cursor.afterSeq);
  else if (cursor && "inclusive" in cursor) backfill = backfill.filter((l) => l.at >= cursor.fromAt);
  else if (cursor) backfill = backfill.filter((l) => l.at > cursor.fromAt);
  else {
    const tail = query.tail ?? WORKER_LOG_TAIL_DEFAULT;
    backfill = tail === 0 ? [] : backfill.slice(-tail);
  }

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  // Send the headers now: a reader with no backfill must see the stream open before any line.
  raw.flushHeaders();
  const send = (line: LogLine) => {
    const data: WorkerLogEvent = {
      ts: new Date(line.at).toISOString(),
      source: line.source,
      line: line.line,
    };
    raw.write(`id: ${eventId(line)}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  for (const line of backfill) send(line);
  const unsubscribe = logs.subscribe(
    logId,
    (line) => {
      if (wanted(line)) send(line);
    },
    () => raw.end(),
  );
  raw.once("close", unsubscribe);
}

function validateQuery(request: FastifyRequest) {
  try {
    return parse(WorkerLogQuerySchema, request.query, 422);
  } catch (err) {
    if (err instanceof HttpError) {
      throw new HttpError(422, `Request validation failed: ${err.message}`, err.errors);
    }
    throw err;
  }
}

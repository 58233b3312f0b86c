/**
 * REST v2 worker logs (`/v2/serverless/{id}/workers/{workerId}/logs`, `/v2/pods/{id}/logs`):
 * Server-Sent Events of `{ source, line, ts }`, and the query a caller gives the stream.
 */
import { z } from "zod";
import { int } from "./fields";

/** Log sources of `/workers/{workerId}/logs`: container stdout/stderr, or host lifecycle. */
export const LOG_SOURCES = ["container", "system"] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

/** Most historical lines `tail` may ask for. */
export const WORKER_LOG_TAIL_MAX = 5000;

const sinceMessage = 'since must be a Date or an RFC 3339 timestamp such as "2026-11-22T10:00:00Z"';

/** Query of the worker-log stream, as the caller gives it (`signal` and the rest aside). */
export const WorkerLogsQueryInputSchema = z.strictObject({
  /** Historical lines to backfill first, 0..5000 (service default 100). Ignored with `since`. */
  tail: int("tail")
    .min(0, { error: "tail must be at least 0" })
    .max(WORKER_LOG_TAIL_MAX, { error: `tail must be at most ${WORKER_LOG_TAIL_MAX}` })
    .optional(),
  /** Resume from this time: a `Date` or an RFC 3339 timestamp. */
  since: z
    .union([z.date({ error: sinceMessage }), z.iso.datetime({ offset: true, error: sinceMessage })])
    .optional(),
  /** Only this source; both when omitted. */
  source: z.enum(LOG_SOURCES, { error: "source must be container or system" }).optional(),
});

/** The `data` of one log event: `{ source, line, ts }`. */
export const WorkerLogEventSchema = z.looseObject({
  source: z.string(),
  line: z.string(),
  /** RFC 3339 timestamp; also the event's SSE `id`. */
  ts: z.string(),
});
export type WorkerLogEvent = z.infer<typeof WorkerLogEventSchema>;

/**
 * Stream capture beside the wait: reads a job's stream chunks into the result, bounded by
 * `MAX_STREAM_CHUNKS` and `MAX_STREAM_BYTES`, and never fails the JobRun (a read that fails marks
 * the stream truncated). Once the job is terminal, `drain` waits at most `STREAM_DRAIN_MS` for the
 * last chunks.
 */
import type { Endpoint, StreamChunk } from "../../client";
import { boundEntry, describeError } from "../common/wording";
import { MAX_STREAM_BYTES, MAX_STREAM_CHUNKS, STREAM_DRAIN_MS } from "./bounds";
import { type JobRunResult, seconds } from "./result";

/** Where a capture writes: the result (`stream`, `streamTruncated`) and progress lines. */
export interface CaptureSink {
  endpoint: Pick<Endpoint, "id" | "stream">;
  result: JobRunResult;
  log: (line: string) => void;
  /** `endpoint E job J`, for progress lines. */
  where: () => string;
}

/** A stream collection in progress; `finished` turns true once it stopped by itself. */
export interface Collector {
  controller: AbortController;
  done: Promise<void>;
  finished: () => boolean;
}

// Stream collection runs beside the wait; it is bounded and never fails the JobRun.
/** Starts collecting the stream of `jobId` into a fresh `result.stream`. */
export function collectStream(sink: CaptureSink, jobId: string): Collector {
  const { endpoint, result, where, log } = sink;
  const controller = new AbortController();
  const chunks: StreamChunk[] = [];
  result.stream = chunks;
  result.streamTruncated = false;
  let bytes = 2;
  let finished = false;
  const done = (async () => {
    try {
      for await (const chunk of endpoint.stream(jobId, { signal: controller.signal })) {
        const size = Buffer.byteLength(JSON.stringify(chunk), "utf8") + 1;
        if (chunks.length >= MAX_STREAM_CHUNKS || bytes + size > MAX_STREAM_BYTES) {
          result.streamTruncated = true;
          log(
            `JobRun ${where()}: stream capture stopped at ${chunks.length} chunks / ${bytes} bytes ` +
              `(bound: ${MAX_STREAM_CHUNKS} chunks, ${MAX_STREAM_BYTES} bytes)`,
          );
          return;
        }
        chunks.push(chunk);
        bytes += size;
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        result.streamTruncated = true;
        log(
          `JobRun ${where()}: reading the stream failed (${describeError(error)}); kept ${chunks.length} chunks`,
        );
      }
    } finally {
      finished = true;
    }
  })();
  return { controller, done, finished: () => finished };
}

/** Lets the collector drain the last chunks, at most `STREAM_DRAIN_MS` (and never past the deadline). */
export async function finishStream(
  sink: CaptureSink,
  current: Collector,
  jobId: string,
  remaining: () => number,
) {
  const { endpoint, result, log } = sink;
  const bound = Math.max(0, Math.min(STREAM_DRAIN_MS, remaining()));
  let timedOut = false;
  let drainTimer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    drainTimer = setTimeout(() => {
      timedOut = true;
      resolve();
    }, bound);
  });
  await Promise.race([current.done, timeout]);
  clearTimeout(drainTimer);
  if (timedOut) {
    current.controller.abort();
    result.streamTruncated = true;
    log(
      `JobRun endpoint ${endpoint.id} job ${boundEntry(jobId)}: stopped reading the stream ${seconds(bound)} after the job ended`,
    );
  }
}

/**
 * What one JobRun execution found (the job's result, the statuses seen on the way) and the
 * timeline's one-line form used in messages and logs.
 */
import type { StreamChunk } from "../../client";

/** One status a `JobRun` saw, with the milliseconds since the run started. */
export interface JobRunTimelineEntry {
  /** The job's status (`IN_QUEUE`, `IN_PROGRESS`, `COMPLETED`, ...). */
  status: string;
  /** Milliseconds since the JobRun started (submission is at about 0). @integer */
  atMs: number;
}

/** One status seen while the JobRun waited (the name the package's modules use). */
export type TimelineEntry = JobRunTimelineEntry;

/** What one execution found; becomes the resource's outputs. */
export interface JobRunResult {
  jobId?: string;
  status?: string;
  output?: unknown;
  /** The worker's error message, when it reported one. */
  error?: string;
  /** Time the job spent in the queue, ms (the service's figure). */
  delayTime?: number;
  /** Time the job ran, ms (the service's figure). */
  executionTime?: number;
  /** The worker that ran the job, when the service said (job status `workerId`). */
  workerId?: string;
  /**
   * The endpoint's configuration version the job ran on, checked from the workers after it ended
   * (`rollout: "wait"`); absent when not checked.
   */
  endpointVersion?: number;
  /**
   * Only on a failed run: the newest lines of that worker's log, `"<ts> <source> <line>"`, oldest
   * first (at most 50 lines and 8 KB, secrets redacted). Absent when the run passed or the log
   * could not be read.
   */
  workerLogTail?: string[];
  /**
   * How many times a job ran: 1, plus the service-side retries used, plus one when it was
   * submitted again after running on a worker of an older release.
   */
  attempts: number;
  /** When the service accepted the job (ISO 8601). */
  startedAt?: string;
  /** When the JobRun saw the job end (ISO 8601). */
  completedAt?: string;
  timeline: TimelineEntry[];
  /** Stream chunks as sent (`{ output, metrics? }`), with `collectStream`. */
  stream?: StreamChunk[];
  /** True when `stream` is incomplete: the bound was reached or reading failed part-way. */
  streamTruncated?: boolean;
  /** An http probe's answer status (`output` holds its body: JSON parsed, else text). */
  httpStatus?: number;
  /** An http probe's latency: ms from sending the request to the end of the answer's body. */
  latencyMs?: number;
  /** True when the probe's answer body was over 1 MB and only its start was read. */
  bodyTruncated?: boolean;
}

/** The verdict of an execution: the result, and the failure message when the smoke test failed. */
export interface JobRunOutcome {
  result: JobRunResult;
  /** Why the deploy must fail; undefined when the job met `expect`. */
  failure?: string;
  /**
   * An http probe's candidates for the failure's worker log: the ready workers of the release that
   * answered (the load balancer does not say which one did).
   */
  logWorkers?: string[];
  /**
   * Where the job's worker was placed (the v2 `Worker`'s `gpuTypeId` and `gpuCount`), as the
   * release check after the job read it; prices the run's `costUsd` without another read.
   */
  placement?: { gpuTypeId?: string | null; gpuCount?: number };
}

/** Milliseconds as seconds for messages: `0.05 s`, `12.3 s`. */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** The timeline as one line: `IN_QUEUE 0.01 s -> IN_PROGRESS 0.02 s -> COMPLETED 0.13 s`. */
export function formatTimeline(timeline: readonly TimelineEntry[]): string {
  if (timeline.length === 0) return "(no status seen)";
  return timeline.map((e) => `${e.status} ${seconds(e.atMs)}`).join(" -> ");
}

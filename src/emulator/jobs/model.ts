/**
 * What the job engine holds: endpoints with their queue, workers and jobs, the shapes its answers
 * take, its errors, and the core every part of the engine shares (the clock, logs, and the calls
 * one part makes into another).
 */
import type { JobRequest } from "../../wire/schemas";
import type { JobUsageSink } from "../billing/meter";
import type { Clock, TimerHandle } from "../clock";
import { QUEUE_FULL_JOBS_PER_WORKER, QUEUE_FULL_MIN_JOBS } from "../serviceFacts";
import type { Chunk } from "./chunks";
import { BUILTIN_IMAGE, type WorkerRelease } from "./releases";
import type { LogSource, WorkerLogs } from "./workerLogs";

/** One endpoint's configuration. */
export interface EndpointConfig {
  /** Endpoint id used in `/v2/{id}/...`. */
  id: string;
  /**
   * `QUEUE` (jobs through `/v2/{id}/...`) or `LOAD_BALANCER` (HTTP requests served by a ready
   * worker, see `JobEngine.lbWorker`; no job is accepted). @default "QUEUE"
   */
  type?: "QUEUE" | "LOAD_BALANCER";
  /** With `coldStartMs`: how many workers are warm from the start (the endpoint's `workers.min`). @default 0 */
  warmWorkers?: number;
  /** Number of workers. 0 makes a queue-only endpoint. @default 3 */
  workersMax: number;
  /** When set, workers start cold and take this many ms to warm up. @default none (all warm) */
  coldStartMs?: number;
  /** The release workers start with. @default version 1 of {@link BUILTIN_IMAGE}, no env */
  release?: WorkerRelease;
}

/** How long finished jobs stay readable, in ms. */
export interface Retention {
  /** For jobs submitted with `/run`. @default 1800000 (30 min) */
  runMs: number;
  /** For jobs submitted with `/runsync`. @default 60000 (60 s) */
  runsyncMs: number;
  /**
   * Most bytes of finished jobs' outputs (as JSON) kept; past it the oldest results are evicted
   * early and their `/status` answers 404 saying so. @default 256000000 (256 MB)
   */
  maxBytes: number;
  /**
   * Most finished jobs kept, all endpoints together; past it the oldest are forgotten early and
   * their `/status` answers 404 saying so. @default 100000
   */
  maxJobs: number;
}

export type WorkerState = "cold" | "starting" | "idle" | "busy" | "unhealthy";

export interface Worker {
  id: string;
  state: WorkerState;
  job?: JobRecord;
  release: WorkerRelease;
  /** Clock time it last started (became starting or idle from cold), ms. */
  startedAt: number;
  /** Takes no new job: it is being replaced (rollout) or removed (workersMax lowered). */
  leaving?: "replace" | "remove";
  /** Load-balancer requests it is serving: it shows RUNNING, and leaves only once they are answered. */
  inFlight: number;
}

/** A worker as `/workers` lists it. */
export interface WorkerView {
  id: string;
  status: "RUNNING" | "IDLE" | "INITIALIZING" | "UNHEALTHY";
  version: number;
  isStale: boolean;
  image: string;
  startedAt: number;
}

/** A job as the engine keeps it. */
export interface JobRecord {
  id: string;
  endpointId: string;
  kind: "run" | "sync";
  request: JobRequest;
  status: string;
  createdAt: number;
  startedAt?: number;
  completedAt?: number;
  output?: unknown;
  hasOutput: boolean;
  /** Size of `output` as JSON, in bytes, while it counts against the retained-results budget. */
  retainedBytes?: number;
  error?: string;
  workerId?: string;
  /** Chunks produced and not yet drained by `/stream`. */
  chunks: Chunk[];
  /** `/status?ttl=` asked for: result retention from completion, capped by the default. */
  resultTtlMs?: number;
  /** Bumped on retry, so a late result of an earlier run is ignored. */
  attempt: number;
  waiters: Set<() => void>;
  ttlTimer?: TimerHandle;
  execTimer?: TimerHandle;
  expiryTimer?: TimerHandle;
  expiresAt?: number;
  abort?: AbortController;
}

/** How a job ends. */
export type FinalStatus = "COMPLETED" | "FAILED" | "CANCELLED" | "TIMED_OUT";

/** The `/status` body of a job. */
export interface JobStatusBody {
  id: string;
  status: string;
  delayTime?: number;
  executionTime?: number;
  output?: unknown;
  error?: string;
  workerId?: string;
}

/** Per-endpoint counters, as `/health` and `stats()` report them. */
export interface EndpointCounters {
  submitted: number;
  completed: number;
  failed: number;
  timedOut: number;
  cancelled: number;
  retried: number;
  purged: number;
}

export class EndpointState {
  readonly config: EndpointConfig;
  readonly jobs = new Map<string, JobRecord>();
  queue: JobRecord[] = [];
  workers: Worker[];
  /** The current release: what new workers run. */
  release: WorkerRelease;
  /** Numbers the workers: `<endpoint>-worker-<n>`. */
  workerSeq = 0;
  /** Pending rollout step (the wait of `rolloutMs`, or a replacement starting). */
  rolloutTimer?: TimerHandle;
  /** True once the rollout's wait is over: stale workers are being replaced. */
  replacing = false;
  /** Load-balancer requests waiting for a ready worker (each one warms a cold worker, as a queued job does). */
  lbWaiting = 0;
  /** Called whenever a worker may have become ready (or can no longer become ready). */
  readonly readyListeners = new Set<() => void>();
  /** Round-robin position among the ready workers of a load-balancer endpoint. */
  lbNext = 0;
  readonly counters: EndpointCounters = {
    submitted: 0,
    completed: 0,
    failed: 0,
    timedOut: 0,
    cancelled: 0,
    retried: 0,
    purged: 0,
  };

  constructor(config: EndpointConfig, now: number) {
    this.config = config;
    this.release = config.release ?? { version: 1, image: BUILTIN_IMAGE, env: {} };
    const warm = config.coldStartMs === undefined;
    const warmWorkers = config.warmWorkers ?? 0;
    this.workers = Array.from({ length: config.workersMax }, (_, i) =>
      this.newWorker(warm || i < warmWorkers ? "idle" : "cold", now),
    );
  }

  newWorker(state: WorkerState, now: number): Worker {
    return {
      id: `${this.config.id}-worker-${++this.workerSeq}`,
      state,
      release: this.release,
      startedAt: now,
      inFlight: 0,
    };
  }

  isStale(worker: Worker): boolean {
    return worker.release.version < this.release.version;
  }

  /** Tells waiting load-balancer requests that a worker may have become ready (or never will). */
  notifyReady(): void {
    for (const listener of [...this.readyListeners]) listener();
  }
}

/** Wakes everything waiting on a change of `job`. */
export function notifyWaiters(job: JobRecord): void {
  for (const waiter of [...job.waiters]) waiter();
}

/** Stops a job's queue-ttl, execution and expiry timers. */
export function clearJobTimers(clock: Clock, job: JobRecord): void {
  for (const t of [job.ttlTimer, job.execTimer, job.expiryTimer]) if (t !== undefined) clock.clearTimeout(t);
  job.ttlTimer = job.execTimer = job.expiryTimer = undefined;
}

/**
 * What the parts of the engine share: the clock, the worker logs, whether the engine is closed, and
 * the calls one part makes into another (the queue hands jobs to ready workers, a finished job
 * frees its worker).
 */
export interface EngineCore {
  readonly clock: Clock;
  readonly logs: WorkerLogs;
  /** Where the time workers spend on jobs is metered for billing, if anywhere. */
  readonly usage?: JobUsageSink;
  /** True once the engine is closed: no part sets a timer or counts anything from then on. */
  closed(): boolean;
  /** True while `ep` is still the endpoint registered under its id (not deleted). */
  registered(ep: EndpointState): boolean;
  /** The endpoint of `endpointId`; throws when unknown. */
  endpoint(endpointId: string): EndpointState;
  /** Writes one line to a worker's log at the clock's time. */
  log(worker: Worker, source: LogSource, line: string): void;
  /** Hands queued jobs to idle workers and warms cold workers for the demand still waiting. */
  dispatch(ep: EndpointState): void;
  /** Ends a job with its final status and result. */
  finishJob(
    ep: EndpointState,
    job: JobRecord,
    status: FinalStatus,
    result: { output?: unknown; error?: string },
  ): void;
}

/** Thrown by `submit` when the queue is full (the server answers 429). */
export class QueueFullError extends Error {
  /** @param held  jobs in the queue now. @param limit  max(50, workersMax x 500); `held` exceeds it. */
  constructor(endpointId: string, held: number, limit: number) {
    super(
      `endpoint ${endpointId}: the queue is full (it holds ${held} jobs, more than ${limit} = max(${QUEUE_FULL_MIN_JOBS}, workersMax x ${QUEUE_FULL_JOBS_PER_WORKER})); retry later`,
    );
  }
}

/** Thrown by `retry` for a job that is not FAILED or TIMED_OUT (the server answers 400). */
export class NotRetryableError extends Error {}

/** Thrown by `submit`, `retry`, `cancel` and `purgeQueue` once the engine is closed (the server answers 503). */
export class EngineClosedError extends Error {
  constructor() {
    super("the emulator is closing: jobs are no longer accepted, retried, cancelled or purged");
  }
}

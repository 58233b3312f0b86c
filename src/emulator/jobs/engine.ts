/**
 * The job engine: per endpoint a FIFO queue, `workersMax` workers, and the job state machine
 * IN_QUEUE -> IN_PROGRESS -> COMPLETED | FAILED | CANCELLED | TIMED_OUT, with every timer on the
 * injected clock. `policy.ttl` (default 24 h): a job still queued when it expires ends TIMED_OUT.
 * Workers: all `workersMax` are warm unless the endpoint has `coldStartMs`; then workers start
 * cold, a queued normal-priority job starts one (ready after `coldStartMs`), and `lowPriority`
 * jobs never start one: they run only on workers already warm, after normal jobs.
 *
 * This module is the queue and the facade the HTTP routes use; the other concerns have modules of
 * their own: `workerPool.ts` (workers, releases and rolling updates), `loadBalancer.ts` (routing
 * load-balancer requests), `jobRunner.ts` (running a job's handler, execution timeout),
 * `retention.ts` (how long results stay, the byte budget), `workerLogs.ts` (worker logs),
 * `releases.ts` (release constants and misbehaving releases), `model.ts` (the shared shapes).
 */
import { isTerminalStatus, type JobRequest } from "../../wire/schemas";
import type { JobUsageSink } from "../billing/meter";
import type { Clock } from "../clock";
import type { WebhookSender } from "../webhooks";
import type { Chunk } from "./chunks";
import type { HandlerSpec } from "./handlers";
import { JobQueue, statusBody } from "./jobQueue";
import { JobRunner } from "./jobRunner";
import { type LbHealth, type LbRouting, LoadBalancerRouter } from "./loadBalancer";
import {
  clearJobTimers,
  type EndpointConfig,
  type EndpointCounters,
  EndpointState,
  EngineClosedError,
  type EngineCore,
  type JobRecord,
  type JobStatusBody,
  notifyWaiters,
  type Retention,
  type WorkerView,
} from "./model";
import { ROLLOUT_DEFAULT_MS, type WorkerRelease } from "./releases";
import { ResultRetention, type RetentionView } from "./retention";
import { WorkerLogs } from "./workerLogs";
import { WorkerPool } from "./workerPool";

export type { LbHealth, LbRouting, LbWorker } from "./loadBalancer";
export {
  type EndpointConfig,
  type EndpointCounters,
  EngineClosedError,
  type JobRecord,
  type JobStatusBody,
  NotRetryableError,
  QueueFullError,
  type Retention,
  type WorkerView,
} from "./model";
export {
  BUILTIN_IMAGE,
  MISBEHAVE_ENV,
  ROLLOUT_DEFAULT_MS,
  UNPULLABLE_IMAGE_MARKER,
  unhealthyReason,
  WORKER_START_MS,
  type WorkerRelease,
} from "./releases";

/** Options of the engine. */
export interface EngineOptions {
  clock: Clock;
  endpoints: EndpointConfig[];
  retention: Retention;
  handlers?: HandlerSpec;
  webhooks: WebhookSender;
  /** How long stale workers keep serving after a release before replacement starts, ms. @default 3000 */
  rolloutMs?: number;
  /** Meters the time workers spend running jobs (the billing routes add it up). */
  usage?: JobUsageSink;
}

/** The job engine of all endpoints. */
export class JobEngine {
  readonly #clock: Clock;
  readonly #usage?: JobUsageSink;
  readonly #endpoints = new Map<string, EndpointState>();
  readonly #queue: JobQueue;
  readonly #pool: WorkerPool;
  readonly #lb: LoadBalancerRouter;
  readonly #retention: ResultRetention;
  /** Every worker's log lines. */
  readonly logs = new WorkerLogs();
  #closed = false;

  constructor(options: EngineOptions) {
    this.#clock = options.clock;
    if (options.usage) this.#usage = options.usage;
    const core: EngineCore = {
      clock: options.clock,
      logs: this.logs,
      ...(options.usage ? { usage: options.usage } : {}),
      closed: () => this.#closed,
      registered: (ep) => this.#endpoints.get(ep.config.id) === ep,
      endpoint: (endpointId) => this.#ep(endpointId),
      log: (worker, source, line) => this.logs.write(worker.id, this.#clock.now(), source, line),
      dispatch: (ep) => this.#queue.dispatch(ep),
      finishJob: (ep, job, status, result) => this.#queue.finishJob(ep, job, status, result),
    };
    this.#pool = new WorkerPool(core, options.rolloutMs ?? ROLLOUT_DEFAULT_MS);
    this.#lb = new LoadBalancerRouter(core, this.#pool);
    this.#retention = new ResultRetention(core, options.retention);
    this.#queue = new JobQueue({
      core,
      pool: this.#pool,
      runner: new JobRunner(core, options.handlers),
      retention: this.#retention,
      webhooks: options.webhooks,
    });
    for (const config of options.endpoints) this.addEndpoint(config);
  }

  // Endpoints -----------------------------------------------------------------------------------

  /** Adds an endpoint (its workers start as {@link EndpointState} says). Throws when the id exists. */
  addEndpoint(config: EndpointConfig): void {
    this.#assertOpen();
    if (this.#endpoints.has(config.id)) throw new Error(`endpoint ${config.id} exists already`);
    const ep = new EndpointState({ ...config }, this.#clock.now());
    this.#endpoints.set(config.id, ep);
    for (const worker of ep.workers) this.#pool.started(ep, worker);
  }

  /**
   * Removes an endpoint: queued and running jobs end CANCELLED (webhooks are not sent), its jobs
   * and worker logs are forgotten, and its job routes answer 404. False when it does not exist.
   */
  removeEndpoint(endpointId: string): boolean {
    const ep = this.#endpoints.get(endpointId);
    if (!ep) return false;
    this.#endpoints.delete(endpointId);
    if (ep.rolloutTimer !== undefined) this.#clock.clearTimeout(ep.rolloutTimer);
    for (const job of ep.jobs.values()) {
      clearJobTimers(this.#clock, job);
      job.abort?.abort(new Error(`endpoint ${endpointId} was deleted`));
      if (!isTerminalStatus(job.status)) job.status = "CANCELLED";
      notifyWaiters(job);
    }
    ep.jobs.clear();
    ep.queue = [];
    ep.notifyReady(); // waiting load-balancer requests end
    this.logs.forgetEndpoint(endpointId);
    this.#usage?.endpointRemoved(endpointId);
    return true;
  }

  /** True when `endpointId` exists. */
  has(endpointId: string): boolean {
    return this.#endpoints.has(endpointId);
  }

  /** Ids of all endpoints. */
  endpointIds(): string[] {
    return [...this.#endpoints.keys()];
  }

  /** Counters of one endpoint (a copy). */
  counters(endpointId: string): EndpointCounters {
    return { ...this.#ep(endpointId).counters };
  }

  // Workers and releases (workerPool.ts) --------------------------------------------------------

  /** The current release version of an endpoint. */
  version(endpointId: string): number {
    return this.#ep(endpointId).release.version;
  }

  /** The workers of an endpoint as `/workers` lists them: cold (not running) workers are left out. */
  workers(endpointId: string): WorkerView[] {
    return this.#pool.views(this.#ep(endpointId));
  }

  /**
   * Changes how many workers an endpoint has, at once (no release): new workers run the current
   * release; surplus workers leave, idle ones first, busy ones after their job.
   */
  setWorkersMax(endpointId: string, workersMax: number): void {
    this.#assertOpen();
    this.#pool.setWorkersMax(this.#ep(endpointId), workersMax);
  }

  /**
   * Sets how many workers stay warm (`workers.min` of a load-balancer endpoint, with a cold start):
   * cold workers start at once until that many are running.
   */
  setWarmWorkers(endpointId: string, warmWorkers: number): void {
    this.#assertOpen();
    this.#pool.setWarmWorkers(this.#ep(endpointId), warmWorkers);
  }

  /**
   * Publishes `release` as the endpoint's current one and starts a rolling update: workers of older
   * versions serve on, stale, for `rolloutMs`, then are replaced one at a time (`workerPool.ts`).
   * A release during a rollout restarts the wait.
   */
  publishRelease(endpointId: string, release: WorkerRelease): void {
    this.#assertOpen();
    this.#pool.publishRelease(this.#ep(endpointId), release);
  }

  // Load-balancer endpoints (loadBalancer.ts) ---------------------------------------------------

  /** True when `endpointId` exists and is a load-balancer endpoint (it takes no job). */
  isLoadBalancer(endpointId: string): boolean {
    return this.#endpoints.get(endpointId)?.config.type === "LOAD_BALANCER";
  }

  /** The health of a load-balancer endpoint: `ready`, `starting` (a cold worker warms), or `unavailable` with why. */
  lbHealth(endpointId: string): LbHealth {
    return this.#lb.health(this.#ep(endpointId));
  }

  /** The worker that serves one load-balancer request, once one is ready (see `LoadBalancerRouter.route`). */
  async lbWorker(endpointId: string, waitMs: number, signal?: AbortSignal): Promise<LbRouting> {
    return this.#lb.route(this.#ep(endpointId), waitMs, signal);
  }

  /** Writes a line to a worker's container log (a load-balancer request it served). */
  logRequest(workerId: string, line: string): void {
    this.logs.write(workerId, this.#clock.now(), "container", line);
  }

  // Jobs ----------------------------------------------------------------------------------------

  /** A job of `endpointId`, or undefined when unknown, purged or expired. */
  get(endpointId: string, jobId: string): JobRecord | undefined {
    return this.#endpoints.get(endpointId)?.jobs.get(jobId);
  }

  /**
   * Queues a new job. Throws `QueueFullError` when the queue already holds more than
   * max(50, workersMax x 500) jobs (`jobQueue.ts`).
   */
  submit(endpointId: string, request: JobRequest, kind: "run" | "sync"): JobRecord {
    this.#assertOpen();
    return this.#queue.submit(this.#ep(endpointId), request, kind);
  }

  /** Cancels a queued or running job (a running handler is aborted); a finished job is unchanged. */
  cancel(job: JobRecord): JobRecord {
    this.#assertOpen();
    return this.#queue.cancel(this.#ep(job.endpointId), job);
  }

  /** Re-queues a FAILED or TIMED_OUT job with the same id and input; previous output is removed. */
  retry(job: JobRecord): JobRecord {
    this.#assertOpen();
    return this.#queue.retry(this.#ep(job.endpointId), job);
  }

  /** Removes every queued job of the endpoint (running jobs keep running); returns how many. */
  purgeQueue(endpointId: string): number {
    this.#assertOpen();
    return this.#queue.purgeQueue(this.#ep(endpointId));
  }

  /** The `/status` body of `job`. `output` appears once COMPLETED, `error` once FAILED/TIMED_OUT. */
  statusBody(job: JobRecord): JobStatusBody {
    return statusBody(job, this.#clock.now());
  }

  /**
   * Resolves when `ready(job)` holds, the job is removed, or `ms` of clock time pass, whichever
   * comes first. `signal` (the client going away) ends the wait too.
   */
  waitFor(
    job: JobRecord,
    ready: (job: JobRecord) => boolean,
    ms: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const ep = this.#endpoints.get(job.endpointId);
    const gone = () => ep?.jobs.get(job.id) !== job;
    if (ready(job) || gone() || signal?.aborted || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#clock.clearTimeout(timer);
        job.waiters.delete(check);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const check = () => {
        if (ready(job) || gone() || this.#closed) done();
      };
      const timer = this.#clock.setTimeout(done, ms);
      job.waiters.add(check);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Waits (up to `ms`) until the job is terminal. */
  waitTerminal(job: JobRecord, ms: number, signal?: AbortSignal): Promise<void> {
    return this.waitFor(job, (j) => isTerminalStatus(j.status), ms, signal);
  }

  /** Removes and returns the chunks buffered so far. */
  drainStream(job: JobRecord): Chunk[] {
    const chunks = job.chunks;
    job.chunks = [];
    return chunks;
  }

  /**
   * The `/health` body. `failed` counts FAILED and TIMED_OUT jobs since start. `workers` carries
   * every count the official SDK reads, from the same statuses `/workers` shows: `running` (busy,
   * or serving load-balancer requests), `idle`, `initializing` (starting), `unhealthy`, `ready`
   * (started and healthy: `idle + running`) and `throttled` (always 0: the emulator never
   * throttles). Cold (scaled-to-zero) workers are in none of them.
   */
  health(endpointId: string) {
    const ep = this.#ep(endpointId);
    let inProgress = 0;
    for (const job of ep.jobs.values()) if (job.status === "IN_PROGRESS") inProgress++;
    const views = this.#pool.views(ep);
    const count = (status: string) => views.filter((w) => w.status === status).length;
    const running = count("RUNNING");
    const idle = count("IDLE");
    const workers = {
      idle,
      initializing: count("INITIALIZING"),
      ready: idle + running,
      running,
      throttled: 0,
      unhealthy: count("UNHEALTHY"),
    };
    return {
      jobs: {
        completed: ep.counters.completed,
        failed: ep.counters.failed + ep.counters.timedOut,
        inProgress,
        inQueue: ep.queue.length,
        retried: ep.counters.retried,
      },
      workers,
    };
  }

  // Results (retention.ts) ----------------------------------------------------------------------

  /** What the results' retention keeps and evicted (its bounds, for the 404 of an evicted result). */
  get retention(): RetentionView {
    return this.#retention;
  }

  /**
   * Applies `/status?ttl=MS`: the result is removed `ttl` ms after completion (or after now, for
   * a job already finished), never later than the default retention.
   */
  setResultTtl(job: JobRecord, ttlMs: number): void {
    this.#retention.setResultTtl(job, ttlMs);
  }

  /**
   * Stops every timer and aborts running handlers; waiting requests are released. From then on jobs
   * keep their state and counts stay as they are: `submit`, `retry`, `cancel` and `purgeQueue` throw
   * `EngineClosedError`, and no path sets a timer.
   */
  close(): void {
    this.#closed = true;
    this.#pool.close();
    this.logs.closeAll();
    for (const ep of this.#endpoints.values()) {
      if (ep.rolloutTimer !== undefined) this.#clock.clearTimeout(ep.rolloutTimer);
      ep.rolloutTimer = undefined;
      ep.notifyReady();
      for (const job of ep.jobs.values()) {
        clearJobTimers(this.#clock, job);
        job.abort?.abort(new Error("emulator closed"));
        notifyWaiters(job);
      }
    }
  }

  // The queue -----------------------------------------------------------------------------------

  #ep(endpointId: string): EndpointState {
    const ep = this.#endpoints.get(endpointId);
    if (!ep) throw new Error(`unknown endpoint ${endpointId}`);
    return ep;
  }

  /** Throws `EngineClosedError` once `close()` ran: a closed engine sets no timer and counts nothing. */
  #assertOpen(): void {
    if (this.#closed) throw new EngineClosedError();
  }
}

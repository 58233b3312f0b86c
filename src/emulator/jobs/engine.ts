/**
 * The job engine: per endpoint a FIFO queue, `workersMax` workers, and the job state machine
 * IN_QUEUE -> IN_PROGRESS -> COMPLETED | FAILED | CANCELLED | TIMED_OUT, with every timer on the
 * injected clock:
 * - `policy.ttl` (default 24 h): a job still queued when it expires ends TIMED_OUT.
 * - `policy.executionTimeout` (default 600000 ms): a running job ends TIMED_OUT, its handler aborted.
 * - Retention: a finished job stays readable `retention.runMs` (30 min) after completion, or
 *   `retention.runsyncMs` (60 s) for a runsync job, or less when `/status` gave a `ttl`; then 404.
 * Workers: all `workersMax` are warm unless the endpoint has `coldStartMs`; then workers start
 * cold, a queued normal-priority job starts one (ready after `coldStartMs`), and `lowPriority`
 * jobs never start one: they run only on workers already warm, after normal jobs.
 *
 * Releases and rolling updates: every worker runs one release (`version`, image, env). When the
 * endpoint gets a new release, workers of older versions are stale: they keep serving jobs for
 * `rolloutMs`, then are replaced one at a time. A replaced worker takes no new job, finishes the
 * one it runs, stops, and a worker of the current release starts in its place (INITIALIZING for
 * the endpoint's `coldStartMs`, else {@link WORKER_START_MS}); when it is ready the next stale
 * worker is replaced. Cold workers (not running) take the new release at once.
 *
 * A release whose workers can never become healthy ({@link unhealthyReason}: an image whose
 * reference contains `unpullable`, or the env `RUNPOD_EMULATOR_UNHEALTHY`) stalls its rollout:
 * the worker that replaces the first stale one goes UNHEALTHY once its start time is over (its
 * log says why, e.g. `failed to pull image ...: manifest unknown`), takes no job, and no further
 * stale worker is replaced, so the stale workers keep serving the previous release. Only a new
 * release (the fixed image) moves the endpoint on: it replaces the unhealthy workers too. Workers
 * that start on such a release in other ways (a new endpoint, more `workersMax`, a cold start) go
 * UNHEALTHY the same way.
 *
 * Load-balancer endpoints (`type: "LOAD_BALANCER"`) take no job: their workers serve HTTP requests
 * ({@link JobEngine.lbWorker}, `http/loadBalancerRoutes.ts`), many at once, RUNNING in `/workers`
 * while they serve one; a worker leaving (replaced, removed) first answers the requests it has.
 * They have the same releases and rollouts; `warmWorkers` (`workers.min`) are warm and the others
 * cold, and a request that finds no ready worker warms one, as a queued job does.
 */
import { randomUUID } from "node:crypto";
import {
  EXECUTION_TIMEOUT_DEFAULT_MS,
  MAX_JOB_OUTPUT_NESTING,
  nestingDepth,
  TTL_DEFAULT_MS,
} from "../../wire/limits";
import { isTerminalStatus, type JobRequest } from "../../wire/schemas";
import type { Clock, TimerHandle } from "../clock";
import { QUEUE_FULL_JOBS_PER_WORKER, QUEUE_FULL_MIN_JOBS } from "../serviceFacts";
import type { WebhookSender } from "../webhooks";
import { builtinWorker } from "./builtinWorker";
import { type Chunk, toChunks } from "./chunks";
import { type Handler, type HandlerSpec, handlerFor, runHandler } from "./handlers";
import { type LogSource, WorkerLogs } from "./workerLogs";

/** Image of the endpoints that `--endpoint` makes: they run the built-in worker or `--handlers`. */
export const BUILTIN_IMAGE = "runpod-emulator/builtin:latest";
/** Evicted result ids remembered, for a 404 that says why. */
const MAX_EVICTED_IDS = 10_000;

/** How long a worker replacing a stale one initializes when the endpoint has no `coldStartMs`, ms. */
export const WORKER_START_MS = 500;
/** Default time stale workers keep serving after a new release before replacement starts, ms. */
export const ROLLOUT_DEFAULT_MS = 3000;

/**
 * Environment variables that make a release misbehave (for demos and tests of smoke tests):
 * - `RUNPOD_EMULATOR_FAIL=<message>`: every job on a worker of that release ends FAILED with the
 *   message (after logging it), whatever the handler;
 * - `RUNPOD_EMULATOR_ERROR_OUTPUT=<message>`: every job ends COMPLETED with output
 *   `{ "error": <message> }` (the handler returned its error instead of raising it);
 * - `RUNPOD_EMULATOR_LATENCY_MS=<n>` (load-balancer endpoints): every request's answer comes n ms
 *   of the emulator clock late. On a load-balancer endpoint `RUNPOD_EMULATOR_FAIL` makes every
 *   request but health answer 500 `{"error": <message>}`.
 */
export const MISBEHAVE_ENV = {
  fail: "RUNPOD_EMULATOR_FAIL",
  errorOutput: "RUNPOD_EMULATOR_ERROR_OUTPUT",
  unhealthy: "RUNPOD_EMULATOR_UNHEALTHY",
  latencyMs: "RUNPOD_EMULATOR_LATENCY_MS",
} as const;

/** The image marker of a release whose workers never become healthy (the image cannot be pulled). */
export const UNPULLABLE_IMAGE_MARKER = "unpullable";

/**
 * Why workers of `release` can never become healthy, as the log line their start ends with; undefined
 * for a healthy release. An image reference containing {@link UNPULLABLE_IMAGE_MARKER} (any case, in the
 * name or the tag: `ghcr.io/acme/app:unpullable`) cannot be pulled; a release whose env sets
 * `RUNPOD_EMULATOR_UNHEALTHY` (any value, never printed) crashes at start.
 */
export function unhealthyReason(release: WorkerRelease): string | undefined {
  if (release.image.toLowerCase().includes(UNPULLABLE_IMAGE_MARKER)) {
    return `failed to pull image ${release.image}: manifest unknown`;
  }
  if (release.env[MISBEHAVE_ENV.unhealthy] !== undefined) {
    return `container exited with code 1 during start (${MISBEHAVE_ENV.unhealthy} is set); worker is unhealthy`;
  }
  return undefined;
}

/** What a worker runs: one release of its endpoint. */
export interface WorkerRelease {
  /** The endpoint version of this release (1, 2, ...). */
  version: number;
  image: string;
  env: Record<string, string>;
}

/** One endpoint's configuration. */
export interface EndpointConfig {
  /** Endpoint id used in `/v2/{id}/...`. */
  id: string;
  /**
   * `QUEUE` (jobs through `/v2/{id}/...`) or `LOAD_BALANCER` (HTTP requests served by a ready
   * worker, see {@link JobEngine.lbWorker}; no job is accepted). @default "QUEUE"
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
}

type WorkerState = "cold" | "starting" | "idle" | "busy" | "unhealthy";

interface Worker {
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

/** The worker serving a load-balancer request, and what it runs. */
export interface LbWorker {
  id: string;
  release: WorkerRelease;
  /**
   * Call once the request is answered (or abandoned): until then the worker shows RUNNING and a
   * rollout or a lower `workers.max` lets it finish before it leaves. Later calls do nothing.
   */
  done(): void;
}

/** `/workers` status of each running worker state. */
const WORKER_STATUS = {
  busy: "RUNNING",
  idle: "IDLE",
  starting: "INITIALIZING",
  unhealthy: "UNHEALTHY",
} as const satisfies Record<Exclude<WorkerState, "cold">, WorkerView["status"]>;

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

class EndpointState {
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

/** Options of the engine. */
export interface EngineOptions {
  clock: Clock;
  endpoints: EndpointConfig[];
  retention: Retention;
  handlers?: HandlerSpec;
  webhooks: WebhookSender;
  /** How long stale workers keep serving after a release before replacement starts, ms. @default 3000 */
  rolloutMs?: number;
}

/** The job engine of all endpoints. */
export class JobEngine {
  readonly #clock: Clock;
  readonly #endpoints = new Map<string, EndpointState>();
  readonly #retention: Retention;
  /** Finished jobs holding an output, oldest first, and their outputs' bytes in all. */
  readonly #retained = new Set<JobRecord>();
  #retainedBytes = 0;
  /** Ids (`endpoint/job`) of results evicted early, the newest {@link MAX_EVICTED_IDS}. */
  readonly #evicted = new Set<string>();
  readonly #handlers?: HandlerSpec;
  readonly #builtin: Handler;
  readonly #webhooks: WebhookSender;
  readonly #coldTimers = new Set<TimerHandle>();
  readonly #rolloutMs: number;
  /** Every worker's log lines. */
  readonly logs = new WorkerLogs();
  #closed = false;

  constructor(options: EngineOptions) {
    this.#clock = options.clock;
    this.#retention = options.retention;
    this.#handlers = options.handlers;
    this.#webhooks = options.webhooks;
    this.#rolloutMs = options.rolloutMs ?? ROLLOUT_DEFAULT_MS;
    this.#builtin = builtinWorker(options.clock) as Handler;
    for (const config of options.endpoints) this.addEndpoint(config);
  }

  /** Adds an endpoint (its workers start as {@link EndpointState} says). Throws when the id exists. */
  addEndpoint(config: EndpointConfig): void {
    this.#assertOpen();
    if (this.#endpoints.has(config.id)) throw new Error(`endpoint ${config.id} exists already`);
    const ep = new EndpointState({ ...config }, this.#clock.now());
    this.#endpoints.set(config.id, ep);
    for (const worker of ep.workers) this.#workerStarted(ep, worker);
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
      for (const t of [job.ttlTimer, job.execTimer, job.expiryTimer])
        if (t !== undefined) this.#clock.clearTimeout(t);
      job.ttlTimer = job.execTimer = job.expiryTimer = undefined;
      job.abort?.abort(new Error(`endpoint ${endpointId} was deleted`));
      if (!isTerminalStatus(job.status)) job.status = "CANCELLED";
      this.#notify(job);
    }
    ep.jobs.clear();
    ep.queue = [];
    this.#notifyReady(ep); // waiting load-balancer requests end
    this.logs.forgetEndpoint(endpointId);
    return true;
  }

  /** The current release version of an endpoint. */
  version(endpointId: string): number {
    return this.#ep(endpointId).release.version;
  }

  /** The workers of an endpoint as `/workers` lists them: cold (not running) workers are left out. */
  workers(endpointId: string): WorkerView[] {
    const ep = this.#ep(endpointId);
    return ep.workers
      .filter((w) => w.state !== "cold")
      .map((w) => ({
        id: w.id,
        status:
          w.state === "idle" && w.inFlight > 0
            ? "RUNNING"
            : WORKER_STATUS[w.state as Exclude<WorkerState, "cold">],
        version: w.release.version,
        isStale: ep.isStale(w),
        image: w.release.image,
        startedAt: w.startedAt,
      }));
  }

  /**
   * Changes how many workers an endpoint has, at once (no release): new workers run the current
   * release; surplus workers leave, idle ones first, busy ones after their job.
   */
  setWorkersMax(endpointId: string, workersMax: number): void {
    this.#assertOpen();
    const ep = this.#ep(endpointId);
    ep.config.workersMax = workersMax;
    const staying = ep.workers.filter((w) => w.leaving !== "remove");
    if (staying.length < workersMax) {
      const warm = ep.config.coldStartMs === undefined;
      for (let i = staying.length; i < workersMax; i++) {
        const worker = ep.newWorker(warm ? "idle" : "cold", this.#clock.now());
        ep.workers.push(worker);
        this.#workerStarted(ep, worker);
      }
    } else {
      const order = (w: Worker) =>
        w.state === "unhealthy" ? -1 : w.state === "busy" ? 2 : ep.isStale(w) ? 0 : 1;
      const surplus = [...staying].sort((a, b) => order(a) - order(b)).slice(0, staying.length - workersMax);
      for (const worker of surplus) {
        worker.leaving = "remove";
        if (worker.state !== "busy" && worker.inFlight === 0)
          this.#stopWorker(ep, worker, "the endpoint's workers.max was lowered");
      }
    }
    queueMicrotask(() => this.#dispatch(ep));
  }

  /**
   * Makes `release` the endpoint's current one and starts a rolling update: workers of older
   * versions serve on, stale, for `rolloutMs`, then are replaced one at a time (see the module
   * comment). A release during a rollout restarts the wait.
   */
  release(endpointId: string, release: WorkerRelease): void {
    this.#assertOpen();
    const ep = this.#ep(endpointId);
    ep.release = release;
    for (const worker of ep.workers) {
      if (worker.state === "cold") worker.release = release;
      else if (ep.isStale(worker))
        this.#log(worker, "system", `worker is stale: the endpoint is now at version ${release.version}`);
    }
    if (ep.rolloutTimer !== undefined) this.#clock.clearTimeout(ep.rolloutTimer);
    ep.rolloutTimer = undefined;
    ep.replacing = false;
    if (!ep.workers.some((w) => ep.isStale(w))) return;
    ep.rolloutTimer = this.#clock.setTimeout(() => {
      ep.rolloutTimer = undefined;
      ep.replacing = true;
      this.#replaceNext(ep);
    }, this.#rolloutMs);
  }

  /** Replaces the next stale worker, or ends the rollout when none is left. */
  #replaceNext(ep: EndpointState): void {
    if (this.#closed || !ep.replacing || this.#endpoints.get(ep.config.id) !== ep) return;
    if (ep.workers.some((w) => w.leaving === "replace")) return; // one at a time
    const next = ep.workers.find((w) => ep.isStale(w) && w.leaving === undefined && w.state !== "cold");
    if (!next) {
      ep.replacing = false;
      return;
    }
    next.leaving = "replace";
    if (next.state !== "busy" && next.inFlight === 0) this.#replaceWorker(ep, next);
    // A busy worker is replaced when its job ends (#finish), one serving requests when they end (lbWorker).
  }

  /** Stops `old` and starts a worker of the current release in its place. */
  #replaceWorker(ep: EndpointState, old: Worker): void {
    const index = ep.workers.indexOf(old);
    this.#log(old, "system", `worker stopping: replaced by a worker of version ${ep.release.version}`);
    this.logs.close(old.id);
    const successor = ep.newWorker("starting", this.#clock.now());
    ep.workers[index] = successor;
    this.#workerStarted(ep, successor);
    const startMs = ep.config.coldStartMs ?? WORKER_START_MS;
    const timer = this.#clock.setTimeout(() => {
      this.#coldTimers.delete(timer);
      if (successor.state !== "starting") return;
      // An unhealthy successor stalls the rollout: no further stale worker is replaced.
      if (!this.#becomeReady(successor)) {
        this.#notifyReady(ep);
        return;
      }
      this.#dispatch(ep);
      this.#replaceNext(ep);
    }, startMs);
    this.#coldTimers.add(timer);
  }

  /** Removes a worker that is leaving for good. */
  #stopWorker(ep: EndpointState, worker: Worker, why: string): void {
    this.#log(worker, "system", `worker stopping: ${why}`);
    this.logs.close(worker.id);
    ep.workers = ep.workers.filter((w) => w !== worker);
  }

  #workerStarted(ep: EndpointState, worker: Worker): void {
    this.logs.open(ep.config.id, worker.id);
    const state = worker.state === "cold" ? "cold (starts on demand)" : worker.state;
    this.#log(
      worker,
      "system",
      `worker ${worker.id} created: version ${worker.release.version}, image ${worker.release.image}, ${state}`,
    );
    // A warm worker of a release that cannot start is unhealthy from the start.
    if (worker.state === "idle" && unhealthyReason(worker.release) !== undefined) {
      worker.state = "starting";
      this.#becomeReady(worker);
    }
  }

  /**
   * A starting worker is ready: IDLE, or UNHEALTHY when its release cannot run
   * ({@link unhealthyReason}), with the reason in its log. True when it became IDLE.
   */
  #becomeReady(worker: Worker): boolean {
    const reason = unhealthyReason(worker.release);
    if (reason === undefined) {
      worker.state = "idle";
      this.#log(worker, "system", "worker ready");
      return true;
    }
    worker.state = "unhealthy";
    this.#log(worker, "system", reason);
    this.#log(worker, "system", `worker unhealthy: version ${worker.release.version} cannot start`);
    return false;
  }

  #log(worker: Worker, source: LogSource, line: string): void {
    this.logs.write(worker.id, this.#clock.now(), source, line);
  }

  // Load-balancer endpoints --------------------------------------------------------------------

  /** True when `endpointId` exists and is a load-balancer endpoint (it takes no job). */
  isLoadBalancer(endpointId: string): boolean {
    return this.#endpoints.get(endpointId)?.config.type === "LOAD_BALANCER";
  }

  /**
   * The health of a load-balancer endpoint: `ready` when a worker can serve; `starting` when none
   * can yet but one is initializing (a cold worker is started when none is, as a request would);
   * `unavailable`, with why, when no worker is ready nor can become ready.
   */
  lbHealth(
    endpointId: string,
  ): { state: "ready" } | { state: "starting" } | { state: "unavailable"; reason: string } {
    const ep = this.#ep(endpointId);
    if (this.#readyWorker(ep, false)) return { state: "ready" };
    if (ep.workers.some((w) => w.state === "starting")) return { state: "starting" };
    const cold = ep.workers.find((w) => w.state === "cold");
    if (cold && !this.#closed) {
      this.#startCold(ep, cold);
      return { state: "starting" };
    }
    return { state: "unavailable", reason: this.#unavailableReason(ep) };
  }

  /**
   * The worker that serves one load-balancer request: a ready worker of the newest ready release
   * (round robin among them; during a rollout the stale workers serve until a new one is ready).
   * With none ready it waits, warming a cold worker as a queued job does, until one is ready, up
   * to `waitMs` of the clock (`timedOut`), or answers `unavailable` when none can become ready
   * (every worker unhealthy, no workers, the endpoint deleted, the client gone, the engine closed).
   */
  async lbWorker(
    endpointId: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<{ worker: LbWorker } | { unavailable: string } | { timedOut: true }> {
    const ep = this.#ep(endpointId);
    const pick = (): { worker: LbWorker } | undefined => {
      const w = this.#readyWorker(ep, true);
      if (!w) return undefined;
      w.inFlight++;
      let answered = false;
      const done = () => {
        if (answered) return;
        answered = true;
        this.#requestDone(ep, w);
      };
      return { worker: { id: w.id, release: w.release, done } };
    };
    const canBecomeReady = () => ep.workers.some((w) => w.state === "starting" || w.state === "cold");
    const found = pick();
    if (found) return found;
    if (this.#closed) throw new EngineClosedError();
    if (!canBecomeReady()) return { unavailable: this.#unavailableReason(ep) };
    return new Promise((resolve) => {
      ep.lbWaiting++;
      const done = (result: { worker: LbWorker } | { unavailable: string } | { timedOut: true }) => {
        ep.lbWaiting--;
        ep.readyListeners.delete(check);
        this.#clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const check = () => {
        if (this.#closed) return done({ unavailable: "the emulator is closing" });
        if (this.#endpoints.get(endpointId) !== ep)
          return done({ unavailable: `endpoint ${endpointId} was deleted` });
        const ready = pick();
        if (ready) return done(ready);
        if (!canBecomeReady()) done({ unavailable: this.#unavailableReason(ep) });
      };
      const onAbort = () => done({ unavailable: "the client went away" });
      const timer = this.#clock.setTimeout(() => done({ timedOut: true }), waitMs);
      ep.readyListeners.add(check);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Warms a cold worker for this request (after this call returns, as a submission does).
      queueMicrotask(() => this.#dispatch(ep));
    });
  }

  /**
   * Sets how many workers stay warm (`workers.min` of a load-balancer endpoint, with a cold start):
   * cold workers start at once until that many are running.
   */
  setWarmWorkers(endpointId: string, warmWorkers: number): void {
    this.#assertOpen();
    const ep = this.#ep(endpointId);
    ep.config.warmWorkers = warmWorkers;
    if (ep.config.coldStartMs === undefined) return;
    let running = ep.workers.filter((w) => w.state !== "cold").length;
    for (const worker of ep.workers) {
      if (running >= warmWorkers) break;
      if (worker.state !== "cold") continue;
      this.#startCold(ep, worker);
      running++;
    }
  }

  /** A load-balancer request of `worker` is answered: a worker waiting to leave leaves once it serves none. */
  #requestDone(ep: EndpointState, worker: Worker): void {
    worker.inFlight--;
    if (worker.inFlight > 0 || this.#closed || !ep.workers.includes(worker)) return;
    if (worker.leaving === "replace") this.#replaceWorker(ep, worker);
    else if (worker.leaving === "remove")
      this.#stopWorker(ep, worker, "the endpoint's workers.max was lowered");
  }

  /** Writes a line to a worker's container log (a load-balancer request it served). */
  logRequest(workerId: string, line: string): void {
    this.logs.write(workerId, this.#clock.now(), "container", line);
  }

  /** A ready worker of the newest ready release, round robin (`advance`) among them. */
  #readyWorker(ep: EndpointState, advance: boolean): Worker | undefined {
    const ready = ep.workers.filter(
      (w) => (w.state === "idle" || w.state === "busy") && w.leaving === undefined,
    );
    if (ready.length === 0) return undefined;
    const newest = Math.max(...ready.map((w) => w.release.version));
    const best = ready.filter((w) => w.release.version === newest);
    const chosen = best[ep.lbNext % best.length];
    if (advance) ep.lbNext++;
    return chosen;
  }

  /** Why no worker of `ep` is ready nor can become ready. */
  #unavailableReason(ep: EndpointState): string {
    if (ep.workers.length === 0) return `endpoint ${ep.config.id} has no workers (workers.max is 0)`;
    const unhealthy = ep.workers.filter((w) => w.state === "unhealthy");
    if (unhealthy.length === ep.workers.length) {
      const versions = [...new Set(unhealthy.map((w) => w.release.version))].sort((a, b) => a - b);
      const why = unhealthyReason(unhealthy[0]?.release as WorkerRelease);
      return `every worker of endpoint ${ep.config.id} is unhealthy (version ${versions.join(", ")}${why ? `: ${why}` : ""})`;
    }
    return `no worker of endpoint ${ep.config.id} is ready or starting`;
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

  /** A job of `endpointId`, or undefined when unknown, purged or expired. */
  get(endpointId: string, jobId: string): JobRecord | undefined {
    return this.#endpoints.get(endpointId)?.jobs.get(jobId);
  }

  #ep(endpointId: string): EndpointState {
    const ep = this.#endpoints.get(endpointId);
    if (!ep) throw new Error(`unknown endpoint ${endpointId}`);
    return ep;
  }

  /**
   * Queues a new job. Throws `QueueFullError` when the queue is full. The spec answers 429 "when the
   * queue holds more than 50 jobs AND more than WorkersMax x 500 jobs": the test is on the queue as
   * the submission finds it, so a submission is refused only when the queue already holds MORE than
   * max(50, workersMax x 500) jobs. With workersMax <= 0 the queue may therefore reach 51 jobs, with
   * workersMax 2 it may reach 1001.
   */
  submit(endpointId: string, request: JobRequest, kind: "run" | "sync"): JobRecord {
    this.#assertOpen();
    const ep = this.#ep(endpointId);
    const limit = Math.max(QUEUE_FULL_MIN_JOBS, ep.config.workersMax * QUEUE_FULL_JOBS_PER_WORKER);
    if (ep.queue.length > limit) throw new QueueFullError(endpointId, ep.queue.length, limit);
    const id = kind === "sync" ? `sync-${randomUUID()}` : `${randomUUID()}-u1`;
    const job: JobRecord = {
      id,
      endpointId,
      kind,
      request,
      status: "IN_QUEUE",
      createdAt: this.#clock.now(),
      hasOutput: false,
      chunks: [],
      attempt: 0,
      waiters: new Set(),
    };
    ep.jobs.set(id, job);
    ep.counters.submitted++;
    this.#enqueue(ep, job);
    return job;
  }

  /** Throws `EngineClosedError` once `close()` ran: a closed engine sets no timer and counts nothing. */
  #assertOpen(): void {
    if (this.#closed) throw new EngineClosedError();
  }

  #enqueue(ep: EndpointState, job: JobRecord): void {
    ep.queue.push(job);
    const ttl = job.request.policy?.ttl ?? TTL_DEFAULT_MS;
    job.ttlTimer = this.#clock.setTimeout(() => {
      job.ttlTimer = undefined;
      if (job.status !== "IN_QUEUE") return;
      ep.queue = ep.queue.filter((j) => j !== job);
      this.#finish(ep, job, "TIMED_OUT", {
        error: `job waited in the queue longer than its ttl of ${ttl} ms`,
      });
    }, ttl);
    // Dispatch after the current call returns, so a submission always answers IN_QUEUE.
    queueMicrotask(() => this.#dispatch(ep));
  }

  /**
   * Assigns queued jobs to idle workers, tells waiting load-balancer requests to look again, and
   * warms cold workers for the normal-priority jobs and load-balancer requests still waiting.
   */
  #dispatch(ep: EndpointState): void {
    if (this.#closed) return;
    for (const worker of ep.workers) {
      if (worker.state !== "idle" || worker.leaving !== undefined) continue;
      let index = ep.queue.findIndex((j) => !j.request.policy?.lowPriority);
      if (index < 0) index = ep.queue.length > 0 ? 0 : -1;
      if (index < 0) break;
      const [job] = ep.queue.splice(index, 1);
      if (job) this.#start(ep, worker, job);
    }
    // Waiting load-balancer requests take the ready workers first: only those still waiting warm one.
    this.#notifyReady(ep);
    if (ep.config.coldStartMs !== undefined) {
      const demand = ep.queue.filter((j) => !j.request.policy?.lowPriority).length + ep.lbWaiting;
      let starting = ep.workers.filter((w) => w.state === "starting").length;
      for (const worker of ep.workers) {
        if (starting >= demand) break;
        if (worker.state !== "cold") continue;
        this.#startCold(ep, worker);
        starting++;
      }
    }
  }

  /** Starts a cold worker: ready (or unhealthy) after the endpoint's `coldStartMs`. */
  #startCold(ep: EndpointState, worker: Worker): void {
    worker.state = "starting";
    worker.startedAt = this.#clock.now();
    this.#log(worker, "system", `worker starting (cold start of ${ep.config.coldStartMs} ms)`);
    const timer = this.#clock.setTimeout(() => {
      this.#coldTimers.delete(timer);
      this.#becomeReady(worker);
      this.#dispatch(ep);
    }, ep.config.coldStartMs ?? 0);
    this.#coldTimers.add(timer);
  }

  #notifyReady(ep: EndpointState): void {
    for (const listener of [...ep.readyListeners]) listener();
  }

  #start(ep: EndpointState, worker: Worker, job: JobRecord): void {
    const now = this.#clock.now();
    if (job.ttlTimer !== undefined) this.#clock.clearTimeout(job.ttlTimer);
    job.ttlTimer = undefined;
    job.status = "IN_PROGRESS";
    job.startedAt = now;
    job.workerId = worker.id;
    worker.state = "busy";
    worker.job = job;
    const abort = new AbortController();
    job.abort = abort;
    const attempt = job.attempt;
    const current = () => job.attempt === attempt && job.status === "IN_PROGRESS" && worker.job === job;
    const timeout = job.request.policy?.executionTimeout ?? EXECUTION_TIMEOUT_DEFAULT_MS;
    job.execTimer = this.#clock.setTimeout(() => {
      job.execTimer = undefined;
      if (!current()) return;
      abort.abort(new Error(`execution timeout of ${timeout} ms reached`));
      this.#finish(ep, job, "TIMED_OUT", {
        error: `job ran longer than its executionTimeout of ${timeout} ms`,
      });
    }, timeout);
    this.#notify(job);

    const release = worker.release;
    const handler =
      this.#misbehaving(release) ?? handlerFor(this.#handlers, ep.config.id, release.image) ?? this.#builtin;
    const log = (line: unknown) => {
      if (!current()) return;
      this.#log(worker, "container", typeof line === "string" ? line : String(line));
    };
    this.#log(worker, "container", `job ${job.id} started (version ${release.version})`);
    const handlerJob = {
      id: job.id,
      endpointId: ep.config.id,
      input: structuredClone(job.request.input),
      ...(job.request.s3Config ? { s3Config: { ...job.request.s3Config } } : {}),
    };
    const onChunk = (value: unknown) => {
      if (!current()) return;
      job.chunks.push(...toChunks(value));
      this.#notify(job);
    };
    // Run on a later tick, so the submission answers IN_QUEUE/IN_PROGRESS before a fast handler ends.
    Promise.resolve()
      .then(() =>
        runHandler(
          handler,
          handlerJob,
          {
            signal: abort.signal,
            log,
            worker: {
              id: worker.id,
              version: release.version,
              image: release.image,
              env: { ...release.env },
            },
          },
          onChunk,
        ),
      )
      .then(
        (output) => {
          if (!current()) return;
          if (nestingDepth(output, MAX_JOB_OUTPUT_NESTING) > MAX_JOB_OUTPUT_NESTING) {
            // No answer could carry it (serializing it overflows the stack): the job fails, saying why.
            const error = `the handler's output nests more than ${MAX_JOB_OUTPUT_NESTING} levels deep, more than the emulator keeps`;
            this.#finish(ep, job, "FAILED", { error });
            return;
          }
          if (output !== undefined) JSON.stringify(output); // throws on cycles and BigInt: a FAILED job
          this.#finish(ep, job, "COMPLETED", { output });
        },
        (err: unknown) => {
          if (!current()) return;
          const message =
            err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
          this.#finish(ep, job, "FAILED", { error: message || "handler failed" });
        },
      )
      .catch((err: unknown) => {
        if (current())
          this.#finish(ep, job, "FAILED", { error: `output is not JSON: ${(err as Error).message}` });
      });
  }

  /** The handler a release's env imposes ({@link MISBEHAVE_ENV}), or undefined. */
  #misbehaving(release: WorkerRelease): Handler | undefined {
    const fail = release.env[MISBEHAVE_ENV.fail];
    if (fail !== undefined) {
      return (_job, { log }) => {
        log(`${MISBEHAVE_ENV.fail} is set: this release fails every job`);
        throw new Error(fail || "handler failed");
      };
    }
    const errorOutput = release.env[MISBEHAVE_ENV.errorOutput];
    if (errorOutput !== undefined) {
      return (_job, { log }) => {
        log(`${MISBEHAVE_ENV.errorOutput} is set: returning an error as the output`);
        return { error: errorOutput };
      };
    }
    return undefined;
  }

  #finish(
    ep: EndpointState,
    job: JobRecord,
    status: "COMPLETED" | "FAILED" | "CANCELLED" | "TIMED_OUT",
    result: { output?: unknown; error?: string },
  ): void {
    // After close(), handlers aborted by it still settle: the job keeps its state, counts stay.
    if (this.#closed) return;
    const now = this.#clock.now();
    if (job.ttlTimer !== undefined) this.#clock.clearTimeout(job.ttlTimer);
    if (job.execTimer !== undefined) this.#clock.clearTimeout(job.execTimer);
    job.ttlTimer = job.execTimer = undefined;
    job.status = status;
    job.completedAt = now;
    if ("output" in result) {
      job.output = result.output;
      job.hasOutput = result.output !== undefined;
      if (job.hasOutput) this.#retain(job);
    }
    if (result.error !== undefined) job.error = result.error;
    const worker = ep.workers.find((w) => w.job === job);
    if (worker) {
      const took = job.startedAt === undefined ? "" : ` after ${now - job.startedAt} ms`;
      this.#log(
        worker,
        "container",
        status === "COMPLETED"
          ? `job ${job.id} completed${took}`
          : `job ${job.id} ${status.toLowerCase().replace("_", " ")}${took}${result.error !== undefined ? `: ${result.error}` : ""}`,
      );
      if (status === "FAILED" && result.error !== undefined)
        this.#log(worker, "container", `error: ${result.error}`);
      worker.job = undefined;
      worker.state = "idle";
      if (worker.leaving === "replace") this.#replaceWorker(ep, worker);
      else if (worker.leaving === "remove")
        this.#stopWorker(ep, worker, "the endpoint's workers.max was lowered");
    }
    if (status === "COMPLETED") ep.counters.completed++;
    else if (status === "FAILED") ep.counters.failed++;
    else if (status === "TIMED_OUT") ep.counters.timedOut++;
    else ep.counters.cancelled++;
    this.#scheduleExpiry(ep, job);
    this.#notify(job);
    const webhook = job.request.webhook;
    if (webhook) this.#webhooks.send(job.id, webhook, this.statusBody(job));
    this.#dispatch(ep);
  }

  #scheduleExpiry(ep: EndpointState, job: JobRecord): void {
    if (job.completedAt === undefined) return;
    const base = job.kind === "sync" ? this.#retention.runsyncMs : this.#retention.runMs;
    const keep = Math.min(base, job.resultTtlMs ?? base);
    this.#expireAt(ep, job, job.completedAt + keep);
  }

  #expireAt(ep: EndpointState, job: JobRecord, at: number): void {
    if (this.#closed) return;
    if (job.expiryTimer !== undefined) this.#clock.clearTimeout(job.expiryTimer);
    job.expiresAt = at;
    job.expiryTimer = this.#clock.setTimeout(() => {
      job.expiryTimer = undefined;
      this.#remove(ep, job);
    }, at - this.#clock.now());
  }

  /**
   * Counts a finished job's output against `retention.maxBytes`; past the budget the
   * oldest results are evicted early (their `/status` then answers 404 saying so).
   */
  #retain(job: JobRecord): void {
    job.retainedBytes = Buffer.byteLength(JSON.stringify(job.output) ?? "", "utf8");
    this.#retainedBytes += job.retainedBytes;
    this.#retained.add(job);
    for (const oldest of this.#retained) {
      if (this.#retainedBytes <= this.#retention.maxBytes || oldest === job) break;
      this.#evicted.add(`${oldest.endpointId}/${oldest.id}`);
      if (this.#evicted.size > MAX_EVICTED_IDS)
        this.#evicted.delete(this.#evicted.values().next().value as string);
      this.#remove(this.#ep(oldest.endpointId), oldest);
    }
  }

  /** Takes a job's output out of the retained-results budget. */
  #release(job: JobRecord): void {
    if (job.retainedBytes === undefined) return;
    this.#retainedBytes -= job.retainedBytes;
    job.retainedBytes = undefined;
    this.#retained.delete(job);
  }

  /** Most bytes of results kept (`retention.maxBytes`), for the 404 of an evicted one. */
  get maxRetainedBytes(): number {
    return this.#retention.maxBytes;
  }

  /** True when the job's result was evicted early to keep memory bounded (its 404 says so). */
  wasEvicted(endpointId: string, jobId: string): boolean {
    return this.#evicted.has(`${endpointId}/${jobId}`);
  }

  #remove(ep: EndpointState, job: JobRecord): void {
    this.#release(job);
    for (const t of [job.ttlTimer, job.execTimer, job.expiryTimer])
      if (t !== undefined) this.#clock.clearTimeout(t);
    job.ttlTimer = job.execTimer = job.expiryTimer = undefined;
    ep.jobs.delete(job.id);
    this.#notify(job);
  }

  #notify(job: JobRecord): void {
    for (const waiter of [...job.waiters]) waiter();
  }

  /**
   * Applies `/status?ttl=MS`: the result is removed `ttl` ms after completion (or after now, for
   * a job already finished), never later than the default retention.
   */
  setResultTtl(job: JobRecord, ttlMs: number): void {
    job.resultTtlMs = Math.min(job.resultTtlMs ?? ttlMs, ttlMs);
    if (job.completedAt === undefined || job.expiresAt === undefined) return;
    const at = Math.min(job.expiresAt, this.#clock.now() + ttlMs);
    if (at < job.expiresAt) this.#expireAt(this.#ep(job.endpointId), job, at);
  }

  /** The `/status` body of `job`. `output` appears once COMPLETED, `error` once FAILED/TIMED_OUT. */
  statusBody(job: JobRecord): JobStatusBody {
    const body: JobStatusBody = { id: job.id, status: job.status };
    if (job.startedAt !== undefined) body.delayTime = job.startedAt - job.createdAt;
    else if (job.completedAt !== undefined) body.delayTime = job.completedAt - job.createdAt;
    if (job.startedAt !== undefined)
      body.executionTime = (job.completedAt ?? this.#clock.now()) - job.startedAt;
    if (job.workerId !== undefined) body.workerId = job.workerId;
    if (job.hasOutput) body.output = job.output;
    if (job.error !== undefined) body.error = job.error;
    return body;
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

  /** Cancels a queued or running job (a running handler is aborted); a finished job is unchanged. */
  cancel(job: JobRecord): JobRecord {
    this.#assertOpen();
    const ep = this.#ep(job.endpointId);
    if (job.status === "IN_QUEUE") {
      ep.queue = ep.queue.filter((j) => j !== job);
      this.#finish(ep, job, "CANCELLED", {});
    } else if (job.status === "IN_PROGRESS") {
      job.abort?.abort(new Error("job cancelled"));
      this.#finish(ep, job, "CANCELLED", {});
    }
    return job;
  }

  /** Re-queues a FAILED or TIMED_OUT job with the same id and input; previous output is removed. */
  retry(job: JobRecord): JobRecord {
    this.#assertOpen();
    if (job.status !== "FAILED" && job.status !== "TIMED_OUT") {
      throw new NotRetryableError(
        `job ${job.id} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`,
      );
    }
    const ep = this.#ep(job.endpointId);
    if (job.expiryTimer !== undefined) this.#clock.clearTimeout(job.expiryTimer);
    job.expiryTimer = job.expiresAt = undefined;
    job.attempt++;
    job.status = "IN_QUEUE";
    job.createdAt = this.#clock.now();
    this.#release(job);
    job.startedAt = job.completedAt = job.error = job.output = job.workerId = undefined;
    job.hasOutput = false;
    job.chunks = [];
    ep.counters.retried++;
    this.#enqueue(ep, job);
    return job;
  }

  /** Removes every queued job of the endpoint (running jobs keep running); returns how many. */
  purgeQueue(endpointId: string): number {
    this.#assertOpen();
    const ep = this.#ep(endpointId);
    const purged = ep.queue;
    ep.queue = [];
    for (const job of purged) this.#remove(ep, job);
    ep.counters.purged += purged.length;
    return purged.length;
  }

  /** The `/health` body. `failed` counts FAILED and TIMED_OUT jobs since start. */
  health(endpointId: string) {
    const ep = this.#ep(endpointId);
    let inProgress = 0;
    for (const job of ep.jobs.values()) if (job.status === "IN_PROGRESS") inProgress++;
    const running = ep.workers.filter((w) => w.state === "busy").length;
    const idle = ep.workers.filter((w) => w.state === "idle").length;
    const initializing = ep.workers.filter((w) => w.state === "starting").length;
    // A warm endpoint shows `initializing` only while a rollout starts a worker in place of a stale one.
    const workers: { idle: number; running: number; initializing?: number } =
      ep.config.coldStartMs === undefined && initializing === 0
        ? { idle, running }
        : { idle, running, initializing };
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

  /**
   * Stops every timer and aborts running handlers; waiting requests are released. From then on jobs
   * keep their state and counts stay as they are: `submit`, `retry`, `cancel` and `purgeQueue` throw
   * `EngineClosedError`, and no path sets a timer.
   */
  close(): void {
    this.#closed = true;
    for (const t of this.#coldTimers) this.#clock.clearTimeout(t);
    this.#coldTimers.clear();
    this.logs.closeAll();
    for (const ep of this.#endpoints.values()) {
      if (ep.rolloutTimer !== undefined) this.#clock.clearTimeout(ep.rolloutTimer);
      ep.rolloutTimer = undefined;
      this.#notifyReady(ep);
      for (const job of ep.jobs.values()) {
        for (const t of [job.ttlTimer, job.execTimer, job.expiryTimer])
          if (t !== undefined) this.#clock.clearTimeout(t);
        job.ttlTimer = job.execTimer = job.expiryTimer = undefined;
        job.abort?.abort(new Error("emulator closed"));
        this.#notify(job);
      }
    }
  }
}

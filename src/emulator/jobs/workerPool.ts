/**
 * The workers of each endpoint and their releases: warm and cold starts, more or fewer workers,
 * and rolling updates.
 *
 * Every worker runs one release (`version`, image, env). When the endpoint gets a new release,
 * workers of older versions are stale: they keep serving jobs for `rolloutMs`, then are replaced
 * one at a time. A replaced worker takes no new job, finishes the one it runs, stops, and a worker
 * of the current release starts in its place (INITIALIZING for the endpoint's `coldStartMs`, else
 * {@link WORKER_START_MS}); when it is ready the next stale worker is replaced. Cold workers (not
 * running) take the new release at once.
 *
 * A release whose workers can never become healthy ({@link unhealthyReason}) stalls its rollout:
 * the worker that replaces the first stale one goes UNHEALTHY once its start time is over (its log
 * says why), takes no job, and no further stale worker is replaced, so the stale workers keep
 * serving the previous release. Only a new release (the fixed image) moves the endpoint on: it
 * replaces the unhealthy workers too. Workers that start on such a release in other ways (a new
 * endpoint, more `workersMax`, a cold start) go UNHEALTHY the same way.
 */
import type { TimerHandle } from "../clock";
import type { EndpointState, EngineCore, Worker, WorkerState, WorkerView } from "./model";
import { unhealthyReason, WORKER_START_MS, type WorkerRelease } from "./releases";

/** `/workers` status of each running worker state. */
const WORKER_STATUS = {
  busy: "RUNNING",
  idle: "IDLE",
  starting: "INITIALIZING",
  unhealthy: "UNHEALTHY",
} as const satisfies Record<Exclude<WorkerState, "cold">, WorkerView["status"]>;

const WORKERS_MAX_LOWERED = "the endpoint's workers.max was lowered";

/** Starts, replaces and stops the workers of every endpoint. */
export class WorkerPool {
  readonly #core: EngineCore;
  readonly #rolloutMs: number;
  /** Pending cold starts and replacement starts. */
  readonly #startTimers = new Set<TimerHandle>();

  constructor(core: EngineCore, rolloutMs: number) {
    this.#core = core;
    this.#rolloutMs = rolloutMs;
  }

  /** The workers of an endpoint as `/workers` lists them: cold (not running) workers are left out. */
  views(ep: EndpointState): WorkerView[] {
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
  setWorkersMax(ep: EndpointState, workersMax: number): void {
    ep.config.workersMax = workersMax;
    const staying = ep.workers.filter((w) => w.leaving !== "remove");
    if (staying.length < workersMax) {
      const warm = ep.config.coldStartMs === undefined;
      for (let i = staying.length; i < workersMax; i++) {
        const worker = ep.newWorker(warm ? "idle" : "cold", this.#core.clock.now());
        ep.workers.push(worker);
        this.started(ep, worker);
      }
    } else {
      const order = (w: Worker) =>
        w.state === "unhealthy" ? -1 : w.state === "busy" ? 2 : ep.isStale(w) ? 0 : 1;
      const surplus = [...staying].sort((a, b) => order(a) - order(b)).slice(0, staying.length - workersMax);
      for (const worker of surplus) {
        worker.leaving = "remove";
        if (worker.state !== "busy" && worker.inFlight === 0)
          this.#stopWorker(ep, worker, WORKERS_MAX_LOWERED);
      }
    }
    queueMicrotask(() => this.#core.dispatch(ep));
  }

  /** Sets how many workers stay warm (with a cold start): cold workers start at once until that many run. */
  setWarmWorkers(ep: EndpointState, warmWorkers: number): void {
    ep.config.warmWorkers = warmWorkers;
    if (ep.config.coldStartMs === undefined) return;
    let running = ep.workers.filter((w) => w.state !== "cold").length;
    for (const worker of ep.workers) {
      if (running >= warmWorkers) break;
      if (worker.state !== "cold") continue;
      this.startCold(ep, worker);
      running++;
    }
  }

  /**
   * Makes `release` the endpoint's current one and starts a rolling update: workers of older
   * versions serve on, stale, for `rolloutMs`, then are replaced one at a time (see the module
   * comment). A release during a rollout restarts the wait.
   */
  publishRelease(ep: EndpointState, release: WorkerRelease): void {
    const { clock } = this.#core;
    ep.release = release;
    for (const worker of ep.workers) {
      if (worker.state === "cold") worker.release = release;
      else if (ep.isStale(worker))
        this.#core.log(
          worker,
          "system",
          `worker is stale: the endpoint is now at version ${release.version}`,
        );
    }
    if (ep.rolloutTimer !== undefined) clock.clearTimeout(ep.rolloutTimer);
    ep.rolloutTimer = undefined;
    ep.replacing = false;
    if (!ep.workers.some((w) => ep.isStale(w))) return;
    ep.rolloutTimer = clock.setTimeout(() => {
      ep.rolloutTimer = undefined;
      ep.replacing = true;
      this.#replaceNext(ep);
    }, this.#rolloutMs);
  }

  /**
   * A worker that finished its job or its last load-balancer request: one waiting to be replaced
   * or removed leaves now.
   */
  leaveIfDue(ep: EndpointState, worker: Worker): void {
    if (worker.leaving === "replace") this.#replaceWorker(ep, worker);
    else if (worker.leaving === "remove") this.#stopWorker(ep, worker, WORKERS_MAX_LOWERED);
  }

  /** Logs a new worker's creation; a warm worker of a release that cannot start is unhealthy at once. */
  started(ep: EndpointState, worker: Worker): void {
    this.#core.logs.open(ep.config.id, worker.id);
    const state = worker.state === "cold" ? "cold (starts on demand)" : worker.state;
    this.#core.log(
      worker,
      "system",
      `worker ${worker.id} created: version ${worker.release.version}, image ${worker.release.image}, ${state}`,
    );
    if (worker.state === "idle" && unhealthyReason(worker.release) !== undefined) {
      worker.state = "starting";
      this.#becomeReady(worker);
    }
  }

  /** Starts a cold worker: ready (or unhealthy) after the endpoint's `coldStartMs`. */
  startCold(ep: EndpointState, worker: Worker): void {
    const { clock } = this.#core;
    worker.state = "starting";
    worker.startedAt = clock.now();
    this.#core.log(worker, "system", `worker starting (cold start of ${ep.config.coldStartMs} ms)`);
    const timer = clock.setTimeout(() => {
      this.#startTimers.delete(timer);
      this.#becomeReady(worker);
      this.#core.dispatch(ep);
    }, ep.config.coldStartMs ?? 0);
    this.#startTimers.add(timer);
  }

  /** Stops every pending start (the engine is closing). */
  close(): void {
    for (const t of this.#startTimers) this.#core.clock.clearTimeout(t);
    this.#startTimers.clear();
  }

  /** Replaces the next stale worker, or ends the rollout when none is left. */
  #replaceNext(ep: EndpointState): void {
    if (this.#core.closed() || !ep.replacing || !this.#core.registered(ep)) return;
    if (ep.workers.some((w) => w.leaving === "replace")) return; // one at a time
    const next = ep.workers.find((w) => ep.isStale(w) && w.leaving === undefined && w.state !== "cold");
    if (!next) {
      ep.replacing = false;
      return;
    }
    next.leaving = "replace";
    // A busy worker is replaced when its job ends, one serving requests when they end (leaveIfDue).
    if (next.state !== "busy" && next.inFlight === 0) this.#replaceWorker(ep, next);
  }

  /** Stops `old` and starts a worker of the current release in its place. */
  #replaceWorker(ep: EndpointState, old: Worker): void {
    const { clock } = this.#core;
    const index = ep.workers.indexOf(old);
    this.#core.log(old, "system", `worker stopping: replaced by a worker of version ${ep.release.version}`);
    this.#core.logs.close(old.id);
    const successor = ep.newWorker("starting", clock.now());
    ep.workers[index] = successor;
    this.started(ep, successor);
    const timer = clock.setTimeout(() => {
      this.#startTimers.delete(timer);
      if (successor.state !== "starting") return;
      // An unhealthy successor stalls the rollout: no further stale worker is replaced.
      if (!this.#becomeReady(successor)) {
        ep.notifyReady();
        return;
      }
      this.#core.dispatch(ep);
      this.#replaceNext(ep);
    }, ep.config.coldStartMs ?? WORKER_START_MS);
    this.#startTimers.add(timer);
  }

  /** Removes a worker that is leaving for good. */
  #stopWorker(ep: EndpointState, worker: Worker, why: string): void {
    this.#core.log(worker, "system", `worker stopping: ${why}`);
    this.#core.logs.close(worker.id);
    ep.workers = ep.workers.filter((w) => w !== worker);
  }

  /**
   * A starting worker is ready: IDLE, or UNHEALTHY when its release cannot run
   * ({@link unhealthyReason}), with the reason in its log. True when it became IDLE.
   */
  #becomeReady(worker: Worker): boolean {
    const reason = unhealthyReason(worker.release);
    if (reason === undefined) {
      worker.state = "idle";
      this.#core.log(worker, "system", "worker ready");
      return true;
    }
    worker.state = "unhealthy";
    this.#core.log(worker, "system", reason);
    this.#core.log(worker, "system", `worker unhealthy: version ${worker.release.version} cannot start`);
    return false;
  }
}

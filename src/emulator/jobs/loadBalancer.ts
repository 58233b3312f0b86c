/**
 * Load-balancer endpoints (`type: "LOAD_BALANCER"`) take no job: their workers serve HTTP requests
 * (`http/loadBalancerRoutes.ts`), many at once, RUNNING in `/workers` while they serve one; a worker
 * leaving (replaced, removed) first answers the requests it has. They have the same releases and
 * rollouts as queue endpoints; `warmWorkers` (`workers.min`) are warm and the others cold, and a
 * request that finds no ready worker warms one, as a queued job does.
 */
import { type EndpointState, EngineClosedError, type EngineCore, type Worker } from "./model";
import { unhealthyReason, type WorkerRelease } from "./releases";
import type { WorkerPool } from "./workerPool";

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

/** What a load-balancer request gets: a worker, a reason why none can serve, or a wait that ran out. */
export type LbRouting = { worker: LbWorker } | { unavailable: string } | { timedOut: true };

/** The health of a load-balancer endpoint. */
export type LbHealth = { state: "ready" } | { state: "starting" } | { state: "unavailable"; reason: string };

/** Routes load-balancer requests to ready workers. */
export class LoadBalancerRouter {
  readonly #core: EngineCore;
  readonly #pool: WorkerPool;

  constructor(core: EngineCore, pool: WorkerPool) {
    this.#core = core;
    this.#pool = pool;
  }

  /**
   * `ready` when a worker can serve; `starting` when none can yet but one is initializing (a cold
   * worker is started when none is, as a request would); `unavailable`, with why, when no worker is
   * ready nor can become ready.
   */
  health(ep: EndpointState): LbHealth {
    if (this.#readyWorker(ep, false)) return { state: "ready" };
    if (ep.workers.some((w) => w.state === "starting")) return { state: "starting" };
    const cold = ep.workers.find((w) => w.state === "cold");
    if (cold && !this.#core.closed()) {
      this.#pool.startCold(ep, cold);
      return { state: "starting" };
    }
    return { state: "unavailable", reason: this.#unavailableReason(ep) };
  }

  /**
   * The worker that serves one request: a ready worker of the newest ready release (round robin
   * among them; during a rollout the stale workers serve until a new one is ready). With none ready
   * it waits, warming a cold worker as a queued job does, until one is ready, up to `waitMs` of the
   * clock (`timedOut`), or answers `unavailable` when none can become ready (every worker
   * unhealthy, no workers, the endpoint deleted, the client gone, the engine closed).
   */
  async route(ep: EndpointState, waitMs: number, signal?: AbortSignal): Promise<LbRouting> {
    const { clock } = this.#core;
    const endpointId = ep.config.id;
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
    if (this.#core.closed()) throw new EngineClosedError();
    if (!canBecomeReady()) return { unavailable: this.#unavailableReason(ep) };
    return new Promise((resolve) => {
      ep.lbWaiting++;
      const done = (result: LbRouting) => {
        ep.lbWaiting--;
        ep.readyListeners.delete(check);
        clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const check = () => {
        if (this.#core.closed()) return done({ unavailable: "the emulator is closing" });
        if (!this.#core.registered(ep)) return done({ unavailable: `endpoint ${endpointId} was deleted` });
        const ready = pick();
        if (ready) return done(ready);
        if (!canBecomeReady()) done({ unavailable: this.#unavailableReason(ep) });
      };
      const onAbort = () => done({ unavailable: "the client went away" });
      const timer = clock.setTimeout(() => done({ timedOut: true }), waitMs);
      ep.readyListeners.add(check);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Warms a cold worker for this request (after this call returns, as a submission does).
      queueMicrotask(() => this.#core.dispatch(ep));
    });
  }

  /** A request of `worker` is answered: a worker waiting to leave leaves once it serves none. */
  #requestDone(ep: EndpointState, worker: Worker): void {
    worker.inFlight--;
    if (worker.inFlight > 0 || this.#core.closed() || !ep.workers.includes(worker)) return;
    this.#pool.leaveIfDue(ep, worker);
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
}

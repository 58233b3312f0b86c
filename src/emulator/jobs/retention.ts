/**
 * How long finished jobs stay readable: `retention.runMs` (30 min) after completion, or
 * `retention.runsyncMs` (60 s) for a runsync job, or less when `/status` gave a `ttl`; then 404.
 * Outputs count against `retention.maxBytes`, and every finished job against `retention.maxJobs`:
 * past either the oldest results are evicted early, and their `/status` answers 404 saying so.
 */
import {
  clearJobTimers,
  type EndpointState,
  type EngineCore,
  type JobRecord,
  notifyWaiters,
  type Retention,
} from "./model";

/** Evicted result ids remembered, for a 404 that says why. */
const MAX_EVICTED_IDS = 10_000;

/** What the routes read of the retention: its bounds and which results it evicted early. */
export type RetentionView = Pick<ResultRetention, "maxBytes" | "maxJobs" | "finishedJobs" | "wasEvicted">;

/** Keeps finished jobs for their retention time and their outputs within the byte budget. */
export class ResultRetention {
  readonly #core: EngineCore;
  readonly #retention: Retention;
  /** Finished jobs holding an output, oldest first, and their outputs' bytes in all. */
  readonly #retained = new Set<JobRecord>();
  #retainedBytes = 0;
  /** Every finished job still kept, oldest first (the `retention.maxJobs` bound). */
  readonly #finished = new Set<JobRecord>();
  /** Ids (`endpoint/job`) of results evicted early, the newest {@link MAX_EVICTED_IDS}. */
  readonly #evicted = new Set<string>();

  constructor(core: EngineCore, retention: Retention) {
    this.#core = core;
    this.#retention = retention;
  }

  /** Most bytes of results kept (`retention.maxBytes`), for the 404 of an evicted one. */
  get maxBytes(): number {
    return this.#retention.maxBytes;
  }

  /** Most finished jobs kept (`retention.maxJobs`), for the 404 of an evicted one. */
  get maxJobs(): number {
    return this.#retention.maxJobs;
  }

  /** Finished jobs kept now, all endpoints together. */
  get finishedJobs(): number {
    return this.#finished.size;
  }

  /** True when the job's result was evicted early to keep memory bounded (its 404 says so). */
  wasEvicted(endpointId: string, jobId: string): boolean {
    return this.#evicted.has(`${endpointId}/${jobId}`);
  }

  /**
   * Counts a finished job's output against `retention.maxBytes`; past the budget the
   * oldest results are evicted early (their `/status` then answers 404 saying so).
   */
  keepOutput(job: JobRecord): void {
    job.retainedBytes = Buffer.byteLength(JSON.stringify(job.output) ?? "", "utf8");
    this.#retainedBytes += job.retainedBytes;
    this.#retained.add(job);
    for (const oldest of this.#retained) {
      if (this.#retainedBytes <= this.#retention.maxBytes || oldest === job) break;
      this.#evict(oldest);
    }
  }

  /** Forgets a job early, remembering its id for a 404 that says why. */
  #evict(job: JobRecord): void {
    this.#evicted.add(`${job.endpointId}/${job.id}`);
    if (this.#evicted.size > MAX_EVICTED_IDS)
      this.#evicted.delete(this.#evicted.values().next().value as string);
    this.forget(this.#core.endpoint(job.endpointId), job);
  }

  /**
   * Takes a job out of the kept finished jobs and its output out of the retained-results budget
   * (a retry, or the job is forgotten).
   */
  dropOutput(job: JobRecord): void {
    this.#finished.delete(job);
    if (job.retainedBytes === undefined) return;
    this.#retainedBytes -= job.retainedBytes;
    job.retainedBytes = undefined;
    this.#retained.delete(job);
  }

  /** Forgets a job: its timers stop, its output leaves the budget, and `/status` answers 404. */
  forget(ep: EndpointState, job: JobRecord): void {
    this.dropOutput(job);
    this.#finished.delete(job);
    clearJobTimers(this.#core.clock, job);
    ep.jobs.delete(job.id);
    notifyWaiters(job);
  }

  /** Schedules a finished job's removal after its retention time. */
  scheduleExpiry(ep: EndpointState, job: JobRecord): void {
    if (job.completedAt === undefined) return;
    this.#finished.delete(job); // a retried job finishes again: it is the newest now
    this.#finished.add(job);
    for (const oldest of this.#finished) {
      if (this.#finished.size <= this.#retention.maxJobs || oldest === job) break;
      this.#evict(oldest);
    }
    if (!this.#finished.has(job)) return;
    const base = job.kind === "sync" ? this.#retention.runsyncMs : this.#retention.runMs;
    const keep = Math.min(base, job.resultTtlMs ?? base);
    this.#expireAt(ep, job, job.completedAt + keep);
  }

  /**
   * Applies `/status?ttl=MS`: the result is removed `ttl` ms after completion (or after now, for
   * a job already finished), never later than the default retention.
   */
  setResultTtl(job: JobRecord, ttlMs: number): void {
    job.resultTtlMs = Math.min(job.resultTtlMs ?? ttlMs, ttlMs);
    if (job.completedAt === undefined || job.expiresAt === undefined) return;
    const at = Math.min(job.expiresAt, this.#core.clock.now() + ttlMs);
    if (at < job.expiresAt) this.#expireAt(this.#core.endpoint(job.endpointId), job, at);
  }

  #expireAt(ep: EndpointState, job: JobRecord, at: number): void {
    const { clock } = this.#core;
    if (this.#core.closed()) return;
    if (job.expiryTimer !== undefined) clock.clearTimeout(job.expiryTimer);
    job.expiresAt = at;
    job.expiryTimer = clock.setTimeout(() => {
      job.expiryTimer = undefined;
      this.forget(ep, job);
    }, at - clock.now());
  }
}

/**
 * The job queue of each endpoint: submission (429 when full), the queue ttl (`policy.ttl`, default
 * 24 h: a job still queued when it expires ends TIMED_OUT), dispatch to idle workers (normal
 * priority first; cold workers warmed for the demand, never for `lowPriority` jobs), cancel, retry,
 * purge, and the end of a job (counters, expiry, waiters, webhook).
 */
import { randomUUID } from "node:crypto";
import { TTL_DEFAULT_MS } from "../../wire/limits";
import type { JobRequest } from "../../wire/schemas";
import { QUEUE_FULL_JOBS_PER_WORKER, QUEUE_FULL_MIN_JOBS } from "../serviceFacts";
import type { WebhookSender } from "../webhooks";
import type { JobRunner } from "./jobRunner";
import {
  type EndpointState,
  type EngineCore,
  type FinalStatus,
  type JobRecord,
  type JobStatusBody,
  NotRetryableError,
  notifyWaiters,
  QueueFullError,
  type Worker,
} from "./model";
import type { ResultRetention } from "./retention";
import type { WorkerPool } from "./workerPool";

/** The `/status` body of `job`. `output` appears once COMPLETED, `error` once FAILED/TIMED_OUT. */
export function statusBody(job: JobRecord, now: number): JobStatusBody {
  const body: JobStatusBody = { id: job.id, status: job.status };
  if (job.startedAt !== undefined) body.delayTime = job.startedAt - job.createdAt;
  else if (job.completedAt !== undefined) body.delayTime = job.completedAt - job.createdAt;
  if (job.startedAt !== undefined) body.executionTime = (job.completedAt ?? now) - job.startedAt;
  if (job.workerId !== undefined) body.workerId = job.workerId;
  if (job.hasOutput) body.output = job.output;
  if (job.error !== undefined) body.error = job.error;
  return body;
}

/** Queues jobs, hands them to workers and ends them. */
export class JobQueue {
  readonly #core: EngineCore;
  readonly #pool: WorkerPool;
  readonly #runner: JobRunner;
  readonly #retention: ResultRetention;
  readonly #webhooks: WebhookSender;

  constructor(parts: {
    core: EngineCore;
    pool: WorkerPool;
    runner: JobRunner;
    retention: ResultRetention;
    webhooks: WebhookSender;
  }) {
    this.#core = parts.core;
    this.#pool = parts.pool;
    this.#runner = parts.runner;
    this.#retention = parts.retention;
    this.#webhooks = parts.webhooks;
  }

  /**
   * Queues a new job. Throws `QueueFullError` when the queue is full. The spec answers 429 "when the
   * queue holds more than 50 jobs AND more than WorkersMax x 500 jobs": the test is on the queue as
   * the submission finds it, so a submission is refused only when the queue already holds MORE than
   * max(50, workersMax x 500) jobs. With workersMax <= 0 the queue may therefore reach 51 jobs, with
   * workersMax 2 it may reach 1001.
   */
  submit(ep: EndpointState, request: JobRequest, kind: "run" | "sync"): JobRecord {
    const endpointId = ep.config.id;
    const limit = Math.max(QUEUE_FULL_MIN_JOBS, ep.config.workersMax * QUEUE_FULL_JOBS_PER_WORKER);
    if (ep.queue.length > limit) throw new QueueFullError(endpointId, ep.queue.length, limit);
    const id = kind === "sync" ? `sync-${randomUUID()}` : `${randomUUID()}-u1`;
    const job: JobRecord = {
      id,
      endpointId,
      kind,
      request,
      status: "IN_QUEUE",
      createdAt: this.#core.clock.now(),
      hasOutput: false,
      chunks: [],
      attempt: 0,
      waiters: new Set(),
    };
    ep.jobs.set(id, job);
    ep.counters.submitted++;
    this.enqueue(ep, job);
    return job;
  }

  /** Cancels a queued or running job (a running handler is aborted); a finished job is unchanged. */
  cancel(ep: EndpointState, job: JobRecord): JobRecord {
    if (job.status === "IN_QUEUE") {
      ep.queue = ep.queue.filter((j) => j !== job);
      this.finishJob(ep, job, "CANCELLED", {});
    } else if (job.status === "IN_PROGRESS") {
      job.abort?.abort(new Error("job cancelled"));
      this.finishJob(ep, job, "CANCELLED", {});
    }
    return job;
  }

  /** Re-queues a FAILED or TIMED_OUT job with the same id and input; previous output is removed. */
  retry(ep: EndpointState, job: JobRecord): JobRecord {
    if (job.status !== "FAILED" && job.status !== "TIMED_OUT") {
      throw new NotRetryableError(
        `job ${job.id} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`,
      );
    }
    if (job.expiryTimer !== undefined) this.#core.clock.clearTimeout(job.expiryTimer);
    job.expiryTimer = job.expiresAt = undefined;
    job.attempt++;
    job.status = "IN_QUEUE";
    job.createdAt = this.#core.clock.now();
    this.#retention.dropOutput(job);
    job.startedAt = job.completedAt = job.error = job.output = job.workerId = undefined;
    job.hasOutput = false;
    job.chunks = [];
    ep.counters.retried++;
    this.enqueue(ep, job);
    return job;
  }

  /** Removes every queued job of the endpoint (running jobs keep running); returns how many. */
  purgeQueue(ep: EndpointState): number {
    const purged = ep.queue;
    ep.queue = [];
    for (const job of purged) this.#retention.forget(ep, job);
    ep.counters.purged += purged.length;
    return purged.length;
  }

  enqueue(ep: EndpointState, job: JobRecord): void {
    ep.queue.push(job);
    const ttl = job.request.policy?.ttl ?? TTL_DEFAULT_MS;
    job.ttlTimer = this.#core.clock.setTimeout(() => {
      job.ttlTimer = undefined;
      if (job.status !== "IN_QUEUE") return;
      ep.queue = ep.queue.filter((j) => j !== job);
      this.finishJob(ep, job, "TIMED_OUT", {
        error: `job waited in the queue longer than its ttl of ${ttl} ms`,
      });
    }, ttl);
    // Dispatch after the current call returns, so a submission always answers IN_QUEUE.
    queueMicrotask(() => this.dispatch(ep));
  }

  /**
   * Assigns queued jobs to idle workers, tells waiting load-balancer requests to look again, and
   * warms cold workers for the normal-priority jobs and load-balancer requests still waiting.
   */
  dispatch(ep: EndpointState): void {
    if (this.#core.closed()) return;
    for (const worker of ep.workers) {
      if (worker.state !== "idle" || worker.leaving !== undefined) continue;
      let index = ep.queue.findIndex((j) => !j.request.policy?.lowPriority);
      if (index < 0) index = ep.queue.length > 0 ? 0 : -1;
      if (index < 0) break;
      const [job] = ep.queue.splice(index, 1);
      if (job) this.#runner.start(ep, worker, job);
    }
    // Waiting load-balancer requests take the ready workers first: only those still waiting warm one.
    ep.notifyReady();
    if (ep.config.coldStartMs !== undefined) {
      const demand = ep.queue.filter((j) => !j.request.policy?.lowPriority).length + ep.lbWaiting;
      let starting = ep.workers.filter((w) => w.state === "starting").length;
      for (const worker of ep.workers) {
        if (starting >= demand) break;
        if (worker.state !== "cold") continue;
        this.#pool.startCold(ep, worker);
        starting++;
      }
    }
  }

  /** Ends a job: its worker is freed (or leaves), counters, expiry, waiters and webhook follow. */
  finishJob(
    ep: EndpointState,
    job: JobRecord,
    status: FinalStatus,
    result: { output?: unknown; error?: string },
  ): void {
    // After close(), handlers aborted by it still end: the job keeps its state, counts stay.
    if (this.#core.closed()) return;
    const now = this.#core.clock.now();
    if (job.ttlTimer !== undefined) this.#core.clock.clearTimeout(job.ttlTimer);
    if (job.execTimer !== undefined) this.#core.clock.clearTimeout(job.execTimer);
    job.ttlTimer = job.execTimer = undefined;
    job.status = status;
    job.completedAt = now;
    this.#core.usage?.jobEnded(ep.config.id, job.id);
    if ("output" in result) {
      job.output = result.output;
      job.hasOutput = result.output !== undefined;
      if (job.hasOutput) this.#retention.keepOutput(job);
    }
    if (result.error !== undefined) job.error = result.error;
    const worker = ep.workers.find((w) => w.job === job);
    if (worker) {
      const took = job.startedAt === undefined ? "" : ` after ${now - job.startedAt} ms`;
      this.#core.logs.write(
        worker.id,
        now,
        "container",
        status === "COMPLETED"
          ? `job ${job.id} completed${took}`
          : `job ${job.id} ${status.toLowerCase().replace("_", " ")}${took}${result.error !== undefined ? `: ${result.error}` : ""}`,
      );
      if (status === "FAILED" && result.error !== undefined)
        this.#core.logs.write(worker.id, now, "container", `error: ${result.error}`);
      this.#freeWorker(ep, worker);
    }
    if (status === "COMPLETED") ep.counters.completed++;
    else if (status === "FAILED") ep.counters.failed++;
    else if (status === "TIMED_OUT") ep.counters.timedOut++;
    else ep.counters.cancelled++;
    this.#retention.scheduleExpiry(ep, job);
    notifyWaiters(job);
    const hooks = new Set([job.request.webhook, job.request.webhookV2].filter((url) => url !== undefined));
    if (hooks.size > 0) {
      const body = statusBody(job, this.#core.clock.now());
      for (const url of hooks) this.#webhooks.send(job.id, url, body);
    }
    this.dispatch(ep);
  }

  /** A worker whose job ended is idle again, or leaves when it was waiting to be replaced or removed. */
  #freeWorker(ep: EndpointState, worker: Worker): void {
    worker.job = undefined;
    worker.state = "idle";
    this.#pool.leaveIfDue(ep, worker);
  }
}

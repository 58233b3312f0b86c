/**
 * The job interface of one serverless endpoint: `{serverlessUrl}/v2/{endpointId}/...`.
 * Every method validates its input before any network call and goes through the shared
 * transport (retries, rate limits, timeouts).
 */

import type { z } from "zod";
import { checkEndpointId } from "./endpointId";
import { APIError, JobWaitTimeoutError, ValidationError } from "./errors";
import {
  limitedOperationFor,
  MB,
  type RateLimitTable,
  RUN_PAYLOAD_LIMIT_BYTES,
  RUNSYNC_PAYLOAD_LIMIT_BYTES,
  SYNC_WAIT_DEFAULT_MS,
  SYNC_WAIT_MIN_MS,
} from "./limits";
import { encodeSegment, path } from "./path";
import { type RateLimiter, sharedLimiter } from "./rateLimiter";
import {
  type Health,
  HealthSchema,
  isTerminalStatus,
  type Job,
  type JobRequest,
  JobRequestSchema,
  JobSchema,
  type PurgeQueueResult,
  PurgeQueueResultSchema,
  StatusTtlSchema,
  type StreamChunk,
  StreamResponseSchema,
  SyncWaitSchema,
} from "./schemas";
import type { RequestOptions, Transport, TransportRequest } from "./transport";
import { parseInput } from "./validate";

/** Extra time a long poll's per-attempt timeout gets beyond its `wait`, in ms. */
const LONG_POLL_MARGIN_MS = 15_000;
/** First and longest pause between `/status` or `/stream` polls, in ms. */
const POLL_MIN_MS = 50;
/** How long before `waitForJob`'s deadline its last long poll ends, in ms. */
const DEADLINE_MARGIN_MS = 250;
const POLL_MAX_MS = 1_000;

/** Options of `runSync` and `statusSync`. */
export interface SyncOptions extends RequestOptions {
  /** How long the service holds the request open, in ms: 1000..300000. @default 90000 (service side) */
  wait?: number;
}

/** Options of `status`. */
export interface StatusOptions extends RequestOptions {
  /** Shortens how long the job's result stays readable, in ms (positive integer). */
  ttl?: number;
}

/** Options of `stream`. */
export interface StreamOptions extends RequestOptions {}

/** Options of `waitForJob`. */
export interface WaitForJobOptions {
  /**
   * Give up after this many ms with `JobWaitTimeoutError`, also aborting a request or retry pause
   * in flight at that moment. The job keeps running on the service. @default no limit
   */
  timeoutMs?: number;
  /** Stops waiting with `APIUserAbortError`. */
  signal?: AbortSignal;
  /** Called with the first job answer and with every answer whose status differs from the last. */
  onStatus?: (job: Job) => void;
  /** Retries per underlying request. @default the client's `maxRetries` */
  maxRetries?: number;
}

/** Serverless hosts that answered 404/405 to `/status-sync` for a job `/status` knows. */
const hostsWithoutStatusSync = new Set<string>();

/** Client-wide settings an endpoint needs. */
export interface EndpointContext {
  transport: Transport;
  serverlessUrl: string;
  rateLimits: RateLimitTable | false;
}

/** One serverless endpoint's job interface. Get one with `client.endpoint(id)`. */
export class Endpoint {
  /** The endpoint id. */
  readonly id: string;
  readonly #ctx: EndpointContext;
  readonly #base: string;

  constructor(ctx: EndpointContext, endpointId: string) {
    this.id = checkEndpointId(endpointId);
    this.#ctx = ctx;
    this.#base = `${ctx.serverlessUrl}/v2/${encodeSegment(endpointId)}`;
  }

  private limiter(segment: string): RateLimiter | undefined {
    const table = this.#ctx.rateLimits;
    if (table === false) return undefined;
    const row = limitedOperationFor(segment);
    const rule = row ? table[row] : undefined;
    if (!row || !rule) return undefined;
    return sharedLimiter(this.#ctx.serverlessUrl, this.id, row, rule);
  }

  /**
   * One call to `{serverlessUrl}/v2/{endpointId}{requestPath}`, under the rate-limit row of its
   * operation (the path's first segment: `status`, `cancel`, `health`, ...).
   */
  private async send<S extends z.ZodType>(
    method: "GET" | "POST",
    operation: string,
    requestPath: string,
    schema: S,
    options: RequestOptions | undefined,
    extra: Pick<
      TransportRequest<S>,
      "query" | "body" | "serialized" | "minTimeoutMs" | "drains" | "secrets"
    > = {},
  ): Promise<z.output<S>> {
    const { data } = await this.#ctx.transport.request({
      method,
      baseUrl: this.#base,
      path: requestPath,
      schema,
      limiter: this.limiter(operation),
      options,
      ...extra,
    });
    return data as z.output<S>;
  }

  private async submit(
    segment: "run" | "runsync",
    body: JobRequest,
    limitBytes: number,
    options: RequestOptions | undefined,
    query?: Record<string, number | undefined>,
    minTimeoutMs?: number,
  ): Promise<Job> {
    const parsed = parseInput(JobRequestSchema, body, `${segment} body`);
    const json = JSON.stringify(parsed);
    const bytes = Buffer.byteLength(json, "utf8");
    if (bytes > limitBytes) {
      throw new ValidationError(
        `${segment} body is ${bytes} bytes; the service accepts at most ${limitBytes / MB} MB ` +
          `(${limitBytes} bytes) for /${segment}. Pass large inputs by reference (for example through s3Config).`,
        [],
      );
    }
    return (await this.send("POST", segment, `/${segment}`, JobSchema, options, {
      query,
      body: json,
      serialized: true,
      minTimeoutMs,
      secrets: parsed.s3Config ? [parsed.s3Config.accessSecret, parsed.s3Config.accessId] : undefined,
    })) as Job;
  }

  /** Queues a job (`POST /run`, body at most 10 MB); resolves to `{ id, status }`. Never retried after the service may have acted. */
  async run(body: JobRequest, options?: RequestOptions): Promise<Job> {
    return this.submit("run", body, RUN_PAYLOAD_LIMIT_BYTES, options);
  }

  /**
   * Runs a job and waits (`POST /runsync?wait=`, body at most 20 MB). When `wait` ends first the
   * service answers the non-terminal `{ id, status }`; use `waitForJob` to keep waiting.
   */
  async runSync(body: JobRequest, options: SyncOptions = {}): Promise<Job> {
    const { wait, ...rest } = options;
    if (wait !== undefined) parseInput(SyncWaitSchema, wait, "runSync options", ["wait"]);
    return this.submit(
      "runsync",
      body,
      RUNSYNC_PAYLOAD_LIMIT_BYTES,
      rest,
      { wait },
      (wait ?? SYNC_WAIT_DEFAULT_MS) + LONG_POLL_MARGIN_MS,
    );
  }

  /** Reads a job (`GET /status/{id}`); `ttl` shortens how long its result stays readable. */
  async status(jobId: string, options: StatusOptions = {}): Promise<Job> {
    // The options go to the transport as they are (it reads only the request options): the
    // busiest call skips copying them without `ttl`.
    const ttl = options.ttl;
    if (ttl !== undefined) parseInput(StatusTtlSchema, ttl, "status options", ["ttl"]);
    return (await this.send(
      "GET",
      "status",
      path`/status/${jobId}`,
      JobSchema,
      options,
      ttl === undefined ? undefined : { query: { ttl } },
    )) as Job;
  }

  /** Long-polls a job (`GET /status-sync/{id}?wait=`): answers when it is terminal or `wait` ends. */
  async statusSync(jobId: string, options: SyncOptions = {}): Promise<Job> {
    const { wait, ...rest } = options;
    if (wait !== undefined) parseInput(SyncWaitSchema, wait, "statusSync options", ["wait"]);
    return (await this.send("GET", "status-sync", path`/status-sync/${jobId}`, JobSchema, rest, {
      query: { wait },
      minTimeoutMs: (wait ?? SYNC_WAIT_DEFAULT_MS) + LONG_POLL_MARGIN_MS,
    })) as Job;
  }

  /**
   * Streams a job's output: polls `GET /stream/{id}` and yields each chunk as sent
   * (`{ output, metrics? }`) until the job is terminal. Accepts the service's
   * `{ status, stream: [...] }` envelope and a bare chunk array (then `/status` tells when the
   * job has ended, followed by one last drain). Polls back off from 50 ms to 1 s while idle.
   * Each read drains the chunks the service buffered, so a read that failed after the service may
   * have answered (a reset, a timeout, a 5xx) is not retried, which would skip chunks silently:
   * the error ends the iteration instead.
   */
  async *stream(jobId: string, options: StreamOptions = {}): AsyncGenerator<StreamChunk, void, undefined> {
    encodeSegment(jobId);
    let pause = POLL_MIN_MS;
    let finalDrain = false;
    for (;;) {
      const data = await this.send("GET", "stream", path`/stream/${jobId}`, StreamResponseSchema, options, {
        drains: true,
      });
      const chunks = Array.isArray(data) ? data : data.stream;
      for (const chunk of chunks) yield chunk;
      if (finalDrain) return;
      const status = Array.isArray(data) ? undefined : data.status;
      if (status !== undefined && isTerminalStatus(status)) return;
      if (chunks.length > 0) {
        pause = POLL_MIN_MS;
        continue;
      }
      if (status === undefined) {
        const job = await this.status(jobId, options);
        if (isTerminalStatus(job.status)) {
          finalDrain = true;
          continue;
        }
      }
      await this.#ctx.transport.config.sleep(pause, options.signal);
      pause = Math.min(pause * 2, POLL_MAX_MS);
    }
  }

  /** Job and worker counts (`GET /health`). Not rate limited unless the client's table has a `health` row. */
  async health(options?: RequestOptions): Promise<Health> {
    return this.send("GET", "health", "/health", HealthSchema, options);
  }

  /** Cancels a queued or running job (`POST /cancel/{id}`); resolves to `{ id, status }`. */
  async cancel(jobId: string, options?: RequestOptions): Promise<Job> {
    return (await this.send("POST", "cancel", path`/cancel/${jobId}`, JobSchema, options)) as Job;
  }

  /** Re-queues a FAILED or TIMED_OUT job under the same id (`POST /retry/{id}`). */
  async retry(jobId: string, options?: RequestOptions): Promise<Job> {
    return (await this.send("POST", "retry", path`/retry/${jobId}`, JobSchema, options)) as Job;
  }

  /** Removes every queued job (`POST /purge-queue`); running jobs keep running. */
  async purgeQueue(options?: RequestOptions): Promise<PurgeQueueResult> {
    return this.send("POST", "purge-queue", "/purge-queue", PurgeQueueResultSchema, options);
  }

  /**
   * Waits until a job is terminal and returns it. Uses long polling (`/status-sync`, up to 90 s
   * per request), so a job finishing within 90 s costs one request and is noticed at once; when
   * the server answers 404/405 to `/status-sync` for a job that `/status` knows, falls back to
   * `/status` polling starting at 50 ms and backing off to 1 s.
   * Throws `JobWaitTimeoutError` (with `lastStatus`) after `timeoutMs`.
   */
  async waitForJob(jobId: string, options: WaitForJobOptions = {}): Promise<Job> {
    encodeSegment(jobId);
    const { timeoutMs, signal, onStatus, maxRetries } = options;
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new ValidationError("timeoutMs must be a positive number of milliseconds", ["timeoutMs"]);
    }
    const started = performance.now();
    const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : started + timeoutMs;
    let last: Job | undefined;
    const observe = (job: Job): Job => {
      if (!last || last.status !== job.status) onStatus?.(job);
      last = job;
      return job;
    };
    const giveUp = () =>
      new JobWaitTimeoutError(
        `Job ${jobId} on endpoint ${this.id} was not finished after ${timeoutMs} ms ` +
          `(last status ${last?.status ?? "unknown"}); it keeps running on the service`,
        { jobId, lastStatus: last },
      );
    // The deadline also aborts a request in flight and any retry pause inside it, so a slow or
    // failing service cannot hold the caller past `timeoutMs`.
    const deadlineSignal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const callSignal =
      signal && deadlineSignal ? AbortSignal.any([signal, deadlineSignal]) : (signal ?? deadlineSignal);
    try {
      let pause = POLL_MIN_MS;
      for (;;) {
        const remaining = deadline - performance.now();
        if (remaining <= 0) throw giveUp();
        const request = { signal: callSignal, maxRetries };
        let job: Job;
        let pauseNext = true;
        // The long poll ends a little before the deadline, so its answer (the last status seen)
        // arrives before the deadline aborts it.
        const longPoll = Math.floor(Math.min(remaining - DEADLINE_MARGIN_MS, SYNC_WAIT_DEFAULT_MS));
        if (!hostsWithoutStatusSync.has(this.#ctx.serverlessUrl) && longPoll >= SYNC_WAIT_MIN_MS) {
          const wait = longPoll;
          const sent = performance.now();
          try {
            job = await this.statusSync(jobId, { ...request, wait });
            // A server that held the request is long-polling: ask again at once. One that answered
            // early (it ignores `wait`) is polled with backoff instead of in a tight loop.
            pauseNext = performance.now() - sent < wait / 2;
          } catch (error) {
            if (!(error instanceof APIError) || (error.status !== 404 && error.status !== 405)) throw error;
            // Either the server has no /status-sync or the job is unknown: /status tells which.
            job = await this.status(jobId, request);
            hostsWithoutStatusSync.add(this.#ctx.serverlessUrl);
          }
        } else {
          job = await this.status(jobId, request);
        }
        observe(job);
        if (isTerminalStatus(job.status)) return job;
        if (pauseNext) {
          const left = deadline - performance.now();
          if (left <= 0) throw giveUp();
          await this.#ctx.transport.config.sleep(Math.min(pause, left), callSignal);
          pause = Math.min(pause * 2, POLL_MAX_MS);
        } else {
          pause = POLL_MIN_MS;
        }
      }
    } catch (error) {
      if (deadlineSignal?.aborted && !signal?.aborted) throw giveUp();
      throw error;
    }
  }
}

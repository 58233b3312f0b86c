/**
 * One JobRun execution: submit the job, wait for a terminal state (retrying on the service when
 * asked), collect its stream, and judge the result against `expect`.
 *
 * Timing: everything is bounded by `timeoutMs`, counted from the start of the execution. The
 * waits are the client's long polls (`/runsync?wait=` then `/status-sync`), so a job that ends
 * within 90 s costs one or two requests and is noticed as soon as the service answers.
 *
 * Submission goes through the client's one retry policy (`src/client/retry.ts`): a job request
 * the service provably did not act on (429, 503, a connection never opened) is sent again at
 * most the client's `maxRetries` times (default 5), each after the service's Retry-After or the
 * client's exponential backoff; one that it may have acted on (a 500, a reset or timeout after
 * sending, an unreadable answer) is never sent again, because the service has no idempotency key
 * and no job listing, and a second GPU job costs money. The deadline stops only the waits before
 * a send (`waitSignal` for runsync); an abort there is `APIUserAbortError` with `sent: false`, so
 * a job never accepted is never reported as possibly submitted.
 *
 * Bounds: a deploy ends within `timeoutMs` plus, when the JobRun stops waiting for a job, one
 * cancel (`CANCEL_TIMEOUT_MS`). A runsync request already on the wire at the deadline (its answer
 * carries the only copy of the job id) gets `RUNSYNC_ANSWER_GRACE_MS` more, then is cut and
 * reported as a submission in doubt.
 */
import type { Endpoint } from "../../client/endpoint";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  JobWaitTimeoutError,
  RateLimitError,
} from "../../client/errors";
import { MB, SYNC_WAIT_MAX_MS, SYNC_WAIT_MIN_MS } from "../../client/limits";
import { mayHaveActed } from "../../client/retry";
import { isTerminalStatus, type Job, type JobRequest, type StreamChunk } from "../../client/schemas";
import { describeError } from "../values";
import type { ResolvedJobRunInputs } from "./args";
import { findMismatches, formatMismatches } from "./match";

/** Most stream chunks kept in the `stream` output. */
export const MAX_STREAM_CHUNKS = 1000;
/** Most bytes of stream chunk JSON kept in the `stream` output: 1 MB (1,000,000 bytes). */
export const MAX_STREAM_BYTES = 1 * MB;
/** How long a cancel on timeout (or a status check around a retry) may take in all, in ms. */
export const CANCEL_TIMEOUT_MS = 10_000;
/** Time kept free at the end of `timeoutMs` so a runsync wait answers before the deadline, in ms. */
export const RUNSYNC_MARGIN_MS = 1_000;
/**
 * Smallest `timeoutMs` of mode "runsync": the shortest runsync wait (1 s), the margin, and 1 s
 * for the request itself, so the service answers with the job id before the deadline.
 */
export const MIN_RUNSYNC_TIMEOUT_MS = SYNC_WAIT_MIN_MS + RUNSYNC_MARGIN_MS + 1_000;
/**
 * How long a runsync request already sent may outlive `timeoutMs` to bring its answer (the job
 * id, so the job can be cancelled), in ms; then it is cut and the submission is in doubt.
 */
export const RUNSYNC_ANSWER_GRACE_MS = 2_000;
/** Timeline entry recorded when a cancel got no confirmation from the service. */
export const CANCEL_NOT_CONFIRMED = "CANCEL_NOT_CONFIRMED";
/** Status recorded when JobRun cannot tell whether the job is queued again (an ambiguous retry). */
export const STATUS_UNKNOWN = "UNKNOWN";
/** How long to wait for the last stream chunks once the job is terminal, at most, in ms. */
export const STREAM_DRAIN_MS = 5_000;

/** One status seen while the JobRun waited, with the time since the JobRun started. */
export interface TimelineEntry {
  status: string;
  /** Milliseconds since the JobRun started (submission is at about 0). */
  atMs: number;
}

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
  /** How many times the job ran: 1 plus the retries used. */
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
}

/** The verdict of an execution: the result, and the failure message when the smoke test failed. */
export interface JobRunOutcome {
  result: JobRunResult;
  /** Why the deploy must fail; undefined when the job met `expect`. */
  failure?: string;
}

/** Thrown when no job exists to record: it was never submitted, or its submission is in doubt. */
export class JobRunSubmitError extends Error {
  /** True when the service may have created a job anyway. */
  readonly ambiguous: boolean;
  constructor(message: string, ambiguous: boolean, cause: unknown) {
    super(message, { cause });
    this.name = "JobRunSubmitError";
    this.ambiguous = ambiguous;
  }
}

/** What an execution needs from its surroundings; replaceable in tests. */
export interface RunContext {
  endpoint: Pick<
    Endpoint,
    "id" | "run" | "runSync" | "waitForJob" | "retry" | "cancel" | "stream" | "status"
  >;
  /** Progress lines (status changes with elapsed time). */
  log: (line: string) => void;
  /** Monotonic milliseconds. @default performance.now */
  now?: () => number;
  /** Wall clock, ms since the epoch. @default Date.now */
  wallNow?: () => number;
}

/**
 * True when a failed submission was a passing refusal the client's retry policy resends (and
 * gave up on after its `maxRetries`): the service provably did not act on it (`mayHaveActed`
 * says no) and it answered 429 or 503, or the connection never opened. Used only to word the
 * failure; the resending itself is the client's.
 */
export function resendable(error: unknown): boolean {
  if (mayHaveActed(error)) return false;
  if (error instanceof RateLimitError) return true;
  if (error instanceof APIError) return error.status === 503;
  return error instanceof APIConnectionError && !(error instanceof APITimeoutError);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/** The timeline as one line: `IN_QUEUE 0.01 s -> IN_PROGRESS 0.02 s -> COMPLETED 0.13 s`. */
export function formatTimeline(timeline: readonly TimelineEntry[]): string {
  if (timeline.length === 0) return "(no status seen)";
  return timeline.map((e) => `${e.status} ${seconds(e.atMs)}`).join(" -> ");
}

function errorText(error: unknown): string | undefined {
  if (error === undefined || error === null || error === "") return undefined;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/**
 * Runs one JobRun. Resolves with the outcome once a job exists (whether it met `expect` or not);
 * rejects with `JobRunSubmitError` when no job could be submitted or the submission is in doubt.
 */
export async function executeJobRun(args: ResolvedJobRunInputs, ctx: RunContext): Promise<JobRunOutcome> {
  const { endpoint } = ctx;
  const now = ctx.now ?? (() => performance.now());
  const wallNow = ctx.wallNow ?? Date.now;
  const started = now();
  const deadline = started + args.timeoutMs;
  const remaining = () => deadline - now();
  const elapsed = () => Math.max(0, Math.round(now() - started));

  const deadlineController = new AbortController();
  const timer = setTimeout(
    () => deadlineController.abort(new Error(`timeoutMs (${args.timeoutMs} ms) expired`)),
    args.timeoutMs,
  );
  const signal = deadlineController.signal;

  const result: JobRunResult = { attempts: 0, timeline: [] };
  const where = () => `endpoint ${endpoint.id}${result.jobId ? ` job ${result.jobId}` : ""}`;
  const note = (status: string) => {
    const last = result.timeline[result.timeline.length - 1];
    if (last?.status === status) return;
    const entry = { status, atMs: elapsed() };
    result.timeline.push(entry);
    ctx.log(`JobRun ${where()}: ${status} after ${seconds(entry.atMs)}`);
  };

  /** A stream collection in progress; `finished` turns true once it stopped by itself. */
  type Collector = { controller: AbortController; done: Promise<void>; finished: () => boolean };
  let collector: Collector | undefined;

  try {
    // ---- submit -------------------------------------------------------------------------------
    let job = await submit();
    result.jobId = job.id;
    result.startedAt = new Date(wallNow()).toISOString();
    result.attempts = 1;
    note(job.status);

    // ---- stream -------------------------------------------------------------------------------
    if (args.collectStream) collector = collectStream(job.id);

    // ---- wait, retrying on the service when asked --------------------------------------------
    for (;;) {
      if (!isTerminalStatus(job.status)) {
        try {
          job = await waitUntilTerminal(job.id);
        } catch (error) {
          return await stopWaiting(job, error);
        }
      }
      note(job.status);
      const retryable = job.status === "FAILED" || job.status === "TIMED_OUT";
      if (retryable && job.status !== args.expect.status && result.attempts <= args.retries) {
        if (collector) await finishStream(collector, job.id);
        ctx.log(`JobRun ${where()}: ${job.status}; retry ${result.attempts} of ${args.retries}`);
        try {
          job = await endpoint.retry(job.id, { signal });
        } catch (error) {
          if (mayHaveActed(error)) {
            // The service may have queued the job again: look before recording it as ended.
            const requeued = await statusAfterRetry(job);
            if (requeued === undefined) {
              result.status = STATUS_UNKNOWN;
              note(STATUS_UNKNOWN);
              return {
                result,
                failure: failureMessage(
                  args,
                  result,
                  `the job ended ${job.status}, the retry (${result.attempts} of ${args.retries}) may or may not ` +
                    `have re-queued it (${describeError(error)}), and its status could not be read`,
                  `Read the job's status (GET /status/${job.id}) and cancel it if it runs (POST /cancel/${job.id}); ` +
                    "`pulumi destroy` and the next `pulumi up` check it and cancel it first.",
                ),
              };
            }
            if (!isTerminalStatus(requeued.status)) {
              ctx.log(
                `JobRun ${where()}: the retry failed (${describeError(error)}) but the job is ${requeued.status}`,
              );
              result.attempts += 1;
              job = requeued;
              note(job.status);
              if (collector) collector = collectStream(job.id);
              continue;
            }
          }
          recordJob(job);
          return {
            result,
            failure: failureMessage(
              args,
              result,
              `the job ended ${job.status} and the retry (${result.attempts} of ${args.retries}) failed: ${describeError(error)}`,
              "The service keeps results for 30 minutes (60 s for runsync jobs) and retries only FAILED or TIMED_OUT jobs; run `pulumi up` again to start a new job.",
            ),
          };
        }
        result.attempts += 1;
        note(job.status);
        if (collector) collector = collectStream(job.id);
        continue;
      }
      break;
    }

    // ---- judge --------------------------------------------------------------------------------
    recordJob(job);
    result.completedAt = new Date(wallNow()).toISOString();
    if (collector) await finishStream(collector, job.id);
    return { result, failure: judge(args, result) };
  } finally {
    clearTimeout(timer);
  }

  function recordJob(job: Job) {
    result.status = job.status;
    if (job.output !== undefined) result.output = job.output;
    const error = errorText(job.error);
    if (error !== undefined) result.error = error;
    if (typeof job.delayTime === "number") result.delayTime = job.delayTime;
    if (typeof job.executionTime === "number") result.executionTime = job.executionTime;
  }

  async function submit(): Promise<Job> {
    const body: JobRequest = { input: args.input };
    if (args.webhook !== undefined) body.webhook = args.webhook;
    if (args.policy !== undefined) body.policy = args.policy;
    if (args.s3Config !== undefined) body.s3Config = args.s3Config;
    try {
      if (args.mode !== "runsync") return await endpoint.run(body, { signal });
      // Leave a margin so the service answers `{id, status}` before our deadline: the job can
      // then still be cancelled by id.
      const wait = Math.floor(
        Math.min(SYNC_WAIT_MAX_MS, Math.max(SYNC_WAIT_MIN_MS, remaining() - RUNSYNC_MARGIN_MS)),
      );
      // The deadline stops the waits before sending (`waitSignal`). Once the body is on its way
      // the answer carries the only copy of the job id, so the request gets the grace beyond the
      // deadline to bring it; a server holding it longer is cut there (the submission is then in
      // doubt), never left to the client's per-attempt timeout (wait + 15 s, at least 60 s).
      const cut = new AbortController();
      const cutTimer = setTimeout(
        () => cut.abort(new Error(`POST /runsync outlasted timeoutMs by ${RUNSYNC_ANSWER_GRACE_MS} ms`)),
        Math.max(0, remaining()) + RUNSYNC_ANSWER_GRACE_MS,
      );
      try {
        return await endpoint.runSync(body, { waitSignal: signal, signal: cut.signal, wait });
      } finally {
        clearTimeout(cutTimer);
      }
    } catch (error) {
      throw submitError(error);
    }
  }

  function submitError(error: unknown): JobRunSubmitError {
    const mode = args.mode === "runsync" ? "POST /runsync" : "POST /run";
    if (mayHaveActed(error)) {
      const why =
        signal.aborted || error instanceof APIUserAbortError
          ? `timeoutMs (${args.timeoutMs} ms) expired while ${mode} was in flight`
          : `${mode} failed after it was sent (${describeError(error)})`;
      return new JobRunSubmitError(
        `JobRun cannot tell whether a job was submitted to endpoint ${endpoint.id}: ${why}. ` +
          "The submission may or may not have happened. The service has no idempotency key and no job listing, " +
          "so JobRun did not send a second job. " +
          "Hint: check the endpoint's queue (getEndpointHealth or the RunPod console) for a stray job, then run " +
          "`pulumi up` again to submit a new one.",
        true,
        error,
      );
    }
    if (resendable(error)) {
      return new JobRunSubmitError(
        `JobRun could not submit a job to endpoint ${endpoint.id} within timeoutMs (${args.timeoutMs} ms): ` +
          `the service kept refusing it (${describeError(error)}). No job was created. ` +
          "Hint: the endpoint's queue or the account's rate limits are full; try again later, raise timeoutMs, " +
          "or check the endpoint with getEndpointHealth.",
        false,
        error,
      );
    }
    if (signal.aborted) {
      return new JobRunSubmitError(
        `JobRun could not submit a job to endpoint ${endpoint.id} within timeoutMs (${args.timeoutMs} ms): ` +
          `the deadline passed while ${mode} waited to be sent (a pause after the service refused it with ` +
          "429 or 503, or a slot of the account's rate limit). No job was created. " +
          "Hint: the endpoint's queue or the account's rate limits are full; try again later, raise timeoutMs, " +
          "or check the endpoint with getEndpointHealth.",
        false,
        error,
      );
    }
    return new JobRunSubmitError(
      `JobRun could not submit a job to endpoint ${endpoint.id}: ${describeError(error)}. No job was created. ` +
        "Hint: check the endpoint id, the API key (runpod:apiKey or RUNPOD_API_KEY) and the job input.",
      false,
      error,
    );
  }

  async function waitUntilTerminal(jobId: string): Promise<Job> {
    const left = remaining();
    if (left <= 0) throw new JobWaitTimeoutError("deadline passed", { jobId, lastStatus: undefined });
    return endpoint.waitForJob(jobId, {
      timeoutMs: Math.max(1, Math.floor(left)),
      signal,
      onStatus: (seen) => note(seen.status),
    });
  }

  /**
   * The job's status after a retry that may have acted, bounded by `CANCEL_TIMEOUT_MS` (not by the
   * deadline, which may be what aborted the retry); undefined when it cannot be read.
   */
  async function statusAfterRetry(job: Job): Promise<Job | undefined> {
    try {
      return await endpoint.status(job.id, { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), maxRetries: 1 });
    } catch (error) {
      ctx.log(`JobRun ${where()}: reading the status after the retry failed (${describeError(error)})`);
      return undefined;
    }
  }

  /** The JobRun stopped waiting before the job ended: cancel it when asked and say so. */
  async function stopWaiting(job: Job, error: unknown): Promise<JobRunOutcome> {
    const timedOut = signal.aborted || error instanceof JobWaitTimeoutError || remaining() <= 0;
    const lastStatus =
      error instanceof JobWaitTimeoutError && (error.lastStatus as Job | undefined)?.status
        ? (error.lastStatus as Job).status
        : (result.timeline[result.timeline.length - 1]?.status ?? job.status);
    result.status = lastStatus;
    let cancelled = "";
    if (args.cancelOnTimeout) {
      try {
        // Bounded as a whole (rate-limit wait, quota pause, one retry), not only per attempt.
        const answer = await endpoint.cancel(job.id, {
          signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
          maxRetries: 1,
        });
        note(answer.status);
        result.status = answer.status;
        cancelled = `JobRun cancelled the job on the service (status ${answer.status}), so it stops spending credits.`;
      } catch (cancelError) {
        note(CANCEL_NOT_CONFIRMED);
        cancelled =
          `JobRun tried to cancel the job but the cancel failed (${describeError(cancelError)}): ` +
          `cancel it yourself (POST /v2/${endpoint.id}/cancel/${job.id} or the RunPod console).`;
      }
    } else {
      cancelled = "The job was left running on the service (cancelOnTimeout is false).";
    }
    if (collector && !collector.finished()) {
      // The job has not ended, so its stream has not either: what was kept is only a part.
      collector.controller.abort();
      result.streamTruncated = true;
      ctx.log(
        `JobRun ${where()}: stopped reading the stream with the wait (${result.stream?.length ?? 0} chunks kept)`,
      );
    }
    const what = timedOut
      ? `the job did not finish within timeoutMs (${args.timeoutMs} ms); last status ${lastStatus}`
      : `waiting for the job failed (${describeError(error)}); last status ${lastStatus}`;
    const hint = timedOut
      ? "If the job stayed IN_QUEUE, the endpoint has no free worker (check getEndpointHealth: workers.idle, " +
        "workers.running, jobs.inQueue); if it was IN_PROGRESS, the job needs longer: raise timeoutMs " +
        "(and policy.executionTimeout). Run `pulumi up` again to start a new job."
      : "Check the connection to the service and the API key, then run `pulumi up` again to start a new job.";
    return { result, failure: failureMessage(args, result, `${what}. ${cancelled}`, hint) };
  }

  // Stream collection runs beside the wait; it is bounded and never fails the JobRun.
  function collectStream(jobId: string) {
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
            ctx.log(
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
          ctx.log(
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
  async function finishStream(current: Collector, jobId: string) {
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
      ctx.log(
        `JobRun endpoint ${endpoint.id} job ${jobId}: stopped reading the stream ${seconds(bound)} after the job ended`,
      );
    }
  }
}

/** Compares a finished job with `expect`; returns the failure message, or undefined on success. */
export function judge(args: ResolvedJobRunInputs, result: JobRunResult): string | undefined {
  const expected = args.expect.status;
  if (result.status !== expected) {
    const what =
      `the job ended ${result.status}, expected ${expected}` +
      (result.attempts > 1 ? ` (after ${result.attempts} attempts)` : "");
    return failureMessage(args, result, what, hintFor(result.status, expected, result));
  }
  if (args.expect.output !== undefined) {
    const mismatch = findMismatches(args.expect.output, result.output);
    if (mismatch.total > 0) {
      return failureMessage(
        args,
        result,
        `the job ended ${result.status} but its output does not contain expect.output ` +
          `(${mismatch.total} difference${mismatch.total === 1 ? "" : "s"}):\n` +
          formatMismatches(mismatch, { hideValues: args.secretOutput }),
        "Fix the worker or the input if the output is wrong, or update expect.output if the new output is " +
          "right; `pulumi up` then runs the job again.",
      );
    }
  }
  return undefined;
}

function hintFor(status: string | undefined, expected: string, result: JobRunResult): string {
  const again = "`pulumi up` runs the job again, even with unchanged arguments.";
  switch (status) {
    case "FAILED":
      return (
        "The worker raised an error: read the worker error above and the worker's logs for this job in " +
        `the RunPod console, fix the worker image or the job input, then run \`pulumi up\`: ${again}`
      );
    case "TIMED_OUT":
      return (
        "The job waited in the queue longer than policy.ttl or ran longer than policy.executionTimeout: " +
        "check the endpoint has workers (getEndpointHealth: workers.idle, workers.running) and raise the " +
        `policy limits if the job is just slow. ${again}`
      );
    case "CANCELLED":
      return `The job was cancelled on the service (the console, a purge or another client). ${again}`;
    case "COMPLETED":
      return `The job succeeded but expect.status is ${expected}: check the input meant to make it end ${expected}. ${again}`;
    default:
      return `${result.jobId ? `Read the job's status (GET /status/${result.jobId}). ` : ""}${again}`;
  }
}

/** The deploy failure text: what happened, to which job, the worker's error, the timeline and a hint. */
export function failureMessage(
  args: ResolvedJobRunInputs,
  result: JobRunResult,
  what: string,
  hint: string,
): string {
  const lines = [`JobRun failed on endpoint ${args.endpointId}, job ${result.jobId ?? "(none)"}: ${what}`];
  lines.push(`Status: ${result.status ?? "unknown"}; attempts: ${result.attempts}`);
  if (result.error !== undefined) lines.push(`Worker error: ${result.error.slice(0, 2000)}`);
  lines.push(`Timeline: ${formatTimeline(result.timeline)}`);
  lines.push(`Hint: ${hint}`);
  return lines.join("\n");
}

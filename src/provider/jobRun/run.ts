/**
 * One JobRun execution, read top to bottom: submit the job (`submission.ts`), collect its stream
 * beside the wait (`stream.ts`), wait for a terminal state, retry on the service when asked, and
 * judge the result against `expect` (`verdict.ts`). What it finds is a `JobRunResult`
 * (`result.ts`); its bounds are in `bounds.ts`.
 *
 * Timing: everything is bounded by `timeoutMs`, counted from the start of the execution. The
 * waits are the client's long polls (`/runsync?wait=` then `/status-sync`), so a job that ends
 * within 90 s costs one or two requests and is noticed as soon as the service answers. A deploy
 * ends within `timeoutMs` plus, when the JobRun stops waiting for a job, one cancel
 * (`CANCEL_TIMEOUT_MS`); a runsync request on the wire at the deadline gets
 * `RUNSYNC_ANSWER_GRACE_MS` more (see `submission.ts`).
 */
import type { Endpoint } from "../../client/endpoint";
import { JobWaitTimeoutError } from "../../client/errors";
import { mayHaveActed } from "../../client/retry";
import { isTerminalStatus, type Job } from "../../client/schemas";
import { describeError } from "../values";
import type { ResolvedJobRunInputs } from "./args";
import { CANCEL_NOT_CONFIRMED, CANCEL_TIMEOUT_MS, STATUS_UNKNOWN } from "./bounds";
import { type JobRunOutcome, type JobRunResult, seconds } from "./result";
import { type CaptureSink, type Collector, collectStream, finishStream } from "./stream";
import { submitJob } from "./submission";
import { failureMessage, judge } from "./verdict";

// The modules' public names, re-exported: tests and lifecycle.ts import them from here.
export * from "./bounds";
export { formatTimeline, type JobRunOutcome, type JobRunResult, type TimelineEntry } from "./result";
export { JobRunSubmitError, resendable } from "./submission";
export { failureMessage, judge } from "./verdict";

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

  const sink: CaptureSink = { endpoint, result, log: ctx.log, where };
  let collector: Collector | undefined;

  try {
    // ---- submit -------------------------------------------------------------------------------
    let job = await submitJob(args, { endpoint, signal, remaining });
    result.jobId = job.id;
    result.startedAt = new Date(wallNow()).toISOString();
    result.attempts = 1;
    note(job.status);

    // ---- stream -------------------------------------------------------------------------------
    if (args.collectStream) collector = collectStream(sink, job.id);

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
        if (collector) await finishStream(sink, collector, job.id, remaining);
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
              if (collector) collector = collectStream(sink, job.id);
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
        if (collector) collector = collectStream(sink, job.id);
        continue;
      }
      break;
    }

    // ---- judge --------------------------------------------------------------------------------
    recordJob(job);
    result.completedAt = new Date(wallNow()).toISOString();
    if (collector) await finishStream(sink, collector, job.id, remaining);
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
}

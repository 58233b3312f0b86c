/**
 * One JobRun execution, read top to bottom: submit the job (`submission.ts`), collect its stream
 * beside the wait (`stream.ts`), wait for a terminal state (`waiting.ts`), retry on the service
 * when asked (`serviceRetry.ts`), and judge the result against `expect` (`verdict.ts`). The steps
 * share one `Execution` (`execution.ts`); what it finds is a `JobRunResult` (`result.ts`); its
 * bounds are in `bounds.ts`.
 *
 * Timing: everything is bounded by `timeoutMs`, counted from the start of the execution. The
 * waits are the client's long polls (`/runsync?wait=` then `/status-sync`), so a job that ends
 * within 90 s costs one or two requests and is noticed as soon as the service answers. A deploy
 * ends within `timeoutMs` plus, when the JobRun stops waiting for a job, one cancel
 * (`CANCEL_TIMEOUT_MS`); a runsync request on the wire at the deadline gets
 * `RUNSYNC_ANSWER_GRACE_MS` more (see `submission.ts`).
 */
import { isTerminalStatus } from "../../client/schemas";
import type { ResolvedJobRunInputs } from "./args";
import { type Execution, type RunContext, recordJob } from "./execution";
import { type JobRunOutcome, type JobRunResult, seconds } from "./result";
import { retryOnService, wantsRetry } from "./serviceRetry";
import { collectStream, finishStream } from "./stream";
import { submitJob } from "./submission";
import { judge } from "./verdict";
import { stopWaiting, waitUntilTerminal } from "./waiting";

// The modules' public names, re-exported: tests and lifecycle.ts import them from here.
export * from "./bounds";
export type { RunContext } from "./execution";
export { formatTimeline, type JobRunOutcome, type JobRunResult, type TimelineEntry } from "./result";
export { JobRunSubmitError, resendable } from "./submission";
export { failureMessage, judge } from "./verdict";

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
  const run: Execution = {
    args,
    endpoint,
    result,
    log: ctx.log,
    where,
    note,
    signal,
    remaining,
    sink: { endpoint, result, log: ctx.log, where },
  };

  try {
    let job = await submitJob(args, { endpoint, signal, remaining });
    result.jobId = job.id;
    result.startedAt = new Date(wallNow()).toISOString();
    result.attempts = 1;
    note(job.status);
    if (args.collectStream) run.collector = collectStream(run.sink, job.id);

    for (;;) {
      if (!isTerminalStatus(job.status)) {
        try {
          job = await waitUntilTerminal(run, job.id);
        } catch (error) {
          return await stopWaiting(run, job, error);
        }
      }
      note(job.status);
      if (!wantsRetry(run, job)) break;
      const retried = await retryOnService(run, job);
      if (retried.outcome) return retried.outcome;
      job = retried.job;
    }

    recordJob(result, job);
    result.completedAt = new Date(wallNow()).toISOString();
    if (run.collector) await finishStream(run.sink, run.collector, job.id, remaining);
    return { result, failure: judge(args, result) };
  } finally {
    clearTimeout(timer);
  }
}

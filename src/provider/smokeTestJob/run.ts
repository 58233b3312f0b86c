/**
 * One JobRun execution, read top to bottom: wait until the endpoint's rollout is over
 * (`rolloutSteps.ts`, with `rollout: "wait"`), submit the job (`submission.ts`), collect its
 * stream beside the wait (`stream.ts`), wait for a terminal state (`waiting.ts`), retry on the
 * service when asked (`serviceRetry.ts`), check which release ran it (`rolloutSteps.ts`; once more
 * from the top when it was an older one), and judge the result against `expect` (`verdict.ts`).
 * The steps share one `Execution` (`execution.ts`); what it finds is a `JobRunResult`
 * (`result.ts`); its bounds are in `bounds.ts`.
 *
 * Timing: everything is bounded by `timeoutMs`, counted from the start of the execution. The
 * waits are the client's long polls (`/runsync?wait=` then `/status-sync`), so a job that ends
 * within 90 s costs one or two requests and is noticed as soon as the service answers; a rollout
 * wait reads the workers once a second. A deploy ends within `timeoutMs` plus, when the JobRun
 * stops waiting for a job, one cancel (`CANCEL_TIMEOUT_MS`), or, after a job that ended, one
 * release check (`RELEASE_CHECK_TIMEOUT_MS`); a runsync request on the wire at the deadline gets
 * `RUNSYNC_ANSWER_GRACE_MS` more (see `submission.ts`). The deployment's cancellation (the native
 * plugin's `Cancel`, `RunContext.cancellation`) ends every wait as the deadline does, with the job
 * cancelled as at the deadline; a job request already sent still brings its answer (the job id).
 */
import { isTerminalStatus, type Job } from "../../client";
import { boundEntry } from "../common/wording";
import { type Execution, type RunContext, recordJob, startExecution } from "./execution";
import type { ResolvedJobRunArgs } from "./jobArgs";
import type { JobRunOutcome, JobRunResult } from "./result";
import {
  checkRelease,
  releaseFailure,
  rolloutBeforeResend,
  rolloutReader,
  waitOutRollout,
} from "./rolloutSteps";
import { retryOnService, wantsRetry } from "./serviceRetry";
import { collectStream, finishStream } from "./stream";
import { submitJob } from "./submission";
import { judge } from "./verdict";
import { stopWaiting, waitUntilTerminal } from "./waiting";

// The modules' public names, re-exported: tests import them from here.
export * from "./bounds";
export type { RunContext } from "./execution";
export { formatTimeline, type JobRunOutcome, type JobRunResult, type TimelineEntry } from "./result";
export { JobRunSubmitError, resendable } from "./submission";
export { failureMessage, judge } from "./verdict";

/**
 * Runs one JobRun. Resolves with the outcome once a job exists (whether it met `expect` or not);
 * rejects with `JobRunSubmitError` when no job could be submitted or the submission is in doubt
 * (the rollout wait before it included).
 */
export async function executeJobRun(args: ResolvedJobRunArgs, ctx: RunContext): Promise<JobRunOutcome> {
  const { endpoint } = ctx;
  const { run, stop } = startExecution(
    args,
    ctx,
    (result) => `endpoint ${endpoint.id}${result.jobId ? ` job ${boundEntry(result.jobId)}` : ""}`,
  );
  const { result } = run;

  try {
    const workers = rolloutReader(args, ctx);
    let versionAtSubmit =
      workers === undefined ? undefined : await waitOutRollout(run, workers, ctx.workersKey);
    for (let submission = 1; ; submission += 1) {
      const ended = await runJob(run);
      if (ended.outcome !== undefined) return ended.outcome;
      if (workers === undefined) return { result, failure: judge(args, result) };
      const release = await checkRelease(run, workers, versionAtSubmit);
      const placement = run.placement === undefined ? {} : { placement: run.placement };
      if (release.kind === "current") {
        result.endpointVersion = release.version;
        return { result, failure: judge(args, result), ...placement };
      }
      if (release.kind === "unreadable" || submission > 1) {
        return { result, failure: judge(args, result) ?? releaseFailure(run, release), ...placement };
      }
      // The job ran on an older release (one rolled out while it ran): test the current one.
      const waited = await rolloutBeforeResend(run, workers, ctx.workersKey, {
        found: `the job did not run the endpoint's current release (${release.how})`,
        resend: "submitting it again",
        forget: JOB_FIELDS,
      });
      if ("error" in waited) return { result, failure: releaseFailure(run, release, waited.error) };
      versionAtSubmit = waited.version;
    }
  } finally {
    stop();
  }
}

/**
 * Submits the job and follows it to its end (service-side retries included): resolves with the
 * ended job recorded in the result, or with the outcome when the JobRun stopped first.
 */
async function runJob(run: Execution): Promise<{ outcome?: JobRunOutcome }> {
  const { args, endpoint, result } = run;
  let job: Job = await submitJob(args, {
    endpoint,
    signal: run.signal,
    deadline: run.deadline,
    cancelled: run.cancelled,
    remaining: run.remaining,
  });
  result.jobId = job.id;
  result.startedAt = new Date(run.wallNow()).toISOString();
  result.attempts += 1;
  run.retriesUsed = 0;
  run.note(job.status);
  if (args.collectStream) run.collector = collectStream(run.sink, job.id);
  for (;;) {
    if (!isTerminalStatus(job.status)) {
      try {
        job = await waitUntilTerminal(run, job.id);
      } catch (error) {
        return { outcome: await stopWaiting(run, job, error) };
      }
    }
    run.note(job.status);
    if (!wantsRetry(run, job)) break;
    const retried = await retryOnService(run, job);
    if (retried.outcome) return { outcome: retried.outcome };
    job = retried.job;
  }
  recordJob(result, job);
  result.completedAt = new Date(run.wallNow()).toISOString();
  if (run.collector) await finishStream(run.sink, run.collector, job.id, run.remaining);
  return {};
}

/** The job's own fields of the result, forgotten before a new submission (timeline and attempts stay). */
const JOB_FIELDS = [
  "jobId",
  "status",
  "output",
  "error",
  "delayTime",
  "executionTime",
  "workerId",
  "startedAt",
  "completedAt",
  "stream",
  "streamTruncated",
  "endpointVersion",
] as const satisfies readonly (keyof JobRunResult)[];

/**
 * One JobRun execution, read top to bottom: wait until the endpoint's rollout is over
 * (`rollout.ts`, with `rollout: "wait"`), submit the job (`submission.ts`), collect its stream
 * beside the wait (`stream.ts`), wait for a terminal state (`waiting.ts`), retry on the service
 * when asked (`serviceRetry.ts`), check which release ran it (`rollout.ts`; once more from the
 * top when it was an older one), and judge the result against `expect` (`verdict.ts`). The steps
 * share one `Execution` (`execution.ts`); what it finds is a `JobRunResult` (`result.ts`); its
 * bounds are in `bounds.ts`.
 *
 * Timing: everything is bounded by `timeoutMs`, counted from the start of the execution. The
 * waits are the client's long polls (`/runsync?wait=` then `/status-sync`), so a job that ends
 * within 90 s costs one or two requests and is noticed as soon as the service answers; a rollout
 * wait reads the workers once a second. A deploy ends within `timeoutMs` plus, when the JobRun
 * stops waiting for a job, one cancel (`CANCEL_TIMEOUT_MS`), or, after a job that ended, one
 * release check (`RELEASE_CHECK_TIMEOUT_MS`); a runsync request on the wire at the deadline gets
 * `RUNSYNC_ANSWER_GRACE_MS` more (see `submission.ts`).
 */
import { isTerminalStatus, type Job, NotFoundError } from "../../client";
import { describeError } from "../shared";
import type { ResolvedJobRunArgs } from "./args";
import { type Execution, type RunContext, recordJob } from "./execution";
import { type JobRunOutcome, type JobRunResult, seconds } from "./result";
import {
  RELEASE_CHECK_TIMEOUT_MS,
  type ReleaseCheck,
  ROLLED_OUT,
  ROLLOUT_WAIT,
  RolloutTimeoutError,
  releaseOfJob,
  STALE_WORKER,
  waitForRollout,
} from "./rollout";
import { retryOnService, wantsRetry } from "./serviceRetry";
import { collectStream, finishStream } from "./stream";
import { JobRunSubmitError, submitJob } from "./submission";
import { failureMessage, judge } from "./verdict";
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
  const now = ctx.now ?? (() => performance.now());
  const started = now();
  const deadline = started + args.timeoutMs;
  const elapsed = () => Math.max(0, Math.round(now() - started));

  const deadlineController = new AbortController();
  const timer = setTimeout(
    () => deadlineController.abort(new Error(`timeoutMs (${args.timeoutMs} ms) expired`)),
    args.timeoutMs,
  );

  const result: JobRunResult = { attempts: 0, timeline: [] };
  const where = () => `endpoint ${endpoint.id}${result.jobId ? ` job ${result.jobId}` : ""}`;
  const run: Execution = {
    args,
    endpoint,
    result,
    log: ctx.log,
    where,
    note: (status) => {
      const last = result.timeline[result.timeline.length - 1];
      if (last?.status === status) return;
      const entry = { status, atMs: elapsed() };
      result.timeline.push(entry);
      ctx.log(`JobRun ${where()}: ${status} after ${seconds(entry.atMs)}`);
    },
    signal: deadlineController.signal,
    remaining: () => deadline - now(),
    wallNow: ctx.wallNow ?? Date.now,
    retriesUsed: 0,
    sink: { endpoint, result, log: ctx.log, where },
  };

  try {
    const workers = rolloutReader(args, ctx);
    let versionAtSubmit = workers === undefined ? undefined : await waitOutRollout(run, workers);
    for (let submission = 1; ; submission += 1) {
      const ended = await runJob(run);
      if (ended.outcome !== undefined) return ended.outcome;
      if (workers === undefined) return { result, failure: judge(args, result) };
      const release = await checkRelease(run, workers, versionAtSubmit);
      if (release.kind === "current") {
        result.endpointVersion = release.version;
        return { result, failure: judge(args, result) };
      }
      if (release.kind === "unreadable" || submission > 1) {
        return { result, failure: judge(args, result) ?? releaseFailure(run, release) };
      }
      // The job ran on an older release (one rolled out while it ran): test the current one.
      run.note(STALE_WORKER);
      run.log(
        `JobRun ${where()}: the job did not run the endpoint's current release (${release.how}); ` +
          "waiting for the rollout and submitting it again",
      );
      const previous = { ...result };
      forgetJob(result);
      try {
        versionAtSubmit = await waitOutRollout(run, workers);
      } catch (error) {
        Object.assign(result, previous);
        return { result, failure: releaseFailure(run, release, error) };
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The worker reader when the release is checked (`rollout: "wait"`, the default when the context
 * has one); undefined with `"ignore"`. An explicit `"wait"` the context cannot serve (a REST v1
 * `restUrl`) throws before any request.
 */
function rolloutReader(args: ResolvedJobRunArgs, ctx: RunContext): RunContext["workers"] {
  if (args.rollout === "ignore") return undefined;
  if (ctx.workers !== undefined) return ctx.workers;
  if (args.rollout === undefined) return undefined;
  throw new JobRunSubmitError(
    `JobRun cannot wait for the rollout of endpoint ${args.endpointId}: ` +
      `${ctx.workersUnavailable ?? "no REST v2 client to read its workers"}. No job was submitted.`,
    false,
    undefined,
  );
}

/**
 * Waits until no worker of the endpoint runs an older version, noting `ROLLOUT_WAIT` and
 * `ROLLED_OUT` in the timeline when it had to wait; resolves with the endpoint's version. Before
 * the first submission a failure is a `JobRunSubmitError` (no job was sent).
 */
async function waitOutRollout(run: Execution, workers: NonNullable<RunContext["workers"]>) {
  const { args } = run;
  try {
    const done = await waitForRollout(workers, args.endpointId, {
      signal: run.signal,
      onWaiting: (state) => {
        run.note(ROLLOUT_WAIT);
        run.log(
          `JobRun endpoint ${args.endpointId}: waiting for version ${state.version ?? "(unknown)"} to roll out ` +
            `(${state.stale} of ${state.total} workers still run an older version)`,
        );
      },
      onRolledOut: (state) => {
        run.note(ROLLED_OUT);
        run.log(
          `JobRun endpoint ${args.endpointId}: version ${state.version ?? "(unknown)"} runs on all ${state.total} workers`,
        );
      },
    });
    return done.version;
  } catch (error) {
    throw rolloutWaitError(args, error);
  }
}

/** Why no job was submitted when the rollout wait before it failed: timed out, no endpoint, or a failed read. */
function rolloutWaitError(args: ResolvedJobRunArgs, error: unknown): JobRunSubmitError {
  const prefix = `JobRun could not submit a job to endpoint ${args.endpointId}`;
  let why: string;
  let hint: string;
  if (error instanceof RolloutTimeoutError) {
    why =
      ` within timeoutMs (${args.timeoutMs} ms): the deadline passed while it waited for the rollout ` +
      `(${error.message})`;
    hint =
      "The endpoint's update is still rolling out (RunPod replaces workers one by one): raise timeoutMs, or run " +
      "`pulumi up` again once getServerlessEndpoint shows rolloutInProgress false.";
  } else if (error instanceof NotFoundError) {
    why = `: the service has no endpoint ${args.endpointId} (reading its workers for the rollout wait answered 404)`;
    hint =
      "Check endpointId: the id of a serverless endpoint of this account (getServerlessEndpoint or the console).";
  } else {
    why = `: reading its workers for the rollout wait failed (${describeError(error)})`;
    hint =
      'Check runpod:restUrl (REST v2) and the API key; set rollout: "ignore" to test without knowing the release.';
  }
  return new JobRunSubmitError(`${prefix}${why}. No job was created. Hint: ${hint}`, false, error);
}

/**
 * Submits the job and follows it to its end (service-side retries included): resolves with the
 * ended job recorded in the result, or with the outcome when the JobRun stopped first.
 */
async function runJob(run: Execution): Promise<{ outcome?: JobRunOutcome }> {
  const { args, endpoint, result } = run;
  let job: Job = await submitJob(args, { endpoint, signal: run.signal, remaining: run.remaining });
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

/** What the release check found; `unreadable` when the workers could not be read. */
type ReleaseFinding = ReleaseCheck | { kind: "unreadable"; how: string };

/** Reads the workers once the job ended and tells which release ran it (bounded on its own). */
async function checkRelease(
  run: Execution,
  workers: NonNullable<RunContext["workers"]>,
  versionAtSubmit: number | undefined,
): Promise<ReleaseFinding> {
  try {
    const list = await workers(run.args.endpointId, {
      signal: AbortSignal.timeout(RELEASE_CHECK_TIMEOUT_MS),
    });
    return releaseOfJob(list, run.result.workerId, versionAtSubmit);
  } catch (error) {
    run.log(
      `JobRun ${run.where()}: reading the endpoint's workers after the job failed (${describeError(error)})`,
    );
    return { kind: "unreadable", how: `reading the endpoint's workers failed (${describeError(error)})` };
  }
}

/** Leaves the result ready for a new submission: the job's own fields go, timeline and attempts stay. */
function forgetJob(result: JobRunResult): void {
  for (const key of [
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
  ] as const) {
    delete result[key];
  }
}

/** The failure when JobRun cannot say the job ran the endpoint's current release. */
function releaseFailure(
  run: Execution,
  release: Exclude<ReleaseFinding, { kind: "current" }>,
  error?: unknown,
) {
  const { args, result } = run;
  const what =
    release.kind === "unreadable"
      ? `the job ended ${result.status}, but JobRun could not tell which release ran it: ${release.how}`
      : error !== undefined
        ? `the job did not run the endpoint's current release (${release.how}), and waiting for the rollout ` +
          `to submit it again failed: ${describeError(error)}`
        : `the job was submitted twice and neither ran the endpoint's current release (${release.how}): ` +
          "the endpoint was redeployed during the smoke test, so the release it tested is not the one deployed";
  const hint =
    release.kind === "unreadable"
      ? 'Check runpod:restUrl (REST v2) and the API key, then run `pulumi up` again; rollout: "ignore" skips this check.'
      : "Run `pulumi up` again once the endpoint's deploy has settled (getServerlessEndpoint: rolloutInProgress " +
        "false); give the JobRun `triggers: [endpoint.version]` so every redeploy runs it again.";
  return failureMessage(args, result, what, hint);
}

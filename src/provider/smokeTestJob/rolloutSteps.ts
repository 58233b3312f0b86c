/**
 * The rollout steps of one JobRun execution (`rollout: "wait"`): which reader checks the release,
 * waiting out a rollout before a submission, checking the release once the job ended, sending
 * once more after a stale answer, and the failures these end in. The rules themselves (when a worker is stale, which release ran a job)
 * are `staleWorkers.ts`'s; the order of the steps is `run.ts`'s.
 */
import {
  APIError,
  AuthenticationError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "../../client";
import { CANCELLED } from "../clock";
import { describeError } from "../common/wording";
import type { Execution, RunContext } from "./execution";
import type { ResolvedJobRunArgs } from "./jobArgs";
import type { JobRunResult } from "./result";
import {
  RELEASE_CHECK_TIMEOUT_MS,
  type ReleaseCheck,
  ROLLED_OUT,
  ROLLOUT_WAIT,
  RolloutTimeoutError,
  releaseOfJob,
  STALE_WORKER,
  waitForRollout,
} from "./staleWorkers";
import { JobRunSubmitError } from "./submission";
import { failureMessage } from "./verdict";

/**
 * The worker reader when the release is checked (`rollout: "wait"`, the default when the context
 * has one); undefined with `"ignore"`. An explicit `"wait"` the context cannot serve (a REST v1
 * `restUrl`) throws before any request.
 */
export function rolloutReader(args: ResolvedJobRunArgs, ctx: RunContext): RunContext["workers"] {
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
 * `ROLLED_OUT` in the timeline when it had to wait; resolves with the endpoint's version. The
 * reads are shared with the host's other waiters on the endpoint under `pollKey` (the client's
 * settings, see `workerPoll.ts`). Before
 * the first submission a failure is a `JobRunSubmitError` (no job was sent).
 */
export async function waitOutRollout(
  run: Execution,
  workers: NonNullable<RunContext["workers"]>,
  pollKey?: string,
) {
  const { args } = run;
  try {
    const done = await waitForRollout(workers, args.endpointId, {
      signal: run.signal,
      pollKey,
      polls: run.workerPolls,
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
    throw rolloutWaitError(args, error, run.cancelled());
  }
}

/**
 * Why no job was submitted when the rollout wait before it failed: the deployment cancelled, timed
 * out, no endpoint, or a failed read.
 */
function rolloutWaitError(args: ResolvedJobRunArgs, error: unknown, cancelled: boolean): JobRunSubmitError {
  const prefix = `JobRun could not submit a job to endpoint ${args.endpointId}`;
  let why: string;
  let hint: string;
  if (cancelled && error instanceof RolloutTimeoutError) {
    return new JobRunSubmitError(
      `JobRun did not submit a job to endpoint ${args.endpointId}: ${CANCELLED} while it waited for the ` +
        `rollout${error.last === undefined ? "" : ` (${error.message})`}. No job was created. ` +
        "Hint: run `pulumi up` again to submit one.",
      false,
      error,
    );
  }
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
    hint = `${workerReadHint(error)}; set rollout: "ignore" to test without knowing the release.`;
  }
  return new JobRunSubmitError(`${prefix}${why}. No job was created. Hint: ${hint}`, false, error);
}

/**
 * What to do about a failed read of the workers, by what failed: a quota (429) is not a setting to
 * check, a refused key is, and a connection failure points at `runpod:restUrl`.
 */
export function workerReadHint(error: unknown): string {
  if (error instanceof RateLimitError) {
    return (
      "The service rate-limited the reads of the endpoint's workers (429) beyond the client's retries: many " +
      "JobRuns or other clients read it at once. Run `pulumi up` again, or with a lower --parallel"
    );
  }
  if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
    return "Check the API key (runpod:apiKey or RUNPOD_API_KEY): it must be allowed to read the endpoint";
  }
  if (error instanceof APIError) return "The service refused the read; see its answer above";
  return "Check runpod:restUrl (a REST v2 URL) and that the service is reachable";
}

/** What {@link rolloutBeforeResend} says about a stale answer, and which fields of the result it forgets. */
export interface StaleAnswer {
  /** What was found, for the log: `the job did not run the endpoint's current release (...)`. */
  found: string;
  /** What is done after the wait, for the log: `submitting it again`. */
  resend: string;
  /** The result's fields of the stale job or answer: gone before the next one is sent. */
  forget: readonly (keyof JobRunResult)[];
}

/**
 * After a job or answer from an older release: notes `STALE_WORKER`, forgets the stale fields of
 * the result (timeline and attempts stay), and waits out the rollout. Resolves with the version
 * to send at again, or, when the wait failed, with its error and the result as it was.
 */
export async function rolloutBeforeResend(
  run: Execution,
  workers: NonNullable<RunContext["workers"]>,
  pollKey: string | undefined,
  stale: StaleAnswer,
): Promise<{ version: number | undefined } | { error: unknown }> {
  const { result } = run;
  run.note(STALE_WORKER);
  run.log(`JobRun ${run.where()}: ${stale.found}; waiting for the rollout and ${stale.resend}`);
  const previous = { ...result };
  for (const key of stale.forget) delete result[key];
  try {
    return { version: await waitOutRollout(run, workers, pollKey) };
  } catch (error) {
    Object.assign(result, previous);
    return { error };
  }
}

/** What the release check found; `unreadable` when the workers could not be read (`cause`: why). */
export type ReleaseFinding = ReleaseCheck | { kind: "unreadable"; how: string; cause?: unknown };

/** Reads the workers once the job ended and tells which release ran it (bounded on its own). */
export async function checkRelease(
  run: Execution,
  workers: NonNullable<RunContext["workers"]>,
  versionAtSubmit: number | undefined,
): Promise<ReleaseFinding> {
  try {
    const list = await workers(run.args.endpointId, {
      signal: AbortSignal.timeout(RELEASE_CHECK_TIMEOUT_MS),
    });
    const worker = list.workers.find((w) => w.id === run.result.workerId);
    if (worker !== undefined) run.placement = { gpuTypeId: worker.gpuTypeId, gpuCount: worker.gpuCount };
    return releaseOfJob(list, run.result.workerId, versionAtSubmit);
  } catch (error) {
    run.log(
      `JobRun ${run.where()}: reading the endpoint's workers after the job failed (${describeError(error)})`,
    );
    return {
      kind: "unreadable",
      how: `reading the endpoint's workers failed (${describeError(error)})`,
      cause: error,
    };
  }
}

/** The failure when JobRun cannot say the job ran the endpoint's current release. */
export function releaseFailure(
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
      ? `${workerReadHint(error ?? release.cause)}, then run \`pulumi up\` again; rollout: "ignore" skips this check.`
      : "Run `pulumi up` again once the endpoint's deploy has settled (getServerlessEndpoint: rolloutInProgress " +
        "false); give the JobRun `triggers: [endpoint.version]` so every redeploy runs it again.";
  return failureMessage(args, result, what, hint);
}

/**
 * What the provider does with the job a JobRun's state records, apart from running a new one:
 * cancel it while it may still run (before a re-run, and on delete), and read its current status
 * (refresh). A job the service no longer has (404: results expire after 30 minutes, 60 s for
 * runsync jobs) needs nothing and keeps its recorded result.
 */
import { isTerminalStatus, NotFoundError } from "../../client";
import { describeError } from "../common/wording";
import { CANCEL_TIMEOUT_MS } from "../smokeTestJob/bounds";
import type { LifecycleContext } from "../smokeTestJob/context";
import { storedResult } from "../smokeTestJob/outputs";
import type { JobRunResult } from "../smokeTestJob/result";

/** The job a state records, when it names one. */
function recordedJob(props: Record<string, unknown>): { jobId: string; endpointId: string } | undefined {
  const { jobId, endpointId } = props;
  return typeof jobId === "string" && typeof endpointId === "string" ? { jobId, endpointId } : undefined;
}

/** How {@link cancelIfStillRunning} behaves for its caller. */
interface CancelPolicy {
  /** Bound each call (a cancel on the way to a new run must not hang the deploy). */
  bounded: boolean;
  /** Leave the job running, with a log line saying so, instead of cancelling it. */
  leaveRunning: boolean;
  /** The log line once cancelled, after `JobRun endpoint E job J: `. */
  cancelled: (status: string) => string;
}

/**
 * Cancels the recorded job when it was recorded as, and still is, queued or running. Resolves
 * when there is nothing (left) to do; throws the service's error otherwise (not a 404).
 */
async function cancelIfStillRunning(
  ctx: LifecycleContext,
  props: Record<string, unknown>,
  policy: CancelPolicy,
): Promise<void> {
  const job = recordedJob(props);
  if (job === undefined) return;
  if (typeof props.status === "string" && isTerminalStatus(props.status)) return;
  const endpoint = ctx.endpoint(job.endpointId);
  const options = () =>
    policy.bounded ? { signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), maxRetries: 1 } : undefined;
  const where = `JobRun endpoint ${job.endpointId} job ${job.jobId}`;
  try {
    const now = await endpoint.status(job.jobId, options());
    if (isTerminalStatus(now.status)) return;
    if (policy.leaveRunning) {
      ctx.log(
        `${where}: the previous run's job is still ${now.status} and is left running (cancelOnTimeout is false); ` +
          "the new run no longer tracks it",
      );
      return;
    }
    const answer = await endpoint.cancel(job.jobId, options());
    ctx.log(`${where}: ${policy.cancelled(answer.status)}`);
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
}

/**
 * Before a re-run (`update`): the last run's job, recorded as queued or running, is cancelled
 * (bounded by `CANCEL_TIMEOUT_MS` per call), or left running with a log line when the last run
 * had `cancelOnTimeout: false`, so no job is left unrecorded. When the cancel fails, this throws
 * and the update fails before submitting, keeping the old state (and its job id).
 */
export async function settlePreviousJob(ctx: LifecycleContext, olds: Record<string, unknown>): Promise<void> {
  try {
    await cancelIfStillRunning(ctx, olds, {
      bounded: true,
      leaveRunning: olds.cancelOnTimeout === false,
      cancelled: (status) => `the previous run's job was cancelled before running again (status ${status})`,
    });
  } catch (error) {
    const { jobId, endpointId, status } = olds;
    throw new Error(
      `JobRun could not cancel the previous run's job ${jobId} on endpoint ${endpointId}, recorded as ` +
        `${typeof status === "string" ? status : "not finished"} (${describeError(error)}), so it did not ` +
        "submit a new job (two would run). Hint: cancel it yourself (POST /v2/" +
        `${endpointId}/cancel/${jobId} or the RunPod console), or run \`pulumi up\` again once the service answers.`,
      { cause: error },
    );
  }
}

/** On `delete`: cancels the recorded job only while it may still run. */
export function cancelOnDelete(ctx: LifecycleContext, props: Record<string, unknown>): Promise<void> {
  return cancelIfStillRunning(ctx, props, {
    bounded: false,
    leaveRunning: false,
    cancelled: (status) => `cancelled on delete (status ${status})`,
  });
}

/**
 * Refresh: the service's current view of the recorded job (status, times, and output and error
 * redacted and bounded as at the run); the recorded result when the service no longer has it.
 */
export async function refreshRecordedJob(ctx: LifecycleContext, id: string, props: Record<string, unknown>) {
  const job = recordedJob(props);
  if (job === undefined) return { id, props };
  try {
    const now = await ctx.endpoint(job.endpointId).status(job.jobId);
    const next: Record<string, unknown> = { ...props, status: now.status };
    if (typeof now.delayTime === "number") next.delayTime = now.delayTime;
    if (typeof now.executionTime === "number") next.executionTime = now.executionTime;
    // The run's s3 credentials are not in state (only their digest), so what the worker says now
    // cannot be redacted of them: with s3Config, refresh keeps the output and error recorded
    // (redacted) at the run, and refreshes the status and times only.
    if (props.s3ConfigDigest !== undefined) return { id, props: next };
    const fresh: JobRunResult = { attempts: 0, timeline: [] };
    if (now.output !== undefined) fresh.output = now.output;
    if (typeof now.error === "string" && now.error !== "") fresh.error = now.error;
    const { output, error, outputTruncated, outputBytes, outputDepth } = storedResult(
      fresh,
      ctx.secrets ?? [],
    );
    if (output !== undefined) {
      next.output = output;
      delete next.outputTruncated;
      delete next.outputBytes;
      delete next.outputDepth;
    }
    if (outputTruncated) {
      Object.assign(next, { outputTruncated, outputBytes, outputDepth });
      delete next.output;
    }
    if (error !== undefined) next.error = error;
    return { id, props: next };
  } catch (error) {
    if (error instanceof NotFoundError) return { id, props };
    throw error;
  }
}

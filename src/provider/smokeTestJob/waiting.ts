/**
 * Waiting for a submitted job: the client's long polls until the job is terminal or the deadline
 * passes, and what happens when the JobRun stops waiting first (cancel the job when asked, cut
 * the stream capture, and say why in the failure).
 */

import type { Job } from "../../client";
import { JobWaitTimeoutError } from "../../client";
import { CANCELLED } from "../clock";
import { boundEntry, describeError } from "../common/wording";
import { CANCEL_NOT_CONFIRMED, CANCEL_TIMEOUT_MS } from "./bounds";
import type { Execution } from "./execution";
import type { JobRunOutcome } from "./result";
import { failureMessage } from "./verdict";

/** Long-polls the job until it is terminal; throws `JobWaitTimeoutError` at the deadline. */
export async function waitUntilTerminal(run: Execution, jobId: string): Promise<Job> {
  const left = run.remaining();
  if (left <= 0) throw new JobWaitTimeoutError("deadline passed", { jobId, lastStatus: undefined });
  return run.endpoint.waitForJob(jobId, {
    timeoutMs: Math.max(1, Math.floor(left)),
    signal: run.signal,
    onStatus: (seen) => run.note(seen.status),
  });
}

/** The JobRun stopped waiting before the job ended: cancel it when asked and say so. */
export async function stopWaiting(run: Execution, job: Job, error: unknown): Promise<JobRunOutcome> {
  const { args, endpoint, result, signal } = run;
  const deploymentCancelled = run.cancelled();
  const timedOut = signal.aborted || error instanceof JobWaitTimeoutError || run.remaining() <= 0;
  // The service's status text, one printable line (the timeline's entries already are).
  const lastStatus = boundEntry(
    error instanceof JobWaitTimeoutError && (error.lastStatus as Job | undefined)?.status
      ? (error.lastStatus as Job).status
      : (result.timeline[result.timeline.length - 1]?.status ?? job.status),
  );
  result.status = lastStatus;
  const seen = error instanceof JobWaitTimeoutError ? (error.lastStatus as Job | undefined) : undefined;
  if (typeof seen?.workerId === "string" && seen.workerId !== "") result.workerId = seen.workerId;
  let cancelled = "";
  if (args.cancelOnTimeout) {
    try {
      // Bounded as a whole (rate-limit wait, quota pause, one retry), not only per attempt.
      const answer = await endpoint.cancel(job.id, {
        signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
        maxRetries: 1,
      });
      const status = boundEntry(answer.status);
      run.note(status);
      result.status = status;
      cancelled = `JobRun cancelled the job on the service (status ${status}), so it stops spending credits.`;
    } catch (cancelError) {
      run.note(CANCEL_NOT_CONFIRMED);
      cancelled =
        `JobRun tried to cancel the job but the cancel failed (${describeError(cancelError)}): ` +
        `cancel it yourself (POST /v2/${endpoint.id}/cancel/${boundEntry(job.id)} or the RunPod console).`;
    }
  } else {
    cancelled = "The job was left running on the service (cancelOnTimeout is false).";
  }
  if (run.collector && !run.collector.finished()) {
    // The job has not ended, so its stream has not either: what was kept is only a part.
    run.collector.controller.abort();
    result.streamTruncated = true;
    run.log(
      `JobRun ${run.where()}: stopped reading the stream with the wait (${result.stream?.length ?? 0} chunks kept)`,
    );
  }
  const what = deploymentCancelled
    ? `the job had not finished when ${CANCELLED}; last status ${lastStatus}`
    : timedOut
      ? `the job did not finish within timeoutMs (${args.timeoutMs} ms); last status ${lastStatus}`
      : `waiting for the job failed (${describeError(error)}); last status ${lastStatus}`;
  const hint = deploymentCancelled
    ? "Run `pulumi up` again to start a new job."
    : timedOut
      ? "If the job stayed IN_QUEUE, the endpoint has no free worker (check getEndpointHealth: workers.idle, " +
        "workers.running, jobs.inQueue); if it was IN_PROGRESS, the job needs longer: raise timeoutMs " +
        "(and policy.executionTimeout). Run `pulumi up` again to start a new job."
      : "Check the connection to the service and the API key, then run `pulumi up` again to start a new job.";
  return { result, failure: failureMessage(args, result, `${what}. ${cancelled}`, hint) };
}

/**
 * The service-side retry (`retries`): a job that ended FAILED or TIMED_OUT, when `expect.status`
 * is not that status, is re-queued under the same id with `POST /retry`, at most `retries` times.
 * A retry that may have acted although it failed (a 500, a reset, a timeout) is checked with one
 * bounded status read before the job is recorded as ended, so a re-queued job is never left
 * running unrecorded.
 */
import { isTerminalStatus, type Job, mayHaveActed } from "../../client";
import { boundEntry, describeError } from "../common/wording";
import { CANCEL_TIMEOUT_MS, STATUS_UNKNOWN } from "./bounds";
import { type Execution, recordJob } from "./execution";
import type { JobRunOutcome } from "./result";
import { collectStream, finishStream } from "./stream";
import { failureMessage } from "./verdict";

/** True when this terminal job should be re-queued with the service's `/retry`. */
export function wantsRetry(run: Execution, job: Job): boolean {
  const retryable = job.status === "FAILED" || job.status === "TIMED_OUT";
  return retryable && job.status !== run.args.expect.status && run.retriesUsed < run.args.retries;
}

/**
 * Re-queues the job: resolves with the job to wait for again (`{ job }`), or with the outcome
 * when the retry failed (`{ outcome }`).
 */
export async function retryOnService(
  run: Execution,
  job: Job,
): Promise<{ job: Job; outcome?: undefined } | { outcome: JobRunOutcome; job?: undefined }> {
  const { args, endpoint, result } = run;
  const which = `the retry (${run.retriesUsed + 1} of ${args.retries})`;
  const failed = (what: string, hint: string) => ({
    outcome: { result, failure: failureMessage(args, result, what, hint) },
  });
  if (run.collector) await finishStream(run.sink, run.collector, job.id, run.remaining);
  run.log(
    `JobRun ${run.where()}: ${boundEntry(job.status)}; retry ${run.retriesUsed + 1} of ${args.retries}`,
  );
  let next: Job;
  try {
    next = await endpoint.retry(job.id, { signal: run.signal });
  } catch (error) {
    if (mayHaveActed(error)) {
      // The service may have queued the job again: look before recording it as ended.
      const requeued = await statusAfterRetry(run, job);
      if (requeued === undefined) {
        result.status = STATUS_UNKNOWN;
        run.note(STATUS_UNKNOWN);
        return failed(
          `the job ended ${boundEntry(job.status)}, ${which} may or may not have re-queued it (${describeError(error)}), ` +
            "and its status could not be read",
          `Read the job's status (GET /status/${job.id}) and cancel it if it runs (POST /cancel/${job.id}); ` +
            "`pulumi destroy` and the next `pulumi up` check it and cancel it first.",
        );
      }
      if (!isTerminalStatus(requeued.status)) {
        run.log(
          `JobRun ${run.where()}: the retry failed (${describeError(error)}) but the job is ${requeued.status}`,
        );
        started(run, requeued);
        return { job: requeued };
      }
    }
    recordJob(result, job);
    return failed(
      `the job ended ${boundEntry(job.status)} and ${which} failed: ${describeError(error)}`,
      "The service keeps results for 30 minutes (60 s for runsync jobs) and retries only FAILED or TIMED_OUT " +
        "jobs; run `pulumi up` again to start a new job.",
    );
  }
  started(run, next);
  return { job: next };
}

/** Counts the new attempt, notes its status and restarts the stream capture. */
function started(run: Execution, job: Job): void {
  run.result.attempts += 1;
  run.retriesUsed += 1;
  run.note(job.status);
  if (run.collector) run.collector = collectStream(run.sink, job.id);
}

/**
 * The job's status after a retry that may have acted, bounded by `CANCEL_TIMEOUT_MS` (not by the
 * deadline, which may be what aborted the retry); undefined when it cannot be read.
 */
async function statusAfterRetry(run: Execution, job: Job): Promise<Job | undefined> {
  try {
    return await run.endpoint.status(job.id, {
      signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
      maxRetries: 1,
    });
  } catch (error) {
    run.log(`JobRun ${run.where()}: reading the status after the retry failed (${describeError(error)})`);
    return undefined;
  }
}

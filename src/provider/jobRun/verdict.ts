/**
 * The verdict of a finished JobRun: does the job meet `expect`, and if not, the deploy failure
 * text (what happened, to which job, the worker's error, the timeline and a hint).
 */
import type { ResolvedJobRunInputs } from "./args";
import { findMismatches, formatMismatches } from "./match";
import { formatTimeline, type JobRunResult } from "./result";

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

/**
 * The verdict of a finished JobRun: does the job meet `expect`, and if not, the deploy failure
 * text (what happened, to which job, the worker's error, the timeline and a hint).
 */
import type { ResolvedJobRunArgs } from "./jobArgs";
import { findMismatches, formatMismatches, shortJson } from "./match";
import { formatViolations, outputSchemaViolations } from "./outputSchema";
import { formatTimeline, type JobRunResult } from "./result";

/** The opt-out named in the error-output failure. */
const ALLOW_ERROR_OUTPUT = "expect: { allowErrorOutput: true }";

/** Compares a finished job with `expect`; returns the failure message, or undefined on success. */
export function judge(args: ResolvedJobRunArgs, result: JobRunResult): string | undefined {
  const expected = args.expect.status;
  if (result.status !== expected) {
    const what =
      `the job ended ${result.status}, expected ${expected}` +
      (result.attempts > 1 ? ` (after ${result.attempts} attempts)` : "");
    return failureMessage(args, result, what, hintFor(result.status, expected, result));
  }
  if (result.status === "COMPLETED" && !args.expect.allowErrorOutput) {
    const problem = errorOutputProblem(result.output, args.secretOutput);
    if (problem !== undefined) {
      return failureMessage(
        args,
        result,
        `the job ended COMPLETED but its output ${problem}: the handler most likely returned its error ` +
          "instead of raising it, so the service counted the job as a success",
        "Make the handler raise (throw) on errors so the job ends FAILED with the error, or, if this " +
          `output is what the worker is meant to answer, set ${ALLOW_ERROR_OUTPUT} on the JobRun.`,
      );
    }
  }
  return outputFailure(args, result, `the job ended ${result.status}`) ?? latencyFailure(args, result);
}

/** `2 differences`, `1 violation`. */
const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? "" : "s"}`;

/**
 * The failure of an output that is not what `expect.output` or `expect.outputSchema` says,
 * listing each problem; `ended` opens the sentence (`the job ended COMPLETED`, `the endpoint
 * answered HTTP 200`). Undefined when the output meets both. A job's output and a probe's answer
 * are judged by this one code.
 */
function outputFailure(args: ResolvedJobRunArgs, result: JobRunResult, ended: string): string | undefined {
  const outputFails = (rule: string, verb: string, counted: string, list: string) =>
    failureMessage(
      args,
      result,
      `${ended} but its ${args.http ? "answer" : "output"} does not ${verb} expect.${rule} (${counted}):\n${list}`,
      `Fix the worker or the ${args.http ? "request" : "input"} if the ${args.http ? "answer" : "output"} is wrong, ` +
        `or update expect.${rule} if the new ${args.http ? "answer" : "output"} is right; \`pulumi up\` then runs the ` +
        `${args.http ? "probe" : "job"} again.`,
    );
  if (args.expect.output !== undefined) {
    const mismatch = findMismatches(args.expect.output, result.output);
    if (mismatch.total > 0) {
      const list = formatMismatches(mismatch, { hideValues: args.secretOutput });
      return outputFails("output", "contain", plural(mismatch.total, "difference"), list);
    }
  }
  if (args.expect.outputSchema !== undefined) {
    const hideOutput = args.secretOutput;
    const violations = outputSchemaViolations(args.expect.outputSchema, result.output, { hideOutput });
    if (violations.length > 0) {
      const list = formatViolations(violations);
      const where = hideOutput
        ? "by schema location (instance paths hidden: secretOutput is set)"
        : "by instance path";
      const counted = `${plural(violations.length, "violation")}, ${where}`;
      return outputFails("outputSchema", "satisfy", counted, list);
    }
  }
  return undefined;
}

/**
 * Why a COMPLETED job's output looks like an error returned as a result: missing (absent or
 * null), or an object with an `error` field. Undefined when it does not.
 */
function errorOutputProblem(output: unknown, hideValues: boolean): string | undefined {
  if (output === undefined || output === null) return "is missing";
  if (typeof output === "object" && !Array.isArray(output) && Object.hasOwn(output, "error")) {
    const value = (output as { error: unknown }).error;
    return hideValues
      ? "has an error field (value hidden: secretOutput is set)"
      : `has an error field: ${shortJson(value)}`;
  }
  return undefined;
}

/**
 * The failure for a missed latency budget (`expect.maxDelayMs` against the service's `delayTime`,
 * `expect.maxExecutionMs` against `executionTime`), naming each missed budget and the measured
 * value. A budget whose figure the service did not report cannot be judged and fails too.
 */
function latencyFailure(args: ResolvedJobRunArgs, result: JobRunResult): string | undefined {
  const budgets = [
    {
      name: "expect.maxDelayMs",
      limit: args.expect.maxDelayMs,
      measured: result.delayTime,
      what: "delayTime (queue time, cold start included)",
    },
    {
      name: "expect.maxExecutionMs",
      limit: args.expect.maxExecutionMs,
      measured: result.executionTime,
      what: "executionTime",
    },
  ];
  const missed: string[] = [];
  for (const { name, limit, measured, what } of budgets) {
    if (limit === undefined) continue;
    if (measured === undefined) missed.push(`${name} is ${limit} ms but the service reported no ${what}`);
    else if (measured > limit) missed.push(`${name} is ${limit} ms but the job's ${what} was ${measured} ms`);
  }
  if (missed.length === 0) return undefined;
  return failureMessage(
    args,
    result,
    `the job ended ${result.status} but missed its latency budget: ${missed.join("; ")}`,
    "A long delayTime usually means cold starts or too few workers (raise workersMin or check " +
      "getEndpointHealth); a long executionTime means a slower handler, model or GPU. Raise the budget " +
      "if the new figure is acceptable; `pulumi up` then runs the job again.",
  );
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

/** `POST /v1/chat/completions`: the probe's request, for messages. */
export function probeRequest(args: ResolvedJobRunArgs): string {
  const http = args.http;
  if (http === undefined) return "";
  return `${http.method ?? (http.body === undefined ? "GET" : "POST")} ${http.path}`;
}

/** Most characters of a probe's answer body in a failure message. */
export const MAX_BODY_EXCERPT_CHARS = 2000;

/** The answer body as the failure message shows it: JSON or text, bounded. */
function bodyExcerpt(body: unknown): string {
  if (body === undefined) return "(empty)";
  let text: string;
  try {
    text = typeof body === "string" ? body : (JSON.stringify(body) ?? String(body));
  } catch {
    text = String(body);
  }
  return text.length > MAX_BODY_EXCERPT_CHARS
    ? `${text.slice(0, MAX_BODY_EXCERPT_CHARS)}... [${text.length - MAX_BODY_EXCERPT_CHARS} more characters]`
    : text;
}

/**
 * Compares an http probe's answer with `http.expectStatus` and `expect` (the same output rules a
 * job's output meets, and `expect.maxExecutionMs` against the measured latency); returns the
 * failure message, or undefined when it passed. A probe that got no answer fails in `probe.ts`.
 */
export function judgeProbe(args: ResolvedJobRunArgs, result: JobRunResult): string | undefined {
  const http = args.http;
  if (http === undefined) return judge(args, result);
  const expected = http.expectStatus;
  const status = result.httpStatus;
  const again = "`pulumi up` sends the probe again, even with unchanged arguments.";
  if (status !== expected) {
    return failureMessage(
      args,
      result,
      `the endpoint answered HTTP ${status ?? "(none)"}, expected ${expected}`,
      `${probeHint(status)} ${again}`,
    );
  }
  const ended = `the endpoint answered HTTP ${status}`;
  if (expected < 400 && !args.expect.allowErrorOutput) {
    const body = result.output;
    if (body !== null && typeof body === "object" && !Array.isArray(body) && Object.hasOwn(body, "error")) {
      const value = (body as { error: unknown }).error;
      const shown = args.secretOutput ? "(value hidden: secretOutput is set)" : shortJson(value);
      return failureMessage(
        args,
        result,
        `${ended} but its answer has an error field: ${shown}`,
        "The server reported an error with a success status: fix the worker, or, if this answer is what it " +
          `is meant to say, set ${ALLOW_ERROR_OUTPUT} on the JobRun.`,
      );
    }
  }
  if (result.bodyTruncated && (args.expect.output !== undefined || args.expect.outputSchema !== undefined)) {
    return failureMessage(
      args,
      result,
      `${ended} but its body is over 1 MB (1,000,000 bytes), so expect.output and expect.outputSchema cannot judge it`,
      "Probe a path whose answer is smaller, or drop the output rules and judge the status only.",
    );
  }
  const output = outputFailure(args, result, ended);
  if (output !== undefined) return output;
  const limit = args.expect.maxExecutionMs;
  if (limit !== undefined && (result.latencyMs === undefined || result.latencyMs > limit)) {
    return failureMessage(
      args,
      result,
      `${ended} but missed its latency budget: expect.maxExecutionMs is ${limit} ms but the request took ${result.latencyMs} ms`,
      "A slow answer usually means cold starts (raise workers.min) or a slower model or GPU. Raise the budget " +
        "if the new figure is acceptable; `pulumi up` then sends the probe again.",
    );
  }
  return undefined;
}

function probeHint(status: number | undefined): string {
  if (status === 401 || status === 403) {
    return "The load balancer refused the API key: check runpod:apiKey (RUNPOD_API_KEY) may reach this endpoint.";
  }
  if (status === 404) {
    return "Check http.path: the worker's server has no such route (or the endpoint is gone).";
  }
  if (status === 503 || status === 502 || status === 504) {
    return "No worker answered in time: check the endpoint's workers (getServerlessEndpoint, the /ping health route) and its worker log below.";
  }
  if (status !== undefined && status >= 500) {
    return "The worker's server failed: read the answer body and the worker log below, fix the image or its env.";
  }
  return "Check http.method, http.path and http.body against what the worker's server expects, or set http.expectStatus.";
}

/**
 * The deploy failure text: what happened, to which job, the worker's error, the release it ran on
 * (when checked), the timeline and a hint.
 */
export function failureMessage(
  args: ResolvedJobRunArgs,
  result: JobRunResult,
  what: string,
  hint: string,
): string {
  if (args.http !== undefined) {
    const lines = [`JobRun failed on endpoint ${args.endpointId}, HTTP probe ${probeRequest(args)}: ${what}`];
    const answer =
      result.httpStatus === undefined
        ? "Answer: none"
        : `Answer: HTTP ${result.httpStatus} in ${result.latencyMs ?? "?"} ms`;
    lines.push(`${answer}; attempts: ${result.attempts}`);
    if (result.httpStatus !== undefined && (result.httpStatus !== args.http.expectStatus || result.error)) {
      const body = args.secretOutput ? "(hidden: secretOutput is set)" : bodyExcerpt(result.output);
      lines.push(`Answer body: ${body}${result.bodyTruncated ? " (truncated at 1 MB)" : ""}`);
    }
    if (result.error !== undefined) lines.push(`Error: ${result.error.slice(0, 2000)}`);
    if (result.endpointVersion !== undefined) {
      lines.push(`Release: endpoint version ${result.endpointVersion} (every ready worker runs it)`);
    }
    lines.push(`Timeline: ${formatTimeline(result.timeline)}`);
    lines.push(`Hint: ${hint}`);
    return lines.join("\n");
  }
  const lines = [`JobRun failed on endpoint ${args.endpointId}, job ${result.jobId ?? "(none)"}: ${what}`];
  lines.push(`Status: ${result.status ?? "unknown"}; attempts: ${result.attempts}`);
  if (result.error !== undefined) lines.push(`Worker error: ${result.error.slice(0, 2000)}`);
  if (result.endpointVersion !== undefined) {
    const worker = result.workerId === undefined ? "" : ` (worker ${result.workerId})`;
    lines.push(`Release: endpoint version ${result.endpointVersion}${worker}`);
  }
  lines.push(`Timeline: ${formatTimeline(result.timeline)}`);
  lines.push(`Hint: ${hint}`);
  return lines.join("\n");
}

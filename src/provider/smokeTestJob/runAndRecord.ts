/**
 * One smoke-test job run and recorded, as JobRun's create and update and the endpoint's release
 * gate both do: the job (or http probe) executed, the failed run's message given the tail of the
 * log of the worker that ran it, secrets redacted from everything returned or thrown, and the
 * outputs built; a run that did not pass throws {@link JobRunFailedError} (a partial failure).
 */

import type { ServerlessWorkerList } from "../../client";
import { JobRunFailedError } from "../../client/errors";
import { type Clock, systemClock } from "../clock";
import { withProviderErrors } from "../common/engineText";
import { redact, redactValue } from "../common/redaction";
import { runCostUsd } from "../cost/prices";
import type { LifecycleContext } from "./context";
import { type JobRunInputs, resolveJobRunArgs } from "./jobArgs";
import { LOG_TAIL_TIMEOUT_MS, type LogTail, logTailSection, readLogTail } from "./logTail";
import {
  buildOutputs,
  type JobRunOutputs,
  MAX_OUTPUT_BYTES,
  MAX_OUTPUT_DEPTH,
  storedResult,
} from "./outputs";
import { executeHttpProbe } from "./probe";
import type { JobRunOutcome } from "./result";
import { executeJobRun } from "./run";
import { probeRequest } from "./verdict";
import { workerPollsOn } from "./workerPoll";

const PROVIDER_KEY = "__provider";

/** The error that makes a failed smoke test a partial failure: the resource stays, the step fails. */
export { JobRunFailedError };

/**
 * The secret values among JobRun arguments: the s3Config credentials, `redact`'s values and the
 * values of an http probe's `headers`.
 */
export function jobRunSecrets(news: Record<string, unknown>): string[] {
  const s3 = news.s3Config as Record<string, unknown> | undefined;
  const listed = Array.isArray(news.redact) ? news.redact : [];
  const credentials = s3 === null || typeof s3 !== "object" ? [] : [s3.accessSecret, s3.accessId];
  const http = news.http as { headers?: unknown } | undefined;
  const headers =
    http !== null && typeof http === "object" && http.headers !== null && typeof http.headers === "object"
      ? Object.values(http.headers as Record<string, unknown>)
      : [];
  return [...credentials, ...listed, ...headers].filter((v): v is string => typeof v === "string");
}

/**
 * Runs the job for `create` (new id) or `update` (same id) and records it; a run that did not
 * pass throws `JobRunFailedError` (a partial failure). A failed run's message ends with the tail
 * of the log of the worker that ran it. Errors and progress lines come out redacted.
 */
export async function runAndRecord(
  ctx: LifecycleContext,
  id: string,
  news: Record<string, unknown>,
): Promise<{ id: string; outs: JobRunOutputs }> {
  const secrets = [...jobRunSecrets(news), ...(ctx.secrets ?? [])];
  return withProviderErrors(secrets, async () => {
    const provider = news[PROVIDER_KEY];
    const args = resolveJobRunArgs(news);
    const log = (line: string) => ctx.log(redact(line, secrets));
    // The log tail's bound is what is left of timeoutMs on the run's own clock (that of its deadline).
    const clock = ctx.clock ?? systemClock;
    const started = clock.now();
    const runContext = {
      endpoint: ctx.endpoint(args.endpointId),
      log,
      workers: ctx.workers,
      workersUnavailable: ctx.workersUnavailable,
      workersKey: ctx.workersKey,
      cancellation: ctx.signal,
      // The run's deadline and its rollout wait on the context's clock, with that clock's poll loops.
      ...(ctx.clock === undefined
        ? {}
        : { clock: ctx.clock, workerPolls: workerPollsOn<ServerlessWorkerList>(ctx.clock) }),
    };
    const outcome =
      args.http === undefined
        ? await executeJobRun(args, runContext)
        : await executeHttpProbe(args, {
            ...runContext,
            loadBalancer: ctx.loadBalancer,
            loadBalancerUnavailable: ctx.loadBalancerUnavailable,
          });
    // The endpoint's env values join the secrets (withProviderErrors holds this same array).
    secrets.push(...(await endpointEnvSecrets(ctx, args.endpointId)));
    // With secretOutput, the output's own values must not reappear in the log tail or the message.
    const hidden = args.secretOutput ? secretOutputValues(outcome.result) : [];
    const textSecrets = hidden === "too-many" ? secrets : [...secrets, ...hidden];
    // A probe's answer names no worker: the log shown is the one of the release's ready workers that
    // logged the request (see probeLogWorker).
    const probeWorker =
      outcome.failure !== undefined &&
      args.http !== undefined &&
      ctx.workerLogs !== undefined &&
      ctx.signal?.aborted !== true
        ? await probeLogWorker(ctx, args, outcome, textSecrets, clock, started)
        : undefined;
    const workerId = outcome.result.workerId ?? probeWorker?.workerId;
    // After the deployment's cancellation no worker log is read: the run ends now.
    const cancelled = ctx.signal?.aborted === true;
    if (
      outcome.failure !== undefined &&
      workerId !== undefined &&
      ctx.workerLogs !== undefined &&
      !cancelled
    ) {
      // Within the JobRun's own deadline, and at most LOG_TAIL_TIMEOUT_MS.
      const left = Math.min(LOG_TAIL_TIMEOUT_MS, args.timeoutMs - (clock.now() - started));
      const tail =
        hidden === "too-many"
          ? {
              unavailable: `not shown: the secret output has over ${MAX_HIDDEN_VALUES} values to keep out of it`,
            }
          : (probeWorker?.tail ??
            (await readLogTail(ctx.workerLogs, args.endpointId, workerId, textSecrets, left, clock)));
      if ("lines" in tail && tail.lines.length > 0) outcome.result.workerLogTail = tail.lines;
      const section = logTailSection(workerId, tail);
      const why = probeWorker === undefined ? "" : `${probeWorker.why}\n`;
      outcome.failure = redact(`${outcome.failure}\n${why}${section}`, textSecrets);
    } else if (outcome.failure !== undefined) {
      outcome.failure = redact(outcome.failure, textSecrets);
    }
    const stored = storedResult(outcome.result, secrets);
    if (textSecrets !== secrets) {
      // Everything but the (secret) output and stream is also kept free of the output's values.
      const { output, stream, ...rest } = stored;
      Object.assign(stored, redactValue(rest, textSecrets));
    }
    if (stored.outputTruncated) {
      const why =
        stored.outputDepth !== undefined
          ? `nests ${stored.outputDepth} levels deep, over ${MAX_OUTPUT_DEPTH}`
          : `(${stored.outputBytes ?? "unknown"} bytes of JSON) is over ${MAX_OUTPUT_BYTES} bytes`;
      log(
        `JobRun endpoint ${args.endpointId} job ${stored.jobId}: the output ${why} and is not stored (outputTruncated: true)`,
      );
    }
    const outs = await buildOutputs(news as JobRunInputs, stored, outcome.failure === undefined);
    const costUsd = await runCost(ctx, args.endpointId, stored.executionTime, outcome.placement);
    if (costUsd !== undefined) outs.costUsd = costUsd;
    if (outcome.failure !== undefined) {
      throw new JobRunFailedError(outcome.failure, id, { ...outs, [PROVIDER_KEY]: provider });
    }
    return { id, outs };
  });
}

/** Most workers whose logs a failed probe reads to find the one that answered. */
const MAX_PROBE_LOG_WORKERS = 3;

/**
 * The worker whose log a failed probe shows. The load balancer does not say which worker answered,
 * so the tails of up to {@link MAX_PROBE_LOG_WORKERS} ready workers of the release are read at once,
 * and the one whose log has the request line (`POST /v1/chat/completions`) is shown (the newest
 * such line wins); without one, the first worker's.
 */
async function probeLogWorker(
  ctx: LifecycleContext,
  args: ReturnType<typeof resolveJobRunArgs>,
  outcome: { logWorkers?: string[] },
  secrets: readonly string[],
  clock: Clock,
  started: number,
): Promise<{ workerId: string; tail: LogTail; why: string } | undefined> {
  const candidates = (outcome.logWorkers ?? []).slice(0, MAX_PROBE_LOG_WORKERS);
  if (candidates.length === 0 || ctx.workerLogs === undefined) return undefined;
  const left = Math.min(LOG_TAIL_TIMEOUT_MS, args.timeoutMs - (clock.now() - started));
  const reader = ctx.workerLogs;
  const tails = await Promise.all(
    candidates.map((id) => readLogTail(reader, args.endpointId, id, secrets, left, clock)),
  );
  const request = probeRequest(args).split("?")[0] as string;
  // Lines start with their RFC 3339 time, so the greatest line is the newest.
  let best = -1;
  let bestLine = "";
  tails.forEach((tail, i) => {
    if (!("lines" in tail)) return;
    const line = tail.lines.findLast((l) => l.includes(request));
    if (line !== undefined && (best < 0 || line > bestLine)) {
      best = i;
      bestLine = line;
    }
  });
  const pick = best >= 0 ? best : 0;
  const why =
    candidates.length === 1
      ? "The load balancer does not say which worker answered; the release has one ready worker."
      : best >= 0
        ? `The load balancer does not say which worker answered; of ${candidates.length} ready workers, this one logged the request.`
        : `The load balancer does not say which worker answered; none of ${candidates.length} ready workers logged the request, so the first is shown.`;
  return { workerId: candidates[pick] as string, tail: tails[pick] as LogTail, why };
}

/**
 * What the run cost, USD, estimated: its execution time × the hourly list price of the worker that
 * ran it (`placement`, as the release check read it: its GPU type × its GPU count), or of the
 * endpoint's dearest candidate when that is unknown (no release check with `rollout: "ignore"`). Undefined without an execution time or a price;
 * a read that fails costs the run nothing.
 */
async function runCost(
  ctx: LifecycleContext,
  endpointId: string,
  executionTime: number | undefined,
  placement: JobRunOutcome["placement"],
): Promise<number | undefined> {
  if (ctx.workerRate === undefined || typeof executionTime !== "number") return undefined;
  try {
    const rate = await ctx.workerRate(endpointId, {
      signal: AbortSignal.timeout(ENDPOINT_ENV_TIMEOUT_MS),
      ...(placement === undefined ? {} : { placement }),
    });
    return rate === undefined ? undefined : runCostUsd(executionTime, rate);
  } catch {
    return undefined;
  }
}

/** Longest the read of the endpoint's env may take, in ms. */
const ENDPOINT_ENV_TIMEOUT_MS = 5_000;

/**
 * The endpoint's env values, to redact (an `HF_TOKEN` a worker prints): REST v2 only, at most
 * {@link ENDPOINT_ENV_TIMEOUT_MS}. A read that fails costs the run nothing: the run's own secrets
 * are still redacted.
 */
async function endpointEnvSecrets(ctx: LifecycleContext, endpointId: string): Promise<string[]> {
  if (ctx.endpointEnv === undefined) return [];
  try {
    const values = await ctx.endpointEnv(endpointId, {
      signal: AbortSignal.timeout(ENDPOINT_ENV_TIMEOUT_MS),
    });
    return values.filter((v) => typeof v === "string");
  } catch {
    return [];
  }
}

/** Most values of a secret output kept out of the log tail; past it the tail is not shown. */
const MAX_HIDDEN_VALUES = 1000;

/** The string values of a run's output and stream (secret with `secretOutput`), or "too-many". */
function secretOutputValues(result: { output?: unknown; stream?: unknown }): string[] | "too-many" {
  const values: string[] = [];
  const stack: unknown[] = [result.output, result.stream];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "string") {
      values.push(node);
      if (values.length > MAX_HIDDEN_VALUES) return "too-many";
    } else if (node !== null && typeof node === "object") {
      for (const child of Object.values(node)) stack.push(child);
    }
  }
  return values;
}

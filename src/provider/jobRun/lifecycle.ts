/**
 * The JobRun provider's operations, kept out of the provider class so that `__provider` (the
 * class, serialized into every resource's state) stays small and loads this module by `require`.
 *
 * Outputs echo every argument except `s3Config`, which is recorded only as a salted scrypt digest
 * (`s3ConfigDigest`), so its `accessSecret` never reaches state, even encrypted; `diff` compares
 * the digest with the new value (digests written by 0.1.0, HMAC-SHA256, are still recognised).
 *
 * Nothing a worker or the service echoes reaches the host unredacted: every error these
 * operations throw, its `reasons`, every progress line, and every result field they return
 * (`output`, `error`, `stream`, ...) has the s3Config credentials and the API key replaced by
 * `[redacted]` (`../secrets`); the engine re-marks as secret only outputs whose keys match
 * secret inputs, so an echoed credential would otherwise land in state in plaintext. What enters
 * state is bounded: an `output` over `MAX_OUTPUT_BYTES` of JSON is left out (`outputTruncated`,
 * `outputBytes` say so), after `expect` was judged on the whole output.
 */
import { createHmac, randomBytes, randomUUID, scrypt, timingSafeEqual } from "node:crypto";
import type { Endpoint } from "../../client/endpoint";
import { NotFoundError } from "../../client/errors";
import { MB } from "../../client/limits";
import { isTerminalStatus } from "../../client/schemas";
import { clientFromSettings, type RunpodSettings, resolveSettings } from "../config";
import { redact, redactValue, withProviderErrors } from "../secrets";
import { describeError } from "../values";
import { ARG_NAMES, containsUnknown, type JobRunInputs, resolveJobRunArgs } from "./args";
import { LOG_TAIL_TIMEOUT_MS, logTailSection, readLogTail, type WorkerLogReader } from "./logTail";
import { CANCEL_TIMEOUT_MS, executeJobRun, type JobRunResult, judge, type RunContext } from "./run";

export { resolveSettings } from "../config";
export { checkJobRunArgs } from "./args";

const PROVIDER_KEY = "__provider";

/**
 * Everything a JobRun records: its arguments (s3Config as a digest), what the job did, and
 * `passed`, the verdict of that run (true only when the job ended as `expect` asks).
 */
export type JobRunOutputs = Omit<JobRunInputs, "s3Config"> &
  StoredResult & { s3ConfigDigest?: string; passed?: boolean };

/** Most bytes of `output` JSON kept in state: 1 MB (1,000,000 bytes). */
export const MAX_OUTPUT_BYTES = 1 * MB;
/** Most characters of the worker's `error` kept in state. */
export const MAX_ERROR_CHARS = 65_536;

/** A run's result as stored: redacted, and with `output` left out when over the bound. */
export type StoredResult = JobRunResult & {
  /** True when the worker's output was over `MAX_OUTPUT_BYTES` of JSON and is not stored. */
  outputTruncated?: boolean;
  /** Size of the worker's output as JSON, in bytes, when it was left out. */
  outputBytes?: number;
};

/**
 * The result as it may enter state: every string in it redacted (the worker may echo a credential
 * in its output, error or stream), the worker's error cut to `MAX_ERROR_CHARS`, and an output
 * over `MAX_OUTPUT_BYTES` of JSON left out with `outputTruncated` and `outputBytes`.
 */
export function storedResult(result: JobRunResult, secrets: readonly string[]): StoredResult {
  const stored: StoredResult = redactValue(result, secrets);
  if (typeof stored.error === "string" && stored.error.length > MAX_ERROR_CHARS) {
    const more = stored.error.length - MAX_ERROR_CHARS;
    stored.error = `${stored.error.slice(0, MAX_ERROR_CHARS)}... [${more} more characters not stored]`;
  }
  if (stored.output !== undefined) {
    let bytes: number | undefined;
    try {
      bytes = Buffer.byteLength(JSON.stringify(stored.output) ?? "", "utf8");
    } catch {
      bytes = undefined;
    }
    if (bytes === undefined || bytes > MAX_OUTPUT_BYTES) {
      delete stored.output;
      stored.outputTruncated = true;
      if (bytes !== undefined) stored.outputBytes = bytes;
    }
  }
  return stored;
}

/** How the provider reaches the service and reports progress; replaceable in tests. */
export interface LifecycleContext {
  endpoint: (endpointId: string) => RunContext["endpoint"];
  log: (line: string) => void;
  /** Values redacted from every error and progress line (the API key). @default [] */
  secrets?: readonly string[];
  /**
   * Opens a worker's log stream (REST v2), read for the tail of a failed run. It may throw (a v1
   * `restUrl`, a malformed one): the failure then says the log is unavailable. Without it no
   * log is read.
   */
  workerLogs?: WorkerLogReader;
}

/**
 * Builds the context from resolved settings: a client per call, progress to stderr. Jobs go
 * through a client that never uses `restUrl`; only a failed run's worker log is read over REST
 * (v2), with a second client made then, so a bad `restUrl` never stops a job from running.
 */
export function contextFromSettings(settings: RunpodSettings | undefined): LifecycleContext {
  let client: ReturnType<typeof clientFromSettings> | undefined;
  let restClient: ReturnType<typeof clientFromSettings> | undefined;
  const resolved = settings ?? resolveSettings(undefined);
  return {
    workerLogs: (endpointId, workerId, options) => {
      restClient ??= clientFromSettings(resolved, { maxRetries: 1 });
      return restClient.serverless.workerLogs(endpointId, workerId, { ...options, maxReconnects: 1 });
    },
    secrets: typeof resolved.apiKey === "string" && resolved.apiKey !== "" ? [resolved.apiKey] : [],
    endpoint: (endpointId) => {
      client ??= clientFromSettings(resolved, {}, { rest: false }); // jobs only: restUrl is never used
      return client.endpoint(endpointId) as Endpoint;
    },
    log: (line) => {
      process.stderr.write(`${line}\n`);
    },
  };
}

/** JSON text with sorted keys and no `undefined`, for comparing argument values. */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v) =>
      v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, (v as Record<string, unknown>)[k]]),
          )
        : v,
    ) ?? "undefined"
  );
}

/**
 * scrypt cost of new digests: N = 2^15, r = 8, p = 1 (32 MiB, the OWASP floor is N = 2^17 at
 * 128 MiB). Measured on the project's 2-core machine (Node 24): median 108 ms per digest
 * (2^14: 45 ms, 2^16: 242 ms). Paid once at create and once per diff of a JobRun with s3Config,
 * on libuv's thread pool (`crypto.scrypt`, not the sync variant), so the host keeps serving other
 * resources. A guess at the secret costs the same 0.1 s instead of 11 us with 0.1.0's HMAC.
 */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const SCRYPT_PREFIX = `scrypt-n${SCRYPT.N}-r${SCRYPT.r}-p${SCRYPT.p}`;
const SCRYPT_KEY_BYTES = 32;

function scryptHex(text: string, salt: Buffer): Promise<string> {
  return new Promise((resolve, reject) =>
    scrypt(text, salt, SCRYPT_KEY_BYTES, SCRYPT, (error, key) =>
      error ? reject(error) : resolve(key.toString("hex")),
    ),
  );
}

/**
 * `scrypt-n32768-r8-p1:<salt hex>:<key hex>` of the canonical JSON of an s3Config: a slow, salted
 * KDF, because the salt is stored beside it and the secret may be weak.
 */
export async function digestS3Config(s3Config: unknown, salt: Buffer = randomBytes(16)): Promise<string> {
  const key = await scryptHex(canonicalJson(s3Config), salt);
  return `${SCRYPT_PREFIX}:${salt.toString("hex")}:${key}`;
}

/** 0.1.0's digest, `hmac-sha256:<salt hex>:<digest hex>`: only read from old states, never written. */
function legacyHmac(s3Config: unknown, salt: Buffer): string {
  return createHmac("sha256", salt).update(canonicalJson(s3Config)).digest("hex");
}

/**
 * True when `s3Config` is the value `digest` was made from: a digest of this version (scrypt) or
 * of 0.1.0 (`hmac-sha256:`, so old states diff without a spurious update).
 */
export async function s3ConfigMatches(digest: unknown, s3Config: unknown): Promise<boolean> {
  if (typeof digest !== "string") return s3Config === undefined;
  if (s3Config === undefined) return false;
  const [scheme, saltHex, mac] = digest.split(":");
  if (!saltHex || !mac || !/^[0-9a-f]+$/i.test(saltHex)) return false;
  const salt = Buffer.from(saltHex, "hex");
  let again: string;
  if (scheme === SCRYPT_PREFIX) again = await scryptHex(canonicalJson(s3Config), salt);
  else if (scheme === "hmac-sha256") again = legacyHmac(s3Config, salt);
  else return false;
  return again.length === mac.length && timingSafeEqual(Buffer.from(again), Buffer.from(mac));
}

/** Removes `undefined` members (gRPC's Struct cannot carry them). */
function defined<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The recorded outputs: arguments as given (s3Config digested) plus the result and its verdict
 * (`passed`; omitted when not given).
 */
export async function buildOutputs(
  inputs: JobRunInputs,
  result: StoredResult,
  passed?: boolean,
): Promise<JobRunOutputs> {
  const echoed: Record<string, unknown> = {};
  for (const name of ARG_NAMES) {
    if (name === "s3Config") continue;
    echoed[name] = inputs[name];
  }
  return defined({
    ...echoed,
    s3ConfigDigest: inputs.s3Config === undefined ? undefined : await digestS3Config(inputs.s3Config),
    ...result,
    passed,
  }) as JobRunOutputs;
}

/**
 * Names of the arguments whose new value differs from the recorded one (`__provider` and the
 * result fields are not arguments). A value still unknown (preview) counts as a change.
 */
export async function changedArgs(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<string[]> {
  const changed: string[] = [];
  for (const name of ARG_NAMES) {
    const next = news[name];
    if (containsUnknown(next)) {
      changed.push(name);
      continue;
    }
    const same =
      name === "s3Config"
        ? await s3ConfigMatches(olds.s3ConfigDigest, next)
        : canonicalJson(olds[name]) === canonicalJson(next);
    if (!same) changed.push(name);
  }
  return changed;
}

/**
 * True when the recorded run met `expect`: its recorded `passed`, or, for states written before
 * `passed` existed, the recorded status and output judged against the recorded `expect`. A run
 * that never reached a terminal status did not pass.
 */
export function recordedRunPassed(olds: Record<string, unknown>): boolean {
  if (typeof olds.passed === "boolean") return olds.passed;
  const { status, jobId, endpointId } = olds;
  if (typeof status !== "string" || typeof jobId !== "string" || typeof endpointId !== "string") return false;
  if (!isTerminalStatus(status)) return false;
  try {
    const recorded = olds as unknown as JobRunInputs;
    // States without `passed` were judged before `expect.allowErrorOutput` existed: judge them by
    // the rules they ran under, so an upgrade does not re-run jobs that passed.
    const args = resolveJobRunArgs({
      ...recorded,
      expect: { ...recorded.expect, allowErrorOutput: recorded.expect?.allowErrorOutput ?? true },
    });
    const attempts = typeof olds.attempts === "number" ? olds.attempts : 1;
    return judge(args, { status, output: olds.output, attempts, timeline: [] }) === undefined;
  } catch {
    return false;
  }
}

/**
 * Any change of arguments or triggers re-runs the job as an in-place update: the resource keeps
 * its id, and `pulumi up` shows `~ update` with the changed arguments, not a replacement. So does
 * a recorded run that did not pass or never finished, even with unchanged arguments: the engine
 * forgets a partial failure after `pulumi refresh`, so the verdict is kept in the outputs.
 */
export async function diffJobRun(olds: Record<string, unknown>, news: Record<string, unknown>) {
  const changed = await changedArgs(olds, news);
  const rerun = changed.length > 0 || !recordedRunPassed(olds);
  return { changes: rerun, replaces: [] as string[], deleteBeforeReplace: false };
}

/** The error that makes a failed smoke test a partial failure: the resource stays, the step fails. */
export class JobRunFailedError extends Error {
  /** The JobRun's id: the engine keeps the resource in state under it. */
  readonly id: string;
  /** The recorded outputs, with `__provider` so later operations can load the provider. */
  readonly properties: Record<string, unknown>;
  constructor(message: string, id: string, properties: Record<string, unknown>) {
    super(message);
    this.name = "JobRunFailedError";
    this.id = id;
    this.properties = properties;
  }
}

/** The secret values among JobRun arguments: the s3Config credentials. */
export function jobRunSecrets(news: Record<string, unknown>): string[] {
  const s3 = news.s3Config as Record<string, unknown> | undefined;
  if (s3 === null || typeof s3 !== "object") return [];
  return [s3.accessSecret, s3.accessId].filter((v): v is string => typeof v === "string");
}

/**
 * Runs the job for `create` (new id) or `update` (same id); throws `JobRunFailedError` on failure.
 * Errors and progress lines come out with the s3Config credentials redacted.
 */
export async function runAndRecord(
  ctx: LifecycleContext,
  id: string,
  news: Record<string, unknown>,
): Promise<{ id: string; outs: JobRunOutputs }> {
  const secrets = [...jobRunSecrets(news), ...(ctx.secrets ?? [])];
  return withProviderErrors(secrets, async () => {
    const { [PROVIDER_KEY]: provider, ...rest } = news;
    const inputs = rest as unknown as JobRunInputs;
    const args = resolveJobRunArgs(inputs);
    const endpoint = ctx.endpoint(args.endpointId);
    const log = (line: string) => ctx.log(redact(line, secrets));
    const started = performance.now();
    const outcome = await executeJobRun(args, { endpoint, log });
    const workerId = outcome.result.workerId;
    if (outcome.failure !== undefined && workerId !== undefined && ctx.workerLogs !== undefined) {
      // Within the JobRun's own deadline, and at most LOG_TAIL_TIMEOUT_MS.
      const left = Math.min(LOG_TAIL_TIMEOUT_MS, args.timeoutMs - (performance.now() - started));
      const tail = await readLogTail(ctx.workerLogs, args.endpointId, workerId, secrets, left);
      if ("lines" in tail && tail.lines.length > 0) outcome.result.workerLogTail = tail.lines;
      outcome.failure = `${outcome.failure}\n${logTailSection(workerId, tail)}`;
    }
    const stored = storedResult(outcome.result, secrets);
    if (stored.outputTruncated) {
      log(
        `JobRun endpoint ${args.endpointId} job ${stored.jobId}: the output (${stored.outputBytes ?? "unknown"} bytes ` +
          `of JSON) is over ${MAX_OUTPUT_BYTES} bytes and is not stored (outputTruncated: true)`,
      );
    }
    const outs = await buildOutputs(inputs, stored, outcome.failure === undefined);
    if (outcome.failure !== undefined) {
      throw new JobRunFailedError(outcome.failure, id, { ...outs, [PROVIDER_KEY]: provider });
    }
    return { id, outs };
  });
}

/** `create`: a new JobRun id (a UUID of its own, not the job id), then the run. */
export function createJobRun(ctx: LifecycleContext, news: Record<string, unknown>) {
  return runAndRecord(ctx, randomUUID(), news);
}

/**
 * `update`: runs the job again under the same id. The engine calls it when arguments or
 * triggers changed, and after a failed run even when nothing changed. A job of the last run
 * (`olds`) recorded as queued or running is dealt with first, so none is left unrecorded: it is
 * cancelled (bounded by `CANCEL_TIMEOUT_MS` per call), or left running with a log line when the
 * last run had `cancelOnTimeout: false`. When that cancel fails the update fails before
 * submitting, keeping the old state (and its job id) for the next `up` or `destroy`.
 */
export async function updateJobRun(
  ctx: LifecycleContext,
  id: string,
  news: Record<string, unknown>,
  olds?: Record<string, unknown>,
) {
  if (olds !== undefined) {
    const secrets = [...jobRunSecrets(news), ...(ctx.secrets ?? [])];
    await withProviderErrors(secrets, () => settlePreviousJob(ctx, olds));
  }
  const { outs } = await runAndRecord(ctx, id, news);
  return { outs };
}

/** Cancels the last run's job when it was recorded as, and still is, queued or running. */
async function settlePreviousJob(ctx: LifecycleContext, olds: Record<string, unknown>) {
  const { jobId, endpointId, status } = olds;
  if (typeof jobId !== "string" || typeof endpointId !== "string") return;
  if (typeof status === "string" && isTerminalStatus(status)) return;
  const endpoint = ctx.endpoint(endpointId);
  const bounded = () => ({ signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), maxRetries: 1 });
  const where = `JobRun endpoint ${endpointId} job ${jobId}`;
  try {
    const job = await endpoint.status(jobId, bounded());
    if (isTerminalStatus(job.status)) return;
    if (olds.cancelOnTimeout === false) {
      ctx.log(
        `${where}: the previous run's job is still ${job.status} and is left running (cancelOnTimeout is false); ` +
          "the new run no longer tracks it",
      );
      return;
    }
    const answer = await endpoint.cancel(jobId, bounded());
    ctx.log(`${where}: the previous run's job was cancelled before running again (status ${answer.status})`);
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw new Error(
      `JobRun could not cancel the previous run's job ${jobId} on endpoint ${endpointId}, recorded as ` +
        `${typeof status === "string" ? status : "not finished"} (${describeError(error)}), so it did not ` +
        "submit a new job (two would run). Hint: cancel it yourself (POST /v2/" +
        `${endpointId}/cancel/${jobId} or the RunPod console), or run \`pulumi up\` again once the service answers.`,
      { cause: error },
    );
  }
}

/**
 * `read` (refresh): the service's current view of the recorded job. When the service no longer
 * has it (results expire: 30 min for /run, 60 s for /runsync) the recorded result is kept.
 */
export async function readJobRun(ctx: LifecycleContext, id: string, props: Record<string, unknown>) {
  return withProviderErrors(ctx.secrets ?? [], () => readRecordedJob(ctx, id, props));
}

async function readRecordedJob(ctx: LifecycleContext, id: string, props: Record<string, unknown>) {
  const jobId = props.jobId;
  const endpointId = props.endpointId;
  if (typeof jobId !== "string" || typeof endpointId !== "string") return { id, props };
  try {
    const job = await ctx.endpoint(endpointId).status(jobId);
    const next: Record<string, unknown> = { ...props, status: job.status };
    if (typeof job.delayTime === "number") next.delayTime = job.delayTime;
    if (typeof job.executionTime === "number") next.executionTime = job.executionTime;
    // The run's s3 credentials are not in state (only their digest), so what the worker says now
    // cannot be redacted of them: with s3Config, refresh keeps the output and error recorded
    // (redacted) at the run, and refreshes the status and times only.
    if (props.s3ConfigDigest !== undefined) return { id, props: next };
    const fresh: JobRunResult = { attempts: 0, timeline: [] };
    if (job.output !== undefined) fresh.output = job.output;
    if (typeof job.error === "string" && job.error !== "") fresh.error = job.error;
    const { output, error, outputTruncated, outputBytes } = storedResult(fresh, ctx.secrets ?? []);
    if (output !== undefined) {
      next.output = output;
      delete next.outputTruncated;
      delete next.outputBytes;
    }
    if (outputTruncated) Object.assign(next, { outputTruncated, outputBytes });
    if (outputTruncated) delete next.output;
    if (error !== undefined) next.error = error;
    return { id, props: next };
  } catch (error) {
    if (error instanceof NotFoundError) return { id, props };
    throw error;
  }
}

/**
 * `delete`: cancels the recorded job only while it may still run (recorded as, and still,
 * IN_QUEUE or IN_PROGRESS). A finished or expired job (404) needs nothing.
 */
export async function deleteJobRun(ctx: LifecycleContext, props: Record<string, unknown>) {
  await withProviderErrors(ctx.secrets ?? [], () => cancelRecordedJob(ctx, props));
}

async function cancelRecordedJob(ctx: LifecycleContext, props: Record<string, unknown>) {
  const { jobId, endpointId, status } = props;
  if (typeof jobId !== "string" || typeof endpointId !== "string") return;
  if (typeof status === "string" && isTerminalStatus(status)) return;
  const endpoint = ctx.endpoint(endpointId);
  try {
    const job = await endpoint.status(jobId);
    if (isTerminalStatus(job.status)) return;
    const answer = await endpoint.cancel(jobId);
    ctx.log(`JobRun endpoint ${endpointId} job ${jobId}: cancelled on delete (status ${answer.status})`);
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
}

/**
 * What a JobRun records as its outputs: its arguments as given (`s3Config` as a digest only), what
 * the run found, and the verdict (`passed`). What enters state is redacted and bounded: every
 * string the worker or the service wrote has the run's secrets replaced by `[redacted]` (the
 * engine re-marks as secret only outputs whose keys match secret inputs, so an echoed credential
 * would otherwise land in state in plaintext), the worker's error is cut to `MAX_ERROR_CHARS`,
 * and an output over `MAX_OUTPUT_BYTES` of JSON, or nested deeper than `MAX_OUTPUT_DEPTH`, is left
 * out (`outputTruncated`, with `outputBytes` or `outputDepth`, say so) after `expect` was judged on
 * the whole output: the job ran and was paid for, so its id must reach the state whatever it returned
 * (a 4000-deep output overflowed the stack serializing the answer, and nothing was recorded).
 */
import { MB, nestingDepth } from "../../client";
import { redactValue } from "../common/redaction";
import { JOB_RUN_ARG_NAMES, type JobRunInputs } from "./jobArgs";
import type { JobRunResult } from "./result";
import { digestS3Config } from "./s3Digest";

/** Most bytes of `output` JSON kept in state: 1 MB (1,000,000 bytes). */
export const MAX_OUTPUT_BYTES = 1 * MB;
/**
 * Deepest nesting of `output` kept in state (objects and arrays, the root counting 1). Deeper
 * outputs overflow the stack of the recursive code between the provider and the state (Pulumi's
 * gRPC serialization); real answers nest a few levels.
 */
export const MAX_OUTPUT_DEPTH = 100;
/** Most characters of the worker's `error` kept in state. */
export const MAX_ERROR_CHARS = 65_536;

/** A run's result as stored: redacted, and with `output` left out when over the bound. */
export type StoredResult = JobRunResult & {
  /** True when the worker's output was over `MAX_OUTPUT_BYTES` of JSON and is not stored. */
  outputTruncated?: boolean;
  /** Size of the worker's output as JSON, in bytes, when it was left out for its size. */
  outputBytes?: number;
  /** Nesting depth of the worker's output, when it was left out for its depth. */
  outputDepth?: number;
};

/**
 * Everything a JobRun records: its arguments (s3Config as a digest), what the job did, and
 * `passed`, the verdict of that run (true only when the job ended as `expect` asks).
 */
export type JobRunOutputs = Omit<JobRunInputs, "s3Config"> &
  StoredResult & { s3ConfigDigest?: string; passed?: boolean; costUsd?: number };

/**
 * The result as it may enter state: every string in it redacted (the worker may echo a credential
 * in its output, error or stream), the worker's error cut to `MAX_ERROR_CHARS`, and an output
 * over `MAX_OUTPUT_BYTES` of JSON left out with `outputTruncated` and `outputBytes`.
 */
export function storedResult(result: JobRunResult, secrets: readonly string[]): StoredResult {
  // Measured before anything recursive touches the output (redaction walks it too).
  const depth = result.output === undefined ? 0 : nestingDepth(result.output);
  if (depth > MAX_OUTPUT_DEPTH) {
    const { output: _tooDeep, ...rest } = result;
    return { ...redactValue(rest, secrets), outputTruncated: true, outputDepth: depth };
  }
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
  for (const name of JOB_RUN_ARG_NAMES) {
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

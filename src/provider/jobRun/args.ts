/**
 * Field-level checking of JobRun arguments, as the provider's `check` runs it: no network, the
 * job-request fields checked by the client's own schema (so a bad `policy.ttl` reads the same
 * here as from `endpoint.run`), values still unknown in a preview skipped.
 */
import { z } from "zod";
import { ENDPOINT_ID_RULE, isEndpointId } from "../../client/endpointId";
import { MB, RUN_PAYLOAD_LIMIT_BYTES, RUNSYNC_PAYLOAD_LIMIT_BYTES, TTL_MAX_MS } from "../../client/limits";
import { JobRequestSchema, TERMINAL_JOB_STATUSES, type TerminalJobStatus } from "../../client/schemas";
import { describeIssue, formatPath } from "../../client/validate";
import { UNKNOWN } from "../values";
import { MIN_RUNSYNC_TIMEOUT_MS } from "./bounds";
import { outputSchemaProblem } from "./outputSchema";

export { UNKNOWN } from "../values";

/** Default of `timeoutMs`: 10 minutes. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Largest `timeoutMs`: 1 week (the longest a job may queue), in ms. */
export const MAX_TIMEOUT_MS = TTL_MAX_MS;
/** Largest `retries`. */
export const MAX_RETRIES = 100;

/** JobRun arguments as the provider receives them (plain values; the host never sends secrets). */
export interface JobRunInputs {
  endpointId: string;
  input: Record<string, unknown>;
  webhook?: string;
  policy?: { executionTimeout?: number; lowPriority?: boolean; ttl?: number };
  s3Config?: { accessId: string; accessSecret: string; bucketName: string; endpointUrl: string };
  mode?: "run" | "runsync";
  timeoutMs?: number;
  cancelOnTimeout?: boolean;
  expect?: JobRunExpect;
  retries?: number;
  triggers?: unknown[];
  collectStream?: boolean;
  secretOutput?: boolean;
}

/** What the job must produce for the deploy to go on (`expect`). */
export interface JobRunExpect {
  status?: TerminalJobStatus;
  output?: unknown;
  /** Accept a COMPLETED job whose output is missing or has an `error` field. @default false */
  allowErrorOutput?: boolean;
  /** Most milliseconds the job may wait in the queue, cold start included (`delayTime`). */
  maxDelayMs?: number;
  /** Most milliseconds the job may run (`executionTime`). */
  maxExecutionMs?: number;
  /** A JSON Schema (draft 2020-12) the output must satisfy. */
  outputSchema?: unknown;
}

/** The arguments with every default applied. */
export interface ResolvedJobRunInputs extends JobRunInputs {
  mode: "run" | "runsync";
  timeoutMs: number;
  cancelOnTimeout: boolean;
  expect: JobRunExpect & { status: TerminalJobStatus; allowErrorOutput: boolean };
  retries: number;
  collectStream: boolean;
  secretOutput: boolean;
}

/** Names of every argument; `diff` compares exactly these. */
export const ARG_NAMES = [
  "endpointId",
  "input",
  "webhook",
  "policy",
  "s3Config",
  "mode",
  "timeoutMs",
  "cancelOnTimeout",
  "expect",
  "retries",
  "triggers",
  "collectStream",
  "secretOutput",
] as const satisfies readonly (keyof JobRunInputs)[];

const request = JobRequestSchema.shape;

/** A latency budget of `expect`: a positive whole number of milliseconds, at most `MAX_TIMEOUT_MS`. */
const latencyBudget = (name: string) =>
  z
    .int({ error: `${name} must be an integer number of milliseconds` })
    .min(1, { error: `${name} must be at least 1 ms` })
    .max(MAX_TIMEOUT_MS, { error: `${name} must be at most ${MAX_TIMEOUT_MS} ms (1 week)` })
    .optional();

/** Strict schema of the JobRun arguments (unknown keys are typos and fail). */
const JobRunArgsSchema = z
  .strictObject({
    endpointId: z
      .string({ error: `endpointId is required: the id of the serverless endpoint, ${ENDPOINT_ID_RULE}` })
      .refine(isEndpointId, { error: `endpointId must be ${ENDPOINT_ID_RULE}` }),
    input: request.input,
    webhook: request.webhook,
    policy: request.policy,
    s3Config: request.s3Config,
    mode: z.enum(["run", "runsync"], { error: 'mode must be "run" or "runsync"' }).optional(),
    timeoutMs: z
      .int({ error: "timeoutMs must be an integer number of milliseconds" })
      .min(1, { error: "timeoutMs must be at least 1 ms" })
      .max(MAX_TIMEOUT_MS, { error: `timeoutMs must be at most ${MAX_TIMEOUT_MS} ms (1 week)` })
      .optional(),
    cancelOnTimeout: z.boolean({ error: "cancelOnTimeout must be a boolean" }).optional(),
    expect: z
      .strictObject(
        {
          status: z
            .enum(TERMINAL_JOB_STATUSES, {
              error: `status must be one of ${TERMINAL_JOB_STATUSES.join(", ")}`,
            })
            .optional(),
          output: z.unknown().optional(),
          allowErrorOutput: z.boolean({ error: "expect.allowErrorOutput must be a boolean" }).optional(),
          maxDelayMs: latencyBudget("expect.maxDelayMs"),
          maxExecutionMs: latencyBudget("expect.maxExecutionMs"),
          outputSchema: z.unknown().optional(),
        },
        {
          error:
            "expect must be an object with optional status, output, allowErrorOutput, maxDelayMs, maxExecutionMs and outputSchema",
        },
      )
      .optional(),
    retries: z
      .int({ error: "retries must be an integer" })
      .min(0, { error: "retries must be at least 0" })
      .max(MAX_RETRIES, { error: `retries must be at most ${MAX_RETRIES}` })
      .optional(),
    triggers: z.array(z.unknown(), { error: "triggers must be an array of values" }).optional(),
    collectStream: z.boolean({ error: "collectStream must be a boolean" }).optional(),
    secretOutput: z.boolean({ error: "secretOutput must be a boolean" }).optional(),
  })
  .superRefine((args, ctx) => {
    if (args.collectStream === true && args.mode === "runsync") {
      ctx.addIssue({
        code: "custom",
        path: ["collectStream"],
        message:
          'collectStream needs mode "run": runsync answers only after the job has ended, ' +
          "when its stream chunks may already be gone",
      });
    }
    if (
      args.mode === "runsync" &&
      typeof args.timeoutMs === "number" &&
      args.timeoutMs < MIN_RUNSYNC_TIMEOUT_MS
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["timeoutMs"],
        message:
          `timeoutMs must be at least ${MIN_RUNSYNC_TIMEOUT_MS} ms with mode "runsync" (got ${args.timeoutMs}): ` +
          "the shortest runsync wait is 1000 ms and the service must answer with the job id before the " +
          'deadline; raise timeoutMs or use mode "run"',
      });
    }
  });

/** One failed field, as Pulumi's `CheckFailure` wants it. */
export interface CheckFailure {
  /** Dotted path of the field, e.g. `policy.ttl`. */
  property: string;
  /** What is wrong and what is allowed. */
  reason: string;
}

/** True when `value`, or the value on the way to `path` inside it, is Pulumi's unknown sentinel. */
function unknownOnPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current: unknown = value;
  if (current === UNKNOWN) return true;
  for (const key of path) {
    if (current === null || typeof current !== "object") return false;
    current = (current as Record<PropertyKey, unknown>)[key];
    if (current === UNKNOWN) return true;
  }
  return false;
}

/** True when `value` holds Pulumi's unknown sentinel anywhere. */
export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

/**
 * Checks JobRun arguments field by field, without any network call. Values that are still
 * unknown (a preview) are not judged. `__provider` is ignored. Returns every failure found.
 */
export function checkJobRunArgs(news: Record<string, unknown>): CheckFailure[] {
  const { __provider: _provider, ...args } = news;
  const failures = checkFields(args);
  const schemaFailure = outputSchemaFailure(args.expect);
  return schemaFailure === undefined ? failures : [...failures, schemaFailure];
}

/**
 * The failure for an `expect.outputSchema` that is not a valid JSON Schema 2020-12 (ajv is loaded
 * only when there is a schema to check; an unknown schema in a preview is not judged).
 */
function outputSchemaFailure(expectArg: unknown): CheckFailure | undefined {
  if (expectArg === null || typeof expectArg !== "object") return undefined;
  const schema = (expectArg as { outputSchema?: unknown }).outputSchema;
  if (schema === undefined || containsUnknown(schema)) return undefined;
  const reason = outputSchemaProblem(schema);
  return reason === undefined ? undefined : { property: "expect.outputSchema", reason };
}

function checkFields(args: Record<string, unknown>): CheckFailure[] {
  const tooLarge = payloadTooLarge(args);
  const result = JobRunArgsSchema.safeParse(args);
  if (result.success) return tooLarge === undefined ? [] : [tooLarge];
  const failures: CheckFailure[] = tooLarge === undefined ? [] : [tooLarge];
  for (const issue of result.error.issues) {
    if (unknownOnPath(args, issue.path)) continue;
    if (issue.code === "custom" && containsUnknown(args.mode)) continue;
    if (issue.code === "unrecognized_keys" && issue.path.length === 0) {
      for (const key of issue.keys) {
        const property = formatPath([...issue.path, key]);
        failures.push({
          property,
          reason: `${property} is not a JobRun argument (allowed: ${ARG_NAMES.join(", ")})`,
        });
      }
      continue;
    }
    const property =
      issue.code === "unrecognized_keys"
        ? formatPath([...issue.path, issue.keys[0] ?? ""])
        : formatPath(issue.path);
    failures.push({ property, reason: describeIssue(issue) });
  }
  return failures;
}

/**
 * The failure for a job request larger than its mode accepts (`/run`: 10 MB, `/runsync`: 20 MB,
 * as JSON), so it fails in check rather than at submission. With `mode` unknown (preview) the
 * larger limit applies.
 */
function payloadTooLarge(args: Record<string, unknown>): CheckFailure | undefined {
  const { input, webhook, policy, s3Config } = args;
  if (input === null || typeof input !== "object") return undefined;
  const body = { input, webhook, policy, s3Config };
  if (containsUnknown(body)) return undefined;
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(body), "utf8");
  } catch {
    return undefined; // not JSON at all: the schema's failures say so
  }
  const sync = args.mode === "runsync" || containsUnknown(args.mode);
  const limit = sync ? RUNSYNC_PAYLOAD_LIMIT_BYTES : RUN_PAYLOAD_LIMIT_BYTES;
  if (bytes <= limit) return undefined;
  return {
    property: "input",
    reason:
      `input makes the job request ${bytes} bytes of JSON; mode "${sync ? "runsync" : "run"}" accepts at most ` +
      `${limit / MB} MB (${limit} bytes)${sync ? "" : `, mode "runsync" ${RUNSYNC_PAYLOAD_LIMIT_BYTES / MB} MB`}. ` +
      "Pass large inputs by reference (for example a URL, or through s3Config).",
  };
}

/** Applies the documented defaults to checked arguments. */
export function resolveJobRunArgs(args: JobRunInputs): ResolvedJobRunInputs {
  return {
    ...args,
    mode: args.mode ?? "run",
    timeoutMs: args.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    cancelOnTimeout: args.cancelOnTimeout ?? true,
    expect: {
      ...args.expect,
      status: args.expect?.status ?? "COMPLETED",
      allowErrorOutput: args.expect?.allowErrorOutput ?? false,
    },
    retries: args.retries ?? 0,
    collectStream: args.collectStream ?? false,
    secretOutput: args.secretOutput ?? false,
  };
}

/**
 * The JobRun arguments, described once: {@link JobRunArgsSchema} is their only shape. It gives the
 * plain arguments the provider receives ({@link JobRunInputs}), the arguments with every default
 * applied ({@link ResolvedJobRunArgs}), the names `diff` compares ({@link JOB_RUN_ARG_NAMES}) and,
 * through `jobInputs.ts`, the documented `JobRunArgs` a program passes (the doc comments below are
 * what users read).
 *
 * The HTTP probe's schema is in `probeArgs.ts`; the provider's `check` is in `jobArgsCheck.ts`.
 */
import { z } from "zod";
import {
  ENDPOINT_ID_RULE,
  isEndpointId,
  JobRequestSchema,
  TERMINAL_JOB_STATUSES,
  type TerminalJobStatus,
  TTL_MAX_MS,
} from "../../client";
import { UNKNOWN } from "../common/unknown";
import { MIN_RUNSYNC_TIMEOUT_MS } from "./bounds";
import { HttpProbeSchema, probeCrossChecks } from "./probeArgs";

/** Default `timeoutMs` of a JobRun: 10 minutes, in ms. */
export const DEFAULT_JOB_RUN_TIMEOUT_MS = 600_000;
/** Largest `timeoutMs` of a JobRun: 1 week (the longest a job may queue), in ms. */
export const MAX_JOB_RUN_TIMEOUT_MS = TTL_MAX_MS;
/** Largest `retries` (service-side re-runs) of a JobRun. */
export const MAX_SERVICE_RETRIES = 100;

const request = JobRequestSchema.shape;

/** A duration argument: a positive whole number of milliseconds, at most one week. */
const milliseconds = (name: string) =>
  z
    .int({ error: `${name} must be an integer number of milliseconds` })
    .min(1, { error: `${name} must be at least 1 ms` })
    .max(MAX_JOB_RUN_TIMEOUT_MS, { error: `${name} must be at most ${MAX_JOB_RUN_TIMEOUT_MS} ms (1 week)` });

const bool = (name: string) => z.boolean({ error: `${name} must be a boolean` });

/** What the job must produce for the deploy to go on (`expect`). */
const ExpectSchema = z.strictObject(
  {
    status: z
      .enum(TERMINAL_JOB_STATUSES, { error: `status must be one of ${TERMINAL_JOB_STATUSES.join(", ")}` })
      .default("COMPLETED" satisfies TerminalJobStatus)
      .meta({
        description: "Terminal status the job must end in: COMPLETED, FAILED, CANCELLED or TIMED_OUT.",
        default: '"COMPLETED"',
      }),
    output: z
      .unknown()
      .optional()
      .meta({
        description:
          "A JSON value the output must contain: objects match when every expected key matches\n" +
          "(extra keys are ignored), arrays item by item with the same length, other values by\n" +
          "equality. A mismatch fails the deploy with a diff of the differing paths.",
      }),
    allowErrorOutput: bool("expect.allowErrorOutput")
      .default(false)
      .meta({
        description:
          "Accept a COMPLETED job whose output is missing or is an object with an `error` field. By\n" +
          "default such a job fails the deploy: its handler returned its error instead of raising it.",
        default: "false",
      }),
    maxDelayMs: milliseconds("expect.maxDelayMs")
      .optional()
      .meta({
        description:
          "Latency budget for the queue, cold start included: the deploy fails when the job's\n" +
          "`delayTime` is over this many ms (or the service reports none).",
      }),
    maxExecutionMs: milliseconds("expect.maxExecutionMs")
      .optional()
      .meta({
        description:
          "Latency budget for the run: the deploy fails when the job's `executionTime` is over this\n" +
          "many ms (or the service reports none).",
      }),
    outputSchema: z
      .custom<Record<string, unknown> | boolean>()
      .optional()
      .meta({
        description:
          "A JSON Schema (draft 2020-12) the output must satisfy, checked with ajv; a violation fails\n" +
          "the deploy listing every violation by instance path. An invalid schema fails `check`.",
      }),
  },
  {
    error:
      "expect must be an object with optional status, output, allowErrorOutput, maxDelayMs, maxExecutionMs and outputSchema",
  },
);

/** Why a JobRun without `input` nor `http` fails. */
export const INPUT_REQUIRED =
  "input is required: the job input, a JSON object (or give http instead to probe a LOAD_BALANCER endpoint)";

/**
 * The JobRun arguments as one strict object, before the rules between fields
 * ({@link jobRunCrossChecks}): what other argument shapes derive from (`ServerlessEndpoint`'s
 * `smokeTest` picks the job's arguments from it), since zod cannot pick from a refined object.
 */
export const JobRunArgsObject = z.strictObject({
  endpointId: z
    .string({ error: `endpointId is required: the id of the serverless endpoint, ${ENDPOINT_ID_RULE}` })
    .refine(isEndpointId, { error: `endpointId must be ${ENDPOINT_ID_RULE}` })
    .meta({ description: "Id of the serverless endpoint to run the job on." }),
  input: request.input.optional().meta({
    description:
      "The job input: a JSON object whose keys the worker defines (at most 10 MB as JSON; 20 MB with\n" +
      "runsync). Required, unless `http` probes a load-balancer endpoint instead.",
  }),
  http: HttpProbeSchema.optional().meta({
    description:
      'Probe a `type: "LOAD_BALANCER"` endpoint over HTTP instead of a queue job (instead of `input`):\n' +
      "one request to its `requestUrls.base` with the API key as bearer token, within `timeoutMs`; the\n" +
      "answer must have `expectStatus`, then its JSON body and latency are judged by `expect` as a\n" +
      'job\'s output is. With `rollout: "wait"` every ready worker must run the current version. The\n' +
      "job-only arguments (`webhook`, `policy`, `s3Config`, `retries`, ...) do not apply.",
  }),
  webhook: request.webhook.meta({
    description: "URL the service calls with the job's result when it completes.",
  }),
  policy: request.policy.meta({ description: "Execution policy of the job (the service's `policy`)." }),
  s3Config: request.s3Config.meta({
    description:
      "S3-compatible storage settings passed to the worker. Always stored as a secret; the outputs\n" +
      "keep only a salted digest of it (`s3ConfigDigest`) to notice changes.",
  }),
  mode: z
    .enum(["run", "runsync"], { error: 'mode must be "run" or "runsync"' })
    .default("run")
    .meta({
      description:
        '`"run"` queues the job and long-polls its status; `"runsync"` submits with `/runsync`, which\n' +
        "answers with the result when the job ends within its wait (then polling continues).",
      default: '"run"',
    }),
  timeoutMs: milliseconds("timeoutMs")
    .default(DEFAULT_JOB_RUN_TIMEOUT_MS)
    .meta({
      description:
        "How long the deploy waits for the job to end, in ms (1 .. 604800000), counted from the start\n" +
        "of the run: the rollout wait and submission included. The JobRun enforces it itself (Pulumi's\n" +
        '`customTimeouts` do not reach dynamic providers); at least 3000 with mode `"runsync"`, so the\n' +
        "service answers with the job id before the deadline.",
      default: "600000 (10 minutes)",
    }),
  cancelOnTimeout: bool("cancelOnTimeout")
    .default(true)
    .meta({
      description:
        "Cancel the job on the service when the JobRun stops waiting for it (timeoutMs expired,\n" +
        "waiting failed, or the deployment was cancelled), so it does not keep spending credits.",
      default: "true",
    }),
  rollout: z
    .enum(["wait", "ignore"], { error: 'rollout must be "wait" or "ignore"' })
    .optional()
    .meta({
      description:
        "Which release the job tests (a job sent during a rollout may run on an old worker).\n" +
        '- `"wait"`: wait (within `timeoutMs`) until no worker runs an older version; then check that\n' +
        "  the worker that ran the job runs the current version (`endpointVersion`), submitting once\n" +
        "  more if not.\n" +
        '- `"ignore"`: submit at once; no check (`endpointVersion` stays unset).\n' +
        "\n" +
        "Needs REST v2 (`runpod:restUrl` ending in `/v2`, the default).",
      default: '"wait" when `runpod:restUrl` is REST v2, "ignore" when it is REST v1',
    }),
  expect: ExpectSchema.prefault({}).meta({
    description: "What the job must produce for the deploy to go on.",
  }),
  retries: z
    .int({ error: "retries must be an integer" })
    .min(0, { error: "retries must be at least 0" })
    .max(MAX_SERVICE_RETRIES, { error: `retries must be at most ${MAX_SERVICE_RETRIES}` })
    .default(0)
    .meta({
      description:
        "How many times to re-queue the job with the service's `/retry` when it ends FAILED or\n" +
        "TIMED_OUT (0 .. 100); `attempts` reports the runs made.",
      default: "0",
    }),
  triggers: z.array(z.unknown(), { error: "triggers must be an array of values" }).optional().meta({
    description:
      "Any values; a change runs the job again. `[new Date().toISOString()]` runs it on every deploy.",
  }),
  collectStream: bool("collectStream")
    .default(false)
    .meta({
      description:
        'Collect the job\'s stream chunks into `stream` (mode `"run"` only). Bounded: at most 1000\n' +
        "chunks and 1 MB (1,000,000 bytes) of chunk JSON; beyond that `streamTruncated` is true.",
      default: "false",
    }),
  secretOutput: bool("secretOutput")
    .default(false)
    .meta({
      description:
        "Mark `output` and `stream` as secrets (fixed at construction; a plain boolean). Failure\n" +
        "messages then show the differing paths of `expect.output` without their values.",
      default: "false",
    }),
  redact: z
    .array(z.string({ error: "redact must be an array of strings (the secret values)" }), {
      error: "redact must be an array of strings (the secret values)",
    })
    .optional()
    .meta({
      description:
        "More secret values to keep out of everything the run records but `output` (the failure\n" +
        "message, `error`, `workerLogTail`, the timeline): secrets the stack knows and the worker might\n" +
        "print, such as a `ContainerRegistryAuth`'s password (`redact: [registry.password]`). The\n" +
        "endpoint's `env` values and the run's own credentials are redacted without being listed.\n" +
        "Stored as a secret. A change runs the job again.",
    }),
});

/**
 * The rules between JobRun arguments (`collectStream` needs mode "run"; runsync needs a
 * `timeoutMs` of at least 3000), for every schema holding the job's arguments.
 */
export function jobRunCrossChecks(
  args: {
    collectStream?: boolean;
    mode: "run" | "runsync";
    timeoutMs: number;
    input?: unknown;
    http?: unknown;
    expect?: { status?: string; maxDelayMs?: number };
  },
  ctx: z.core.$RefinementCtx,
): void {
  // Not known yet (a preview): whether this is a probe is judged once it is known.
  if (args.http === UNKNOWN) return;
  if (args.http !== undefined) {
    probeCrossChecks(args, ctx);
    return;
  }
  if (args.input === undefined) ctx.addIssue({ code: "custom", path: ["input"], message: INPUT_REQUIRED });
  if (args.collectStream === true && args.mode === "runsync") {
    ctx.addIssue({
      code: "custom",
      path: ["collectStream"],
      message:
        'collectStream needs mode "run": runsync answers only after the job has ended, ' +
        "when its stream chunks may already be gone",
    });
  }
  if (args.mode === "runsync" && args.timeoutMs < MIN_RUNSYNC_TIMEOUT_MS) {
    ctx.addIssue({
      code: "custom",
      path: ["timeoutMs"],
      message:
        `timeoutMs must be at least ${MIN_RUNSYNC_TIMEOUT_MS} ms with mode "runsync" (got ${args.timeoutMs}): ` +
        "the shortest runsync wait is 1000 ms and the service must answer with the job id before the " +
        'deadline; raise timeoutMs or use mode "run"',
    });
  }
}

/** Strict schema of the JobRun arguments (an unknown key is a typo and fails), with their defaults. */
export const JobRunArgsSchema = JobRunArgsObject.superRefine(jobRunCrossChecks);

/** JobRun arguments as the provider receives them: plain values (the host never sends secrets). */
export type JobRunInputs = z.input<typeof JobRunArgsSchema>;
/** The arguments with every default applied. */
export type ResolvedJobRunArgs = z.output<typeof JobRunArgsSchema>;
/** What the job must produce, with its defaults applied. */
export type JobRunExpect = ResolvedJobRunArgs["expect"];

/** Names of every argument, in the schema's order; `diff` compares exactly these. */
export const JOB_RUN_ARG_NAMES = Object.keys(JobRunArgsSchema.shape) as (keyof JobRunInputs)[];

/** Only the argument members of `record` (outputs and `__provider` left out). */
export function pickArgs(record: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const name of JOB_RUN_ARG_NAMES) if (record[name] !== undefined) args[name] = record[name];
  return args;
}

/**
 * The arguments with the documented defaults applied: `record`'s argument members (other keys,
 * such as recorded outputs, are left out) parsed by {@link JobRunArgsSchema}. Throws a zod error
 * when they do not pass its checks (arguments that passed `check` always do).
 */
export function resolveJobRunArgs(record: Record<string, unknown>): ResolvedJobRunArgs {
  return JobRunArgsSchema.parse(pickArgs(record));
}

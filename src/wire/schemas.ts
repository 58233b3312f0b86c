/**
 * Wire shapes of the service, as zod schemas. These are the single source of the request and
 * response types used by the client, the providers and the emulator.
 *
 * Requests are strict (unknown keys are rejected, so a typo names its field); responses are
 * loose (unknown fields pass through, so a service that adds fields does not break users).
 */
import { z } from "zod";
import {
  EXECUTION_TIMEOUT_MIN_EXCLUSIVE_MS,
  SYNC_WAIT_MAX_MS,
  SYNC_WAIT_MIN_MS,
  TTL_MAX_MS,
  TTL_MIN_MS,
} from "./limits";

// ---------------------------------------------------------------------------------------------
// Job interface: requests
// ---------------------------------------------------------------------------------------------

const httpUrl = (what: string) => z.url({ protocol: /^https?$/, error: `${what} must be an http(s) URL` });

/** Execution policy of one job. */
export const JobPolicySchema = z.strictObject({
  executionTimeout: z
    .int({ error: "executionTimeout must be an integer number of milliseconds" })
    .gt(EXECUTION_TIMEOUT_MIN_EXCLUSIVE_MS, {
      error: `executionTimeout must be greater than ${EXECUTION_TIMEOUT_MIN_EXCLUSIVE_MS} ms`,
    })
    .optional()
    .meta({ description: "Longest a running job may take, in ms; must be > 5000.", default: "600000" }),
  lowPriority: z
    .boolean({ error: "lowPriority must be a boolean" })
    .optional()
    .meta({ description: "When true the job does not trigger worker scaling.", default: "false" }),
  ttl: z
    .int({ error: "ttl must be an integer number of milliseconds" })
    .min(TTL_MIN_MS, { error: `ttl must be at least ${TTL_MIN_MS} ms` })
    .max(TTL_MAX_MS, { error: `ttl must be at most ${TTL_MAX_MS} ms (1 week)` })
    .optional()
    .meta({
      description: "Longest the job may wait in the queue, in ms: 10000 .. 604800000 (1 week).",
      default: "86400000",
    }),
});
export type JobPolicy = z.infer<typeof JobPolicySchema>;

/** S3-compatible storage settings passed to the worker; never echoed by the service. */
export const S3ConfigSchema = z.strictObject({
  accessId: z
    .string({ error: "accessId must be a string" })
    .min(1, { error: "accessId must not be empty" })
    .meta({ description: "Access key id of the bucket's credentials." }),
  accessSecret: z
    .string({ error: "accessSecret must be a string" })
    .min(1, { error: "accessSecret must not be empty" })
    .meta({
      description: "Secret access key of the bucket's credentials (a secret: never echoed nor logged).",
    }),
  bucketName: z
    .string({ error: "bucketName must be a string" })
    .min(1, { error: "bucketName must not be empty" })
    .meta({ description: "Name of the bucket the worker reads and writes." }),
  endpointUrl: httpUrl("endpointUrl").meta({
    description:
      "URL of the S3-compatible service (http or https), e.g. `https://s3.us-east-1.amazonaws.com`.",
  }),
  objectPath: z.string({ error: "objectPath must be a string" }).optional().meta({
    description:
      "Key prefix (folder) in the bucket under which the worker stores what it uploads; the official SDK sends it.",
  }),
});
export type S3Config = z.infer<typeof S3ConfigSchema>;

/** Body of `POST /run` and `POST /runsync`. */
export const JobRequestSchema = z.strictObject({
  input: z
    .record(z.string(), z.unknown(), {
      error: (issue) =>
        issue.input === undefined ? "input is required: a JSON object" : "input must be a JSON object",
    })
    .meta({ description: "Handler parameters; a JSON object whose keys the worker defines." }),
  webhook: httpUrl("webhook")
    .optional()
    .meta({ description: "Called with the job's status body when the job completes." }),
  webhookV2: httpUrl("webhookV2").optional().meta({
    description:
      "The newer webhook field the official SDK sends beside `webhook`; the emulator delivers the job's status body to it exactly as to `webhook` (once per distinct URL when both are given).",
  }),
  policy: JobPolicySchema.optional(),
  s3Config: S3ConfigSchema.optional(),
});
export type JobRequest = z.infer<typeof JobRequestSchema>;

/** `wait` of `/runsync` and `/status-sync`, in ms: 1000..300000. */
export const SyncWaitSchema = z
  .int({ error: "wait must be an integer number of milliseconds" })
  .min(SYNC_WAIT_MIN_MS, { error: `wait must be at least ${SYNC_WAIT_MIN_MS} ms` })
  .max(SYNC_WAIT_MAX_MS, { error: `wait must be at most ${SYNC_WAIT_MAX_MS} ms` });

/** `ttl` query parameter of `/status`: how long the result stays readable, in ms. */
export const StatusTtlSchema = z
  .int({ error: "ttl must be an integer number of milliseconds" })
  .positive({ error: "ttl must be positive" });

// ---------------------------------------------------------------------------------------------
// Job interface: responses
// ---------------------------------------------------------------------------------------------

/** The states the service names. The list is open-ended, so other strings are accepted too. */
export const TERMINAL_JOB_STATUSES = ["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"] as const;
export const JOB_STATUSES = ["IN_QUEUE", "IN_PROGRESS", ...TERMINAL_JOB_STATUSES] as const;
export type KnownJobStatus = (typeof JOB_STATUSES)[number];
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];
export const JobStatusValueSchema = z.string().min(1);
export type JobStatusValue = KnownJobStatus | (string & {});

/** True for COMPLETED, FAILED, CANCELLED and TIMED_OUT. */
export function isTerminalStatus(status: string): status is TerminalJobStatus {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** Job response of `/status`, `/runsync`, `/run`, `/cancel`, `/retry` (the last three: id and status only). */
export const JobSchema = z.looseObject({
  id: z.string().min(1),
  status: JobStatusValueSchema,
  /** Time spent in the queue, ms. */
  delayTime: z.number().optional(),
  /** Processing time, ms. */
  executionTime: z.number().optional(),
  /** The worker's result; present when completed. */
  output: z.unknown().optional(),
  /** The worker's error message when FAILED. */
  error: z.unknown().optional(),
  /** The worker that ran (or runs) the job; match it against `client.serverless.workers(id)`. */
  workerId: z.string().optional(),
});
export type Job = z.infer<typeof JobSchema> & { status: JobStatusValue };

/** One stream chunk as sent: `{ output, metrics? }`. */
export const StreamChunkSchema = z.looseObject({
  output: z.unknown(),
  metrics: z.record(z.string(), z.unknown()).optional(),
});
export type StreamChunk = z.infer<typeof StreamChunkSchema>;

/** `/stream/{id}`: the service wraps the chunk array with the job status; a bare array is accepted too. */
export const StreamResponseSchema = z.union([
  z.looseObject({
    status: JobStatusValueSchema.optional(),
    stream: z.array(StreamChunkSchema).default([]),
  }),
  z.array(StreamChunkSchema),
]);
export type StreamResponse = z.infer<typeof StreamResponseSchema>;

/** `/health`: job and worker counts. */
export const HealthSchema = z.looseObject({
  /** Job counts. */
  jobs: z.looseObject({
    /** Jobs completed (in the service's recent window). */
    completed: z.number().int(),
    /** Jobs failed (in the service's recent window). */
    failed: z.number().int(),
    /** Jobs running now. */
    inProgress: z.number().int(),
    /** Jobs waiting for a worker. */
    inQueue: z.number().int(),
    /** Jobs retried. */
    retried: z.number().int(),
  }),
  /** Worker counts. */
  workers: z.looseObject({
    /** Workers ready and without a job. */
    idle: z.number().int(),
    /** Workers running a job. */
    running: z.number().int(),
    /** Workers starting (cold start or a rollout's replacement). */
    initializing: z.number().int().optional(),
    /** Workers started and healthy, busy or not. */
    ready: z.number().int().optional(),
    /** Workers held back by the service (capacity or account limits). */
    throttled: z.number().int().optional(),
    /** Workers that failed to start or their health checks. */
    unhealthy: z.number().int().optional(),
  }),
});
export type Health = z.infer<typeof HealthSchema>;

/** `/purge-queue`: `{ removed, status }`. */
export const PurgeQueueResultSchema = z.looseObject({
  removed: z.number().int(),
  status: z.string(),
});
export type PurgeQueueResult = z.infer<typeof PurgeQueueResultSchema>;

// ---------------------------------------------------------------------------------------------
// Management interface (REST v1 shapes; the client maps the v2 dialect onto these)
// ---------------------------------------------------------------------------------------------

const nonEmpty = (field: string) =>
  z.string({ error: `${field} must be a string` }).min(1, { error: `${field} must not be empty` });

/** Body of a registry-auth create. */
export const ContainerRegistryAuthCreateInputSchema = z.strictObject({
  /** Unique name of the credential. */
  name: nonEmpty("name"),
  /** Registry username. */
  username: nonEmpty("username"),
  /** Registry password; write-only. */
  password: nonEmpty("password"),
});
export type ContainerRegistryAuthCreateInput = z.infer<typeof ContainerRegistryAuthCreateInputSchema>;

/** A stored registry credential; username and password are never returned. */
export const ContainerRegistryAuthSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
});
export type ContainerRegistryAuth = z.infer<typeof ContainerRegistryAuthSchema>;
export const ContainerRegistryAuthListSchema = z.array(ContainerRegistryAuthSchema);

/** A network volume, in the client's one shape (v2's `dataCenter` is mapped to `dataCenterId`). */
export const NetworkVolumeSchema = z.looseObject({
  /** The volume's id. */
  id: z.string().min(1),
  /** The volume's name (names need not be unique). */
  name: z.string(),
  /** Allocated size in GB. */
  size: z.number(),
  /** Data centre it is in, e.g. `EU-RO-1`. */
  dataCenterId: z.string(),
  /** Storage tier (v2 only): `STANDARD` or `HIGH_PERFORMANCE`. */
  type: z.string().optional(),
});
export type NetworkVolume = z.infer<typeof NetworkVolumeSchema>;
export const NetworkVolumeListSchema = z.array(NetworkVolumeSchema);

/** v1 size bounds of a network volume, in GB. */
export const V1_VOLUME_SIZE = { min: 0, max: 4000 } as const;
/** v2 size bounds of a network volume, in GB. */
export const V2_VOLUME_SIZE = { min: 10, max: 4096 } as const;

/** Body of a network-volume create (v1 bounds; the client checks v2's when speaking v2). */
export const NetworkVolumeCreateInputSchema = z.strictObject({
  name: nonEmpty("name"),
  size: z
    .int({ error: "size must be an integer number of GB" })
    .min(V1_VOLUME_SIZE.min, { error: `size must be at least ${V1_VOLUME_SIZE.min} GB` })
    .max(V1_VOLUME_SIZE.max, { error: `size must be at most ${V1_VOLUME_SIZE.max} GB` }),
  dataCenterId: nonEmpty("dataCenterId"),
  /** Storage tier (v2 only). */
  type: z
    .enum(["STANDARD", "HIGH_PERFORMANCE"], { error: "type must be STANDARD or HIGH_PERFORMANCE" })
    .optional(),
});
export type NetworkVolumeCreateInput = z.infer<typeof NetworkVolumeCreateInputSchema>;

/** Body of a network-volume update: a new name and/or a larger size. */
export const NetworkVolumeUpdateInputSchema = z
  .strictObject({
    name: nonEmpty("name").optional(),
    size: z
      .int({ error: "size must be an integer number of GB" })
      .min(V1_VOLUME_SIZE.min, { error: `size must be at least ${V1_VOLUME_SIZE.min} GB` })
      .max(V1_VOLUME_SIZE.max, { error: `size must be at most ${V1_VOLUME_SIZE.max} GB` })
      .optional(),
  })
  .refine((v) => v.name !== undefined || v.size !== undefined, { error: "give name and/or size to update" });
export type NetworkVolumeUpdateInput = z.infer<typeof NetworkVolumeUpdateInputSchema>;

/** v1 management error body (and the job interface's): `{ message }`. */
export const V1ErrorBodySchema = z.looseObject({ message: z.string() });
export type V1ErrorBody = z.infer<typeof V1ErrorBodySchema>;

// ---------------------------------------------------------------------------------------------
// Management interface, REST v2 wire shapes (rest-v2.openapi.json); the client maps them onto
// the one user-facing shape above.
// ---------------------------------------------------------------------------------------------

/** v2 `GET /v2/registries`: `{ registries: [...] }`. */
export const V2RegistryListSchema = z.looseObject({ registries: z.array(ContainerRegistryAuthSchema) });

/** A network volume as v2 sends it: `dataCenter` instead of `dataCenterId`. */
export const V2NetworkVolumeSchema = NetworkVolumeSchema.omit({ dataCenterId: true }).extend({
  dataCenter: z.string(),
});
export type V2NetworkVolume = z.infer<typeof V2NetworkVolumeSchema>;

/** v2 `GET /v2/network-volumes`: `{ networkVolumes: [...] }`. */
export const V2NetworkVolumeListSchema = z.looseObject({ networkVolumes: z.array(V2NetworkVolumeSchema) });

const v2Size = z
  .int({ error: "size must be an integer number of GB" })
  .min(V2_VOLUME_SIZE.min, { error: `size must be at least ${V2_VOLUME_SIZE.min} GB` })
  .max(V2_VOLUME_SIZE.max, { error: `size must be at most ${V2_VOLUME_SIZE.max} GB` });

/** Network-volume create input with v2 bounds (size 10..4096 GB), in the user-facing shape. */
export const V2NetworkVolumeCreateInputSchema = NetworkVolumeCreateInputSchema.extend({ size: v2Size });

/**
 * v2 create body as sent on the wire (`CreateNetworkVolumeRequest`): `dataCenter` in place of the
 * user-facing `dataCenterId`.
 */
export const V2NetworkVolumeCreateRequestSchema = V2NetworkVolumeCreateInputSchema.omit({
  dataCenterId: true,
}).extend({ dataCenter: nonEmpty("dataCenter") });

/** Network-volume update input with v2 bounds, in the user-facing shape. */
export const V2NetworkVolumeUpdateInputSchema = z
  .strictObject({ name: nonEmpty("name").optional(), size: v2Size.optional() })
  .refine((v) => v.name !== undefined || v.size !== undefined, { error: "give name and/or size to update" });

/** v2 error body (`application/problem+json`). */
export const V2ProblemSchema = z.looseObject({
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  errors: z.array(z.string()).optional(),
});
export type V2Problem = z.infer<typeof V2ProblemSchema>;

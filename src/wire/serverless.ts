/**
 * REST v2 wire schemas of serverless endpoints, their releases and workers, derived from
 * `rest-v2.openapi.json` (`/v2/serverless...`). Templates, worker logs and the container config
 * they share live beside this module (`templates.ts`, `workerLogs.ts`, `containerConfig.ts`).
 *
 * Request bodies are parsed strictly (an unknown field is a `ValidationError` naming it), with
 * the document's bounds and the cross-field rules it states as 400s (exactly one of `gpu` or
 * `cpu`; `image` unless `templateId`; a non-empty `allowedCudaVersions` excludes
 * `minCudaVersion`). Answers are parsed loosely: unknown fields pass, and only the fields this
 * package relies on are required, so a service that adds or omits a descriptive field does not
 * break callers.
 *
 * This module is the one source of these shapes: the client parses with it, and the emulator
 * parses its requests and types its answers with it (its stored records are these answer schemas
 * with the fields it always writes made `required()`). The cross-field rules the document answers
 * with 400 (rather than the schema's 422) carry {@link BAD_REQUEST_RULE} in their issue's `params`,
 * so the emulator can tell them apart ({@link isBadRequestRule}).
 */
import { z } from "zod";
import { containerConfigAnswerShape, containerConfigShape } from "./containerConfig";
import { badRequest, cudaVersion, int, nonEmpty, str, strings } from "./fields";

// ---------------------------------------------------------------------------------------------
// Shared pieces (scaling, workers, compute)
// ---------------------------------------------------------------------------------------------

/** The container settings of an endpoint (`ContainerConfig`): what a template supplies. */
export const ENDPOINT_CONTAINER_FIELDS = ["image", "args", "disk", "ports", "env", "registry"] as const;

/**
 * Fields of an endpoint whose change makes a new release (the service's rule: the container
 * settings, the template, and where workers run); the others (name, scaling, workers, timeout,
 * flashboot) apply at once.
 */
export const ENDPOINT_RELEASE_FIELDS = [
  ...ENDPOINT_CONTAINER_FIELDS,
  "templateId",
  "gpu",
  "cpu",
  "dataCenterIds",
  "networkVolumes",
] as const;

/** Worker bounds of an endpoint. */
export const EndpointWorkersInputSchema = z.strictObject({
  min: int("min").min(0, { error: "min must be at least 0" }).optional(),
  max: int("max").min(0, { error: "max must be at least 0" }).optional(),
  /** Seconds an idle worker is kept, 1..3600. */
  idleTimeout: int("idleTimeout")
    .min(1, { error: "idleTimeout must be at least 1 s" })
    .max(3600, { error: "idleTimeout must be at most 3600 s" })
    .optional(),
});

/** Autoscaling policy: by queue delay (seconds) or by request count. */
export const EndpointScalingSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("QUEUE_DELAY"),
      queueDelay: z
        .number({ error: "queueDelay must be a number of seconds" })
        .min(0.5, { error: "queueDelay must be at least 0.5 s" }),
    }),
    z.strictObject({
      type: z.literal("REQUEST_COUNT"),
      requestCount: int("requestCount").min(1, { error: "requestCount must be at least 1" }),
    }),
  ],
  { error: "type must be QUEUE_DELAY or REQUEST_COUNT" },
);
export type EndpointScaling = z.infer<typeof EndpointScalingSchema>;

/** One CPU configuration of a CPU endpoint. */
export const EndpointCpuInputSchema = z.strictObject({
  /** CPU flavor id (`GET /v2/catalog/cpus`). */
  id: nonEmpty("id"),
  /** vCPUs per worker: a power of two, at least 2. */
  vcpuCount: int("vcpuCount")
    .min(2, { error: "vcpuCount must be at least 2" })
    .refine((n) => (n & (n - 1)) === 0, { error: "vcpuCount must be a power of two" }),
});

const cpuSelection = z
  .array(EndpointCpuInputSchema, { error: "cpu must be an array of { id, vcpuCount }" })
  .min(1, { error: "cpu must list at least one configuration" });

const gpuShape = {
  /** Serverless GPU pool ids (`pool` of `GET /v2/catalog/gpus`). */
  pools: z.array(str("pools"), { error: "pools must be an array of pool ids" }).min(1, {
    error: "pools must list at least one pool",
  }),
  /** GPU type ids to subtract from the pools. */
  excludedTypes: strings("excludedTypes").optional(),
  /** GPUs per worker. */
  count: int("count").min(1, { error: "count must be at least 1" }).optional(),
  /** Acceptable CUDA versions (`major.minor`); empty means any. */
  allowedCudaVersions: z.array(cudaVersion("allowedCudaVersions")).optional(),
  /** Lowest acceptable CUDA version (`major.minor`). */
  minCudaVersion: cudaVersion("minCudaVersion").optional(),
};

/** A non-empty `allowedCudaVersions` and a `minCudaVersion` together: the service's 400. */
export function cudaExclusive(
  gpu: { allowedCudaVersions?: string[] | undefined; minCudaVersion?: string | undefined },
  ctx: z.core.$RefinementCtx,
): void {
  if ((gpu.allowedCudaVersions?.length ?? 0) > 0 && gpu.minCudaVersion) {
    badRequest(
      ctx,
      "minCudaVersion",
      "minCudaVersion and a non-empty allowedCudaVersions are mutually exclusive; give one of them",
    );
  }
}

const CreateGpuInputSchema = z.strictObject(gpuShape).superRefine(cudaExclusive);

const UpdateGpuInputSchema = z
  .strictObject({
    ...gpuShape,
    pools: gpuShape.pools.optional(),
    /** `""` clears the floor. */
    minCudaVersion: str("minCudaVersion")
      .regex(/^$|^\d+\.\d+$/, { error: 'minCudaVersion must be major.minor, or "" to clear it' })
      .optional(),
  })
  .superRefine((gpu, ctx) => {
    cudaExclusive(gpu, ctx);
    if (gpu.excludedTypes !== undefined && gpu.pools === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["excludedTypes"],
        message: "excludedTypes needs pools in the same patch (the two are one selection)",
      });
    }
  });

const endpointType = z.enum(["QUEUE", "LOAD_BALANCER"], { error: "type must be QUEUE or LOAD_BALANCER" });
const flashboot = z.enum(["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"], {
  error: "flashboot must be OFF, FLASHBOOT or PRIORITY_FLASHBOOT",
});

/** Exactly one of `gpu` or `cpu` (create), at most one (update): the service's 400. */
function computeChoice(
  body: { gpu?: unknown; cpu?: unknown },
  ctx: z.core.$RefinementCtx,
  required: boolean,
): void {
  if (body.gpu !== undefined && body.cpu !== undefined) {
    badRequest(ctx, "cpu", "cpu cannot be combined with gpu; give one of them");
  } else if (required && body.gpu === undefined && body.cpu === undefined) {
    badRequest(
      ctx,
      "gpu",
      "gpu is required unless cpu is given: an endpoint runs on exactly one of gpu or cpu",
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Serverless endpoints: requests
// ---------------------------------------------------------------------------------------------

/** What an endpoint's create and update bodies share, every field optional in both. */
const endpointSettingsShape = {
  ...containerConfigShape,
  cpu: cpuSelection.optional(),
  /** Preferred data centers; empty lets the scheduler choose. */
  dataCenterIds: strings("dataCenterIds").optional(),
  flashboot: flashboot.optional(),
  /** Network volume ids to attach. */
  networkVolumes: strings("networkVolumes").optional(),
  /** Execution timeout in ms. @default 300000 */
  timeout: int("timeout").min(1, { error: "timeout must be a positive number of ms" }).optional(),
  workers: EndpointWorkersInputSchema.optional(),
};

/** Body of `POST /v2/serverless` (`CreateEndpointRequest`). */
export const ServerlessEndpointCreateInputSchema = z
  .strictObject({
    ...endpointSettingsShape,
    name: nonEmpty("name"),
    /** `QUEUE` (the job API) or `LOAD_BALANCER` (worker-defined HTTP paths). */
    type: endpointType,
    scaling: EndpointScalingSchema,
    gpu: CreateGpuInputSchema.optional(),
    /** A serverless template whose container settings the body may override. */
    templateId: nonEmpty("templateId").optional(),
  })
  .superRefine((body, ctx) => {
    computeChoice(body, ctx, true);
    if (body.image === undefined && body.templateId === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["image"],
        message: "image is required unless templateId is given",
      });
    }
    if (body.type === "LOAD_BALANCER" && body.scaling?.type !== "REQUEST_COUNT") {
      ctx.addIssue({
        code: "custom",
        path: ["scaling", "type"],
        message: "type must be REQUEST_COUNT on a LOAD_BALANCER endpoint",
      });
    }
  });
export type ServerlessEndpointCreateInput = z.input<typeof ServerlessEndpointCreateInputSchema>;

/**
 * Body of `PATCH /v2/serverless/{id}` (`UpdateEndpointRequest`): only the fields given change.
 * Container changes (`image`, `env`, ...) make a new release that rolls out worker by worker.
 */
export const ServerlessEndpointUpdateInputSchema = z
  .strictObject({
    ...endpointSettingsShape,
    name: nonEmpty("name").optional(),
    scaling: EndpointScalingSchema.optional(),
    gpu: UpdateGpuInputSchema.optional(),
    /** A template to take the container settings from; `""` detaches the endpoint from its template. */
    templateId: str("templateId").optional(),
  })
  .superRefine((body, ctx) => {
    computeChoice(body, ctx, false);
    if (Object.keys(body).length === 0) {
      ctx.addIssue({ code: "custom", path: [], message: "give at least one field to update" });
    }
  });
export type ServerlessEndpointUpdateInput = z.input<typeof ServerlessEndpointUpdateInputSchema>;

// ---------------------------------------------------------------------------------------------
// Serverless endpoints: answers
// ---------------------------------------------------------------------------------------------

/** `EndpointGpuConfig` as answered. */
export const EndpointGpuSchema = z.looseObject({
  pools: z.array(z.string()).optional(),
  excludedTypes: z.array(z.string()).optional(),
  count: z.number().int().optional(),
  allowedCudaVersions: z.array(z.string()).optional(),
  minCudaVersion: z.string().nullable().optional(),
});

/** One CPU configuration as answered (`memory` in GB). */
export const EndpointCpuSchema = z.looseObject({
  id: z.string().optional(),
  vcpuCount: z.number().int().optional(),
  memory: z.number().optional(),
});

/** `EndpointWorkers` as answered. */
export const EndpointWorkersSchema = z.looseObject({
  min: z.number().int().optional(),
  max: z.number().int().optional(),
  idleTimeout: z.number().int().optional(),
});

/** A serverless endpoint as `GET /v2/serverless/{id}` answers (`Endpoint`). */
export const ServerlessEndpointSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  type: z.string().optional(),
  /** Job-API URLs (`run`, `runSync`, `status`, ...) or, for a load balancer, `base` and `health`. */
  requestUrls: z.record(z.string(), z.string()).optional(),
  ...containerConfigAnswerShape,
  gpu: EndpointGpuSchema.nullable().optional(),
  cpu: z.array(EndpointCpuSchema).optional(),
  workers: EndpointWorkersSchema.optional(),
  scaling: z
    .looseObject({ type: z.string(), queueDelay: z.number().optional(), requestCount: z.number().optional() })
    .optional(),
  dataCenterIds: z.array(z.string()).optional(),
  networkVolumes: z.array(z.string()).optional(),
  /** Execution timeout, ms. */
  timeout: z.number().optional(),
  flashboot: z.string().optional(),
  createdAt: z.string().optional(),
  /** The template the endpoint's container settings came from (the emulator includes it). */
  templateId: z.string().optional(),
  /** The endpoint's current configuration version, when the service includes it. */
  version: z.number().int().nullable().optional(),
});
export type ServerlessEndpoint = z.infer<typeof ServerlessEndpointSchema>;

/** `GET /v2/serverless`: `{ endpoints: [...] }`. */
export const ServerlessEndpointListSchema = z.looseObject({ endpoints: z.array(ServerlessEndpointSchema) });

/** Worker states the v2 document names; the list is open-ended. */
export const WORKER_STATUSES = ["RUNNING", "IDLE", "INITIALIZING", "THROTTLED", "UNHEALTHY"] as const;

/** One active worker of an endpoint (`Worker`). */
export const ServerlessWorkerSchema = z.looseObject({
  id: z.string().min(1),
  /** `RUNNING`, `IDLE`, `INITIALIZING`, `THROTTLED`, `UNHEALTHY` (other strings are accepted). */
  status: z.string().min(1),
  /** True while the worker runs an older configuration than the endpoint's `endpointVersion`. */
  isStale: z.boolean(),
  /** Configuration version the worker runs; null when unknown. */
  version: z.number().int().nullable().optional(),
  gpuCount: z.number().int().optional(),
  image: z.string().nullable().optional(),
  uptimeSeconds: z.number().nullable().optional(),
  gpuTypeId: z.string().nullable().optional(),
  dataCenterId: z.string().nullable().optional(),
  startedAt: z.string().nullable().optional(),
});
export type ServerlessWorker = z.infer<typeof ServerlessWorkerSchema>;

/** Worker counts by status (`WorkerSummary`). */
export const WorkerSummarySchema = z.looseObject({
  running: z.number().int(),
  idle: z.number().int(),
  initializing: z.number().int(),
  throttled: z.number().int(),
  unhealthy: z.number().int(),
  total: z.number().int(),
});
export type WorkerSummary = z.infer<typeof WorkerSummarySchema>;

/** `GET /v2/serverless/{id}/workers` (`ListEndpointWorkersResponse`). */
export const ServerlessWorkerListSchema = z.looseObject({
  workers: z.array(ServerlessWorkerSchema),
  summary: WorkerSummarySchema,
  /** The endpoint's current configuration version; null when unknown. */
  endpointVersion: z.number().int().nullable().optional(),
});
export type ServerlessWorkerList = z.infer<typeof ServerlessWorkerListSchema>;

/** How far the latest release has rolled out (`RolloutSummary`). */
export const RolloutSummarySchema = z.looseObject({
  /** True while any worker still runs an older version. */
  inProgress: z.boolean(),
  workersOnLatest: z.number().int(),
  workersTotal: z.number().int(),
  /** 0..100; 0 when there are no workers. */
  percentOnLatest: z.number(),
});
export type RolloutSummary = z.infer<typeof RolloutSummarySchema>;

/** One changed field of a release. */
export const ReleaseDiffEntrySchema = z.looseObject({
  field: z.string(),
  old: z.unknown(),
  new: z.unknown(),
});
export type ReleaseDiffEntry = z.infer<typeof ReleaseDiffEntrySchema>;

/** One release: a versioned configuration snapshot (`Release`). */
export const ServerlessReleaseSchema = z.looseObject({
  id: z.string().min(1),
  /** The configuration version this release produced; null when unknown. */
  version: z.number().int().nullable().optional(),
  /** `GIT_BUILD` or `MANUAL`. */
  source: z.string().optional(),
  buildId: z.string().nullable().optional(),
  createdByUserId: z.string().nullable().optional(),
  /** Workers running this release's version now. */
  workerCount: z.number().int().optional(),
  createdAt: z.string().optional(),
  diff: z.array(ReleaseDiffEntrySchema).optional(),
});
export type ServerlessRelease = z.infer<typeof ServerlessReleaseSchema>;

/** `GET /v2/serverless/{id}/releases` (`ListEndpointReleasesResponse`), newest release first. */
export const ServerlessReleaseListSchema = z.looseObject({
  endpointVersion: z.number().int().nullable().optional(),
  rollout: RolloutSummarySchema,
  releases: z.array(ServerlessReleaseSchema),
});
export type ServerlessReleaseList = z.infer<typeof ServerlessReleaseListSchema>;

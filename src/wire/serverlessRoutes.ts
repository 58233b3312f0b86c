/**
 * REST v2 serverless endpoints and templates, as the emulator reads and writes them: the request
 * bodies of `/v2/serverless...` and `/v2/templates...` (strict, so a typo names its field) and the
 * answers (typed here, so the emulator cannot drift from the document). Shapes follow
 * `rest-v2.openapi.json` (`CreateEndpointRequest`, `UpdateEndpointRequest`, `Endpoint`,
 * `CreateTemplateRequest`, `UpdateTemplateRequest`, `Template`, `Worker`, `WorkerSummary`,
 * `Release`, `RolloutSummary`, and the list answers).
 *
 * The document's cross-field rules that JSON Schema cannot state as field types (exactly one of
 * `gpu` or `cpu`; a CUDA set and a floor are exclusive) are 400s in the emulator, not schema
 * failures, as the document says.
 */
import { z } from "zod";

const nonEmpty = (field: string) =>
  z.string({ error: `${field} must be a string` }).min(1, { error: `${field} must not be empty` });
const int = (field: string, min: number, max?: number) => {
  const base = z
    .int({ error: `${field} must be an integer` })
    .min(min, { error: `${field} must be at least ${min}` });
  return max === undefined ? base : base.max(max, { error: `${field} must be at most ${max}` });
};
const cudaVersion = z.string().regex(/^\d+\.\d+$/, { error: "a CUDA version looks like 12.4" });

/** `ContainerConfig`: the container settings shared by endpoints and templates. */
const containerFields = {
  image: nonEmpty("image").optional(),
  args: z.string({ error: "args must be a string" }).optional(),
  disk: int("disk", 1).optional(),
  env: z.record(z.string(), z.string({ error: "env values must be strings" })).optional(),
  ports: z.array(z.string({ error: "ports must be strings like 8000/http" })).optional(),
  registry: z.string().nullable().optional(),
};

/** `FlashBoot`. */
export const FlashBootSchema = z.enum(["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"]);
/** `EndpointType`. */
export const EndpointTypeSchema = z.enum(["QUEUE", "LOAD_BALANCER"]);

/** `EndpointScaling`: queue delay (seconds) or request count. */
export const EndpointScalingSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("QUEUE_DELAY"), queueDelay: z.number().min(0.5) }),
  z.strictObject({ type: z.literal("REQUEST_COUNT"), requestCount: int("requestCount", 1) }),
]);
export type EndpointScaling = z.infer<typeof EndpointScalingSchema>;

/** `EndpointWorkers`. */
export const EndpointWorkersSchema = z.strictObject({
  min: int("min", 0).optional(),
  max: int("max", 0).optional(),
  idleTimeout: int("idleTimeout", 1, 3600).optional(),
});

const gpuBase = {
  pools: z.array(z.string()).min(1, { error: "pools must name at least one GPU pool" }),
  excludedTypes: z.array(z.string().regex(/^\s*[^-\s]/)).optional(),
  count: int("count", 1).optional(),
  allowedCudaVersions: z.array(cudaVersion).optional(),
};

/** `CreateEndpointGpuConfig`. */
export const CreateEndpointGpuSchema = z.strictObject({
  ...gpuBase,
  minCudaVersion: cudaVersion.optional(),
});
/** `UpdateEndpointGpuConfig` (`minCudaVersion: ""` clears the floor). */
export const UpdateEndpointGpuSchema = z.strictObject({
  ...gpuBase,
  pools: gpuBase.pools.optional(),
  minCudaVersion: z
    .string()
    .regex(/^$|^\d+\.\d+$/)
    .optional(),
});

/** `CreateCpuConfig`. */
export const CreateCpuSchema = z.strictObject({ id: nonEmpty("id"), vcpuCount: int("vcpuCount", 2) });

/** `CreateEndpointRequest` (without the cross-field rules, see the module comment). */
export const CreateEndpointRequestSchema = z
  .strictObject({
    ...containerFields,
    name: nonEmpty("name"),
    type: EndpointTypeSchema,
    scaling: EndpointScalingSchema,
    gpu: CreateEndpointGpuSchema.optional(),
    cpu: z.array(CreateCpuSchema).min(1).optional(),
    dataCenterIds: z.array(z.string()).optional(),
    flashboot: FlashBootSchema.optional(),
    networkVolumes: z.array(z.string()).optional(),
    templateId: nonEmpty("templateId").optional(),
    timeout: z.int({ error: "timeout must be an integer number of ms" }).optional(),
    workers: EndpointWorkersSchema.optional(),
  })
  .refine((body) => body.image !== undefined || body.templateId !== undefined, {
    error: "image is required unless templateId is given",
    path: ["image"],
  })
  .refine((body) => body.type !== "LOAD_BALANCER" || body.scaling.type === "REQUEST_COUNT", {
    error: "scaling of a LOAD_BALANCER endpoint must be REQUEST_COUNT",
    path: ["scaling", "type"],
  });
export type CreateEndpointRequest = z.infer<typeof CreateEndpointRequestSchema>;

/** `UpdateEndpointRequest`. */
export const UpdateEndpointRequestSchema = z.strictObject({
  ...containerFields,
  name: nonEmpty("name").optional(),
  gpu: UpdateEndpointGpuSchema.optional(),
  cpu: z.array(CreateCpuSchema).min(1).optional(),
  dataCenterIds: z.array(z.string()).optional(),
  flashboot: FlashBootSchema.optional(),
  networkVolumes: z.array(z.string()).optional(),
  scaling: EndpointScalingSchema.optional(),
  templateId: z.string().optional(),
  timeout: z.int({ error: "timeout must be an integer number of ms" }).optional(),
  workers: EndpointWorkersSchema.optional(),
});
export type UpdateEndpointRequest = z.infer<typeof UpdateEndpointRequestSchema>;

/** `EndpointGpuConfig` as answered. */
export interface EndpointGpu {
  pools: string[];
  excludedTypes?: string[];
  count: number;
  allowedCudaVersions: string[];
  minCudaVersion: string | null;
}

/** `Endpoint` (a queue-based one: the emulator serves the queue job interface). */
export interface Endpoint {
  id: string;
  name: string;
  type: "QUEUE" | "LOAD_BALANCER";
  requestUrls: Record<string, string>;
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  gpu?: EndpointGpu | null;
  cpu?: { id: string; vcpuCount: number; memory: number }[];
  workers: { min: number; max: number; idleTimeout: number };
  scaling: EndpointScaling;
  dataCenterIds: string[];
  networkVolumes: string[];
  timeout: number;
  flashboot: z.infer<typeof FlashBootSchema>;
  createdAt: string;
  /** The template the endpoint was made from (not in the document's `Endpoint`; extra fields pass). */
  templateId?: string;
}

/** `TemplateCategory`. */
export const TemplateCategorySchema = z.enum(["CPU", "NVIDIA", "AMD"]);
const templateMounts = z.strictObject({
  persistent: z.strictObject({ size: int("size", 10), path: z.string() }).optional(),
});
const templateFields = {
  allowedCudaVersions: z.array(cudaVersion).optional(),
  category: TemplateCategorySchema.optional(),
  mounts: templateMounts.optional(),
  public: z.boolean().optional(),
  serverless: z.boolean().optional(),
  startJupyter: z.boolean().optional(),
  startSsh: z.boolean().optional(),
};

/** `CreateTemplateRequest`. */
export const CreateTemplateRequestSchema = z.strictObject({
  ...containerFields,
  ...templateFields,
  name: nonEmpty("name"),
  image: nonEmpty("image"),
});
export type CreateTemplateRequest = z.infer<typeof CreateTemplateRequestSchema>;

/** `UpdateTemplateRequest`. */
export const UpdateTemplateRequestSchema = z.strictObject({
  ...containerFields,
  ...templateFields,
  name: nonEmpty("name").optional(),
});
export type UpdateTemplateRequest = z.infer<typeof UpdateTemplateRequestSchema>;

/** `Template`. */
export interface Template {
  id: string;
  name: string;
  image: string;
  args: string;
  disk: number;
  mounts: { persistent?: { size: number; path: string } };
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  serverless: boolean;
  public: boolean;
  category: z.infer<typeof TemplateCategorySchema>;
  startSsh: boolean;
  startJupyter: boolean;
  allowedCudaVersions: string[];
}

/** `Worker`. */
export interface Worker {
  id: string;
  status: "RUNNING" | "IDLE" | "INITIALIZING" | "THROTTLED" | "UNHEALTHY";
  isStale: boolean;
  version: number | null;
  gpuCount: number;
  image: string | null;
  uptimeSeconds: number | null;
  gpuTypeId: string | null;
  dataCenterId: string | null;
  startedAt: string | null;
}

/** `ListEndpointWorkersResponse`. */
export interface ListEndpointWorkersResponse {
  endpointVersion: number | null;
  summary: {
    running: number;
    idle: number;
    initializing: number;
    throttled: number;
    unhealthy: number;
    total: number;
  };
  workers: Worker[];
}

/** `ReleaseDiffEntry`: one changed field, dotted (`env.MODEL`, `workers.max`). */
export interface ReleaseDiffEntry {
  field: string;
  old: unknown;
  new: unknown;
}

/** `Release`. */
export interface Release {
  id: string;
  version: number | null;
  source: "GIT_BUILD" | "MANUAL";
  buildId: string | null;
  createdByUserId: string | null;
  workerCount: number;
  createdAt: string;
  diff: ReleaseDiffEntry[];
}

/** `RolloutSummary`. */
export interface RolloutSummary {
  inProgress: boolean;
  workersOnLatest: number;
  workersTotal: number;
  percentOnLatest: number;
}

/** `ListEndpointReleasesResponse`. */
export interface ListEndpointReleasesResponse {
  endpointVersion: number | null;
  rollout: RolloutSummary;
  releases: Release[];
}

/** `LogSource` and the worker-log query (`tail` 0..5000, default 100; `since` RFC 3339). */
export const WorkerLogQuerySchema = z.strictObject({
  source: z.enum(["container", "system"], { error: "source must be container or system" }).optional(),
  tail: z.coerce
    .number({ error: "tail must be an integer 0..5000" })
    .pipe(int("tail", 0, 5000))
    .optional(),
  since: z.iso.datetime({ offset: true, error: "since must be an RFC 3339 date-time" }).optional(),
});

/** One SSE `data` payload of the worker-log stream: `{ source, line, ts }`. */
export interface WorkerLogEvent {
  source: "container" | "system";
  line: string;
  ts: string;
}

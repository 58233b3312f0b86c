/**
 * REST v2 serverless endpoints and templates, as the emulator reads and writes them: the request
 * bodies of `/v2/serverless...` and `/v2/templates...` (strict, so a typo names its field) and the
 * answers (loose, as every answer schema here; the emulator's answers are typed by them, and its
 * tests parse them, so it cannot drift from what a client would accept). Shapes follow
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
export const EndpointGpuSchema = z.looseObject({
  pools: z.array(z.string()),
  excludedTypes: z.array(z.string()).optional(),
  count: z.int(),
  allowedCudaVersions: z.array(z.string()),
  minCudaVersion: z.string().nullable(),
});

/** `Endpoint` (a queue-based one: the emulator serves the queue job interface). */
export const EndpointSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  type: EndpointTypeSchema,
  requestUrls: z.record(z.string(), z.string()),
  image: z.string(),
  args: z.string(),
  disk: z.int(),
  ports: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  registry: z.string().nullable(),
  gpu: EndpointGpuSchema.nullable().optional(),
  cpu: z.array(z.looseObject({ id: z.string(), vcpuCount: z.int(), memory: z.int() })).optional(),
  workers: z.looseObject({ min: z.int(), max: z.int(), idleTimeout: z.int() }),
  scaling: z.union([
    z.looseObject({ type: z.literal("QUEUE_DELAY"), queueDelay: z.number() }),
    z.looseObject({ type: z.literal("REQUEST_COUNT"), requestCount: z.int() }),
  ]),
  dataCenterIds: z.array(z.string()),
  networkVolumes: z.array(z.string()),
  timeout: z.int(),
  flashboot: FlashBootSchema,
  createdAt: z.string(),
  /** The template the endpoint was made from (not in the document's `Endpoint`; extra fields pass). */
  templateId: z.string().optional(),
});
export type Endpoint = z.infer<typeof EndpointSchema>;

/** `ListEndpointsResponse`. */
export const ListEndpointsResponseSchema = z.looseObject({ endpoints: z.array(EndpointSchema) });

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
export const TemplateSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  image: z.string(),
  args: z.string(),
  disk: z.int(),
  mounts: z.looseObject({ persistent: z.looseObject({ size: z.int(), path: z.string() }).optional() }),
  ports: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  registry: z.string().nullable(),
  serverless: z.boolean(),
  public: z.boolean(),
  category: TemplateCategorySchema,
  startSsh: z.boolean(),
  startJupyter: z.boolean(),
  allowedCudaVersions: z.array(z.string()),
});
export type Template = z.infer<typeof TemplateSchema>;

/** `ListTemplatesResponse`. */
export const ListTemplatesResponseSchema = z.looseObject({ templates: z.array(TemplateSchema) });

/** `WorkerStatus`. */
export const WorkerStatusSchema = z.enum(["RUNNING", "IDLE", "INITIALIZING", "THROTTLED", "UNHEALTHY"]);

/** `Worker`. */
export const WorkerSchema = z.looseObject({
  id: z.string(),
  status: WorkerStatusSchema,
  isStale: z.boolean(),
  version: z.int().nullable(),
  gpuCount: z.int().min(0),
  image: z.string().nullable(),
  uptimeSeconds: z.int().min(0).nullable(),
  gpuTypeId: z.string().nullable(),
  dataCenterId: z.string().nullable(),
  startedAt: z.string().nullable(),
});
export type Worker = z.infer<typeof WorkerSchema>;

/** `WorkerSummary`: worker counts by status. */
export const WorkerSummarySchema = z.looseObject({
  running: z.int().min(0),
  idle: z.int().min(0),
  initializing: z.int().min(0),
  throttled: z.int().min(0),
  unhealthy: z.int().min(0),
  total: z.int().min(0),
});

/** `ListEndpointWorkersResponse`. */
export const ListEndpointWorkersResponseSchema = z.looseObject({
  endpointVersion: z.int().nullable(),
  summary: WorkerSummarySchema,
  workers: z.array(WorkerSchema),
});
export type ListEndpointWorkersResponse = z.infer<typeof ListEndpointWorkersResponseSchema>;

/** `ReleaseDiffEntry`: one changed field, dotted (`env.MODEL`, `workers.max`). */
export const ReleaseDiffEntrySchema = z.looseObject({
  field: z.string(),
  old: z.unknown(),
  new: z.unknown(),
});
export type ReleaseDiffEntry = z.infer<typeof ReleaseDiffEntrySchema>;

/** `Release`. */
export const ReleaseSchema = z.looseObject({
  id: z.string(),
  version: z.int().nullable(),
  source: z.enum(["GIT_BUILD", "MANUAL"]),
  buildId: z.string().nullable(),
  createdByUserId: z.string().nullable(),
  workerCount: z.int().min(0),
  createdAt: z.string(),
  diff: z.array(ReleaseDiffEntrySchema),
});
export type Release = z.infer<typeof ReleaseSchema>;

/** `RolloutSummary`. */
export const RolloutSummarySchema = z.looseObject({
  inProgress: z.boolean(),
  workersOnLatest: z.int().min(0),
  workersTotal: z.int().min(0),
  percentOnLatest: z.int().min(0).max(100),
});

/** `ListEndpointReleasesResponse`. */
export const ListEndpointReleasesResponseSchema = z.looseObject({
  endpointVersion: z.int().nullable(),
  rollout: RolloutSummarySchema,
  releases: z.array(ReleaseSchema),
});
export type ListEndpointReleasesResponse = z.infer<typeof ListEndpointReleasesResponseSchema>;

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
export const WorkerLogEventSchema = z.looseObject({
  source: z.enum(["container", "system"]),
  line: z.string(),
  ts: z.string(),
});
export type WorkerLogEvent = z.infer<typeof WorkerLogEventSchema>;

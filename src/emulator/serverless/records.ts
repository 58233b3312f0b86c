/**
 * How the serverless store keeps endpoints, releases and templates, in memory and in the state
 * file's `serverless` section: the wire shapes with every field the emulator always writes
 * required (the answer schemas themselves are loose).
 */
import { z } from "zod";
import {
  EndpointCpuSchema,
  EndpointGpuSchema,
  EndpointWorkersSchema,
  ServerlessEndpointSchema,
  ServerlessReleaseSchema,
} from "../../wire/serverless";
import { TemplateSchema } from "../../wire/templates";

/** An endpoint as stored: the wire's `Endpoint` without `requestUrls` (made when rendering). */
export const EndpointRecordSchema = ServerlessEndpointSchema.omit({ requestUrls: true, version: true })
  .required({
    type: true,
    image: true,
    args: true,
    disk: true,
    ports: true,
    env: true,
    registry: true,
    scaling: true,
    dataCenterIds: true,
    networkVolumes: true,
    timeout: true,
    flashboot: true,
    createdAt: true,
  })
  .extend({
    gpu: EndpointGpuSchema.required({
      pools: true,
      count: true,
      allowedCudaVersions: true,
      minCudaVersion: true,
    })
      .nullable()
      .optional(),
    cpu: z.array(EndpointCpuSchema.required()).optional(),
    workers: EndpointWorkersSchema.required(),
  });

/** A release as stored: every field written. */
export const ReleaseRecordSchema = ServerlessReleaseSchema.required();
export type Release = z.infer<typeof ReleaseRecordSchema>;
/** A template as stored: every field written (`mounts` may be `{}`). */
export const TemplateRecordSchema = TemplateSchema.required();
export type Template = z.infer<typeof TemplateRecordSchema>;

export interface StoredEndpoint {
  record: z.infer<typeof EndpointRecordSchema>;
  releases: Release[];
  /** Given with `--endpoint`: not saved in the state file. */
  fromCommandLine?: boolean;
}

/** The state file's `serverless` section. */
export const SavedServerlessSchema = z.object({
  endpoints: z.array(
    z.object({ record: EndpointRecordSchema, releases: z.array(ReleaseRecordSchema).min(1) }),
  ),
  templates: z.array(TemplateRecordSchema),
});

/** Memory (GB) the emulator reports per vCPU of a CPU endpoint. */
const MEMORY_GB_PER_VCPU = 4;

/** CPU configs as stored: each with the memory the emulator reports for its vCPUs. */
export function cpuRecords<C extends { vcpuCount: number }>(cpu: readonly C[]): (C & { memory: number })[] {
  return cpu.map((c) => ({ ...c, memory: c.vcpuCount * MEMORY_GB_PER_VCPU }));
}

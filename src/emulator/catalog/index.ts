/**
 * The emulator's catalog: a fixed, realistic set of GPU types (RunPod's own ids, display names,
 * VRAM and serverless pools), CPU flavours, data centres and public templates, with stock per
 * data centre and product, answered as the v2 document's `/v2/catalog/...` operations define.
 *
 * How availability is worked out (the document leaves the arithmetic to the service):
 * - each resource has a stock level per data centre and product (`POD`, `CLUSTER`, `SERVERLESS`);
 *   a data centre without an entry for a product does not offer the resource for it;
 * - with several products asked, a data centre's level is the best of them;
 * - `count` above the type's `maxCount` for the `cloud` (default `SECURE`), or `COMMUNITY` on a
 *   type not offered there, makes every level `NONE`;
 * - `countryCodes` keeps the data centres in those countries (a type with none drops out of the
 *   list; `/gpus/{id}` answers it with `NONE` and no `dataCenters`);
 * - `cudaVersions` / `minCudaVersion` keep those CUDA versions; when none of them has capacity,
 *   every level is `NONE`;
 * - `availability` is the best level over the data centres kept; `dataCenters` lists the ones
 *   offering the resource and is left out when every one of them is at `NONE`.
 * A data centre's `gpuAvailability` / `cpuAvailability` gives each resource it offers at the best
 * level over all products.
 *
 * Pod stock is live: the emulator's pods (`pods/`) take GPUs from a count per GPU type,
 * data centre and cloud seeded from the `POD` levels below ({@link podStockSeed}), and CPU pods
 * take vCPUs from a count per flavour and data centre ({@link cpuPodStockSeed}); the `POD` level
 * the catalog answers (on GPU and CPU types, and in a data centre's `gpuAvailability` /
 * `cpuAvailability`) is worked out from what is left ({@link PodStockView}). `NVIDIA H200` has no
 * pod stock anywhere. Cluster stock is live the same way: clusters take GPUs from a count per GPU
 * type and data centre seeded from the `CLUSTER` levels ({@link clusterStockSeed}), and the `CLUSTER`
 * level shows what is left.
 *
 * Pools: an endpoint's `gpu.pools` must name pools of this catalog, or {@link EMULATOR_POOL}, the
 * pool of the endpoints given with `--endpoint` (it has no GPU type: the built-in worker runs in
 * the emulator's process).
 */
import type { z } from "zod";
import type {
  CpuType,
  DataCenter,
  DataCenterQueryInputSchema,
  DataCentersQueryInputSchema,
  GpuType,
  PublicTemplatesQueryInputSchema,
} from "../../wire/catalog";
import type { Template } from "../../wire/templates";
import {
  type CpuQuery,
  cpuAvailability,
  type GpuQuery,
  gpuAvailability,
  renderDataCenter,
} from "./availability";
import { CPU_TYPES, DATA_CENTERS, GPU_TYPES, PUBLIC_TEMPLATES } from "./data";
import type { PodStockView } from "./podStock";

export { compareCuda } from "./availability";
export { catalogDataCenterId, DATA_CENTER_IDS, GPU_TYPE_IDS } from "./data";
export * from "./podStock";
export { EMULATOR_POOL, KNOWN_POOLS, placedGpuType, requireKnownPools } from "./pools";

type DataCentersQuery = z.output<typeof DataCentersQueryInputSchema>;
type DataCenterQuery = z.output<typeof DataCenterQueryInputSchema>;

const wantsAvailability = (include: readonly string[] | undefined) =>
  include?.includes("AVAILABILITY") === true;

/** `GET /v2/catalog/gpus`. */
export function listGpuTypes(query: GpuQuery, live?: PodStockView): GpuType[] {
  if (!wantsAvailability(query.include)) return GPU_TYPES.map((g) => structuredClone(g.record));
  const out: GpuType[] = [];
  for (const entry of GPU_TYPES) {
    const { fields, outside } = gpuAvailability(entry, query, live);
    if (!outside) out.push({ ...structuredClone(entry.record), ...fields });
  }
  return out;
}

/**
 * `GET /v2/catalog/gpus/{id}`; undefined when there is no such type. A type with no data centre in
 * `countryCodes` is answered with `availability: "NONE"` and no `dataCenters`.
 */
export function getGpuType(id: string, query: GpuQuery, live?: PodStockView): GpuType | undefined {
  const entry = GPU_TYPES.find((g) => g.record.id === id);
  if (!entry) return undefined;
  if (!wantsAvailability(query.include)) return structuredClone(entry.record);
  return { ...structuredClone(entry.record), ...gpuAvailability(entry, query, live).fields };
}

/** `GET /v2/catalog/cpus`. */
export function listCpuTypes(query: CpuQuery, live?: PodStockView): CpuType[] {
  return CPU_TYPES.map((c) => ({
    ...structuredClone(c.record),
    ...(wantsAvailability(query.include) ? cpuAvailability(c, query, live) : {}),
  }));
}

/** `GET /v2/catalog/cpus/{id}`; undefined when there is no such flavour. */
export function getCpuType(id: string, query: CpuQuery, live?: PodStockView): CpuType | undefined {
  return listCpuTypes(query, live).find((c) => c.id === id);
}

/** `GET /v2/catalog/datacenters`: `regions` any of, `networkVolumeTypes` and `compliance` all of. */
export function listDataCenters(query: DataCentersQuery, live?: PodStockView): DataCenter[] {
  return DATA_CENTERS.filter(({ record }) => {
    if (query.regions && !query.regions.includes(record.region as never)) return false;
    if (query.networkVolumeTypes?.some((t) => !record.networkVolumeTypes?.includes(t))) return false;
    if (query.compliance?.some((c) => !record.compliance?.includes(c))) return false;
    if (query.globalNetwork !== undefined && record.globalNetwork !== query.globalNetwork) return false;
    return true;
  }).map((entry) => renderDataCenter(entry, query.include, live));
}

/** `GET /v2/catalog/datacenters/{id}`; undefined when there is no such data centre. */
export function getDataCenter(
  id: string,
  query: DataCenterQuery,
  live?: PodStockView,
): DataCenter | undefined {
  const entry = DATA_CENTERS.find((d) => d.record.id === id);
  return entry ? renderDataCenter(entry, query.include, live) : undefined;
}

/** A public template of any source by id (pods may be created from one), or undefined. */
export function findPublicTemplate(id: string): Template | undefined {
  const all = [...PUBLIC_TEMPLATES.official, ...PUBLIC_TEMPLATES.verified, ...PUBLIC_TEMPLATES.community];
  const found = all.find((t) => t.id === id);
  return found && structuredClone(found);
}

/** `GET /v2/catalog/templates`: one slice of the public catalog (`official` by default). */
export function listPublicTemplates(query: z.output<typeof PublicTemplatesQueryInputSchema>): Template[] {
  return structuredClone([...PUBLIC_TEMPLATES[query.source ?? "official"]]);
}

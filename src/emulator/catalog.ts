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
 * Pod stock is live: the emulator's pods (`pods/podStore.ts`) take GPUs from a count per GPU type,
 * data centre and cloud seeded from the `POD` levels below ({@link podStockSeed}), and CPU pods
 * take vCPUs from a count per flavour and data centre ({@link cpuPodStockSeed}); the `POD` level
 * the catalog answers (on GPU and CPU types, and in a data centre's `gpuAvailability` /
 * `cpuAvailability`) is worked out from what is left ({@link PodStockView}). `NVIDIA H200` has no
 * pod stock anywhere.
 *
 * Pools: an endpoint's `gpu.pools` must name pools of this catalog, or {@link EMULATOR_POOL}, the
 * pool of the endpoints given with `--endpoint` (it has no GPU type: the built-in worker runs in
 * the emulator's process).
 */
import type { z } from "zod";
import {
  AVAILABILITY_LEVELS,
  type AvailabilityLevel,
  type CpuType,
  type CpuTypesQueryInputSchema,
  type DataCenter,
  type DataCenterQueryInputSchema,
  type DataCentersQueryInputSchema,
  type GpuType,
  type GpuTypesQueryInputSchema,
  type PublicTemplatesQueryInputSchema,
} from "../wire/catalog";
import type { Template } from "../wire/serverless";

type GpuQuery = z.output<typeof GpuTypesQueryInputSchema>;
type CpuQuery = z.output<typeof CpuTypesQueryInputSchema>;
type DataCentersQuery = z.output<typeof DataCentersQueryInputSchema>;
type DataCenterQuery = z.output<typeof DataCenterQueryInputSchema>;
type Product = "POD" | "CLUSTER" | "SERVERLESS";
/** Stock of one resource: data centre id -> product -> level. */
type Stock = Readonly<Record<string, Partial<Record<Product, AvailabilityLevel>>>>;

/** The pool of the endpoints given with `--endpoint`; accepted in `gpu.pools`, listed by no GPU type. */
export const EMULATOR_POOL = "EMULATOR";

interface DataCenterEntry {
  /** Without the availability arrays (added per request). */
  record: DataCenter;
  /** ISO 3166-1 alpha-2 code of its country, for `countryCodes`. */
  country: string;
}

const DATA_CENTERS: readonly DataCenterEntry[] = [
  {
    country: "US",
    record: {
      id: "US-KS-2",
      name: "US Kansas 2",
      region: "NORTH_AMERICA",
      globalNetwork: true,
      networkVolumeTypes: ["STANDARD", "HIGH_PERFORMANCE"],
      compliance: ["SOC_2_TYPE_2", "ISO_IEC_27001"],
    },
  },
  {
    country: "US",
    record: {
      id: "US-GA-1",
      name: "US Georgia 1",
      region: "NORTH_AMERICA",
      globalNetwork: true,
      networkVolumeTypes: ["STANDARD"],
      compliance: ["SOC_2_TYPE_2", "ISO_IEC_27001", "HIPAA"],
    },
  },
  {
    country: "CA",
    record: {
      id: "CA-MTL-1",
      name: "CA Montreal 1",
      region: "NORTH_AMERICA",
      globalNetwork: false,
      networkVolumeTypes: ["STANDARD"],
      compliance: ["SOC_2_TYPE_2", "RENEWABLE"],
    },
  },
  {
    country: "RO",
    record: {
      id: "EU-RO-1",
      name: "EU Romania 1",
      region: "EUROPE",
      globalNetwork: true,
      networkVolumeTypes: ["STANDARD", "HIGH_PERFORMANCE"],
      compliance: ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    },
  },
  {
    country: "SE",
    record: {
      id: "EU-SE-1",
      name: "EU Sweden 1",
      region: "EUROPE",
      globalNetwork: false,
      networkVolumeTypes: [],
      compliance: ["GDPR", "RENEWABLE"],
    },
  },
];

interface GpuEntry {
  /** Without the availability fields (added per request). */
  record: GpuType;
  stock: Stock;
  /** CUDA versions of its machines and whether one has capacity; none for AMD. */
  cuda: readonly (readonly [version: string, available: boolean])[];
}

const CUDA_ALL = [
  ["12.8", true],
  ["12.6", true],
  ["12.4", true],
  ["12.1", false],
  ["11.8", true],
] as const;

/** A GPU type entry; `serverless` is its pool's rate per GPU-hour (absent without a pool). */
function gpu(
  id: string,
  name: string,
  pool: string | null,
  memory: number,
  prices: { secure: number; community: number; serverless?: number },
  maxCount: { secure: number; community: number },
  stock: Stock,
  cuda: GpuEntry["cuda"] = CUDA_ALL,
): GpuEntry {
  return {
    record: {
      id,
      name,
      pool,
      manufacturer: id.startsWith("AMD") ? "AMD" : "NVIDIA",
      memory,
      secure: maxCount.secure > 0,
      community: maxCount.community > 0,
      price: prices,
      maxCount,
    },
    stock,
    cuda,
  };
}

const GPU_TYPES: readonly GpuEntry[] = [
  gpu(
    "NVIDIA RTX A4000",
    "RTX A4000",
    "AMPERE_16",
    16,
    { secure: 0.25, community: 0.17, serverless: 0.58 },
    { secure: 8, community: 6 },
    {
      "US-KS-2": { POD: "HIGH", SERVERLESS: "HIGH" },
      "CA-MTL-1": { POD: "MEDIUM", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "LOW", SERVERLESS: "MEDIUM" },
    },
  ),
  gpu(
    "NVIDIA RTX A5000",
    "RTX A5000",
    "AMPERE_24",
    24,
    { secure: 0.27, community: 0.16, serverless: 0.68 },
    { secure: 8, community: 8 },
    {
      "US-GA-1": { POD: "MEDIUM", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "MEDIUM", SERVERLESS: "MEDIUM" },
    },
  ),
  gpu(
    "NVIDIA L4",
    "L4",
    "AMPERE_24",
    24,
    { secure: 0.43, community: 0.28, serverless: 0.68 },
    { secure: 8, community: 4 },
    { "US-KS-2": { POD: "LOW", SERVERLESS: "MEDIUM" }, "EU-SE-1": { POD: "LOW", SERVERLESS: "LOW" } },
  ),
  gpu(
    "NVIDIA GeForce RTX 4090",
    "RTX 4090",
    "ADA_24",
    24,
    { secure: 0.69, community: 0.34, serverless: 1.1 },
    { secure: 8, community: 4 },
    {
      "US-KS-2": { POD: "HIGH", SERVERLESS: "HIGH" },
      "US-GA-1": { POD: "MEDIUM", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "HIGH", SERVERLESS: "MEDIUM" },
      "EU-SE-1": { POD: "LOW", SERVERLESS: "LOW" },
    },
  ),
  gpu(
    "NVIDIA RTX A6000",
    "RTX A6000",
    "AMPERE_48",
    48,
    { secure: 0.49, community: 0.33, serverless: 1.22 },
    { secure: 8, community: 4 },
    {
      "US-KS-2": { POD: "MEDIUM", SERVERLESS: "MEDIUM" },
      "CA-MTL-1": { POD: "HIGH", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "LOW", SERVERLESS: "LOW" },
    },
  ),
  gpu(
    "NVIDIA L40S",
    "L40S",
    "ADA_48_PRO",
    48,
    { secure: 0.86, community: 0.79, serverless: 1.91 },
    { secure: 8, community: 2 },
    {
      "US-GA-1": { POD: "HIGH", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "MEDIUM", SERVERLESS: "MEDIUM" },
    },
  ),
  gpu(
    "NVIDIA A100 80GB PCIe",
    "A100 PCIe",
    "AMPERE_80",
    80,
    { secure: 1.64, community: 1.19, serverless: 2.72 },
    { secure: 8, community: 4 },
    {
      "US-KS-2": { POD: "LOW", CLUSTER: "LOW", SERVERLESS: "MEDIUM" },
      "EU-RO-1": { POD: "MEDIUM", SERVERLESS: "LOW" },
    },
  ),
  gpu(
    "NVIDIA H100 80GB HBM3",
    "H100 SXM",
    "ADA_80_PRO",
    80,
    { secure: 2.69, community: 2.39, serverless: 4.18 },
    { secure: 8, community: 8 },
    {
      "US-KS-2": { POD: "MEDIUM", CLUSTER: "MEDIUM", SERVERLESS: "HIGH" },
      "US-GA-1": { POD: "LOW", CLUSTER: "LOW", SERVERLESS: "MEDIUM" },
      "EU-RO-1": { POD: "LOW", SERVERLESS: "LOW" },
    },
  ),
  gpu(
    "NVIDIA H200",
    "H200 SXM",
    "HOPPER_141",
    141,
    { secure: 3.59, community: 0, serverless: 5.58 },
    { secure: 8, community: 0 },
    {
      // No pod stock anywhere: the type a pod's fallback skips.
      "US-GA-1": { POD: "NONE", CLUSTER: "LOW", SERVERLESS: "LOW" },
      "EU-SE-1": { POD: "NONE", SERVERLESS: "NONE" },
    },
    [
      ["12.8", true],
      ["12.6", false],
    ],
  ),
  gpu(
    "AMD Instinct MI300X OAM",
    "MI300X",
    null,
    192,
    { secure: 2.49, community: 0 },
    { secure: 8, community: 0 },
    { "US-KS-2": { POD: "LOW" } },
    [],
  ),
];

interface CpuEntry {
  /** Without the availability fields (added per request). */
  record: CpuType;
  stock: Stock;
}

const CPU_TYPES: readonly CpuEntry[] = [
  {
    record: {
      id: "cpu3c",
      name: "Compute-Optimized",
      group: "Gen 3",
      vcpu: { min: 2, max: 32 },
      ramGbPerVcpu: 2,
      price: { securePerVcpu: 0.04, serverlessPerVcpu: 0.03 },
    },
    stock: {
      "US-KS-2": { POD: "HIGH", SERVERLESS: "HIGH" },
      "EU-RO-1": { POD: "MEDIUM", SERVERLESS: "MEDIUM" },
    },
  },
  {
    record: {
      id: "cpu3g",
      name: "General Purpose",
      group: "Gen 3",
      vcpu: { min: 2, max: 32 },
      ramGbPerVcpu: 4,
      price: { securePerVcpu: 0.035, serverlessPerVcpu: 0.025 },
    },
    stock: {
      "US-KS-2": { POD: "MEDIUM", SERVERLESS: "HIGH" },
      "US-GA-1": { POD: "MEDIUM", SERVERLESS: "MEDIUM" },
      "CA-MTL-1": { POD: "LOW", SERVERLESS: "LOW" },
    },
  },
  {
    record: {
      id: "cpu5c",
      name: "Compute-Optimized",
      group: "Gen 5",
      vcpu: { min: 2, max: 64 },
      ramGbPerVcpu: 2,
      price: { securePerVcpu: 0.06, serverlessPerVcpu: 0.045 },
    },
    stock: { "EU-RO-1": { POD: "MEDIUM", SERVERLESS: "HIGH" }, "EU-SE-1": { POD: "LOW" } },
  },
];

/** The public template catalog, by `source`. */
const PUBLIC_TEMPLATES: Readonly<Record<"official" | "verified" | "community", readonly Template[]>> = {
  official: [
    publicTemplate(
      "runpod-torch-v280",
      "Runpod PyTorch 2.8",
      "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
      false,
      {
        ports: ["8888/http", "22/tcp"],
        disk: 50,
      },
    ),
    publicTemplate("runpod-worker-comfy", "ComfyUI Serverless", "runpod/worker-comfyui:5.5.0-base", true),
    publicTemplate("runpod-worker-vllm", "vLLM Serverless", "runpod/worker-v1-vllm:v2.7.0", true),
  ],
  verified: [
    publicTemplate("ollama-verified", "Ollama", "ollama/ollama:0.12.0", false, { ports: ["11434/http"] }),
  ],
  community: [publicTemplate("whisper-worker", "Whisper worker", "example/whisper-worker:1.2.0", true)],
};

function publicTemplate(
  id: string,
  name: string,
  image: string,
  serverless: boolean,
  extra: { ports?: string[]; disk?: number } = {},
): Template {
  return {
    id,
    name,
    image,
    args: "",
    disk: extra.disk ?? 20,
    mounts: {},
    ports: extra.ports ?? [],
    env: {},
    registry: null,
    serverless,
    public: true,
    category: "NVIDIA",
    startSsh: !serverless,
    startJupyter: !serverless,
    allowedCudaVersions: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Availability arithmetic
// ---------------------------------------------------------------------------------------------

const rank = (level: AvailabilityLevel) => AVAILABILITY_LEVELS.indexOf(level);
const best = (levels: readonly AvailabilityLevel[]): AvailabilityLevel =>
  levels.reduce<AvailabilityLevel>((a, b) => (rank(b) > rank(a) ? b : a), "NONE");

/** CUDA version `a` compared with `b` numerically (12.11 > 12.2); a bare major means `.0`. */
function compareCuda(a: string, b: string): number {
  const [am = 0, an = 0] = a.split(".").map(Number);
  const [bm = 0, bn = 0] = b.split(".").map(Number);
  return am !== bm ? am - bm : an - bn;
}

/** Stock per data centre for the asked products (best of them), in the data centres kept. */
function levels(
  stock: Stock,
  products: readonly string[],
  countries: readonly string[] | undefined,
  podLevel?: (dataCenterId: string) => AvailabilityLevel | undefined,
): { id: string; name: string; availability: AvailabilityLevel }[] {
  const out: { id: string; name: string; availability: AvailabilityLevel }[] = [];
  for (const { record, country } of DATA_CENTERS) {
    const entry = stock[record.id];
    if (!entry || (countries && !countries.includes(country))) continue;
    const level = (p: string) =>
      p === "POD" && entry.POD !== undefined && podLevel
        ? (podLevel(record.id) ?? entry.POD)
        : entry[p as Product];
    const offered = products.map(level).filter((l) => l !== undefined);
    if (offered.length > 0) out.push({ id: record.id, name: record.name, availability: best(offered) });
  }
  return out;
}

/**
 * The availability fields of a GPU type under `query`, and whether `countryCodes` left it no data
 * centre (the list then drops it).
 */
function gpuAvailability(
  entry: GpuEntry,
  query: GpuQuery,
  live: PodStockView | undefined,
): { fields: Partial<GpuType>; outside: boolean } {
  const countries = query.countryCodes;
  const cloud = query.cloud ?? "SECURE";
  let dataCenters = levels(
    entry.stock,
    query.product ?? [],
    countries,
    live && ((dc) => live.gpuLevel(entry.record.id, dc, cloud)),
  );
  const max = cloud === "SECURE" ? entry.record.maxCount?.secure : entry.record.maxCount?.community;
  let cuda = entry.cuda.map(([version, available]) => ({ version, available }));
  const { cudaVersions, minCudaVersion } = query;
  if (cudaVersions) cuda = cuda.filter((c) => cudaVersions.includes(c.version));
  if (minCudaVersion) cuda = cuda.filter((c) => compareCuda(c.version, minCudaVersion) >= 0);
  const filtered = cudaVersions !== undefined || minCudaVersion !== undefined;
  const noCuda = filtered && entry.cuda.length > 0 && !cuda.some((c) => c.available);
  if ((query.count ?? 1) > (max ?? 0) || noCuda) {
    dataCenters = dataCenters.map((d) => ({ ...d, availability: "NONE" }));
  }
  const availability = best(dataCenters.map((d) => d.availability));
  return {
    outside: countries !== undefined && dataCenters.length === 0,
    fields: {
      availability,
      ...(availability === "NONE" ? {} : { dataCenters }),
      ...(entry.cuda.length > 0 ? { cudaVersions: cuda } : {}),
    },
  };
}

function cpuAvailability(entry: CpuEntry, query: CpuQuery, live: PodStockView | undefined): Partial<CpuType> {
  let dataCenters = levels(
    entry.stock,
    query.product ?? [],
    undefined,
    live && ((dc) => live.cpuLevel(entry.record.id, dc)),
  );
  if ((query.vcpuCount ?? 2) > (entry.record.vcpu?.max ?? 0)) {
    dataCenters = dataCenters.map((d) => ({ ...d, availability: "NONE" }));
  }
  const availability = best(dataCenters.map((d) => d.availability));
  return { availability, ...(availability === "NONE" ? {} : { dataCenters }) };
}

const wantsAvailability = (include: readonly string[] | undefined) =>
  include?.includes("AVAILABILITY") === true;

// ---------------------------------------------------------------------------------------------
// The operations
// ---------------------------------------------------------------------------------------------

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

/**
 * A data centre with the availability arrays `include` asks for: each resource at its best level
 * over all products, the `POD` level being the live one (a GPU type's best over both clouds).
 */
function renderDataCenter(
  entry: DataCenterEntry,
  include: readonly string[] | undefined,
  live: PodStockView | undefined,
): DataCenter {
  const id = entry.record.id;
  const offered = (
    resources: readonly { record: { id: string; name: string }; stock: Stock }[],
    podLevel: (resourceId: string) => AvailabilityLevel | undefined,
  ) =>
    resources.flatMap(({ record, stock }) => {
      const here = stock[id];
      if (!here) return [];
      const all = Object.entries(here).map(([product, level]) =>
        product === "POD" ? (podLevel(record.id) ?? level) : level,
      );
      return all.length > 0 ? [{ id: record.id, name: record.name, availability: best(all) }] : [];
    });
  const out: DataCenter = structuredClone(entry.record);
  if (include?.includes("GPU_AVAILABILITY")) {
    const gpus = offered(GPU_TYPES, (gpuId) => {
      const clouds = (["SECURE", "COMMUNITY"] as const)
        .map((cloud) => live?.gpuLevel(gpuId, id, cloud))
        .filter((l) => l !== undefined);
      return clouds.length > 0 ? best(clouds) : undefined;
    });
    if (gpus.length > 0) out.gpuAvailability = gpus;
  }
  if (include?.includes("CPU_AVAILABILITY")) {
    const cpus = offered(CPU_TYPES, (cpuId) => live?.cpuLevel(cpuId, id));
    if (cpus.length > 0) out.cpuAvailability = cpus;
  }
  return out;
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

// ---------------------------------------------------------------------------------------------
// Pod stock
// ---------------------------------------------------------------------------------------------

/** The live `POD` levels of GPU types and CPU flavours; undefined keeps the fixed level. */
export interface PodStockView {
  gpuLevel(gpuId: string, dataCenterId: string, cloud: string): AvailabilityLevel | undefined;
  cpuLevel(cpuId: string, dataCenterId: string): AvailabilityLevel | undefined;
}

/** GPUs free per data centre and cloud at a fixed level, before any pod takes one. */
export const POD_STOCK_PER_LEVEL: Readonly<Record<AvailabilityLevel, number>> = {
  NONE: 0,
  LOW: 2,
  MEDIUM: 8,
  HIGH: 16,
};

/** The level a count of free GPUs shows as (the inverse of {@link POD_STOCK_PER_LEVEL}). */
export function podStockLevel(free: number): AvailabilityLevel {
  if (free <= 0) return "NONE";
  if (free <= POD_STOCK_PER_LEVEL.LOW) return "LOW";
  if (free <= POD_STOCK_PER_LEVEL.MEDIUM) return "MEDIUM";
  return "HIGH";
}

/**
 * Free GPUs per (GPU type, data centre, cloud) at start, from the fixed `POD` levels; a type
 * offered only in `SECURE` has no `COMMUNITY` stock.
 */
export function podStockSeed(): {
  gpuId: string;
  dataCenterId: string;
  cloud: "SECURE" | "COMMUNITY";
  free: number;
}[] {
  const out: { gpuId: string; dataCenterId: string; cloud: "SECURE" | "COMMUNITY"; free: number }[] = [];
  for (const { record, stock } of GPU_TYPES) {
    for (const [dataCenterId, products] of Object.entries(stock)) {
      if (products.POD === undefined) continue;
      const free = POD_STOCK_PER_LEVEL[products.POD];
      if (record.secure) out.push({ gpuId: record.id, dataCenterId, cloud: "SECURE", free });
      if (record.community) out.push({ gpuId: record.id, dataCenterId, cloud: "COMMUNITY", free });
    }
  }
  return out;
}

/** vCPUs free per CPU flavour and data centre at a fixed level: 16 per GPU of {@link POD_STOCK_PER_LEVEL}. */
export const CPU_POD_VCPUS_PER_UNIT = 16;

/** The level a count of free vCPUs shows as (the inverse of {@link cpuPodStockSeed}'s seeding). */
export function podCpuStockLevel(freeVcpus: number): AvailabilityLevel {
  return podStockLevel(Math.ceil(freeVcpus / CPU_POD_VCPUS_PER_UNIT));
}

/** Free vCPUs per (CPU flavour, data centre) at start, from the fixed `POD` levels. */
export function cpuPodStockSeed(): { cpuId: string; dataCenterId: string; freeVcpus: number }[] {
  const out: { cpuId: string; dataCenterId: string; freeVcpus: number }[] = [];
  for (const { record, stock } of CPU_TYPES) {
    for (const [dataCenterId, products] of Object.entries(stock)) {
      if (products.POD === undefined) continue;
      out.push({
        cpuId: record.id,
        dataCenterId,
        freeVcpus: POD_STOCK_PER_LEVEL[products.POD] * CPU_POD_VCPUS_PER_UNIT,
      });
    }
  }
  return out;
}

/** A GPU type of the catalog and its machines' CUDA versions (with capacity or not), for pods. */
export function podGpuType(
  id: string,
): { record: GpuType; cuda: readonly (readonly [string, boolean])[] } | undefined {
  const entry = GPU_TYPES.find((g) => g.record.id === id);
  return entry && { record: structuredClone(entry.record), cuda: entry.cuda };
}

/** A CPU flavour of the catalog and the data centres offering it for pods (not at `NONE`). */
export function podCpuType(id: string): { record: CpuType; dataCenterIds: string[] } | undefined {
  const entry = CPU_TYPES.find((c) => c.record.id === id);
  if (!entry) return undefined;
  const dataCenterIds = Object.entries(entry.stock)
    .filter(([, products]) => products.POD !== undefined && products.POD !== "NONE")
    .map(([dc]) => dc);
  return { record: structuredClone(entry.record), dataCenterIds };
}

/** Every GPU type id of the catalog, in catalog order. */
/** The ids of the catalog's data centres: where a network volume may be created. */
export const DATA_CENTER_IDS: readonly string[] = DATA_CENTERS.map(({ record }) => record.id);

export const GPU_TYPE_IDS: readonly string[] = GPU_TYPES.map((g) => g.record.id);

/** CUDA version `a` compared with `b` numerically (12.11 > 12.2). */
export { compareCuda };

// ---------------------------------------------------------------------------------------------
// Pools of endpoints
// ---------------------------------------------------------------------------------------------

/** Every serverless pool id of the catalog, in catalog order, then {@link EMULATOR_POOL}. */
export const KNOWN_POOLS: readonly string[] = [
  ...new Set(GPU_TYPES.flatMap((g) => (g.record.pool ? [g.record.pool] : []))),
  EMULATOR_POOL,
];

/**
 * Refuses `gpu.pools` naming a pool the catalog does not have (the service's 400), naming the
 * unknown ones and the known ones; nothing to check when `pools` is undefined. `Refusal` is the
 * caller's error class (the serverless store's 400), so this module needs nothing of the store.
 */
export function requireKnownPools(
  pools: readonly string[] | undefined,
  Refusal: new (message: string) => Error,
): void {
  const unknown = (pools ?? []).filter((p) => !KNOWN_POOLS.includes(p));
  if (unknown.length === 0) return;
  throw new Refusal(
    `gpu.pools: ${unknown.map((p) => JSON.stringify(p)).join(", ")} ${unknown.length > 1 ? "are not serverless pools" : "is not a serverless pool"}; ` +
      `known pools: ${KNOWN_POOLS.join(", ")} (GET /v2/catalog/gpus lists each GPU type's pool)`,
  );
}

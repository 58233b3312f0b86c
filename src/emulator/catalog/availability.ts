/**
 * Availability arithmetic: the levels a GPU type, CPU flavour or data centre shows for a query,
 * from the tables' stock and the live pod stock (the rules are in `index.ts`'s header).
 */
import type { z } from "zod";
import {
  AVAILABILITY_LEVELS,
  type AvailabilityLevel,
  type CpuType,
  type CpuTypesQueryInputSchema,
  type DataCenter,
  type GpuType,
  type GpuTypesQueryInputSchema,
} from "../../wire/catalog";
import {
  CPU_TYPES,
  type CpuEntry,
  DATA_CENTERS,
  type DataCenterEntry,
  GPU_TYPES,
  type GpuEntry,
  type Product,
  type Stock,
} from "./data";
import type { PodStockView } from "./podStock";

/** A GPU types query as its schema parsed it (lists split, numbers read). */
export type GpuQuery = z.output<typeof GpuTypesQueryInputSchema>;
/** A CPU types query as its schema parsed it. */
export type CpuQuery = z.output<typeof CpuTypesQueryInputSchema>;

const rank = (level: AvailabilityLevel) => AVAILABILITY_LEVELS.indexOf(level);
const best = (levels: readonly AvailabilityLevel[]): AvailabilityLevel =>
  levels.reduce<AvailabilityLevel>((a, b) => (rank(b) > rank(a) ? b : a), "NONE");

/** CUDA version `a` compared with `b` numerically (12.11 > 12.2); a bare major means `.0`. */
export function compareCuda(a: string, b: string): number {
  const [am = 0, an = 0] = a.split(".").map(Number);
  const [bm = 0, bn = 0] = b.split(".").map(Number);
  return am !== bm ? am - bm : an - bn;
}

/** The live level of a product in a data centre (`POD`, and `CLUSTER` for GPU types); undefined keeps the fixed one. */
type LiveLevel = (dataCenterId: string, product: Product) => AvailabilityLevel | undefined;

/** Stock per data centre for the asked products (best of them), in the data centres kept. */
function levels(
  stock: Stock,
  products: readonly string[],
  countries: readonly string[] | undefined,
  live?: LiveLevel,
): { id: string; name: string; availability: AvailabilityLevel }[] {
  const out: { id: string; name: string; availability: AvailabilityLevel }[] = [];
  for (const { record, country } of DATA_CENTERS) {
    const entry = stock[record.id];
    if (!entry || (countries && !countries.includes(country))) continue;
    const level = (p: string) => {
      const fixed = entry[p as Product];
      return fixed !== undefined && live ? (live(record.id, p as Product) ?? fixed) : fixed;
    };
    const offered = products.map(level).filter((l) => l !== undefined);
    if (offered.length > 0) out.push({ id: record.id, name: record.name, availability: best(offered) });
  }
  return out;
}

/**
 * The availability fields of a GPU type under `query`, and whether `countryCodes` left it no data
 * centre (the list then drops it).
 */
export function gpuAvailability(
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
    live &&
      ((dc, product) =>
        product === "POD"
          ? live.gpuLevel(entry.record.id, dc, cloud)
          : product === "CLUSTER"
            ? live.clusterLevel?.(entry.record.id, dc)
            : undefined),
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

export function cpuAvailability(
  entry: CpuEntry,
  query: CpuQuery,
  live: PodStockView | undefined,
): Partial<CpuType> {
  let dataCenters = levels(
    entry.stock,
    query.product ?? [],
    undefined,
    live && ((dc, product) => (product === "POD" ? live.cpuLevel(entry.record.id, dc) : undefined)),
  );
  if ((query.vcpuCount ?? 2) > (entry.record.vcpu?.max ?? 0)) {
    dataCenters = dataCenters.map((d) => ({ ...d, availability: "NONE" }));
  }
  const availability = best(dataCenters.map((d) => d.availability));
  return { availability, ...(availability === "NONE" ? {} : { dataCenters }) };
}

/**
 * A data centre with the availability arrays `include` asks for: each resource at its best level
 * over all products, the `POD` and `CLUSTER` levels being the live ones (a GPU type's `POD` level is its
 * best over both clouds).
 */
export function renderDataCenter(
  entry: DataCenterEntry,
  include: readonly string[] | undefined,
  live: PodStockView | undefined,
): DataCenter {
  const id = entry.record.id;
  const offered = (
    resources: readonly { record: { id: string; name: string }; stock: Stock }[],
    liveLevel: (resourceId: string, product: Product) => AvailabilityLevel | undefined,
  ) =>
    resources.flatMap(({ record, stock }) => {
      const here = stock[id];
      if (!here) return [];
      const all = Object.entries(here).map(
        ([product, level]) => liveLevel(record.id, product as Product) ?? level,
      );
      return all.length > 0 ? [{ id: record.id, name: record.name, availability: best(all) }] : [];
    });
  const out: DataCenter = structuredClone(entry.record);
  if (include?.includes("GPU_AVAILABILITY")) {
    const gpus = offered(GPU_TYPES, (gpuId, product) => {
      if (product === "CLUSTER") return live?.clusterLevel?.(gpuId, id);
      if (product !== "POD") return undefined;
      const clouds = (["SECURE", "COMMUNITY"] as const)
        .map((cloud) => live?.gpuLevel(gpuId, id, cloud))
        .filter((l) => l !== undefined);
      return clouds.length > 0 ? best(clouds) : undefined;
    });
    if (gpus.length > 0) out.gpuAvailability = gpus;
  }
  if (include?.includes("CPU_AVAILABILITY")) {
    const cpus = offered(CPU_TYPES, (cpuId, product) =>
      product === "POD" ? live?.cpuLevel(cpuId, id) : undefined,
    );
    if (cpus.length > 0) out.cpuAvailability = cpus;
  }
  return out;
}

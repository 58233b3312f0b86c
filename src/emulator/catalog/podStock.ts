/**
 * Pod stock: free GPUs per GPU type, data centre and cloud, and free vCPUs per CPU flavour and data
 * centre, seeded from the tables' fixed `POD` levels; the pods take from it and the catalog shows
 * what is left through {@link PodStockView}.
 */
import type { AvailabilityLevel, CpuType, GpuType } from "../../wire/catalog";
import { CPU_TYPES, GPU_TYPES } from "./data";

/**
 * The live `POD` levels of GPU types and CPU flavours, and the live `CLUSTER` level of GPU types;
 * undefined keeps the fixed level.
 */
export interface PodStockView {
  gpuLevel(gpuId: string, dataCenterId: string, cloud: string): AvailabilityLevel | undefined;
  cpuLevel(cpuId: string, dataCenterId: string): AvailabilityLevel | undefined;
  clusterLevel?(gpuId: string, dataCenterId: string): AvailabilityLevel | undefined;
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

/**
 * GPUs free for clusters per data centre at a fixed `CLUSTER` level, before any cluster takes one:
 * a cluster is at least 2 pods, so `LOW` holds two pods of 8 GPUs.
 */
export const CLUSTER_STOCK_PER_LEVEL: Readonly<Record<AvailabilityLevel, number>> = {
  NONE: 0,
  LOW: 16,
  MEDIUM: 64,
  HIGH: 256,
};

/** The level a count of GPUs free for clusters shows as (the inverse of {@link CLUSTER_STOCK_PER_LEVEL}). */
export function clusterStockLevel(free: number): AvailabilityLevel {
  if (free <= 0) return "NONE";
  if (free <= CLUSTER_STOCK_PER_LEVEL.LOW) return "LOW";
  if (free <= CLUSTER_STOCK_PER_LEVEL.MEDIUM) return "MEDIUM";
  return "HIGH";
}

/**
 * GPUs free for clusters per (GPU type, data centre) at start, from the fixed `CLUSTER` levels.
 * Clusters run in the `SECURE` cloud, from stock of their own (not the pods').
 */
export function clusterStockSeed(): { gpuId: string; dataCenterId: string; free: number }[] {
  const out: { gpuId: string; dataCenterId: string; free: number }[] = [];
  for (const { record, stock } of GPU_TYPES) {
    for (const [dataCenterId, products] of Object.entries(stock)) {
      if (products.CLUSTER === undefined) continue;
      out.push({ gpuId: record.id, dataCenterId, free: CLUSTER_STOCK_PER_LEVEL[products.CLUSTER] });
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

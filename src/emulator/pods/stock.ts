/**
 * Pod stock and placement: free GPUs per GPU type, data centre and cloud, and free vCPUs per CPU
 * flavour and data centre (seeded from the catalog's `POD` levels), taken while a pod holds
 * compute and given back on stop and delete. A create places the one type asked for in the data
 * centre with the most free of it, and never falls back. Cluster members take from stock of their
 * own: GPUs per GPU type and data centre seeded from the catalog's `CLUSTER` levels, all of a
 * cluster's in one data centre.
 */
import type { AvailabilityLevel } from "../../wire/catalog";
import type { ClusterComputeInput } from "../../wire/clusters";
import type { Pod } from "../../wire/pods";
import {
  clusterStockLevel,
  clusterStockSeed,
  compareCuda,
  cpuPodStockSeed,
  type PodStockView,
  podCpuStockLevel,
  podCpuType,
  podGpuType,
  podStockLevel,
  podStockSeed,
} from "../catalog";
import type { PodCreateBody } from "../requestBodies";
import { NO_CAPACITY_MESSAGE, PodError } from "./errors";

/** Where a create lands and what the pod costs an hour there. */
export interface Placement {
  dataCenterId: string;
  cudaVersion: string | null;
  cost: number;
}

/** Free GPUs and vCPUs; the catalog's live `POD` levels. */
export class PodStock implements PodStockView {
  /** Free GPUs by `gpuId|dataCenterId|cloud`. */
  readonly #gpus = new Map<string, number>();
  /** Free vCPUs by `cpuId|dataCenterId` (CPU pods run in the SECURE cloud only). */
  readonly #vcpus = new Map<string, number>();
  /** GPUs free for clusters by `gpuId|dataCenterId` (clusters run in the SECURE cloud). */
  readonly #clusterGpus = new Map<string, number>();

  constructor() {
    for (const s of podStockSeed()) this.#gpus.set(gpuKey(s.gpuId, s.dataCenterId, s.cloud), s.free);
    for (const s of cpuPodStockSeed()) this.#vcpus.set(cpuKey(s.cpuId, s.dataCenterId), s.freeVcpus);
    for (const s of clusterStockSeed()) this.#clusterGpus.set(clusterKey(s.gpuId, s.dataCenterId), s.free);
  }

  /** The live `CLUSTER` level of a GPU type in a data centre (the catalog's view). */
  clusterLevel(gpuId: string, dataCenterId: string): AvailabilityLevel | undefined {
    const free = this.#clusterGpus.get(clusterKey(gpuId, dataCenterId));
    return free === undefined ? undefined : clusterStockLevel(free);
  }

  /** The live `POD` level of a GPU type in a data centre and cloud (the catalog's view). */
  gpuLevel(gpuId: string, dataCenterId: string, cloud: string): AvailabilityLevel | undefined {
    const free = this.#gpus.get(gpuKey(gpuId, dataCenterId, cloud));
    return free === undefined ? undefined : podStockLevel(free);
  }

  /** The live `POD` level of a CPU flavour in a data centre (the catalog's view). */
  cpuLevel(cpuId: string, dataCenterId: string): AvailabilityLevel | undefined {
    const free = this.#vcpus.get(cpuKey(cpuId, dataCenterId));
    return free === undefined ? undefined : podCpuStockLevel(free);
  }

  /** Free GPUs of a type in a data centre and cloud (0 when it is not offered there). */
  freeGpus(gpuId: string, dataCenterId: string, cloud = "SECURE"): number {
    return this.#gpus.get(gpuKey(gpuId, dataCenterId, cloud)) ?? 0;
  }

  /** Free vCPUs of a CPU flavour in a data centre (0 when it is not offered there). */
  freeVcpus(cpuId: string, dataCenterId: string): number {
    return this.#vcpus.get(cpuKey(cpuId, dataCenterId)) ?? 0;
  }

  /** Takes the pod's compute in `dataCenterId`. */
  take(pod: Pod, dataCenterId: string): void {
    this.#move(pod, dataCenterId, -1);
  }

  /** Gives the pod's compute in `dataCenterId` back. */
  giveBack(pod: Pod, dataCenterId: string): void {
    this.#move(pod, dataCenterId, 1);
  }

  /** Takes (`sign` -1) or gives back (+1) the pod's compute in `dataCenterId`. */
  #move(pod: Pod, dataCenterId: string, sign: 1 | -1): void {
    if (pod.cluster && pod.gpu) {
      const k = clusterKey(pod.gpu.id, dataCenterId);
      this.#clusterGpus.set(k, (this.#clusterGpus.get(k) ?? 0) + sign * (pod.gpu.count ?? 1));
    } else if (pod.gpu) {
      const k = gpuKey(pod.gpu.id, dataCenterId, pod.cloud ?? "SECURE");
      this.#gpus.set(k, (this.#gpus.get(k) ?? 0) + sign * (pod.gpu.count ?? 1));
    } else if (pod.cpu) {
      const k = cpuKey(pod.cpu.id, dataCenterId);
      this.#vcpus.set(k, (this.#vcpus.get(k) ?? 0) + sign * (pod.cpu.vcpuCount ?? 0));
    }
  }

  /** Where `count` GPUs of `gpu.id` fit in `cloud`, among `dataCenters` (any when undefined); 400 when nowhere. */
  placeGpu(
    gpu: NonNullable<PodCreateBody["gpu"]>,
    count: number,
    cloud: string,
    dataCenters: readonly string[] | undefined,
  ): Placement {
    const type = inCatalog(podGpuType(gpu.id), "gpu.id", gpu.id, "a GPU type", "gpus");
    const max = cloud === "COMMUNITY" ? type.record.maxCount?.community : type.record.maxCount?.secure;
    if (!max) throw new PodError(400, `cloud: ${gpu.id} is not offered in the ${cloud} cloud`);
    if (count > max) {
      throw new PodError(
        400,
        `gpu.count: at most ${max} ${gpu.id} GPUs per pod in the ${cloud} cloud, got ${count}`,
      );
    }
    let cudaVersion: string | null = null;
    if (type.cuda.length > 0) {
      const usable = type.cuda
        .filter(([, available]) => available)
        .map(([v]) => v)
        .filter((v) => (gpu.allowedCudaVersions?.length ? gpu.allowedCudaVersions.includes(v) : true))
        .filter((v) => (gpu.minCudaVersion ? compareCuda(v, gpu.minCudaVersion) >= 0 : true));
      if (usable.length === 0) throw new PodError(400, NO_CAPACITY_MESSAGE);
      cudaVersion = usable[0] as string;
    }
    const offered = [...this.#gpus].flatMap(([k, free]) => {
      const [id, dc, c] = k.split("|") as [string, string, string];
      return id === gpu.id && c === cloud ? [{ dc, free }] : [];
    });
    const best = roomiest(offered, count, dataCenters);
    const price = cloud === "COMMUNITY" ? type.record.price?.community : type.record.price?.secure;
    return { dataCenterId: best.dc, cudaVersion, cost: roundUsd((price ?? 0) * count) };
  }

  /**
   * Where a cluster fits: `podCount` x `gpuCountPerPod` GPUs of `gpuTypeId` free for clusters in
   * one data centre among `dataCenters` (any when undefined), the roomiest; what each member pod
   * costs an hour there. 400 for a type not in the catalog or more GPUs per pod than its
   * `maxCount`; 400 saying it is a capacity failure, with what is free, when no data centre has room.
   */
  placeCluster(compute: ClusterComputeInput, dataCenters: readonly string[] | undefined): Placement {
    const { gpuTypeId, gpuCountPerPod, podCount } = compute;
    const type = inCatalog(podGpuType(gpuTypeId), "compute.gpuTypeId", gpuTypeId, "a GPU type", "gpus");
    const max = type.record.maxCount?.secure ?? 0;
    if (gpuCountPerPod > max) {
      throw new PodError(
        400,
        `compute.gpuCountPerPod: at most ${max} ${gpuTypeId} GPUs per pod, got ${gpuCountPerPod}`,
      );
    }
    const need = podCount * gpuCountPerPod;
    const offered = [...this.#clusterGpus].flatMap(([k, free]) => {
      const [id, dc] = k.split("|") as [string, string];
      return id === gpuTypeId && (!dataCenters || dataCenters.includes(dc)) ? [{ dc, free }] : [];
    });
    const fits = offered.filter((o) => o.free >= need);
    if (fits.length === 0) {
      const where = dataCenters ? ` among ${dataCenters.join(", ")}` : "";
      const most = offered.reduce<{ dc: string; free: number } | undefined>(
        (a, b) => (a && a.free >= b.free ? a : b),
        undefined,
      );
      const free = most
        ? `the most free for clusters now is ${most.free}, in ${most.dc}`
        : `no data center${where} offers ${gpuTypeId} for clusters`;
      throw new PodError(
        400,
        `${NO_CAPACITY_MESSAGE} (a cluster of ${podCount} pods x ${gpuCountPerPod} ${gpuTypeId} needs ${need} GPUs free in one data center${where}; ${free})`,
      );
    }
    const best = fits.reduce((a, b) => (b.free > a.free ? b : a));
    const cudaVersion = type.cuda.find(([, available]) => available)?.[0] ?? null;
    const price = type.record.price?.secure ?? 0;
    return { dataCenterId: best.dc, cudaVersion, cost: roundUsd(price * gpuCountPerPod) };
  }

  /** Where `cpu.vcpuCount` vCPUs of `cpu.id` fit, among `dataCenters` (any when undefined); 400 when nowhere. */
  placeCpu(
    cpu: { id: string; vcpuCount: number },
    cloud: string,
    dataCenters: readonly string[] | undefined,
  ): Placement {
    const type = inCatalog(podCpuType(cpu.id), "cpu.id", cpu.id, "a CPU flavour", "cpus");
    const max = type.record.vcpu?.max ?? 0;
    if (cpu.vcpuCount > max) {
      throw new PodError(400, `cpu.vcpuCount: ${cpu.id} has at most ${max} vCPUs, got ${cpu.vcpuCount}`);
    }
    if (cloud !== "SECURE") throw new PodError(400, "cloud: CPU pods run in the SECURE cloud only");
    const offered = type.dataCenterIds.map((dc) => ({ dc, free: this.freeVcpus(cpu.id, dc) }));
    const best = roomiest(offered, cpu.vcpuCount, dataCenters);
    return {
      dataCenterId: best.dc,
      cudaVersion: null,
      cost: roundUsd((type.record.price?.securePerVcpu ?? 0) * cpu.vcpuCount),
    };
  }
}

/**
 * The data centre with the most free of what a pod needs, among `dataCenters` (any when
 * undefined) and holding at least `need`; the first listed wins a tie. 400 when none has room.
 */
function roomiest(
  offered: readonly { dc: string; free: number }[],
  need: number,
  dataCenters: readonly string[] | undefined,
): { dc: string; free: number } {
  let best: { dc: string; free: number } | undefined;
  for (const o of offered) {
    if (dataCenters && !dataCenters.includes(o.dc)) continue;
    if (o.free >= need && (!best || o.free > best.free)) best = o;
  }
  if (!best) throw new PodError(400, NO_CAPACITY_MESSAGE);
  return best;
}

function gpuKey(gpuId: string, dataCenterId: string, cloud: string): string {
  return `${gpuId}|${dataCenterId}|${cloud}`;
}

function cpuKey(cpuId: string, dataCenterId: string): string {
  return `${cpuId}|${dataCenterId}`;
}

function roundUsd(usd: number): number {
  return Math.round(usd * 10_000) / 10_000;
}

/** `entry` when the catalog has it, else a 400 naming `field` and where the catalog lists them. */
function inCatalog<T>(entry: T | undefined, field: string, id: string, what: string, list: string): T {
  if (!entry) throw new PodError(400, `${field}: ${id} is not ${what} (GET /v2/catalog/${list} lists them)`);
  return entry;
}

function clusterKey(gpuId: string, dataCenterId: string): string {
  return `${gpuId}|${dataCenterId}`;
}

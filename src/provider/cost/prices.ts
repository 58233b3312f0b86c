/**
 * The price arithmetic, with no network: list prices from the REST v2 catalog times what a
 * resource asks for. One place for every resource that costs by the hour: a serverless endpoint
 * prices its workers here ({@link endpointHourlyCost}); a pod plugs in the pod rates of its
 * candidates through {@link hourlyCostOf} (floor and ceiling over a list of per-unit rates).
 *
 * These are list prices: negotiated discounts, savings plans and credits are not in the catalog.
 * A price the catalog does not give is said plainly (`note: "no list price for ..."`), never
 * shown as $0.
 */
import { containsUnknown, UNKNOWN } from "../common/unknown";

/**
 * What a resource may cost an hour, in US dollars at the catalog's list prices. A price the catalog
 * does not give: figures null and a `note`, never 0.
 */
export interface HourlyCost {
  /** Always on: the cheapest the resource may run at (an endpoint: `workers.min` workers at the cheapest rate). */
  floorUsd: number | null;
  /** At most: the dearest the resource may run at (an endpoint: `workers.max` workers at the dearest rate). */
  ceilingUsd: number | null;
  /** One worker (or the pod) at the dearest rate it may land on (GPU price × GPUs, or vCPU price × vCPUs). */
  ratePerWorkerUsd: number | null;
  /** Present only when a figure is missing: which price the catalog does not give. */
  note?: string;
}

/** The catalog's prices a figure needs (the fields of `GpuType` and `CpuType` read here). */
export interface GpuPrice {
  id: string;
  pool: string | null;
  price?: { serverless?: number; secure?: number; community?: number };
}
export interface CpuPrice {
  id: string;
  price?: { serverlessPerVcpu?: number; securePerVcpu?: number };
}

/** Per-unit rates a resource may land on (one per candidate), or why one has no list price. */
export type Rates = { rates: number[] } | { missing: string };

/**
 * Why a list price cannot price anything, or undefined when it can: a price must be a finite number
 * of USD above 0. Absent, zero, negative or NaN fail closed (a price of -100 would otherwise lower a
 * stack's sum, and 0 would let any count pass a budget); `what` names the price (`secure pod price`).
 */
export function badPrice(price: unknown, what: string): string | undefined {
  if (price === undefined || price === null) return `the catalog gives it no ${what}`;
  if (typeof price !== "number" || !Number.isFinite(price) || price <= 0) {
    const shown = typeof price === "number" ? String(price) : JSON.stringify(price);
    return `the catalog gives it a ${what} of ${shown} USD/h, not a price above 0`;
  }
  return undefined;
}

/** USD figures rounded to a millionth of a dollar, so 0.58 × 3 reads 1.74. */
export function usd(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/**
 * Floor and ceiling from the per-worker rates of every candidate: the floor at the cheapest, the
 * ceiling (and the rate per worker) at the dearest. `max` undefined: the ceiling is not known yet.
 */
export function hourlyCostOf(rates: Rates, min: number, max: number | undefined): HourlyCost {
  if ("missing" in rates)
    return { floorUsd: null, ceilingUsd: null, ratePerWorkerUsd: null, note: rates.missing };
  const cheapest = Math.min(...rates.rates);
  const dearest = Math.max(...rates.rates);
  return {
    floorUsd: usd(min * cheapest),
    ceilingUsd: max === undefined ? null : usd(max * dearest),
    ratePerWorkerUsd: usd(dearest),
  };
}

/** The endpoint fields a price depends on (arguments or the endpoint as read back). */
export interface EndpointShape {
  gpu?: { pools?: unknown; excludedTypes?: unknown; count?: unknown } | null;
  cpu?: unknown;
  workers?: { min?: unknown; max?: unknown } | null;
}

/** Which catalog lists an endpoint's price needs: GPU types, CPU flavours, or none (neither given). */
export function catalogNeeded(endpoint: EndpointShape): "gpus" | "cpus" | undefined {
  if (Array.isArray(endpoint.cpu) && endpoint.cpu.length > 0) return "cpus";
  if (endpoint.gpu !== undefined && endpoint.gpu !== null) return "gpus";
  return undefined;
}

/**
 * Per-worker rates of a GPU endpoint: each GPU type of its pools (less `excludedTypes`) at its
 * pool's serverless price × `count` (GPUs per worker, 1 when omitted). A pool no GPU type of the
 * catalog is in, or a type without a serverless price, has no list price.
 */
export function gpuWorkerRates(
  gpu: { pools?: unknown; excludedTypes?: unknown; count?: unknown },
  catalog: readonly GpuPrice[],
): Rates {
  const pools = Array.isArray(gpu.pools) ? (gpu.pools as string[]) : [];
  const excluded = new Set(Array.isArray(gpu.excludedTypes) ? (gpu.excludedTypes as string[]) : []);
  const count = typeof gpu.count === "number" ? gpu.count : 1;
  if (pools.length === 0) return { missing: "no list price for a GPU endpoint without gpu.pools" };
  const rates: number[] = [];
  for (const pool of pools) {
    const types = catalog.filter((g) => g.pool === pool && !excluded.has(g.id));
    if (types.length === 0) {
      return {
        missing: `no list price for GPU pool ${pool}: the catalog lists no GPU type in it for this account`,
      };
    }
    for (const type of types) {
      const price = type.price?.serverless;
      const bad = badPrice(price, "serverless price");
      if (bad !== undefined) {
        return { missing: `no list price for GPU type ${JSON.stringify(type.id)} (pool ${pool}): ${bad}` };
      }
      rates.push((price as number) * count);
    }
  }
  return { rates };
}

/**
 * The hourly rate of one placed GPU worker (the v2 `Worker`): its `gpuTypeId`'s serverless price ×
 * its `gpuCount`; undefined when it is not placed yet or the catalog gives its type no serverless
 * price above 0. A run's cost uses it, so a job is priced at the GPU it ran on, not the dearest candidate.
 */
export function placedWorkerRate(
  worker: { gpuTypeId?: string | null; gpuCount?: number },
  catalog: readonly GpuPrice[],
): number | undefined {
  if (typeof worker.gpuTypeId !== "string" || typeof worker.gpuCount !== "number") return undefined;
  const price = catalog.find((g) => g.id === worker.gpuTypeId)?.price?.serverless;
  return badPrice(price, "serverless price") === undefined ? (price as number) * worker.gpuCount : undefined;
}

/** Per-worker rates of a CPU endpoint: each configuration's flavour at its serverless vCPU price × `vcpuCount`. */
export function cpuWorkerRates(
  cpu: readonly { id?: unknown; vcpuCount?: unknown }[],
  catalog: readonly CpuPrice[],
): Rates {
  const rates: number[] = [];
  for (const config of cpu) {
    const flavour = catalog.find((c) => c.id === config.id);
    const price = flavour?.price?.serverlessPerVcpu;
    const bad = badPrice(price, "serverless vCPU price");
    if (bad !== undefined)
      return { missing: `no list price for CPU flavour ${JSON.stringify(config.id)}: ${bad}` };
    rates.push((price as number) * (typeof config.vcpuCount === "number" ? config.vcpuCount : 0));
  }
  return { rates };
}

/**
 * An endpoint's `hourlyCost`: `workers.min` (0 when omitted, as the service starts no worker
 * unless asked) at the cheapest candidate, `workers.max` at the dearest. Unknown inputs (a
 * preview) make the figure unknown (Pulumi's unknown value), never 0; so does an omitted
 * `workers.max` before the service has answered (it decides the default).
 */
export function endpointHourlyCost(
  endpoint: EndpointShape,
  catalog: { gpus?: readonly GpuPrice[]; cpus?: readonly CpuPrice[] },
): HourlyCost | typeof UNKNOWN {
  if (containsUnknown(endpoint.gpu) || containsUnknown(endpoint.cpu) || containsUnknown(endpoint.workers)) {
    return UNKNOWN;
  }
  const need = catalogNeeded(endpoint);
  const rates: Rates =
    need === "cpus"
      ? cpuWorkerRates(endpoint.cpu as { id?: unknown; vcpuCount?: unknown }[], catalog.cpus ?? [])
      : need === "gpus"
        ? gpuWorkerRates(endpoint.gpu as NonNullable<EndpointShape["gpu"]>, catalog.gpus ?? [])
        : { missing: "no list price for an endpoint with neither gpu nor cpu" };
  const workers = endpoint.workers ?? {};
  const min = typeof workers.min === "number" ? workers.min : 0;
  const max = typeof workers.max === "number" ? workers.max : undefined;
  const cost = hourlyCostOf(rates, min, max);
  if (max === undefined && cost.note === undefined) return UNKNOWN;
  return cost;
}

/**
 * What a run cost, USD: its execution time (ms) × the worker's hourly rate. An estimate: the
 * service bills per second of worker time, which also counts start and idle time.
 */
export function runCostUsd(executionTimeMs: number, ratePerHourUsd: number): number {
  return usd((executionTimeMs / 3_600_000) * ratePerHourUsd);
}

/** The pod fields a price depends on (arguments, or the pod as read back with the echo of its arguments). */
export interface PodShape {
  gpu?: { id?: unknown; count?: unknown } | null;
  cpu?: { id?: unknown; vcpuCount?: unknown } | null;
  cloud?: unknown;
  fallbackGpuIds?: unknown;
  desiredStatus?: unknown;
}

/** The GPU types a pod may land on: `gpu.id`, then `fallbackGpuIds`, without repeats. */
export function podGpuCandidates(pod: PodShape): string[] {
  const first = typeof pod.gpu?.id === "string" ? [pod.gpu.id] : [];
  const fallbacks = Array.isArray(pod.fallbackGpuIds)
    ? pod.fallbackGpuIds.filter((id): id is string => typeof id === "string")
    : [];
  return [...new Set([...first, ...fallbacks])];
}

/**
 * Per-machine rates of a pod, one per candidate: a GPU pod's candidates at their pod price for its
 * `cloud` (`price.secure`, or `price.community` with `COMMUNITY`) × `gpu.count` (1 when omitted); a
 * CPU pod's flavour at its secure vCPU price × `vcpuCount`. A candidate the catalog gives no such
 * price has no list price.
 */
export function podRates(
  pod: PodShape,
  catalog: { gpus?: readonly GpuPrice[]; cpus?: readonly CpuPrice[] },
): Rates {
  if (pod.cpu !== undefined && pod.cpu !== null) {
    const flavour = (catalog.cpus ?? []).find((c) => c.id === pod.cpu?.id);
    const price = flavour?.price?.securePerVcpu;
    const bad = badPrice(price, "pod vCPU price");
    if (bad !== undefined)
      return { missing: `no list price for CPU flavour ${JSON.stringify(pod.cpu.id)}: ${bad}` };
    return { rates: [(price as number) * (typeof pod.cpu.vcpuCount === "number" ? pod.cpu.vcpuCount : 0)] };
  }
  const candidates = podGpuCandidates(pod);
  if (candidates.length === 0) return { missing: "no list price for a pod with neither gpu nor cpu" };
  const community = pod.cloud === "COMMUNITY";
  const count = typeof pod.gpu?.count === "number" ? pod.gpu.count : 1;
  const rates: number[] = [];
  for (const id of candidates) {
    const type = (catalog.gpus ?? []).find((g) => g.id === id);
    const price = community ? type?.price?.community : type?.price?.secure;
    const bad = badPrice(price, `${community ? "community" : "secure"} pod price`);
    if (bad !== undefined) return { missing: `no list price for GPU type ${JSON.stringify(id)}: ${bad}` };
    rates.push((price as number) * count);
  }
  return { rates };
}

/**
 * A pod's `hourlyCost`: one machine, so the floor is the cheapest candidate it may land on and the
 * ceiling (and the rate per worker) the dearest; a pod asked to be `EXITED` costs nothing an hour
 * now (floor 0) but may be started again (the ceiling stays). Unknown inputs make it unknown.
 */
export function podHourlyCost(
  pod: PodShape,
  catalog: { gpus?: readonly GpuPrice[]; cpus?: readonly CpuPrice[] },
): HourlyCost | typeof UNKNOWN {
  if (
    containsUnknown(pod.gpu) ||
    containsUnknown(pod.cpu) ||
    containsUnknown(pod.cloud) ||
    containsUnknown(pod.fallbackGpuIds) ||
    containsUnknown(pod.desiredStatus)
  ) {
    return UNKNOWN;
  }
  const cost = hourlyCostOf(podRates(pod, catalog), 1, 1);
  if (pod.desiredStatus === "EXITED" && cost.floorUsd !== null) cost.floorUsd = 0;
  return cost;
}

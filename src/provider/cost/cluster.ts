/**
 * Prices and budgets of a `Cluster`, for its `check` (the preview's figures and the budgets'
 * refusals) and its outputs. A cluster is `podCount` identical pods of `gpuCountPerPod` GPUs of one
 * type, in the secure cloud: each pod at the type's secure pod price × `gpuCountPerPod` (the rate
 * `podRates` gives a `Pod`), the whole at `podCount` of them (floor and ceiling alike: every member
 * runs and bills). Runs in the provider host; the only network call is the catalog read, once per
 * host and bounded (`catalog.ts`).
 */
import type { RunpodClient } from "../../client";
import { containsUnknown, UNKNOWN } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { type CostCheck, judgeBudgets } from "./budget";
import { catalogGpus } from "./catalog";
import { speaksV2 } from "./endpoint";
import { type GpuPrice, type HourlyCost, hourlyCostOf, podRates, usd } from "./prices";

/** The cluster fields a price depends on (arguments, or the cluster as read back). */
export interface ClusterShape {
  compute?: { gpuTypeId?: unknown; gpuCountPerPod?: unknown; podCount?: unknown } | null;
}

/**
 * A cluster's `hourlyCost`: `podCount` pods at the GPU type's secure pod price × `gpuCountPerPod`
 * (`ratePerWorkerUsd` is one pod). Unknown inputs (a preview) make it unknown; a type the catalog
 * gives no secure price has none (`note`), never 0.
 */
export function clusterHourlyCost(
  cluster: ClusterShape,
  catalog: { gpus?: readonly GpuPrice[] },
): HourlyCost | typeof UNKNOWN {
  if (containsUnknown(cluster.compute)) return UNKNOWN;
  const { gpuTypeId, gpuCountPerPod, podCount } = cluster.compute ?? {};
  const rates = podRates({ gpu: { id: gpuTypeId, count: gpuCountPerPod }, cloud: "SECURE" }, catalog);
  const pods = typeof podCount === "number" ? podCount : 0;
  return hourlyCostOf(rates, pods, pods);
}

/** True when the cluster names its compute, so there is something to price. */
function hasCompute(cluster: ClusterShape): boolean {
  return cluster.compute !== undefined && cluster.compute !== null;
}

/** The cluster's `hourlyCost` for its outputs, or undefined when the catalog cannot be read. */
export async function clusterCostOutput(
  settings: RunpodSettings | undefined,
  cluster: ClusterShape,
  client?: RunpodClient,
): Promise<HourlyCost | undefined> {
  if (!hasCompute(cluster) || settings?.apiKey === undefined || !speaksV2(settings)) return undefined;
  try {
    const cost = clusterHourlyCost(cluster, { gpus: await catalogGpus(settings, client) });
    return cost === UNKNOWN ? undefined : (cost as HourlyCost);
  } catch {
    return undefined;
  }
}

/**
 * `check`'s cost work for a cluster ({@link judgeBudgets}): its `hourlyCost` as the arguments make
 * it (unknown where they are unknown in a preview), and the failures of the budgets it is over.
 */
export const checkClusterCost: CostCheck = (subject) => {
  const { settings } = subject;
  const cluster = subject.args as ClusterShape;
  return judgeBudgets(subject, {
    unknownArgs: containsUnknown(cluster.compute),
    priceable: hasCompute(cluster),
    canRead: settings?.apiKey !== undefined && speaksV2(settings),
    price: async () => clusterHourlyCost(cluster, { gpus: await catalogGpus(settings) }),
    how: (cost) => {
      const c = cluster.compute ?? {};
      return (
        `${String(c.podCount)} pods × ${String(c.gpuCountPerPod)} ${JSON.stringify(c.gpuTypeId)} GPUs, ` +
        `${usd(cost.ratePerWorkerUsd as number)} USD/h a pod`
      );
    },
    lower: "its compute.podCount or compute.gpuCountPerPod, or a cheaper compute.gpuTypeId",
  });
};

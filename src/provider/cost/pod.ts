/**
 * Prices and budgets of a `Pod`, for its `check` (the preview's figures and the budgets' refusals)
 * and its outputs. A pod is one machine: its floor and ceiling are the range of pod rates over the
 * GPU types it may land on (`gpu.id`, then `fallbackGpuIds`). Runs in the provider host; the only
 * network call is the catalog read, once per host and bounded (`catalog.ts`).
 */
import type { RunpodClient } from "../../client";
import { UNKNOWN } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { type CostCheck, judgeBudgets } from "./budget";
import { catalogCpus, catalogGpus } from "./catalog";
import { speaksV2 } from "./endpoint";
import { type HourlyCost, type PodShape, podGpuCandidates, podHourlyCost, usd } from "./prices";

/** The catalog list a pod's price needs, read once per host and bounded (`catalog.ts`). */
async function podPrices(settings: RunpodSettings | undefined, pod: PodShape, client?: RunpodClient) {
  if (pod.cpu !== undefined && pod.cpu !== null) return { cpus: await catalogCpus(settings, client) };
  return { gpus: await catalogGpus(settings, client) };
}

/** True when the pod names its compute (`gpu` or `cpu`), so there is something to price. */
function hasCompute(pod: PodShape): boolean {
  return (pod.cpu !== undefined && pod.cpu !== null) || (pod.gpu !== undefined && pod.gpu !== null);
}

/** The pod's `hourlyCost` for its outputs, or undefined when the catalog cannot be read. */
export async function podCostOutput(
  settings: RunpodSettings | undefined,
  pod: PodShape,
  client?: RunpodClient,
): Promise<HourlyCost | undefined> {
  if (!hasCompute(pod) || settings?.apiKey === undefined || !speaksV2(settings)) return undefined;
  try {
    const cost = podHourlyCost(pod, await podPrices(settings, pod, client));
    return cost === UNKNOWN ? undefined : (cost as HourlyCost);
  } catch {
    return undefined;
  }
}

/** How a pod's ceiling is made, for a message: the candidates and the dearest rate. */
function howOf(pod: PodShape, ratePerWorker: number): string {
  const candidates = podGpuCandidates(pod);
  const what =
    pod.cpu !== undefined && pod.cpu !== null
      ? `CPU flavour ${JSON.stringify(pod.cpu.id)}`
      : `dearest of candidates ${candidates.map((c) => JSON.stringify(c)).join(", ")}` +
        (typeof pod.gpu?.count === "number" && pod.gpu.count !== 1 ? ` × ${pod.gpu.count} GPUs` : "");
  return `one pod at ${usd(ratePerWorker)} USD/h, ${what}`;
}

/**
 * `check`'s cost work for a pod ({@link judgeBudgets}): its `hourlyCost` as the arguments make it
 * (unknown where they are unknown in a preview), and the failures of the budgets it is over.
 */
export const checkPodCost: CostCheck = (subject) => {
  const { settings } = subject;
  const pod = subject.args as PodShape;
  return judgeBudgets(subject, {
    priceable: hasCompute(pod),
    canRead: settings?.apiKey !== undefined && speaksV2(settings),
    price: async () => podHourlyCost(pod, await podPrices(settings, pod)),
    how: (cost) => howOf(pod, cost.ratePerWorkerUsd as number),
    lower: "its GPU count or GPU types (gpu.id, fallbackGpuIds)",
  });
};

/**
 * Prices and budgets of a `Pod`, for its `check` (the preview's figures and the budgets' refusals)
 * and its outputs. A pod is one machine: its floor and ceiling are the range of pod rates over the
 * GPU types it may land on (`gpu.id`, then `fallbackGpuIds`). Runs in the provider host; the only
 * network call is the catalog read, once per host (`catalog.ts`).
 */
import type { RunpodClient } from "../../client";
import { hostClient } from "../common/host";
import { isUnknown, UNKNOWN } from "../common/unknown";
import { describeError } from "../common/wording";
import type { RunpodSettings } from "../config";
import {
  ceilingsWith,
  forgetCeiling,
  type LedgerEntry,
  parseBudget,
  recordCeiling,
  resourceBudgetFailure,
  stackBudgetFailure,
  unknownCeilingFailure,
} from "./budget";
import { catalogCpus, catalogGpus } from "./catalog";
import { type CheckFailure, speaksV2, stackBudgetName } from "./endpoint";
import { type HourlyCost, type PodShape, podGpuCandidates, podHourlyCost, usd } from "./prices";

/** The catalog list a pod's price needs, read once per host. */
async function podPrices(settings: RunpodSettings | undefined, pod: PodShape, client?: RunpodClient) {
  const c = client ?? hostClient(settings);
  if (pod.cpu !== undefined && pod.cpu !== null) {
    return { cpus: await catalogCpus(c, settings?.restUrl, settings?.apiKey) };
  }
  return { gpus: await catalogGpus(c, settings?.restUrl, settings?.apiKey) };
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
 * `check`'s cost work for a pod: its `hourlyCost` as the arguments make it (unknown where they
 * are unknown in a preview), and the failures of the budgets it is over: `maxHourlyUsd` (its own
 * ceiling) and the stack's `runpod:maxHourlyUsd` (the sum of the ceilings of every resource this
 * host has checked, each counted once by URN). Judged before any network write.
 */
export async function checkPodCost(
  settings: RunpodSettings | undefined,
  args: Record<string, unknown>,
  key: string,
  label: string,
): Promise<{ hourlyCost?: HourlyCost | typeof UNKNOWN; failures: CheckFailure[] }> {
  const failures: CheckFailure[] = [];
  const own = isUnknown(args.maxHourlyUsd) ? {} : parseBudget(args.maxHourlyUsd, "maxHourlyUsd");
  const stackName = stackBudgetName(settings);
  const stack = parseBudget(settings?.cost?.maxHourlyUsd, stackName);
  if (stack.failure !== undefined) failures.push({ property: "", reason: stack.failure });
  const budgeted = own.usd !== undefined || stack.usd !== undefined;
  const pod = args as PodShape;
  const usable = settings?.apiKey !== undefined && speaksV2(settings);
  let cost: HourlyCost | typeof UNKNOWN | undefined;
  let unreadable: string | undefined;
  if (usable && hasCompute(pod)) {
    try {
      cost = podHourlyCost(pod, await podPrices(settings, pod));
    } catch (error) {
      unreadable = `the catalog's prices could not be read (${describeError(error)})`;
    }
  }
  if (cost === UNKNOWN) {
    forgetCeiling(key);
    return { hourlyCost: UNKNOWN, failures };
  }
  const which = own.usd !== undefined ? "maxHourlyUsd" : stackName;
  const fail = (why: string) => {
    forgetCeiling(key);
    if (budgeted) failures.push({ property: "", reason: unknownCeilingFailure(label, which, why) });
    return { ...(cost === undefined ? {} : { hourlyCost: cost }), failures };
  };
  if (cost === undefined) {
    if (!budgeted || !hasCompute(pod)) return { failures };
    return fail(unreadable ?? "the provider has no REST v2 API key to read the catalog's prices with");
  }
  if (cost.note !== undefined) return fail(cost.note);
  const ceiling = cost.ceilingUsd as number;
  const how = howOf(pod, cost.ratePerWorkerUsd as number);
  if (own.usd !== undefined && ceiling > own.usd) {
    forgetCeiling(key);
    const reason = resourceBudgetFailure(
      label,
      own.usd,
      ceiling,
      how,
      "Choose cheaper GPU types (gpu.id, fallbackGpuIds) or fewer GPUs, or raise maxHourlyUsd.",
    );
    failures.push({ property: "maxHourlyUsd", reason });
    return { hourlyCost: cost, failures };
  }
  const entry: LedgerEntry = { label, ceilingUsd: ceiling, how };
  if (stack.usd !== undefined) {
    const entries = ceilingsWith(key, entry);
    const total = entries.reduce((sum, e) => sum + e.ceilingUsd, 0);
    if (usd(total) > stack.usd) {
      forgetCeiling(key);
      failures.push({ property: "", reason: stackBudgetFailure(stack.usd, entries) });
      return { hourlyCost: cost, failures };
    }
  }
  recordCeiling(key, entry);
  return { hourlyCost: cost, failures };
}

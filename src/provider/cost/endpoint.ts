/**
 * Prices and budgets of a `ServerlessEndpoint`, for its `check` (the preview's figures and the
 * budgets' refusals) and its outputs (`hourlyCost` from the endpoint as read back). Runs in the
 * provider host; the only network call is the catalog read, once per host (`catalog.ts`).
 */
import { DEFAULT_REST_URL, type RunpodClient, resolveRestUrl } from "../../client";
import { containsUnknown, UNKNOWN } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { type CostCheck, judgeBudgets } from "./budget";
import { catalogCpus, catalogGpus } from "./catalog";
import {
  catalogNeeded,
  type EndpointShape,
  endpointHourlyCost,
  type HourlyCost,
  placedWorkerRate,
  usd,
} from "./prices";

export type { CheckFailure } from "./budget";
export { stackBudgetName, URN_INPUT } from "./budget";

/** True when `restUrl` (the default when unset) is a REST v2 URL: the catalog exists only there. */
export function speaksV2(settings: RunpodSettings): boolean {
  try {
    return resolveRestUrl(settings.restUrl ?? DEFAULT_REST_URL).dialect === "v2";
  } catch {
    return false;
  }
}

/** The catalog lists an endpoint's price needs, read once per host and bounded (`catalog.ts`). */
async function pricesFor(
  settings: RunpodSettings | undefined,
  endpoint: EndpointShape,
  client?: RunpodClient,
): Promise<{
  gpus?: Awaited<ReturnType<typeof catalogGpus>>;
  cpus?: Awaited<ReturnType<typeof catalogCpus>>;
}> {
  const need = catalogNeeded(endpoint);
  if (need === undefined) return {};
  if (need === "gpus") return { gpus: await catalogGpus(settings, client) };
  return { cpus: await catalogCpus(settings, client) };
}

/** The endpoint's `hourlyCost` from what the service holds, or undefined when the catalog cannot be read. */
export async function endpointCostOutput(
  settings: RunpodSettings | undefined,
  live: EndpointShape,
  client?: RunpodClient,
): Promise<HourlyCost | undefined> {
  try {
    const cost = endpointHourlyCost(live, await pricesFor(settings, live, client));
    return cost === UNKNOWN ? undefined : (cost as HourlyCost);
  } catch {
    return undefined;
  }
}

/**
 * The hourly rate of the worker that ran a job, for its `costUsd`: the GPU type that worker is
 * placed on (`worker`, as the release check read the endpoint's `/workers`) at its serverless
 * price × its GPU count; without it (`rollout: "ignore"`) or a price for its type, and on CPU endpoints, the
 * endpoint's dearest candidate (`hourlyCost.ratePerWorkerUsd`). Undefined when the catalog gives none.
 */
export async function runWorkerRate(
  settings: RunpodSettings | undefined,
  live: EndpointShape,
  client: RunpodClient,
  worker: { gpuTypeId?: string | null; gpuCount?: number } | undefined,
): Promise<number | undefined> {
  if (worker !== undefined && catalogNeeded(live) === "gpus") {
    try {
      const placed = placedWorkerRate(worker, (await pricesFor(settings, live, client)).gpus ?? []);
      if (placed !== undefined) return placed;
    } catch {
      // The catalog read failed: the dearest-candidate rate below fails the same way.
    }
  }
  return (await endpointCostOutput(settings, live, client))?.ratePerWorkerUsd ?? undefined;
}

/**
 * `check`'s cost work for an endpoint ({@link judgeBudgets}): its `hourlyCost` as the arguments
 * make it (unknown in a preview where they are unknown), and the failures of the budgets it is over.
 */
export const checkEndpointCost: CostCheck = (subject) => {
  const { settings } = subject;
  const endpoint = subject.args as EndpointShape;
  return judgeBudgets(subject, {
    unknownArgs:
      containsUnknown(endpoint.gpu) || containsUnknown(endpoint.cpu) || containsUnknown(endpoint.workers),
    priceable: catalogNeeded(endpoint) !== undefined,
    canRead: settings?.apiKey !== undefined && speaksV2(settings),
    price: async () => endpointHourlyCost(endpoint, await pricesFor(settings, endpoint)),
    unknownPriceFailure: "workers.max is not given, so the service decides it; set workers.max",
    how: (cost) =>
      `workers.max ${(endpoint.workers as { max: number }).max} × ${usd(cost.ratePerWorkerUsd as number)} USD/h per worker`,
    lower: "its workers.max or the GPUs per worker, or choose cheaper pools",
  });
};

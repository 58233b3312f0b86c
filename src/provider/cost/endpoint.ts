/**
 * Prices and budgets of a `ServerlessEndpoint`, for its `check` (the preview's figures and the
 * budgets' refusals) and its outputs (`hourlyCost` from the endpoint as read back). Runs in the
 * provider host; the only network call is the catalog read, once per host (`catalog.ts`).
 */
import { DEFAULT_REST_URL, type RunpodClient, resolveRestUrl } from "../../client";
import { hostClient } from "../common/host";
import { containsUnknown, isUnknown, UNKNOWN } from "../common/unknown";
import { describeError } from "../common/wording";
import { COST_KEYS, type RunpodSettings } from "../config";
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
import { catalogNeeded, type EndpointShape, endpointHourlyCost, type HourlyCost, usd } from "./prices";

/** The hidden input carrying the resource's URN to `check` (which the host does not give it). */
export const URN_INPUT = "__urn";

export interface CheckFailure {
  property: string;
  reason: string;
}

/** True when `restUrl` (the default when unset) is a REST v2 URL: the catalog exists only there. */
function speaksV2(settings: RunpodSettings): boolean {
  try {
    return resolveRestUrl(settings.restUrl ?? DEFAULT_REST_URL).dialect === "v2";
  } catch {
    return false;
  }
}

/** The name of the stack budget for a message: the config key, or the environment variable that set it. */
function stackBudgetName(settings: RunpodSettings | undefined): string {
  const where = settings?.cost?.sources.maxHourlyUsd;
  return where === "env" ? COST_KEYS.maxHourlyUsd.env : COST_KEYS.maxHourlyUsd.key;
}

/** The catalog lists an endpoint's price needs, read once per host; undefined without a client. */
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
  const c = client ?? hostClient(settings);
  if (need === "gpus") return { gpus: await catalogGpus(c, settings?.restUrl, settings?.apiKey) };
  return { cpus: await catalogCpus(c, settings?.restUrl, settings?.apiKey) };
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
 * `check`'s cost work for an endpoint: its `hourlyCost` as the arguments make it (unknown in a
 * preview where they are unknown), and the failures of the budgets it is over: `maxHourlyUsd`
 * (its own ceiling) and the stack's `runpod:maxHourlyUsd` (the sum of the ceilings of every
 * resource this host has checked, each counted once by URN). A bad budget fails naming it.
 */
export async function checkEndpointCost(
  settings: RunpodSettings | undefined,
  args: Record<string, unknown>,
  key: string,
  label: string,
): Promise<{ hourlyCost?: HourlyCost | typeof UNKNOWN; failures: CheckFailure[] }> {
  const failures: CheckFailure[] = [];
  const own = isUnknown(args.maxHourlyUsd) ? {} : parseBudget(args.maxHourlyUsd, "maxHourlyUsd");
  const stackName = stackBudgetName(settings);
  const stack = parseBudget(settings?.cost?.maxHourlyUsd, stackName);
  // A bad own budget is the argument check's failure (args.ts); a bad stack budget is said here.
  if (stack.failure !== undefined) failures.push({ property: "", reason: stack.failure });
  const budgeted = own.usd !== undefined || stack.usd !== undefined;
  const endpoint = args as EndpointShape;
  if (containsUnknown(endpoint.gpu) || containsUnknown(endpoint.cpu) || containsUnknown(endpoint.workers)) {
    forgetCeiling(key);
    return { hourlyCost: UNKNOWN, failures };
  }
  const usable = settings?.apiKey !== undefined && speaksV2(settings);
  let cost: HourlyCost | typeof UNKNOWN | undefined;
  let unreadable: string | undefined;
  if (usable && catalogNeeded(endpoint) !== undefined) {
    try {
      cost = endpointHourlyCost(endpoint, await pricesFor(settings, endpoint));
    } catch (error) {
      unreadable = `the catalog's prices could not be read (${describeError(error)})`;
    }
  }
  const which = own.usd !== undefined ? "maxHourlyUsd" : stackName;
  const fail = (why: string) => {
    forgetCeiling(key);
    if (budgeted) failures.push({ property: "", reason: unknownCeilingFailure(label, which, why) });
    return { ...(cost === undefined ? {} : { hourlyCost: cost }), failures };
  };
  if (cost === undefined) {
    if (!budgeted || catalogNeeded(endpoint) === undefined) return { failures };
    return fail(unreadable ?? "the provider has no REST v2 API key to read the catalog's prices with");
  }
  if (cost === UNKNOWN) {
    return fail("workers.max is not given, so the service decides it; set workers.max");
  }
  if (cost.note !== undefined) return fail(cost.note);
  const ceiling = cost.ceilingUsd as number;
  const max = (endpoint.workers as { max: number }).max;
  const how = `workers.max ${max} × ${usd(cost.ratePerWorkerUsd as number)} USD/h per worker`;
  if (own.usd !== undefined && ceiling > own.usd) {
    forgetCeiling(key);
    failures.push({ property: "maxHourlyUsd", reason: resourceBudgetFailure(label, own.usd, ceiling, how) });
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

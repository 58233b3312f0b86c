/**
 * What a network volume costs a month. The REST API gives no storage price, so the list price is
 * a table here, overridable by stack config `runpod:volumePricePerGbMonth` (environment
 * `RUNPOD_VOLUME_PRICE_PER_GB_MONTH`): one flat USD rate per GB-month for every volume.
 *
 * Source, checked 2026-11: RunPod's billing documentation
 * (https://docs.runpod.io/get-started/billing-information, "Network volume billing": "For storage
 * below 1TB, you'll pay $0.07 per GB per month. Above 1TB, the rate drops to $0.05 per GB per
 * month") and its serverless storage page (https://docs.runpod.io/serverless/storage/network-volumes:
 * "$0.07 per GB per month for the first 1TB, and $0.05 per GB per month for additional storage
 * beyond that"), which says the lower rate is for the GB beyond the first TB, as computed here
 * (1 TB taken as 1000 GB). Neither gives a separate figure for the `HIGH_PERFORMANCE` tier: it has
 * no list price here unless the config key sets one.
 */
import { isUnknown, UNKNOWN } from "../common/unknown";
import { COST_KEYS, type RunpodSettings } from "../config";
import { parseBudget } from "./budget";
import { usd } from "./prices";

/** GB billed at the first rate; the rest at the second. */
export const VOLUME_TIER_GB = 1000;
/** USD per GB-month for the first {@link VOLUME_TIER_GB} GB of a standard volume. */
export const VOLUME_RATE_FIRST_TB = 0.07;
/** USD per GB-month beyond {@link VOLUME_TIER_GB} GB. */
export const VOLUME_RATE_BEYOND = 0.05;

/**
 * A volume's monthly cost, USD: `size` GB at the table's rates (or the override's flat rate).
 * `{ note }` when there is no list price for its type; `{ failure }` when the override is not a
 * price (naming the key).
 */
export function volumeMonthlyCost(
  size: number,
  type: string | undefined,
  override?: { value: string; name: string },
): { usd?: number; note?: string; failure?: string } {
  if (override !== undefined) {
    const rate = parseBudget(override.value, override.name);
    if (rate.failure !== undefined) {
      return { failure: rate.failure.replace("US dollars an hour", "US dollars per GB-month") };
    }
    return { usd: usd(size * (rate.usd as number)) };
  }
  if (type !== undefined && type !== "STANDARD") {
    return {
      note:
        `no list price for ${type} network volumes: RunPod publishes none the provider can read; ` +
        "set runpod:volumePricePerGbMonth to price them",
    };
  }
  const first = Math.min(size, VOLUME_TIER_GB);
  return { usd: usd(first * VOLUME_RATE_FIRST_TB + (size - first) * VOLUME_RATE_BEYOND) };
}

/** The name of the override for a message: the config key, or the environment variable that set it. */
function overrideOf(settings: RunpodSettings | undefined): { value: string; name: string } | undefined {
  const value = settings?.cost?.volumePricePerGbMonth;
  if (value === undefined) return undefined;
  const { key, env } = COST_KEYS.volumePricePerGbMonth;
  return { value, name: settings?.cost?.sources.volumePricePerGbMonth === "env" ? env : key };
}

/**
 * A volume's `monthlyCostUsd` (and `monthlyCostNote` when there is no list price) for its
 * outputs, or for `check`'s inputs in a preview (unknown while the size or type is unknown);
 * `failure` when the configured rate is not a price.
 */
export function volumeCostFields(
  size: unknown,
  type: unknown,
  settings: RunpodSettings | undefined,
): { fields: { monthlyCostUsd?: unknown; monthlyCostNote?: string }; failure?: string } {
  if (isUnknown(size) || isUnknown(type)) return { fields: { monthlyCostUsd: UNKNOWN } };
  if (typeof size !== "number") return { fields: {} };
  const cost = volumeMonthlyCost(size, typeof type === "string" ? type : undefined, overrideOf(settings));
  if (cost.failure !== undefined) return { fields: {}, failure: cost.failure };
  if (cost.note !== undefined) return { fields: { monthlyCostUsd: null, monthlyCostNote: cost.note } };
  return { fields: { monthlyCostUsd: cost.usd } };
}

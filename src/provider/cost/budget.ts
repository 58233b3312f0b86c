/**
 * Budgets over hourly ceilings, judged in `check` (before anything that costs money is called):
 * a resource's own `maxHourlyUsd`, and the stack's `runpod:maxHourlyUsd` over the sum of the
 * ceilings of every RunPod resource the deployment checks.
 *
 * The stack sum lives in this module, in the provider host process: Pulumi runs ONE host for every
 * dynamic resource of a deployment, and the operations modules loaded there by `require` share
 * this module, so the ledger sees every resource. Each resource counts once, keyed by its URN (a
 * second check of the same resource replaces its figure).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { redact } from "../common/redaction";
import { isUnknown, UNKNOWN } from "../common/unknown";
import { describeError } from "../common/wording";
import { COST_KEYS, type RunpodSettings } from "../config";
import { type HourlyCost, usd } from "./prices";

/** The hidden input carrying the resource's URN to `check` (which the host does not give it). */
export const URN_INPUT = "__urn";

/** The stack config key of the deployment's budget. */
export const STACK_BUDGET_KEY = "runpod:maxHourlyUsd";
/** Its environment fallback. */
export const STACK_BUDGET_ENV = "RUNPOD_MAX_HOURLY_USD";

/** The wording of a bad `maxHourlyUsd` argument (the same on every resource that has one). */
const BUDGET_ARG_RULE = "maxHourlyUsd must be a number of US dollars an hour, at least 0";

/** A resource's own `maxHourlyUsd` argument: a number of US dollars an hour, at least 0. */
export const MaxHourlyUsdSchema = z
  .number({ error: BUDGET_ARG_RULE })
  .min(0, { error: BUDGET_ARG_RULE })
  .optional();

/**
 * A decimal number as people write one (`10`, `0.5`, `.5`, `2.`), nothing else: no sign, exponent,
 * hex (`0x10`, which `Number` reads as 16), `Infinity` or digit separators.
 */
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * A budget as given (a number from the program, a string from stack config or the environment),
 * or the reason it is not one: it must be a finite number of USD an hour, at least 0. A string is
 * read as a plain decimal (surrounding blanks ignored); an empty one is no budget but a mistake,
 * so it fails naming `name` rather than turning the budget off.
 */
export function parseBudget(value: unknown, name: string): { usd?: number; failure?: string } {
  if (value === undefined || value === null) return {};
  const text = typeof value === "string" ? value.trim() : undefined;
  const n =
    typeof value === "number" ? value : text !== undefined && DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) {
    const shown =
      typeof value === "string" || typeof value === "number" ? JSON.stringify(value) : typeof value;
    return {
      failure:
        `${name} must be a number of US dollars an hour, at least 0 (got ${shown === "null" ? String(value) : shown})` +
        (text === "" ? `; to have no budget, unset ${name}` : ""),
    };
  }
  return { usd: n };
}

/** One resource's part of the stack's sum. */
export interface LedgerEntry {
  /** How a message names it, e.g. `ServerlessEndpoint "api"`. */
  label: string;
  ceilingUsd: number;
  /** How the ceiling is made, e.g. `workers.max 4 × 1.1 USD/h`. */
  how?: string;
  /** What lowers it, for the advice, e.g. `its workers.max or the GPUs per worker, or cheaper pools`. */
  lower?: string;
}

const ledger = new Map<string, LedgerEntry>();

/** Records (or replaces) a resource's ceiling under its key. */
export function recordCeiling(key: string, entry: LedgerEntry): void {
  ledger.set(key, entry);
}

/** Forgets a resource (its check failed, or it has no figure any more). */
export function forgetCeiling(key: string): void {
  ledger.delete(key);
}

/** The ceilings recorded, with `key` counted as `entry` (what its check would add). */
export function ceilingsWith(key: string, entry: LedgerEntry | undefined): LedgerEntry[] {
  const all = new Map(ledger);
  if (entry === undefined) all.delete(key);
  else all.set(key, entry);
  return [...all.values()];
}

/** Empties the ledger (tests; a host serves one deployment). */
export function resetLedger(): void {
  ledger.clear();
}

const money = (n: number) => `${usd(n)} USD/h`;

/** The failure of a resource's own budget: its ceiling, how it is made, and what to change. */
export function resourceBudgetFailure(
  label: string,
  budget: number,
  ceiling: number,
  how: string,
  lower: string,
): string {
  return (
    `${label}: its hourly ceiling ${money(ceiling)} (${how}, list prices) is over maxHourlyUsd ${money(budget)}. ` +
    `Nothing was created or changed. Lower ${lower}, or raise maxHourlyUsd.`
  );
}

/**
 * The failure of the stack budget: the sum, each resource that makes it up (largest first), the
 * resource whose check took the sum over (the failure is reported under it, though the part to
 * change may be another's), and what to change: the largest part (its own advice: a pod's GPUs, an
 * endpoint's workers.max), or the budget.
 */
export function stackBudgetFailure(
  budget: number,
  entries: readonly LedgerEntry[],
  tipping?: string,
): string {
  const total = entries.reduce((sum, e) => sum + e.ceilingUsd, 0);
  const largestFirst = [...entries].sort((a, b) => b.ceilingUsd - a.ceilingUsd);
  const parts = largestFirst
    .map((e) => `${e.label} ${money(e.ceilingUsd)}${e.how ? ` (${e.how})` : ""}`)
    .join("; ");
  const largest = largestFirst[0];
  const lowerLargest = largest?.lower
    ? `Lower the largest part, ${largest.label}: ${largest.lower}; or raise`
    : "Raise";
  const reportedUnder =
    tipping === undefined || tipping === largest?.label
      ? ""
      : ` ${tipping}'s check took the sum over the budget.`;
  return (
    `${STACK_BUDGET_KEY} is ${money(budget)}, but the hourly ceilings of this deployment's RunPod resources add up to ` +
    `${money(total)} (list prices), largest first: ${parts}.${reportedUnder} Nothing was created or changed. ` +
    `${lowerLargest} the budget (pulumi config set ${STACK_BUDGET_KEY} <usd>, or the environment variable ${STACK_BUDGET_ENV}).`
  );
}

/** The failure when a budget applies but a ceiling cannot be known before the service answers. */
export function unknownCeilingFailure(label: string, what: string, why: string): string {
  return `${label}: ${what} applies, but its hourly ceiling cannot be worked out: ${why}. Nothing was created or changed.`;
}

/** The name of the stack budget for a message: the config key, or the environment variable that set it. */
export function stackBudgetName(settings: RunpodSettings | undefined): string {
  const where = settings?.cost?.sources.maxHourlyUsd;
  return where === "env" ? COST_KEYS.maxHourlyUsd.env : COST_KEYS.maxHourlyUsd.key;
}

export interface CheckFailure {
  property: string;
  reason: string;
}

/** What `check` learns of one resource's cost: its `hourlyCost` and the failures of the budgets it is over. */
export interface CostVerdict {
  hourlyCost?: HourlyCost | typeof UNKNOWN;
  failures: CheckFailure[];
}

/** The resource a cost check judges. */
export interface CostSubject {
  settings: RunpodSettings | undefined;
  /** The resource's arguments (its own `maxHourlyUsd` is read from them). */
  args: Record<string, unknown>;
  /** The resource's key in the stack's ledger (its URN). */
  key: string;
  /** How messages name it, e.g. `Pod "trainer"`. */
  label: string;
}

/** One kind of resource's cost check. */
export type CostCheck = (subject: CostSubject) => Promise<CostVerdict>;

/** How one kind of resource is priced, for {@link judgeBudgets}. */
export interface CostPricing {
  /** The arguments that decide the price are unknown (a preview): the figure is unknown, nothing is judged. */
  unknownArgs?: boolean;
  /** The arguments name something to price (compute), and the provider can read the catalog. */
  priceable: boolean;
  /** True when the provider could read the catalog (a REST v2 API key); false says why not in a failure. */
  canRead: boolean;
  /** The priced figure, read from the catalog (once per host). */
  price: () => Promise<HourlyCost | typeof UNKNOWN>;
  /** Why a price that comes back unknown fails a budget; absent, an unknown price is unknown in the preview. */
  unknownPriceFailure?: string;
  /** How the ceiling is made, for messages. */
  how: (cost: HourlyCost) => string;
  /** What lowers this resource's ceiling, for the advice (`its workers.max ...`). */
  lower: string;
}

/**
 * `check`'s cost work for one resource: its `hourlyCost` as the arguments make it, and the
 * failures of the budgets it is over: `maxHourlyUsd` (its own ceiling) and the stack's
 * `runpod:maxHourlyUsd` (the sum of the ceilings of every resource this host has checked, each
 * counted once by key). A budget that applies to a ceiling that cannot be worked out fails saying
 * why; a bad stack budget fails naming it (a bad own budget is the argument check's failure).
 * Judged before any network write; the ledger keeps this resource's figure only when it passes.
 */
export async function judgeBudgets(subject: CostSubject, pricing: CostPricing): Promise<CostVerdict> {
  const c = { ...subject, ...pricing };
  const failures: CheckFailure[] = [];
  const own = isUnknown(c.args.maxHourlyUsd) ? {} : parseBudget(c.args.maxHourlyUsd, "maxHourlyUsd");
  const stackName = stackBudgetName(c.settings);
  const stack = parseBudget(c.settings?.cost?.maxHourlyUsd, stackName);
  if (stack.failure !== undefined) failures.push({ property: "", reason: stack.failure });
  if (c.unknownArgs) {
    forgetCeiling(c.key);
    return { hourlyCost: UNKNOWN, failures };
  }
  const budgeted = own.usd !== undefined || stack.usd !== undefined;
  let cost: HourlyCost | typeof UNKNOWN | undefined;
  let unreadable: string | undefined;
  if (c.canRead && c.priceable) {
    try {
      cost = await c.price();
    } catch (error) {
      unreadable = `the catalog's prices could not be read (${describeError(error)}), so nothing was priced`;
    }
  }
  const which = own.usd !== undefined ? "maxHourlyUsd" : stackName;
  const fail = (why: string) => {
    forgetCeiling(c.key);
    if (budgeted) failures.push({ property: "", reason: unknownCeilingFailure(c.label, which, why) });
    return { ...(cost === undefined || cost === UNKNOWN ? {} : { hourlyCost: cost }), failures };
  };
  if (cost === undefined) {
    if (!c.priceable) return { failures };
    if (!budgeted) {
      // No budget to judge: the figure says why it is missing, as a price the catalog lacks does.
      return unreadable === undefined ? { failures } : { hourlyCost: unpriced(unreadable), failures };
    }
    return fail(unreadable ?? "the provider has no REST v2 API key to read the catalog's prices with");
  }
  if (cost === UNKNOWN) {
    if (c.unknownPriceFailure === undefined) {
      forgetCeiling(c.key);
      return { hourlyCost: UNKNOWN, failures };
    }
    return fail(c.unknownPriceFailure);
  }
  if (cost.note !== undefined) return fail(cost.note);
  const ceiling = cost.ceilingUsd as number;
  const how = c.how(cost);
  if (own.usd !== undefined && ceiling > own.usd) {
    forgetCeiling(c.key);
    failures.push({
      property: "maxHourlyUsd",
      reason: resourceBudgetFailure(c.label, own.usd, ceiling, how, c.lower),
    });
    return { hourlyCost: cost, failures };
  }
  const entry: LedgerEntry = { label: c.label, ceilingUsd: ceiling, how, lower: c.lower };
  if (stack.usd !== undefined) {
    const entries = ceilingsWith(c.key, entry);
    const total = entries.reduce((sum, e) => sum + e.ceilingUsd, 0);
    if (usd(total) > stack.usd) {
      forgetCeiling(c.key);
      failures.push({ property: "", reason: stackBudgetFailure(stack.usd, entries, c.label) });
      return { hourlyCost: cost, failures };
    }
  }
  recordCeiling(c.key, entry);
  return { hourlyCost: cost, failures };
}

/** A figure with no price, saying why (null figures, never 0). */
function unpriced(why: string): HourlyCost {
  return { floorUsd: null, ceilingUsd: null, ratePerWorkerUsd: null, note: why };
}

/** A priced kind of resource's `check`, for {@link pricedCheck}. */
export interface PricedCheck {
  /** The resource's class name, for messages and the ledger key when no URN came (`Pod`). */
  kind: string;
  /** The argument check (no network). */
  checkArgs: (
    settings: RunpodSettings | undefined,
    news: Record<string, unknown>,
  ) => pulumi.dynamic.CheckResult;
  /**
   * What the arguments name that only the catalog can judge (data centres), after the argument
   * check passed and before the cost; `olds` are the previous inputs.
   */
  checkCatalog?: (
    settings: RunpodSettings | undefined,
    news: Record<string, unknown>,
    olds: Record<string, unknown>,
  ) => Promise<CheckFailure[]>;
  /** The cost check of this kind of resource. */
  checkCost: CostCheck;
  /** Values a budget failure must not show (the env values and the API key). */
  secrets: (settings: RunpodSettings | undefined, news: Record<string, unknown>) => readonly string[];
}

/**
 * A priced resource's `check`: the arguments first (their failures alone when there are any), then
 * what the catalog judges (their failures alone too), then the `hourlyCost` figure and the
 * budgets, judged before anything that costs money runs. The catalog judgement and the prices are
 * read at the same time, so the check waits one catalog bound (10 s) in all. The URN
 * the resource passes for the stack budget, and the figure check itself added to earlier inputs,
 * are no arguments.
 */
export function pricedCheck(
  c: PricedCheck,
): (
  settings: RunpodSettings | undefined,
  olds: Record<string, unknown>,
  raw: Record<string, unknown>,
) => Promise<pulumi.dynamic.CheckResult> {
  return async (settings, olds, raw) => {
    const { [URN_INPUT]: urn, hourlyCost: _cost, ...news } = raw;
    const checked = c.checkArgs(settings, news);
    if ((checked.failures ?? []).length > 0) return checked;
    const secrets = c.secrets(settings, news);
    const name = typeof news.name === "string" ? news.name : undefined;
    const label = `${c.kind} ${name === undefined ? "(unnamed)" : JSON.stringify(name)}`;
    const key = typeof urn === "string" ? urn : `${c.kind}::${name ?? ""}`;
    // Both catalog reads at once, so a check waits for the catalog one bound in all, not one per list.
    const before = ledger.get(key);
    const [named, cost] = await Promise.all([
      c.checkCatalog?.(settings, news, olds) ?? Promise.resolve([]),
      c.checkCost({ settings, args: news, key, label }),
    ]);
    if (named.length > 0) {
      // The catalog's failures alone; the stack's sum is left as it was before this check.
      if (before === undefined) forgetCeiling(key);
      else recordCeiling(key, before);
      return {
        inputs: checked.inputs,
        failures: named.map((f) => ({ ...f, reason: redact(f.reason, secrets) })),
      };
    }
    const inputs =
      cost.hourlyCost === undefined ? checked.inputs : { ...checked.inputs, hourlyCost: cost.hourlyCost };
    return { inputs, failures: cost.failures.map((f) => ({ ...f, reason: redact(f.reason, secrets) })) };
  };
}

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
import { usd } from "./prices";

/** The stack config key of the deployment's budget. */
export const STACK_BUDGET_KEY = "runpod:maxHourlyUsd";
/** Its environment fallback. */
export const STACK_BUDGET_ENV = "RUNPOD_MAX_HOURLY_USD";

/**
 * A budget as given (a number from the program, a string from stack config or the environment),
 * or the reason it is not one: it must be a finite number of USD an hour, at least 0.
 */
export function parseBudget(value: unknown, name: string): { usd?: number; failure?: string } {
  if (value === undefined || value === null) return {};
  const text = typeof value === "string" ? value.trim() : undefined;
  const n = typeof value === "number" ? value : text !== undefined && text !== "" ? Number(text) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) {
    const shown =
      typeof value === "string" || typeof value === "number" ? JSON.stringify(value) : typeof value;
    return {
      failure: `${name} must be a number of US dollars an hour, at least 0 (got ${shown === "null" ? String(value) : shown})`,
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
export function resourceBudgetFailure(label: string, budget: number, ceiling: number, how: string): string {
  return (
    `${label}: its hourly ceiling ${money(ceiling)} (${how}, list prices) is over maxHourlyUsd ${money(budget)}. ` +
    "Nothing was created or changed. Lower workers.max or the GPUs per worker, choose cheaper pools, or raise maxHourlyUsd."
  );
}

/** The failure of the stack budget: the sum, each resource that makes it up, and what to change. */
export function stackBudgetFailure(budget: number, entries: readonly LedgerEntry[]): string {
  const total = entries.reduce((sum, e) => sum + e.ceilingUsd, 0);
  const parts = entries
    .map((e) => `${e.label} ${money(e.ceilingUsd)}${e.how ? ` (${e.how})` : ""}`)
    .join("; ");
  return (
    `${STACK_BUDGET_KEY} is ${money(budget)}, but the hourly ceilings of this deployment's RunPod resources add up to ` +
    `${money(total)} (list prices): ${parts}. Nothing was created or changed. Lower a workers.max, or raise the budget ` +
    `(pulumi config set ${STACK_BUDGET_KEY} <usd>, or the environment variable ${STACK_BUDGET_ENV}).`
  );
}

/** The failure when a budget applies but a ceiling cannot be known before the service answers. */
export function unknownCeilingFailure(label: string, what: string, why: string): string {
  return `${label}: ${what} applies, but its hourly ceiling cannot be worked out: ${why}. Nothing was created or changed.`;
}

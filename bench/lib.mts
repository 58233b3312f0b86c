/**
 * Shared parts of the benchmarks: the built package (`dist/`, loaded with `require` because the
 * package is CommonJS), statistics, rows of the results table, and small timing helpers.
 *
 * Every figure is measured on 127.0.0.1 in this process or in child processes this module starts;
 * nothing here uses the network beyond the loopback interface.
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const REPO_DIR: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const require = createRequire(import.meta.url);

/** The built package root (`dist/index.js`): RunpodClient, startEmulator, the error classes. */
export const pkg: typeof import("../src/index.ts") = require("../dist/index.js");
/** JobRun's execution logic, exactly as the provider runs it (`dist/provider/smokeTestJob/run.js`). */
export const jobRunLogic: typeof import("../src/provider/smokeTestJob/run.ts") = require("../dist/provider/smokeTestJob/run.js");
/** JobRun's rollout wait (`waitForRollout`), as the provider runs it (`dist/provider/smokeTestJob/staleWorkers.js`). */
export const rolloutLogic: typeof import("../src/provider/smokeTestJob/staleWorkers.ts") = require("../dist/provider/smokeTestJob/staleWorkers.js");
/** JobRun's argument resolution (defaults applied), as the provider runs it. */
export const jobRunArgs: typeof import("../src/provider/smokeTestJob/jobArgs.ts") = require("../dist/provider/smokeTestJob/jobArgs.js");
/** The service's limits table and constants. */
export const limits: typeof import("../src/client/limits.ts") = require("../dist/client/limits.js");
/** undici, the HTTP client the package itself uses (same copy). */
export const undici: typeof import("undici") = require("undici");

/** One row of the results table and of `bench/results.json`. */
export interface ResultRow {
  /** What was measured, including the contender ("ours", "runpod-sdk", ...). */
  name: string;
  value: number;
  unit: string;
  /** The contender compared against, when there is one. */
  peer?: string;
  peerValue?: number;
  /** value / peerValue as measured (for rates: the median of per-round ratios); else computed. */
  ratio?: number;
  /** The target from DESIGN.md, as text (e.g. "<= 50 ms"). */
  target?: string;
  /** Whether `value` meets `target` (absent when there is no target). */
  meetsTarget?: boolean;
}

/**
 * `n` start delays in 0..`spanMs`, stratified: one uniform in each n-th of the span, in a random
 * order, so that few trials still cover every phase of a periodic poll evenly.
 */
export function stratifiedDelays(n: number, spanMs: number): number[] {
  const delays = Array.from({ length: n }, (_, i) => ((i + Math.random()) / n) * spanMs);
  for (let i = delays.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [delays[i], delays[j]] = [delays[j] as number, delays[i] as number];
  }
  return delays;
}

/**
 * `n` trials one after another, trial `i` (1-based) started after its own stratified delay in
 * 0..`spanMs` ({@link stratifiedDelays}).
 */
export async function staggeredTrials<T>(
  n: number,
  spanMs: number,
  trial: (i: number, delayMs: number) => Promise<T>,
): Promise<T[]> {
  const delays = stratifiedDelays(n, spanMs);
  const trials: T[] = [];
  for (let i = 0; i < n; i++) trials.push(await trial(i + 1, delays[i] as number));
  return trials;
}

/**
 * A row maker for two contenders' trials side by side: `row(name, unit, pick, how)` is `how`
 * (the median by default) of `pick` over ours, beside the same over the peer's.
 */
export function sideBySide<T>(ours: T[], peer: T[], peerLabel: string) {
  return (
    name: string,
    unit: string,
    pick: (t: T) => number,
    how: (values: number[]) => number = median,
  ) => ({
    name,
    value: how(ours.map(pick)),
    unit,
    peer: peerLabel,
    peerValue: how(peer.map(pick)),
  });
}

/** The largest of `values`. */
export const maxOf = (values: number[]): number => Math.max(...values);

/** Median of `values` (NaN when empty). */
export function median(values: number[]): number {
  return quantile(values, 0.5);
}

/** The q-quantile (0..1) of `values` with linear interpolation (NaN when empty). */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Formats a number for the table: thousands separators, up to `digits` decimals. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined) return "";
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** Renders rows as a Markdown table: measure, ours, peer, peer value, ratio, target. */
export function renderTable(rows: ResultRow[]): string {
  const header = ["Measure", "Value", "Peer", "Peer value", "Ratio", "Target"];
  const lines = rows.map((r) => {
    const ratio =
      r.ratio !== undefined
        ? `${fmt(r.ratio, 2)}x`
        : r.peerValue !== undefined && r.peerValue !== 0 && Number.isFinite(r.value)
          ? `${fmt(r.value / r.peerValue, 2)}x`
          : "";
    const target = r.target === undefined ? "" : `${r.target} ${r.meetsTarget ? "(met)" : "(MISSED)"}`;
    return [
      r.name,
      `${fmt(r.value)} ${r.unit}`,
      r.peer ?? "",
      r.peerValue === undefined ? "" : `${fmt(r.peerValue)} ${r.unit}`,
      ratio,
      target,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [row(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(row)].join("\n");
}

/**
 * An emulator handler that sleeps `input.ms` + `input.jitterMs` (abortable), records in `finishedAt`
 * (by job id) the `performance.now()` at which it returns, and answers `{ slept }`.
 */
export function timedWorker(finishedAt: Map<string, number>) {
  return async (job: { id: string; input: Record<string, unknown> }, ctx: { signal: AbortSignal }) => {
    const ms = Number(job.input.ms) + Number(job.input.jitterMs ?? 0);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        },
        { once: true },
      );
    });
    finishedAt.set(job.id, performance.now());
    return { slept: ms };
  };
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `tasks` with at most `limit` in flight; resolves to their results in order. */
export async function pool<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Writes one progress line to stderr (the table goes to stdout). */
export function progress(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

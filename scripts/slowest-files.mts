/**
 * The slowest test files of a run, from vitest's JSON report (`--reporter=json`), so the suite's
 * growth shows at the end of every CI run (`.ci/run` prints it before its last line):
 *
 * ```
 * node scripts/slowest-files.mts report.json [N]
 * ```
 *
 * prints `slowest N test files (of M, S s summed over files):` and one line per file, slowest
 * first: its seconds, its share of the summed file time, its test count and its path relative to
 * the repository. A file's time is its `endTime - startTime` in the report (its run in its worker,
 * imports and hooks included). N defaults to 10. A report it cannot read prints one line saying so
 * and exits 0: the list informs, it never fails a run.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The part of one file's entry in vitest's JSON report that the list reads. */
interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
  assertionResults?: unknown[];
}

/** One row of the list. */
export interface SlowFile {
  /** Relative to `root` when inside it. */
  file: string;
  ms: number;
  tests: number;
}

/** The `n` slowest files of `report` (vitest's JSON report, parsed), slowest first, and the sum over all files. */
export function slowestFiles(
  report: { testResults?: FileResult[] },
  n = 10,
  root = process.cwd(),
): { files: SlowFile[]; totalMs: number; count: number } {
  const all = (report.testResults ?? []).map((r) => {
    const relative = path.relative(root, r.name);
    return {
      file:
        relative.startsWith("..") || path.isAbsolute(relative) ? r.name : relative.split(path.sep).join("/"),
      ms: Math.max(0, r.endTime - r.startTime),
      tests: r.assertionResults?.length ?? 0,
    };
  });
  const totalMs = all.reduce((sum, f) => sum + f.ms, 0);
  const files = all.sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file)).slice(0, n);
  return { files, totalMs, count: all.length };
}

/** The list as printed: a heading, then `  <s> s  <share>%  <tests> tests  <file>` per file. */
export function slowestFilesText(list: ReturnType<typeof slowestFiles>): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const width = Math.max(0, ...list.files.map((f) => seconds(f.ms).length));
  const lines = list.files.map((f) => {
    const share = list.totalMs > 0 ? Math.round((f.ms / list.totalMs) * 100) : 0;
    return `  ${seconds(f.ms).padStart(width)} s  ${String(share).padStart(3)}%  ${String(f.tests).padStart(4)} tests  ${f.file}`;
  });
  return [
    `slowest ${list.files.length} test files (of ${list.count}, ${seconds(list.totalMs)} s summed over files):`,
    ...lines,
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [reportFile, count] = process.argv.slice(2);
  try {
    if (!reportFile) throw new Error("usage: node scripts/slowest-files.mts report.json [N]");
    const n = count === undefined ? 10 : Number(count);
    if (!Number.isInteger(n) || n < 1) throw new Error(`N must be a whole number from 1; got ${count}`);
    const report = JSON.parse(readFileSync(reportFile, "utf8"));
    console.log(slowestFilesText(slowestFiles(report, n)));
  } catch (e) {
    console.log(`slowest test files: not listed (${e instanceof Error ? e.message : String(e)})`);
  }
}

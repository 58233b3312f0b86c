/**
 * The slowest-files list `.ci/run` prints at the end of every run (scripts/slowest-files.mts),
 * read from a vitest JSON report.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { slowestFiles, slowestFilesText } from "../../scripts/slowest-files.mts";

const root = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(root, "scripts", "slowest-files.mts");

/** A report of `count` files, file i taking i seconds and holding i tests. */
function report(count: number) {
  return {
    numPassedTests: 0,
    testResults: Array.from({ length: count }, (_, i) => ({
      name: path.join(root, "test", `f${i + 1}.test.ts`),
      startTime: 1_000_000,
      endTime: 1_000_000 + (i + 1) * 1000,
      assertionResults: Array.from({ length: i + 1 }, () => ({ status: "passed" })),
    })),
  };
}

describe("the slowest test files of a run", () => {
  it("lists the ten slowest of twelve files, slowest first, with seconds, share, tests and path", () => {
    const list = slowestFiles(report(12), 10, root);
    expect(list.count).toBe(12);
    expect(list.totalMs).toBe(78_000);
    expect(list.files.map((f) => f.file)).toEqual(
      [12, 11, 10, 9, 8, 7, 6, 5, 4, 3].map((i) => `test/f${i}.test.ts`),
    );
    const text = slowestFilesText(list).split("\n");
    expect(text[0]).toBe("slowest 10 test files (of 12, 78.0 s summed over files):");
    expect(text[1]).toBe("  12.0 s   15%    12 tests  test/f12.test.ts");
    expect(text[10]).toBe("   3.0 s    4%     3 tests  test/f3.test.ts");
    expect(text).toHaveLength(11);
  });

  it("prints the list from a report file, and one line (exit 0) when the report cannot be read", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "slowest-"));
    try {
      const file = path.join(dir, "report.json");
      await writeFile(file, JSON.stringify(report(3)));
      const run = (...args: string[]) =>
        promisify(execFile)(process.execPath, [SCRIPT, ...args], { cwd: root }).then((r) => r.stdout);
      expect(await run(file, "2")).toBe(
        "slowest 2 test files (of 3, 6.0 s summed over files):\n" +
          "  3.0 s   50%     3 tests  test/f3.test.ts\n" +
          "  2.0 s   33%     2 tests  test/f2.test.ts\n",
      );
      expect(await run(path.join(dir, "missing.json"))).toMatch(
        /^slowest test files: not listed \(ENOENT: no such file or directory, open '.*missing\.json'\)\n$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A vitest reporter (beside "default" in vitest.config.mts) that ends the run with one line per
 * skipped test and why: the real-CLI scenarios skip without a `pulumi` on PATH,
 * and the default reporter alone only counts them. The reason is the test's note
 * (`ctx.skip(note)`) or, for `skipIf`, the "(requires ...)" part of its name.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class SkipReasons implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines: string[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests("skipped")) {
        const r = t.result();
        const note = r.state === "skipped" ? r.note : undefined;
        lines.push(`  ${m.relativeModuleId} > ${t.fullName}${note ? ` (${note})` : ""}`);
      }
    }
    if (lines.length === 0) return;
    process.stdout.write(`\nSkipped tests and why (${lines.length}):\n${lines.join("\n")}\n`);
  }
}

/**
 * Facts about the installed (packed) package that decide whether a scenario can pass yet.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";

/**
 * True when the installed package's providers attach `reasons` to a partial failure (an error
 * with `id`): the only text the engine prints for it (test/support/README.md, rule 1). Read from
 * the compiled provider code, since a failing JobRun is the only way to see it at run time.
 */
export function providerSetsReasons(projectDir: string): boolean {
  const dir = path.join(projectDir, "node_modules", "pulumi-runpod-dynamic", "dist", "provider");
  const walk = (d: string): boolean =>
    readdirSync(d, { withFileTypes: true }).some((e) =>
      e.isDirectory()
        ? walk(path.join(d, e.name))
        : e.name.endsWith(".js") && /\breasons\b/.test(readFileSync(path.join(d, e.name), "utf8")),
    );
  return walk(dir);
}

/**
 * The fast tier, `npm run test:fast`: the client, wire, emulator and provider unit tests, in about
 * a minute. `npm test` (vitest.config.mts) still runs every test, this tier included.
 *
 * A test file is left out by what it starts, read from its source: a Pulumi provider host, the
 * deploy harness (with its program process), the real `pulumi` CLI, or the packed package installed
 * into a temp project (`inject("installedProjectDir")`, which only the full run's globalSetup
 * provides). Those are the host, harness, e2e, package, reliability and support self-tests. Tests
 * that start an in-process emulator, a scripted server or a short `node` child stay in.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import base from "./vitest.config.mts";

const root = path.dirname(fileURLToPath(import.meta.url));

/** The folders of the fast tier. */
const FAST_DIRS = ["test/client", "test/wire", "test/emulator", "test/provider"];

/** What a test file's source says when it starts something only the full tier runs. */
const SLOW_MARKERS: ReadonlyArray<RegExp> = [
  /\binstalledProjectDir\b/, // the packed package installed by the full run's globalSetup
  /\bstartProviderHost\b/, // Pulumi's dynamic-provider host over gRPC
  /\bstartJobRunHost\b/, // the same, through test/provider/jobRunHostKit.ts
  /\bendpointHostKit\b/, // the same, through test/provider/serverlessEndpointHostKit.ts
  /\bcreateDeployHarness\b|deployHarness\.mts/, // the deploy harness and its program process
  /pulumiCli\.mts/, // the real pulumi CLI
];

/** The test files of `dirs` whose source carries none of {@link SLOW_MARKERS}, relative to the root. */
export function fastTestFiles(dirs: ReadonlyArray<string> = FAST_DIRS): string[] {
  const files: string[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(path.join(root, dir), { recursive: true, encoding: "utf8" });
    } catch {
      continue; // a folder this checkout does not have
    }
    for (const name of names.sort()) {
      if (!name.endsWith(".test.ts")) continue;
      const file = path.posix.join(dir, name.split(path.sep).join("/"));
      const source = readFileSync(path.join(root, file), "utf8");
      if (!SLOW_MARKERS.some((marker) => marker.test(source))) files.push(file);
    }
  }
  return files;
}

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    // Replaced, not merged: the base config's include and globalSetup (which packs and installs the
    // package, a full-tier cost) are not this tier's.
    include: fastTestFiles(),
    globalSetup: ["test/support/buildSetup.ts"],
    // One module graph per worker, reused across files: half the time of a fresh one per file
    // (about 55 s instead of 112 s on 2 cores), since this tier is mostly short files whose cost is
    // their imports. The files restore what they change (env, Pulumi mocks), and `npm test` runs
    // them all again isolated, so a leak between files still shows there.
    isolate: false,
  },
});

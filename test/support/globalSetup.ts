/**
 * vitest globalSetup (referenced by vitest.config.mts): once per `vitest run`, builds `dist/` if it
 * is missing or older than `src/` (`npm test` already builds in `pretest`), packs the repo and
 * installs the tarball into a temp project (see `packedPackage.mts`), then provides its path:
 *
 * ```ts
 * import { inject } from "vitest";
 * const projectDir = inject("installedProjectDir");  // os.tmpdir()/runpod-pkg-XXXX
 * ```
 *
 * The project is removed in teardown. Nothing here uses the network. It also turns on Node's compile
 * cache for every process of the run (`compileCache.mts`).
 */
import type { TestProject } from "vitest/node";
import { useCompileCache } from "./compileCache.mts";
import { installPackedPackage } from "./packedPackage.mts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Temp project whose node_modules/pulumi-runpod-dynamic is the packed package. */
    installedProjectDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  useCompileCache();
  const installed = await installPackedPackage();
  project.provide("installedProjectDir", installed.projectDir);
  return async () => {
    await installed.cleanup();
  };
}

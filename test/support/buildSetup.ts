/**
 * vitest globalSetup of the fast tier (vitest.fast.config.mts): builds `dist/` when it is missing
 * or older than `src/`, as the full run's globalSetup does, since the sources load the built client
 * lazily and the emulator CLI tests run `dist/emulator/cli.js`. It packs and installs nothing. Node's
 * compile cache is on for the run's processes (`compileCache.mts`).
 */
import { useCompileCache } from "./compileCache.mts";
import { ensureBuilt } from "./packedPackage.mts";

export default async function setup(): Promise<void> {
  useCompileCache();
  await ensureBuilt();
}

/**
 * `__provider` size per resource type, as users get it: the repo is packed (`npm pack`) and
 * installed into a temp project (`test/support/packedPackage.mts`), and each provider is
 * serialized there the way `pulumi.dynamic.Resource` does (`test/support/serializedProvider.mts`).
 */
import { installPackedPackage } from "../test/support/packedPackage.mts";
import {
  PROVIDER_MODULES,
  type ProviderKind,
  serializedProvider,
} from "../test/support/serializedProvider.mts";
import { progress, type ResultRow } from "./lib.mts";

/** DESIGN.md's target, bytes. */
export const PROVIDER_SIZE_TARGET_BYTES = 8 * 1024;

export async function benchProviderSize(): Promise<ResultRow[]> {
  progress("__provider size: packing and installing the package into a temp project");
  const installed = await installPackedPackage({ build: false });
  try {
    const rows: ResultRow[] = [];
    // Every kind the package ships (the test support's list), so a new resource is measured too.
    for (const kind of Object.keys(PROVIDER_MODULES) as ProviderKind[]) {
      const bytes = Buffer.byteLength(await serializedProvider(installed.projectDir, kind), "utf8");
      rows.push({
        name: `__provider size, ${kind} (installed package)`,
        value: bytes,
        unit: "bytes",
        target: "<= 8 KB (8192 bytes)",
        meetsTarget: bytes <= PROVIDER_SIZE_TARGET_BYTES,
      });
    }
    return rows;
  } finally {
    await installed.cleanup();
  }
}

/** `node bench/providerSize.mts` runs this section alone and prints its rows (about 10 s). */
if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchProviderSize())}\n`);
}

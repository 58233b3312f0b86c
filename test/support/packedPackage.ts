/**
 * Re-export of `packedPackage.mts` for CommonJS test files (`import { installPackedPackage } from
 * "../support/packedPackage"`). The implementation is an ES module so that scripts run by Node 24
 * directly (demo, bench) can import it too: `import ... from "../test/support/packedPackage.mts"`.
 */
export * from "./packedPackage.mts";

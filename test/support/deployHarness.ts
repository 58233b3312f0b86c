/**
 * Re-export of `deployHarness.mts` for CommonJS test files (`import { createDeployHarness } from
 * "../support/deployHarness"`). Scripts run by Node 24 import the `.mts` file directly.
 */
export * from "./deployHarness.mts";

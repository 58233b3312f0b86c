/**
 * Re-export of `serializedProvider.mts` for CommonJS test files (`import { serializedProvider }
 * from "../support/serializedProvider"`). See that file for how the string is produced.
 */
export * from "./serializedProvider.mts";

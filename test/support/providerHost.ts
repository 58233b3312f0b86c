/**
 * Re-export of `providerHost.mts` for CommonJS test files (`import { startProviderHost, urnFor,
 * HostError } from "../support/providerHost"`). See that file for the API and its behaviour.
 */
export * from "./providerHost.mts";

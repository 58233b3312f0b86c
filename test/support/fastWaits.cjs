/**
 * Preloaded into a provider host by `startProviderHost({ pollMs, retryBackoffMs })` (through
 * `NODE_OPTIONS` `--require`, so it runs before the host loads anything), for tests that would
 * otherwise wait out whole seconds of plain waiting:
 *
 * - `PROVIDER_HOST_POLL_MS`: the provider's wait polls, an endpoint's rollout (`ROLLOUT_POLL_MS`)
 *   and a pod's readiness (`POLL_INTERVAL_MS`), 1 s each, read this often instead (an emulator
 *   with short rollouts and pod starts);
 * - `PROVIDER_HOST_BACKOFF_MS`: the client's retry backoff starts at this step instead of 0.5 s
 *   (`INITIAL_BACKOFF_MS`), and its longest step is 16 of them as 8 s is of 0.5 s
 *   (`MAX_BACKOFF_MS`); a server's `Retry-After` is still waited in full;
 * - `PROVIDER_HOST_RELIST_WINDOW_MS`: after a create's lost answer, the provider re-lists for this
 *   long instead of 10 s (`RELIST_WINDOW_MS`, managedCreate), for a test whose object never
 *   appears and would otherwise wait out the whole window (the window's own rule is tested on a
 *   fake clock in `managedCreate.test.ts`);
 * - `PROVIDER_HOST_CREATE_PAUSE_MS`: after a create answered 429 or 503 without a `Retry-After`,
 *   the provider pauses this long (doubling as it does) before listing to see whether the create
 *   landed, instead of 1 s (`SETTLE_FIRST_PAUSE_MS`, managedCreate), for a test of the outcome, not
 *   of the pause (whose base and doubling `managedCreate.test.ts` asserts on a fake sleep);
 * - `PROVIDER_HOST_RETRY_AFTER_CAP_MS`: the client waits at most this long for a server's
 *   `Retry-After` (or used-up `RateLimit` window) instead of 60 s (`MAX_RETRY_AFTER_MS`), for a
 *   test of outcomes under many injected `Retry-After: 1` answers, not of the wait (which the
 *   client's own tests cover: `retryAfter.test.ts`);
 * - `PROVIDER_HOST_READ_BOUND_MS`: a bounded read (check's catalog lists, a registry credential's
 *   delete lists: `READ_BOUND_MS`, and the catalog client's request timeout,
 *   `CATALOG_READ_BOUND_MS`) gives up after this long instead of 10 s, for a test of a service that
 *   never answers (the bound's own rule is tested on a fake clock in `catalogBound.test.ts`).
 *
 * Nothing else changes: every other bound and deadline and the client's timeouts keep their real time.
 * The constants are exported and read through `exports` where they are used (tsc's CommonJS
 * output), so setting them here, on the one module instance the provider then loads, is what the
 * provider reads; a constant that is gone fails the host's start, loudly.
 */
"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");
// Resolved as a file in the host's working directory resolves it: the installed package the
// provider runs. (A plain `require` here would resolve the package name to this repository itself,
// whose name it is: Node's self-reference.)
const fromCwd = createRequire(path.join(process.cwd(), "[fastWaits]"));
const load = (file) => fromCwd(`pulumi-runpod-dynamic/dist/${file}`);

function setting(name) {
  const text = process.env[name];
  if (text === undefined) return undefined;
  const ms = Number(text);
  if (!(Number.isInteger(ms) && ms > 0))
    throw new Error(`${name} must be a whole number of ms from 1; got ${text}`);
  return ms;
}

function set(module, name, value) {
  if (typeof module[name] !== "number") throw new Error(`fastWaits: the package has no ${name} to set`);
  module[name] = value;
}

const pollMs = setting("PROVIDER_HOST_POLL_MS");
if (pollMs !== undefined) {
  set(load("provider/smokeTestJob/staleWorkers.js"), "ROLLOUT_POLL_MS", pollMs);
  set(load("provider/pod/wait.js"), "POLL_INTERVAL_MS", pollMs);
}
const backoffMs = setting("PROVIDER_HOST_BACKOFF_MS");
if (backoffMs !== undefined) {
  const retry = load("client/retry.js");
  set(retry, "INITIAL_BACKOFF_MS", backoffMs);
  set(retry, "MAX_BACKOFF_MS", backoffMs * 16);
}
const relistWindowMs = setting("PROVIDER_HOST_RELIST_WINDOW_MS");
if (relistWindowMs !== undefined)
  set(load("provider/common/managedCreate.js"), "RELIST_WINDOW_MS", relistWindowMs);
const createPauseMs = setting("PROVIDER_HOST_CREATE_PAUSE_MS");
if (createPauseMs !== undefined)
  set(load("provider/common/managedCreate.js"), "SETTLE_FIRST_PAUSE_MS", createPauseMs);
const retryAfterCapMs = setting("PROVIDER_HOST_RETRY_AFTER_CAP_MS");
if (retryAfterCapMs !== undefined) set(load("client/retry.js"), "MAX_RETRY_AFTER_MS", retryAfterCapMs);
const readBoundMs = setting("PROVIDER_HOST_READ_BOUND_MS");
if (readBoundMs !== undefined) {
  set(load("provider/common/boundedRead.js"), "READ_BOUND_MS", readBoundMs);
  set(load("provider/cost/catalog.js"), "CATALOG_READ_BOUND_MS", readBoundMs);
}

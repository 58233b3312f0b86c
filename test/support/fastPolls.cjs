/**
 * Preloaded into a provider host by `startProviderHost({ pollMs })` (through `NODE_OPTIONS`
 * `--require`, so it runs before the host loads anything): the provider's wait polls, an endpoint's
 * rollout (`ROLLOUT_POLL_MS`) and a pod's readiness (`POLL_INTERVAL_MS`), 1 s each, read every
 * `PROVIDER_HOST_POLL_MS` ms instead, so a test against an emulator with short rollouts and pod
 * starts does not wait out whole seconds between reads. Only the poll intervals change: every bound
 * and deadline, the client's timeouts and its retry pauses keep their real time. The constants are
 * exported and read through `exports` where they are used (tsc's CommonJS output), so setting them
 * here, on the one module instance the provider then loads, is what the provider reads.
 */
"use strict";
const ms = Number(process.env.PROVIDER_HOST_POLL_MS);
if (!(Number.isInteger(ms) && ms > 0)) {
  throw new Error(
    `PROVIDER_HOST_POLL_MS must be a whole number of ms from 1; got ${process.env.PROVIDER_HOST_POLL_MS}`,
  );
}
const load = (file) =>
  require(require.resolve(`pulumi-runpod-dynamic/dist/provider/${file}`, { paths: [process.cwd()] }));
const polls = [
  [load("release/rollout.js"), "ROLLOUT_POLL_MS"],
  [load("pod/wait.js"), "POLL_INTERVAL_MS"],
];
for (const [module, name] of polls) {
  if (typeof module[name] !== "number") throw new Error(`fastPolls: the provider has no ${name} to shorten`);
  module[name] = ms;
}

/**
 * Shared parts of the guarded-release benchmarks (`gateOverhead.mts`, `gateRollback.mts`): the
 * provider's own operations from `dist/` (ServerlessEndpoint's create/update, JobRun's create and
 * the gate), called in this process as the provider host calls them, against an in-process
 * emulator with real timers; an endpoint made through them; and a wait for a settled endpoint.
 */
import { createRequire } from "node:module";
import type { RunningEmulator } from "../src/emulator/index.ts";
import type { RunpodClient } from "../src/index.ts";
import type { RunpodSettings } from "../src/provider/config.ts";
import { delay, pkg } from "./lib.mts";

const require = createRequire(import.meta.url);

/** ServerlessEndpoint's provider operations (create, update: rollout wait, gate, rollback). */
export const endpointOps: typeof import("../src/provider/serverlessEndpoint/operations.ts") = require("../dist/provider/serverlessEndpoint/operations.js");
/** JobRun's provider operations (createJobRun: the job with its release check). */
export const jobRunOps: typeof import("../src/provider/jobRun/operations.ts") = require("../dist/provider/jobRun/operations.js");
/** The gate itself (runGate, SmokeTestSchema), as the update runs it. */
export const gateLogic: typeof import("../src/provider/serverlessEndpoint/smokeTest.ts") = require("../dist/provider/serverlessEndpoint/smokeTest.js");

/** Warm workers of the bench endpoint. */
export const WORKERS = 2;
/**
 * Stale workers serve this long after a release, then are replaced one at a time (each successor
 * starts in 500 ms): with 2 workers the last stale one goes about 1.5 s after the PATCH, half-way
 * between the wait's reads at 1 s and 2 s, so the poll phase moves no trial by a whole read.
 */
export const ROLLOUT_MS = 1000;

/** The smoke-test job: the emulator's built-in worker returns `output`. */
export const JOB = {
  input: { prompt: "ping", output: { reply: "pong" } },
  expect: { output: { reply: "pong" } },
};

/** The endpoint's inputs as a program gives them, with `extra` on top. */
export function endpointInputs(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    type: "QUEUE",
    image: "acme/api:0",
    env: { MODEL: "small" },
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: WORKERS },
    rollout: "wait",
    rolloutTimeoutMs: 60_000,
    ...extra,
  };
}

/** An emulator with no endpoint, its client and the provider's settings for it. */
export interface GateBed {
  emu: RunningEmulator;
  client: RunpodClient;
  settings: RunpodSettings;
  close(): Promise<void>;
}

/** Starts an emulator (real timers, {@link ROLLOUT_MS}) for one contender. */
export async function startBed(apiKey: string): Promise<GateBed> {
  const emu = await pkg.startEmulator({ apiKeys: [apiKey], endpoints: [], rolloutMs: ROLLOUT_MS });
  const client = new pkg.RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrlV2,
    serverlessUrl: emu.serverlessUrl,
  });
  const settings = { apiKey: emu.apiKey, restUrl: emu.restUrlV2, serverlessUrl: emu.serverlessUrl };
  return { emu, client, settings, close: () => emu.close() };
}

/** Resolves once every worker of `endpointId` is IDLE on the endpoint's current version. */
export async function settle(client: RunpodClient, endpointId: string): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    const list = await client.serverless.workers(endpointId);
    if (list.workers.length === WORKERS && list.workers.every((w) => w.status === "IDLE" && !w.isStale))
      return;
    if (Date.now() > until)
      throw new Error(`gate bench: ${endpointId} did not settle: ${JSON.stringify(list.summary)}`);
    await delay(50);
  }
}

const REPLACED = /^worker stopping: replaced by a worker of version (\d+)$/;

/**
 * When the last of `workerIds` was replaced by a worker of `version` (ms, the emulator's clock),
 * from their closed logs: the moment that release was on every worker (none stale).
 */
export async function lastReplacement(
  client: RunpodClient,
  endpointId: string,
  workerIds: string[],
  version: number,
): Promise<number> {
  let last = Number.NEGATIVE_INFINITY;
  for (const workerId of workerIds) {
    let at: number | undefined;
    for await (const event of client.serverless.workerLogs(endpointId, workerId, {
      tail: 30,
      source: "system",
      signal: AbortSignal.timeout(5000),
    })) {
      const m = REPLACED.exec(event.line);
      if (m && Number(m[1]) === version) at = Date.parse(event.ts);
    }
    if (at === undefined)
      throw new Error(`gate bench: worker ${workerId} was not replaced by version ${version}`);
    last = Math.max(last, at);
  }
  return last;
}

/** When the service made release `version` of `endpointId` (its `createdAt`, ms). */
export async function releasedAt(client: RunpodClient, endpointId: string, version: number): Promise<number> {
  const { releases } = await client.serverless.releases(endpointId);
  const release = releases.find((r) => r.version === version);
  if (release?.createdAt === undefined)
    throw new Error(`gate bench: ${endpointId} has no release ${version} with a createdAt`);
  return Date.parse(release.createdAt);
}

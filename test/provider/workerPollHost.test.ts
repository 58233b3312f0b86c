/**
 * One poll per endpoint through Pulumi's real dynamic-provider host, from the packed
 * package: 16 JobRuns on one endpoint wait for the same held rollout in one host, and the
 * emulator counts the management requests they make while they wait: the shared loop reads the
 * workers about once a second in all, where each JobRun used to read once a second on its own
 * (16 a second). The rollout is held on the emulator's ManualClock until every JobRun is seen
 * waiting, then released; all 16 then test the new release.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import type { ProviderHost } from "../support/providerHost.mts";
import { createPassing, startJobRunHost } from "./jobRunHostKit";

const ROLLOUT_MS = 3_000;
const WAITERS = 16;
/** Real time over which the reads are counted while all waiters wait, in ms. */
const WINDOW_MS = 3_000;

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;
const clock = new ManualClock();

beforeAll(async () => {
  emu = await startEmulator({
    clock,
    rolloutMs: ROLLOUT_MS,
    endpoints: ["shared:2"],
    handlers: {
      shared: (_job: unknown, ctx: { worker: { id: string; version: number } }) => ({
        version: ctx.worker.version,
      }),
    },
  });
  client = new RunpodClient({ apiKey: emu.apiKey, serverlessUrl: emu.serverlessUrl, restUrl: emu.restUrl });
  host = await startJobRunHost(emu);
});

afterAll(async () => {
  await host?.close();
  await emu?.close();
});

const waitingLines = () =>
  host
    .stderr()
    .split("\n")
    .filter((l) => l.startsWith("JobRun endpoint shared: waiting for version 2 to roll out")).length;

async function until(what: string, done: () => boolean): Promise<void> {
  const giveUp = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > giveUp) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("one worker poll per endpoint in a provider host", () => {
  it(`${WAITERS} JobRuns waiting for one rollout read the workers about once a second in all`, async () => {
    await client.serverless.update("shared", { env: { RELEASE: "2" } });
    const runs = Array.from({ length: WAITERS }, (_, i) =>
      createPassing(host, `shared-${i}`, { endpointId: "shared", input: { i } }),
    );
    // Settled even when an assertion below fails first (the host closes under them then).
    for (const run of runs) run.catch(() => undefined);
    await until(`all ${WAITERS} JobRuns wait for the rollout`, () => waitingLines() === WAITERS);

    const before = emu.stats().requestsByInterface.management;
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const reads = emu.stats().requestsByInterface.management - before;
    const seconds = (performance.now() - started) / 1000;
    // At most one read a second (plus the one under way at each end of the window), where 16
    // independent pollers made 16 a second (48 in this window).
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(Math.ceil(seconds) + 1);

    await clock.advance(ROLLOUT_MS);
    for (let i = 0; i < 2; i++) await clock.advance(WORKER_START_MS);
    const done = await Promise.all(runs);
    expect(done.map((d) => d.outs.passed)).toEqual(Array(WAITERS).fill(true));
    expect(done.map((d) => d.outs.endpointVersion)).toEqual(Array(WAITERS).fill(2));
    expect(done.map((d) => d.outs.output.version)).toEqual(Array(WAITERS).fill(2));
    expect(host.stderr().match(/JobRun endpoint shared: version 2 runs on all 2 workers/g)).toHaveLength(
      WAITERS,
    );
  });
});

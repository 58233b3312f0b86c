/**
 * The guarded-release example through the deploy harness against the emulator (real time, old
 * workers serving 150 ms after a release then replaced at 0.5 s per worker; the provider reading
 * the rollout every 50 ms: `E2E_ROLLOUT_MS`, `E2E_POLL_MS` in scenarios.ts), the way `pulumi up` runs it: a release that fails
 * its smoke test is rolled back inside the endpoint's update; the engine keeps the OLD inputs of the
 * partially failed update and the provider's record of what runs, so the next up tries the release
 * again, a refresh finds no drift, and the fixed release passes.
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import {
  type E2eEmulator,
  EXAMPLES_DIR,
  expectNoSecrets,
  harnessDriver,
  ops,
  recorder,
  runpodConfig,
  startE2eEmulator,
  unique,
} from "./scenarios";

const projectDir = inject("installedProjectDir");
const make = harnessDriver(projectDir);
const API_TOKEN = "e2e-guarded-api-token-3c9a1e";
const BROKEN = "model weights missing (e2e: a broken release)";

describe("guarded-release example through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;

  /** A stack of the example on the emulator, its endpoint named `prefix-<unique>`, recorded. */
  async function guardedStack(prefix: string) {
    const client = new RunpodClient({ apiKey: e.emu.apiKey, restUrl: e.emu.restUrlV2 });
    const name = unique(prefix);
    const d = await make(path.join(EXAMPLES_DIR, "guarded-release"), {
      ...runpodConfig(e.emu),
      "runpod-guarded-release:endpointName": name,
      "runpod-guarded-release:apiToken": { secret: API_TOKEN },
    });
    return { client, name, d, ...recorder(d) };
  }

  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  it("rolls a failing release back, retries it on the next up, refreshes clean, and passes once fixed", async () => {
    const { client, name, d, transcript, step } = await guardedStack("e2e-guarded");
    try {
      const first = await step(d.up());
      expect(first.errors).toEqual([]);
      expect(ops(first)).toEqual(["endpoint:create"]);
      const id = first.outputs.endpointId as string;
      expect(first.outputs).toMatchObject({
        endpointVersion: 1,
        lastSmokeTest: { version: 1, passed: true, failures: 0 },
      });
      expect((first.outputs.lastSmokeTest as { jobIds: string[] }).jobIds).toHaveLength(3);

      // A release that fails every job: rolled back inside the update.
      await d.setConfig("runpod-guarded-release:imageTag", "1.1.0");
      await d.setConfig("runpod-guarded-release:failWith", BROKEN);
      const failed = await step(d.up());
      expect(failed.ok).toBe(false);
      expect(ops(failed)).toEqual(["endpoint:failed"]);
      const message = failed.errors.join("\n");
      expect(message).toContain(
        `ServerlessEndpoint "${name}" (id ${id}): the smoke test of release version 2 failed (3 of 3 jobs failed, maxFailures 1), so it was rolled back.`,
      );
      expect(message).toContain(
        "Now serving: version 3, a new release carrying the previous configuration (image ghcr.io/acme/echo-worker:1.0.0), on every worker.",
      );
      expect(message).toContain(`Worker error: ${BROKEN}`);
      const live = await client.serverless.get(id);
      expect(live.image).toBe("ghcr.io/acme/echo-worker:1.0.0");
      expect(live.env).not.toHaveProperty("RUNPOD_EMULATOR_FAIL");
      expect(Object.values(await e.workerVersions(id))).toEqual([3, 3]);

      // The next up tries the release again (still broken: rolled back again).
      const retried = await step(d.up());
      expect(retried.ok).toBe(false);
      expect(retried.errors.join("\n")).toContain("the smoke test of release version 4 failed");
      expect(Object.values(await e.workerVersions(id))).toEqual([5, 5]);

      // What the state records is what runs: a refresh finds nothing to change.
      const refreshed = await step(d.refresh());
      expect(refreshed.errors).toEqual([]);
      expect(ops(refreshed)).toEqual(["endpoint:same"]);

      // Fixed: the release passes its gate.
      await d.setConfig("runpod-guarded-release:failWith", undefined);
      const fixed = await step(d.up());
      expect(fixed.errors).toEqual([]);
      expect(fixed.outputs).toMatchObject({
        endpointVersion: 6,
        servingImage: "ghcr.io/acme/echo-worker:1.1.0",
        lastSmokeTest: { version: 6, passed: true, failures: 0 },
      });

      const destroyed = await step(d.destroy());
      expect(destroyed.errors).toEqual([]);
      expect((await client.serverless.list()).filter((ep) => ep.name === name)).toEqual([]);
      expectNoSecrets(transcript, { apiToken: API_TOKEN });
    } finally {
      await d.dispose();
    }
  });

  it("fails the preview of a stack whose guarded update was cut mid-gate, and re-tests that release after a refresh", async () => {
    const { client, name, d, transcript, step } = await guardedStack("e2e-killed");
    try {
      const first = await step(d.up());
      expect(first.errors).toEqual([]);
      const id = first.outputs.endpointId as string;
      expect(first.outputs).toMatchObject({
        endpointVersion: 1,
        lastSmokeTest: { version: 1, passed: true },
      });

      // An up of image 1.1.0 whose provider host is killed after its PATCH, while the gate runs: the
      // release rolls out on the service, and the state keeps what the last finished step wrote
      // (the engine writes a step's outputs when it ends: updateSnapshotMutation.End,
      // pkg/backend/snapshot.go). The harness cannot kill a run mid-step, so the PATCH that run sent
      // is sent here, and the state is left as the killed run leaves it.
      await client.serverless.update(id, { image: "ghcr.io/acme/echo-worker:1.1.0" });
      await vi.waitFor(async () => expect(Object.values(await e.workerVersions(id))).toEqual([2, 2]), {
        timeout: 60_000,
        interval: 200,
      });

      // The old program (image 1.0.0, as the state says) would plan no change: the diff reads which
      // release serves and fails the preview. A Diff error stops the step generator with the
      // provider's message as is (stepGenerator.diff returns it, continueStepsFromDiff ends the
      // generation with it: pkg/resource/deploy/step_generator.go), so `up` stops at its preview.
      const stale = await step(d.up());
      expect(stale.ok).toBe(false);
      const said = stale.errors.join("\n");
      expect(said).toContain(
        `ServerlessEndpoint "${name}" (id ${id}) serves version 2, which this stack's state does not know (version 1): ` +
          "a deploy was cut short before its smoke test ended, or someone else deployed (release ",
      );
      expect(said).toContain(
        "Run `pulumi up --refresh` to read it and smoke-test it (or `pulumi refresh`, then `pulumi up`).",
      );
      expect(stale.resources.map((r) => r.op)).toEqual(["failed"]);
      expect(Object.values(await e.workerVersions(id))).toEqual([2, 2]); // nothing was deployed

      // The advice: refresh reads version 2 back, then the up (the killed run's program) tests it.
      const refreshed = await step(d.refresh());
      expect(refreshed.errors).toEqual([]);
      await d.setConfig("runpod-guarded-release:imageTag", "1.1.0");
      const retested = await step(d.up());
      expect(retested.errors).toEqual([]);
      expect(ops(retested)).toEqual(["endpoint:update"]);
      expect(retested.outputs).toMatchObject({
        endpointVersion: 2,
        servingImage: "ghcr.io/acme/echo-worker:1.1.0",
        lastSmokeTest: { version: 2, passed: true, failures: 0 },
      });
      expect((retested.outputs.lastSmokeTest as { jobIds: string[] }).jobIds).toHaveLength(3);
      // Tested on the release that served, not on a new one.
      expect(Object.values(await e.workerVersions(id))).toEqual([2, 2]);

      // Settled: the next preview reads the same version and plans nothing.
      const settled = await step(d.preview());
      expect(settled.errors).toEqual([]);
      expect(ops(settled)).toEqual(["endpoint:same"]);

      expect((await step(d.destroy())).errors).toEqual([]);
      expectNoSecrets(transcript, { apiToken: API_TOKEN });
    } finally {
      await d.dispose();
    }
  });
});

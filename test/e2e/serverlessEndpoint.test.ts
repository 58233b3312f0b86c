/**
 * The serverless-endpoint example through the deploy harness against the emulator (real time, old
 * workers serving 150 ms after a release then replaced at 0.5 s per worker; the provider reading
 * the rollout every 50 ms: `E2E_ROLLOUT_MS`, `E2E_POLL_MS` in scenarios.ts): the issue's one `pulumi up` (an image tag in the
 * program, the endpoint's release, a wait until every worker runs it, a JobRun that tests that
 * release), a release whose workers cannot start failing the deploy with the workers' states and
 * a log tail until the tag is fixed, refresh, and a destroy that leaves no endpoint.
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
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
const API_TOKEN = "e2e-endpoint-api-token-7d3f2b";

describe("serverless-endpoint example through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  it("releases a new image tag, waits for its rollout, smoke-tests that release; a stalled release fails until fixed; destroy leaves nothing", async () => {
    const client = new RunpodClient({ apiKey: e.emu.apiKey, restUrl: e.emu.restUrlV2 });
    const name = unique("e2e-endpoint");
    const d = await make(path.join(EXAMPLES_DIR, "serverless-endpoint"), {
      ...runpodConfig(e.emu),
      "runpod-serverless-endpoint:endpointName": name,
      "runpod-serverless-endpoint:apiToken": { secret: API_TOKEN },
    });
    const { transcript, step } = recorder(d);
    try {
      const first = await step(d.up());
      expect(first.errors).toEqual([]);
      expect(ops(first)).toEqual(["endpoint:create", "smoke:create"]);
      const id = first.outputs.endpointId as string;
      expect(first.outputs).toMatchObject({ endpointVersion: 1, testedVersion: 1 });
      expect(first.outputs.runSyncUrl).toBe(`${e.emu.serverlessUrl}/v2/${id}/runsync`);
      expect((await client.serverless.get(id)).image).toBe("ghcr.io/acme/echo-worker:1.0.0");

      const again = await step(d.up());
      expect(again.errors).toEqual([]);
      expect(ops(again)).toEqual(["endpoint:same", "smoke:same"]);

      // A new tag: the release, its rollout, and the smoke test on it.
      await d.setConfig("runpod-serverless-endpoint:imageTag", "1.1.0");
      const released = await step(d.up());
      expect(released.errors).toEqual([]);
      expect(ops(released)).toEqual(["endpoint:update", "smoke:update"]);
      expect(released.outputs).toMatchObject({ endpointId: id, endpointVersion: 2, testedVersion: 2 });
      expect(Object.values(await e.workerVersions(id))).toEqual([2, 2]);

      // A tag whose image cannot be pulled: the deploy fails, the endpoint keeps the change.
      await d.setConfig("runpod-serverless-endpoint:imageTag", "unpullable");
      const stalled = await step(d.up());
      expect(stalled.ok).toBe(false);
      const message = stalled.errors.join("\n");
      expect(message).toContain(`ServerlessEndpoint "${name}" (id ${id}): the rollout of version 3 stalled`);
      expect(message).toMatch(/Workers: 1 UNHEALTHY on version 3, 1 (IDLE|RUNNING) on version 2\./);
      expect(message).toContain("failed to pull image ghcr.io/acme/echo-worker:unpullable: manifest unknown");
      expect(ops(stalled)).toContain("endpoint:failed");

      await d.setConfig("runpod-serverless-endpoint:imageTag", "1.2.0");
      const fixed = await step(d.up());
      expect(fixed.errors).toEqual([]);
      expect(fixed.outputs).toMatchObject({ endpointId: id, endpointVersion: 4, testedVersion: 4 });

      const refreshed = await step(d.refresh());
      expect(refreshed.errors).toEqual([]);
      expect(ops(refreshed)).toEqual(["endpoint:same", "smoke:same"]);

      const destroyed = await step(d.destroy());
      expect(destroyed.errors).toEqual([]);
      expect((await client.serverless.list()).filter((ep) => ep.name === name)).toEqual([]);
      expectNoSecrets(transcript, { apiToken: API_TOKEN });
    } finally {
      await d.dispose();
    }
  });
});

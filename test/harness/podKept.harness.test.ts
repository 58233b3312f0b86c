/**
 * A pod whose create failed after the service made it, through the deploy harness: the engine
 * keeps it (a partial failure: `CreateStep.Apply` in pkg/resource/deploy/step.go stores the error's
 * id and properties as the resource), and the next refresh and destroy get exactly those stored
 * properties (`RefreshStep.Apply`, `DeleteStep.Apply`: `s.old.Outputs`), from which the provider
 * host loads the provider (`getProvider(props)` in cmd/dynamic-provider). Here the wait's read of
 * the new pod answers 500 through every retry; the emulator sits behind a fault proxy.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { initErrorText } from "../support/deployRunner.mts";
import { FaultProxy } from "../support/faultProxy.mts";

const projectDir = inject("installedProjectDir");
const API_KEY = "pod-kept-harness-key";
const HF_TOKEN = "hf_Kept-Pod-Secret-5e1c7a";
const POD_TYPE = "pulumi-nodejs:dynamic/runpod:Pod";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import pod from "pulumi-runpod-dynamic/dist/provider/pod/resource.js";
const cfg = new pulumi.Config("app");
const dev = new pod.Pod("dev", {
  name: "kept-pod",
  image: "acme/dev:1",
  gpu: { id: cfg.require("gpu") },
  env: { HF_TOKEN: cfg.requireSecret("hfToken") },
});
export const podId = dev.id;
`;

describe("deploy harness: a pod created but failing afterwards", { timeout: 300_000 }, () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let client: RunpodClient;
  let programDir: string;
  let harness: DeployHarness;

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false, podStartMs: 50 });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    client = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
    const stocked = gpus.find((g) => g.availability === "HIGH")?.id ?? "";
    expect(stocked).not.toBe("");
    programDir = await mkdtemp(path.join(os.tmpdir(), "pod-kept-program-"));
    await writeFile(path.join(programDir, "Pulumi.yaml"), "name: pod-kept-harness\nruntime: nodejs\n");
    await writeFile(path.join(programDir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(path.join(programDir, "index.mjs"), PROGRAM);
    harness = await createDeployHarness({
      projectDir,
      program: programDir,
      passphrase: "pod kept test",
      config: {
        "runpod:apiKey": { secret: API_KEY },
        "runpod:restUrl": `${proxy.url}/v2`,
        "app:gpu": stocked,
        "app:hfToken": { secret: HF_TOKEN },
      },
    });
  });
  afterAll(async () => {
    await harness?.dispose();
    await proxy?.close();
    await emu?.close();
    if (programDir) await rm(programDir, { recursive: true, force: true });
  });

  const pods = async () => (await client.pods.list()).filter((p) => p.name === "kept-pod");

  it("keeps it in the state, then refreshes and destroys it with the outputs stored", async () => {
    // The first read of the pod and the client's 5 retries answer 500 (Retry-After: 1 s).
    for (let i = 0; i < 6; i++) {
      proxy.arm("GET", /\/v2\/pods\/[^/]+$/, {
        kind: "reply",
        status: 500,
        body: { title: "Internal Server Error", status: 500, detail: "pod store unavailable" },
        headers: { "retry-after": "1" },
      });
    }
    const up = await harness.up();
    const made = await pods();
    expect(made).toHaveLength(1);
    const id = made[0]!.id;
    expect(up.ok).toBe(false);
    const [failed] = up.resources;
    expect(up.resources).toHaveLength(1);
    expect(failed).toMatchObject({ id, op: "failed" });
    expect(failed!.error).toMatch(
      new RegExp(
        `^1 error occurred:\n\t\\* Pod "kept-pod" \\(id ${id}\\) was created, but a later step failed: `,
      ),
    );
    expect(failed!.error).toMatch(/pod store unavailable[\s\S]*The pod is kept in the stack/);
    expect(up.errors).toEqual([`${POD_TYPE} dev: ${failed!.error}`, "update failed"]);
    const kept = (await harness.state()).resources;
    expect(kept.map((r) => [r.type, r.id])).toEqual([[POD_TYPE, id]]);
    expect(initErrorText(kept[0]!.initErrors ?? [])).toBe(failed!.error);
    expect(kept[0]!.outputs).toMatchObject({ id, name: "kept-pod", env: { HF_TOKEN } });
    expect(typeof kept[0]!.outputs.__provider).toBe("string");
    expect(await harness.rawState()).not.toContain(HF_TOKEN);

    const refreshed = await harness.refresh();
    expect(refreshed.errors).toEqual([]);
    expect(refreshed.ok).toBe(true);
    const read = (await harness.state()).resources;
    expect(read.map((r) => [r.id, r.initErrors])).toEqual([[id, undefined]]);
    expect(read[0]!.outputs).toMatchObject({ id, status: "RUNNING" });

    const destroyed = await harness.destroy();
    expect(destroyed.errors).toEqual([]);
    expect(destroyed.resources.map((r) => [r.id, r.op])).toEqual([[id, "delete"]]);
    expect((await harness.state()).resources).toEqual([]);
    expect(await pods()).toEqual([]);
  });
});

/**
 * A refresh whose answer differs from the pod only in the service's equivalences must not make the
 * next preview replace the pod (a replacement terminates it with its persistent disk). Through the
 * deploy harness against the emulator, with a proxy that rewrites refresh's reads of the pod as
 * the service may answer: `cloud` in lower case, no `mounts`, no `gpu.count`, `templateId: ""`,
 * `cudaVersion: "N/A"`. A real change after it still plans the replacement, and the preview
 * says, under the stack, which disks it deletes.
 *
 * Failed before: the refresh stored the answer as read, and the next preview planned a replace
 * (`cloud`, `mounts`, `gpu` and `templateId` each forced one).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { FaultProxy } from "../support/faultProxy.mts";
import { E2E_POLL_MS, ops, unique } from "./scenarios";

const projectDir = inject("installedProjectDir");
const PROJECT = "pod-refresh";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import { Pod } from "pulumi-runpod-dynamic";
const cfg = new pulumi.Config("app");
const cloud = cfg.get("cloud");
const pod = new Pod("trainer", {
  name: cfg.require("name"),
  image: "acme/trainer:1",
  gpu: { id: cfg.require("gpuId"), count: 2, minCudaVersion: "12.0" },
  disk: 30,
  mounts: { persistent: { size: 20, path: "/workspace" } },
  ...(cloud ? { cloud } : {}),
  waitFor: "running",
});
export const podId = pod.id;
`;

/** The pod as the service may answer it: the same pod in other spellings, with fields left out. */
function equivalentAnswer(pod: Record<string, unknown>): Record<string, unknown> {
  const { mounts: _mounts, ...rest } = pod;
  const { count: _count, ...gpu } = pod.gpu as Record<string, unknown>;
  return { ...rest, cloud: String(pod.cloud).toLowerCase(), gpu, templateId: "", cudaVersion: "N/A" };
}

describe("a refresh answered in the service's equivalences, then a preview (deploy harness)", {
  timeout: 300_000,
}, () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let programDir: string;
  let harness: DeployHarness;
  let gpuId: string;

  beforeAll(async () => {
    emu = await startEmulator({ podStartMs: 50 });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    const client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrlV2 });
    const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
    gpuId = gpus.find((g) => g.availability === "HIGH")?.id ?? "";
    expect(gpuId).not.toBe("");
    programDir = await mkdtemp(path.join(os.tmpdir(), "pod-refresh-program-"));
    await writeFile(path.join(programDir, "Pulumi.yaml"), `name: ${PROJECT}\nruntime: nodejs\n`);
    await writeFile(path.join(programDir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(path.join(programDir, "index.mjs"), PROGRAM);
    harness = await createDeployHarness({
      projectDir,
      program: programDir,
      passphrase: "pod refresh",
      // The emulator's pods start in 50 ms: the host reads a starting pod every 50 ms, not 1 s.
      pollMs: E2E_POLL_MS,
      config: {
        "runpod:apiKey": { secret: emu.apiKey },
        "runpod:restUrl": `${proxy.url}/v2`,
        "app:name": unique("refresh"),
        "app:gpuId": gpuId,
      },
    });
  });
  afterAll(async () => {
    await harness?.dispose();
    await proxy?.close();
    await emu?.close();
    if (programDir) await rm(programDir, { recursive: true, force: true });
  });

  it("plans no replacement after the refresh; a real change replaces and says which disks it deletes", async () => {
    const up = await harness.up();
    expect(up.errors).toEqual([]);
    const id = String(up.outputs.podId);
    const client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrlV2 });
    expect(await client.pods.get(id)).toMatchObject({
      cloud: "SECURE",
      gpu: { id: gpuId, count: 2 },
      mounts: { persistent: { size: 20, path: "/workspace" } },
    });

    // refresh previews first (README rule 11): two reads of the pod, both answered in other spellings.
    const podPath = new RegExp(`^/v2/pods/${id}$`);
    proxy.arm("GET", podPath, { kind: "rewrite", edit: equivalentAnswer });
    proxy.arm("GET", podPath, { kind: "rewrite", edit: equivalentAnswer });
    const readsBefore = proxy.seen.filter((r) => r.method === "GET" && podPath.test(r.path)).length;
    const refreshed = await harness.refresh();
    expect(refreshed.errors).toEqual([]);
    expect(proxy.seen.filter((r) => r.method === "GET" && podPath.test(r.path)).length - readsBefore).toBe(2);
    // The refresh's own diff (new outputs against the program's inputs) sees no drift either.
    expect(ops(refreshed)).toEqual(["trainer:same"]);

    const preview = await harness.preview();
    expect(preview.errors).toEqual([]);
    expect(ops(preview)).toEqual(["trainer:same"]);
    expect(preview.hostOutput).toEqual([]);
    const again = await harness.up();
    expect(again.errors).toEqual([]);
    expect(ops(again)).toEqual(["trainer:same"]);
    expect(String(again.outputs.podId)).toBe(id);

    // A real change still replaces, and the preview says under the stack what that deletes.
    harness.setConfig("app:cloud", "COMMUNITY");
    const changed = await harness.preview();
    expect(changed.errors).toEqual([]);
    expect(ops(changed)).toEqual(["trainer:replace"]);
    const name = String((await client.pods.get(id)).name);
    expect(changed.hostOutput).toEqual([
      `warning: replacing Pod "${name}" (id ${id}) (cloud changes) terminates it and deletes its 20 GB ` +
        "persistent disk at /workspace and its 30 GB container disk with their data; the new pod starts empty. " +
        "To keep the data, copy it off first or undo the change.",
    ]);
    expect(JSON.stringify([up, refreshed, preview, again, changed])).not.toContain(emu.apiKey);

    harness.setConfig("app:cloud", undefined);
    const destroyed = await harness.destroy();
    expect(destroyed.errors).toEqual([]);
    await expect(client.pods.get(id)).rejects.toThrow(/404/);
  });
});

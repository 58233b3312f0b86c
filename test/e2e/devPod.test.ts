/**
 * The dev-pod example through the deploy harness against the emulator (pods start in 50 ms of its
 * clock): the user's SSH key, a network volume and a GPU pod asked for on a type with no pod stock
 * (H200), landing on the first fallback with stock in the volume's data centre, usable over SSH
 * when `up` returns; then an env change in place, a stop, a start and a destroy that leaves
 * neither pod, volume nor the key, and the key another writer registered where it was.
 * No env value nor the API key is ever in plaintext in a result, a printed line or the state.
 */
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KEYS } from "../fixtures/sshKeys";
import {
  EXAMPLES_DIR,
  expectNoSecrets,
  harnessDriver,
  ops,
  recorder,
  runpodConfig,
  unique,
} from "./scenarios";

const make = harnessDriver(inject("installedProjectDir"));
const HF_TOKEN = "hf_e2eDevPodToken-9c41d7";
/** The user's key, declared in the program. */
const SSH_KEY = KEYS.ed25519;
/** A key someone else registered in the account before the first `up`. */
const OTHER_KEY = KEYS.nistp256.line;
const P = "runpod-dev-pod";

/** The first line the pod's SSH endpoint sends (its banner). */
function sshBanner(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let got = "";
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      got += d;
      if (got.includes("\n")) {
        socket.destroy();
        resolve(got.split(/\r?\n/)[0] ?? "");
      }
    });
    socket.on("error", reject);
  });
}

describe("dev-pod example through the deploy harness", { timeout: 300_000 }, () => {
  let emu: RunningEmulator;
  let client: RunpodClient;
  beforeAll(async () => {
    emu = await startEmulator({ podStartMs: 50 });
    client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrlV2 });
    await client.account.setSshKeys([OTHER_KEY]);
  });
  afterAll(async () => {
    await emu?.close();
  });

  it("lands on a fallback GPU with SSH answering, changes env in place, stops, starts, destroys leaving nothing", async () => {
    const name = unique("e2e-dev");
    const d = await make(path.join(EXAMPLES_DIR, "dev-pod"), {
      ...runpodConfig(emu),
      [`${P}:podName`]: name,
      [`${P}:sshPublicKey`]: SSH_KEY.line,
      [`${P}:hfToken`]: { secret: HF_TOKEN },
    });
    const { transcript, step } = recorder(d);
    try {
      const first = await step(d.up());
      expect(first.errors).toEqual([]);
      expect(ops(first)).toEqual(["dev:create", "me:create", "workspace:create"]);
      expect(first.outputs.sshKeyFingerprint).toBe(SSH_KEY.fingerprint);
      // The key's entry is its line and its URN (the owner mark): the stack and resource it belongs to.
      const keyUrn = first.resources.find((r) => r.urn.endsWith("SshKey::me"))?.urn;
      expect(keyUrn).toBe("urn:pulumi:dev::runpod-dev-pod::pulumi-nodejs:dynamic/runpod:SshKey::me");
      const entry = `${SSH_KEY.line} ${keyUrn}`;
      expect(await client.account.sshKeys()).toEqual([OTHER_KEY, entry]);
      const id = first.outputs.podId as string;
      const volumeId = first.outputs.volumeId as string;
      // H200 has no pod stock anywhere: the first fallback lands, in the volume's data centre.
      expect(first.outputs).toMatchObject({
        status: "RUNNING",
        gpuType: "NVIDIA H100 80GB HBM3",
        podDataCenterId: "EU-RO-1",
      });
      expect(first.outputs.costPerHour).toBeGreaterThan(0);
      expect(first.logs.join("\n")).toMatch(
        new RegExp(`pod "${name}" placed on NVIDIA H100 80GB HBM3 after NVIDIA H200: 400 `),
      );
      const pod = await client.pods.get(id);
      expect(pod.mounts?.network).toEqual([{ volumeId, path: "/workspace" }]);
      expect(pod.env).toMatchObject({
        GREETING: "hello",
        HF_TOKEN,
        PUBLIC_KEY: `${OTHER_KEY}\n${entry}`,
      });
      // `up` returned once SSH answered: the printed command's endpoint gives a banner now.
      const command = first.outputs.ssh as string;
      const m = /^ssh -p (\d+) (\S+)@(\S+)$/.exec(command);
      expect(m, command).not.toBeNull();
      expect(m![3]).toBe("127.0.0.1");
      expect(await sshBanner(m![3]!, Number(m![1]))).toMatch(/^SSH-2\.0-/);

      const again = await step(d.up());
      expect(again.errors).toEqual([]);
      expect(ops(again)).toEqual(["dev:same", "me:same", "workspace:same"]);

      // env in place: the same pod, env sent whole (the secret and the injected key kept).
      await d.setConfig(`${P}:greeting`, "hi");
      const changed = await step(d.up());
      expect(changed.errors).toEqual([]);
      expect(ops(changed)).toEqual(["dev:update", "me:same", "workspace:same"]);
      expect(changed.outputs).toMatchObject({
        podId: id,
        status: "RUNNING",
        gpuType: "NVIDIA H100 80GB HBM3",
      });
      expect((await client.pods.get(id)).env).toMatchObject({
        GREETING: "hi",
        HF_TOKEN,
        PUBLIC_KEY: `${OTHER_KEY}\n${entry}`,
      });

      // Stop: a stop action, not a re-create; no GPU billed while stopped.
      await d.setConfig(`${P}:desiredStatus`, "EXITED");
      const stopped = await step(d.up());
      expect(stopped.errors).toEqual([]);
      expect(ops(stopped)).toEqual(["dev:update", "me:same", "workspace:same"]);
      expect(stopped.outputs).toMatchObject({ podId: id, status: "EXITED", costPerHour: 0 });
      expect((await client.pods.get(id)).status).toBe("EXITED");

      // Start: the same pod, back when SSH answers again.
      await d.setConfig(`${P}:desiredStatus`, "RUNNING");
      const started = await step(d.up());
      expect(started.errors).toEqual([]);
      expect(ops(started)).toEqual(["dev:update", "me:same", "workspace:same"]);
      expect(started.outputs).toMatchObject({ podId: id, status: "RUNNING" });
      expect(started.outputs.costPerHour).toBeGreaterThan(0);
      const restarted = /^ssh -p (\d+) \S+@(\S+)$/.exec(started.outputs.ssh as string);
      expect(restarted, String(started.outputs.ssh)).not.toBeNull();
      expect(await sshBanner(restarted![2]!, Number(restarted![1]))).toMatch(/^SSH-2\.0-/);

      const refreshed = await step(d.refresh());
      expect(refreshed.errors).toEqual([]);
      expect(ops(refreshed)).toEqual(["dev:same", "me:same", "workspace:same"]);

      const destroyed = await step(d.destroy());
      expect(destroyed.errors).toEqual([]);
      expect((await client.pods.list()).filter((p) => p.name === name)).toEqual([]);
      expect((await client.networkVolumes.list()).filter((v) => v.id === volumeId)).toEqual([]);
      expect(await client.account.sshKeys()).toEqual([OTHER_KEY]);
      // The env is one secret: ciphertext in the state, in no result, line or error.
      expect(await d.rawState()).toContain("ciphertext");
      expectNoSecrets(transcript, { hfToken: HF_TOKEN, apiKey: emu.apiKey });
    } finally {
      await d.dispose();
    }
  });
});

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";

const projectDir = inject("installedProjectDir");
const PASSWORD = "registry-pa55word-never-in-plaintext";

// A user's program, importing the installed package (the provider's own file, so this test does not
// depend on every other module behind the package root).
const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import registryAuth from "pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/resource.js";
const cfg = new pulumi.Config("app");
const auth = new registryAuth.ContainerRegistryAuth("creds", {
  name: cfg.require("registryName"),
  username: "robot",
  password: cfg.requireSecret("registryPassword"),
});
export const registryAuthId = auth.id;
`;

describe("deploy harness with ContainerRegistryAuth against the emulator", { timeout: 300_000 }, () => {
  let emu: Awaited<ReturnType<typeof startEmulator>>;
  let programDir: string;
  let harness: DeployHarness;

  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
    programDir = await mkdtemp(path.join(os.tmpdir(), "registry-auth-program-"));
    await writeFile(path.join(programDir, "Pulumi.yaml"), "name: registry-auth-harness\nruntime: nodejs\n");
    await writeFile(path.join(programDir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(path.join(programDir, "index.mjs"), PROGRAM);
    harness = await createDeployHarness({
      projectDir,
      program: programDir,
      passphrase: "registry test",
      config: {
        "runpod:apiKey": { secret: emu.apiKey },
        "runpod:restUrl": emu.restUrl,
        "runpod:serverlessUrl": emu.serverlessUrl,
        "app:registryName": "harness-creds",
        "app:registryPassword": { secret: PASSWORD },
      },
    });
  });
  afterAll(async () => {
    await harness?.dispose();
    await emu?.close();
    if (programDir) await rm(programDir, { recursive: true, force: true });
  });

  const listOnEmulator = async () => {
    const res = await fetch(`${emu.restUrlV1}/containerregistryauth`, {
      headers: { authorization: `Bearer ${emu.apiKey}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Array<{ id: string; name: string }>;
  };

  it("creates, keeps, replaces on a name change and destroys, leaking no secret", async () => {
    const first = await harness.up();
    expect(first.errors).toEqual([]);
    expect(first.resources.map((r) => r.op)).toEqual(["create"]);
    expect((await listOnEmulator()).map((a) => a.id)).toEqual([first.outputs.registryAuthId]);

    const second = await harness.up();
    expect(second.resources.map((r) => r.op)).toEqual(["same"]);

    harness.setConfig("app:registryName", "harness-creds-2");
    const third = await harness.up();
    expect(third.errors).toEqual([]);
    // Create-before-delete: the new one first, the old one deleted at the end of the run.
    expect(third.resources.map((r) => [r.op, r.id])).toEqual([
      ["replace", third.outputs.registryAuthId],
      ["delete", first.outputs.registryAuthId],
    ]);
    expect((await listOnEmulator()).map((a) => a.name)).toEqual(["harness-creds-2"]);

    const destroyed = await harness.destroy();
    expect(destroyed.errors).toEqual([]);
    expect(await listOnEmulator()).toEqual([]);

    const everything = [
      await harness.rawState(),
      ...[first, second, third, destroyed].map((r) => JSON.stringify(r)),
    ];
    for (const text of everything) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(emu.apiKey);
    }
  });
  it("retainOnDelete with a same-name replacement (DeleteStep.Apply skips the delete half): the create names the kept credential and what to do, and the advice works", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "registry-auth-retain-"));
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: registry-auth-retain\nruntime: nodejs\n");
    await writeFile(path.join(dir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(
      path.join(dir, "index.mjs"),
      PROGRAM.replace(
        'password: cfg.requireSecret("registryPassword"),\n}',
        'password: cfg.requireSecret("registryPassword"),\n}, { retainOnDelete: true }',
      ),
    );
    const h = await createDeployHarness({
      projectDir,
      program: dir,
      passphrase: "registry retain",
      config: {
        "runpod:apiKey": { secret: emu.apiKey },
        "runpod:restUrl": emu.restUrl,
        "runpod:serverlessUrl": emu.serverlessUrl,
        "app:registryName": "retained-creds",
        "app:registryPassword": { secret: PASSWORD },
      },
    });
    try {
      const first = await h.up();
      expect(first.errors).toEqual([]);
      const oldId = first.outputs.registryAuthId as string;

      // Same name, new password: the provider asks for delete-before-replace; retainOnDelete keeps
      // the old credential, so the replacement's create meets it.
      h.setConfig("app:registryPassword", { secret: `${PASSWORD}-rotated` });
      const rotated = await h.up();
      expect(rotated.ok).toBe(false);
      expect(rotated.preview?.resources.map((r) => r.op)).toEqual(["replace"]);
      const text = rotated.resources.find((r) => r.op === "failed")!.error!;
      expect(rotated.errors).toEqual([
        `pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth creds: ${text}`,
        "update failed",
      ]);
      expect(text).toContain(`A container registry auth named "retained-creds" already exists (id ${oldId})`);
      expect(text).toContain("retainOnDelete");
      expect(text).toContain(`delete the existing one (id ${oldId})`);
      expect(text).not.toMatch(/\b400\b|Bad Request/);
      expect((await listOnEmulator()).filter((a) => a.name === "retained-creds").map((a) => a.id)).toEqual([
        oldId,
      ]);
      // The old entry stays, pending replacement: the next up only creates (rule 6).
      expect((await h.state()).resources.map((r) => [r.id, r.pendingReplacement])).toEqual([[oldId, true]]);

      // Following the advice: delete the kept credential, then up creates the new one.
      const del = await fetch(`${emu.restUrlV1}/containerregistryauth/${oldId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${emu.apiKey}` },
      });
      expect(del.ok).toBe(true);
      const fixed = await h.up();
      expect(fixed.errors).toEqual([]);
      expect(fixed.resources.map((r) => r.op)).toEqual(["replace"]);
      const now = (await listOnEmulator()).filter((a) => a.name === "retained-creds");
      expect(now.map((a) => a.id)).toEqual([fixed.outputs.registryAuthId]);

      for (const t of [await h.rawState(), ...[first, rotated, fixed].map((r) => JSON.stringify(r))]) {
        expect(t).not.toContain(PASSWORD);
        expect(t).not.toContain(emu.apiKey);
      }
      await h.destroy();
    } finally {
      await h.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

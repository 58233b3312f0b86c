import { existsSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ECHO_MODULE, installEchoFixture } from "../support/fixtures/echo.mts";
import {
  HostError,
  type ProviderHost,
  parseUrn,
  secretValue,
  startProviderHost,
  UNKNOWN,
  urnFor,
} from "../support/providerHost.mts";
import { serializedProvider, serializeProviderFrom } from "../support/serializedProvider.mts";

const projectDir = inject("installedProjectDir");
const urn = urnFor("Echo", "e1");

describe("providerHost driving the real dynamic-provider host", () => {
  let host: ProviderHost;
  let __provider: string;

  beforeAll(async () => {
    await installEchoFixture(projectDir);
    __provider = (await serializeProviderFrom(projectDir, ECHO_MODULE, "EchoProvider")).text;
    host = await startProviderHost({ projectDir });
    await host.configure({ "echo:greeting": "hi from config" });
  });
  afterAll(async () => {
    await host?.close();
  });

  it("builds urns with the dynamic runpod type token and parses them back", () => {
    expect(urnFor("JobRun", "smoke")).toBe(
      "urn:pulumi:test::proj::pulumi-nodejs:dynamic/runpod:JobRun::smoke",
    );
    expect(parseUrn(urnFor("JobRun", "smoke"))).toEqual({
      type: "pulumi-nodejs:dynamic/runpod:JobRun",
      name: "smoke",
    });
    expect(() => parseUrn("nope")).toThrow(/urn must look like/);
  });

  it("check returns the inputs with __provider, and the provider's failures", async () => {
    const ok = await host.check(urn, {}, { value: "a", __provider });
    expect(ok.failures).toEqual([]);
    expect(ok.inputs).toEqual({ value: "a", __provider });
    const bad = await host.check(urn, {}, { value: 42, __provider });
    expect(bad.failures).toEqual([{ property: "value", reason: "value must be a string" }]);
  });

  it("check passes the unknown sentinel through without failing", async () => {
    const res = await host.check(urn, {}, { value: UNKNOWN, __provider });
    expect(res.failures).toEqual([]);
    expect(res.inputs.value).toBe(UNKNOWN);
  });

  it("create runs the provider configured with the stack config and unwraps secrets as the engine does", async () => {
    const { id, outs } = await host.create(urn, {
      value: "a",
      secretInput: secretValue("s3cr3t"),
      __provider,
    });
    expect(id).toMatch(/^echo-/);
    expect(outs).toMatchObject({ value: "a", secretInput: "s3cr3t", greeting: "hi from config", __provider });
  });

  it("diff reports no change, a change, and a replacement with deleteBeforeReplace", async () => {
    const { id, outs } = await host.create(urn, { value: "a", immutable: 1, __provider });
    const same = await host.diff(id, urn, outs, { value: "a", immutable: 1, __provider });
    expect(same).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    const changed = await host.diff(id, urn, outs, { value: "b", immutable: 1, __provider });
    expect(changed).toMatchObject({ changes: true, replaces: [], deleteBeforeReplace: false });
    const replaced = await host.diff(id, urn, outs, {
      value: "a",
      immutable: 2,
      deleteBeforeReplace: true,
      __provider,
    });
    expect(replaced).toMatchObject({ changes: true, replaces: ["immutable"], deleteBeforeReplace: true });
  });

  it("update returns the new outputs and read refreshes them or reports the resource gone", async () => {
    const { id, outs } = await host.create(urn, { value: "a", __provider });
    const updated = await host.update(id, urn, outs, { value: "b", __provider });
    expect(updated.outs).toMatchObject({ value: "b", updates: 1, token: outs.token, __provider });
    const read = await host.read(id, urn, updated.outs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ value: "b", refreshed: true, __provider });
    const gone = await host.read(id, urn, { ...updated.outs, gone: true });
    expect(gone.id).toBe("");
  });

  it("a create error carrying an id surfaces as a HostError with id and properties", async () => {
    const failFile = path.join(projectDir, "package.json"); // exists, so the echo provider fails
    const err = await host.create(urn, { value: "a", failWhileExists: failFile, __provider }).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.grpcCode).toBe(2);
    expect(err.id).toMatch(/^echo-/);
    expect(err.message).toContain(`echo ${err.id}: failed after creation`);
    expect(err.properties).toMatchObject({ value: "a", token: `tok-${err.id}` });
  });

  it("an update error carrying an id is a partial failure too", async () => {
    const { id, outs } = await host.create(urn, { value: "a", __provider });
    const failFile = path.join(projectDir, "package.json");
    const err = await host
      .update(id, urn, outs, { value: "b", failWhileExists: failFile, __provider })
      .catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.id).toBe(id);
    expect(err.properties).toMatchObject({ value: "b", updates: 0 });
  });

  it("a delete error is a HostError without id, and the host's stderr shows it", async () => {
    const { id, outs } = await host.create(urn, { value: "a", failDelete: true, __provider });
    const err = await host.delete(id, urn, outs).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.id).toBeUndefined();
    expect(err.message).toContain("delete refused");
    expect(host.stderr()).toContain(`echo ${id}: delete refused`);
  });

  it("sends read and delete properties as stored (RefreshStep/DeleteStep.Apply: s.old.Outputs), adding __provider to none", async () => {
    // A partial failure's properties that left out `__provider`, for one of this package's types:
    // the real host cannot load a provider from them, and the harness must not repair that.
    const stored = { name: "creds", username: "robot" };
    const registry = urnFor("ContainerRegistryAuth", "creds");
    const readError = await host.read("cred-1", registry, stored).catch((e) => e);
    const deleteError = await host.delete("cred-1", registry, stored).catch((e) => e);
    for (const error of [readError, deleteError]) {
      expect(error).toBeInstanceOf(HostError);
      expect(error.message).toMatch(/code must be a string/);
    }
  });

  it("rejects props the engine could not send, naming the field", async () => {
    await expect(host.create(urn, { value: "a", bad: Number.NaN, __provider })).rejects.toThrow(
      /props\.bad: numbers must be finite/,
    );
  });
});

describe("startProviderHost", () => {
  it("runs the host without RUNPOD_* variables from this process by default", async () => {
    await installEchoFixture(projectDir);
    const __provider = (await serializeProviderFrom(projectDir, ECHO_MODULE, "EchoProvider")).text;
    process.env.RUNPOD_API_KEY = "must-not-leak";
    const host = await startProviderHost({ projectDir, env: undefined });
    delete process.env.RUNPOD_API_KEY;
    try {
      await host.configure({});
      const { outs } = await host.create(urn, { value: "a", __provider });
      expect(outs.runpodEnv).toEqual([]);
      expect(outs.greeting).toBe("hello");
    } finally {
      await host.close();
    }
    const withEnv = await startProviderHost({
      projectDir,
      env: { ...process.env, ECHO_GREETING: "from env" },
    });
    try {
      await withEnv.configure({});
      const { outs } = await withEnv.create(urn, { value: "a", __provider });
      expect(outs.greeting).toBe("from env");
    } finally {
      await withEnv.close();
    }
  });

  it("fails clearly without a project dir", async () => {
    await expect(startProviderHost({ projectDir: "" })).rejects.toThrow(/projectDir must be/);
  });
});

describe("serializedProvider", () => {
  it("serializes the provider of the installed package, requiring it rather than inlining it", async () => {
    const installed = path.join(projectDir, "node_modules", "pulumi-runpod-dynamic", "dist", "provider");
    if (!existsSync(path.join(installed, "containerRegistryAuth", "resource.js"))) {
      throw new Error(
        "dist/provider/containerRegistryAuth/resource.js is not built: build src/provider/containerRegistryAuth/resource.ts first",
      );
    }
    const text = await serializedProvider(projectDir, "ContainerRegistryAuth");
    expect(text).toMatch(/^exports\.handler = /);
    expect(text).toContain("pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/operations.js");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8 * 1024);
    expect(await serializedProvider(projectDir, "ContainerRegistryAuth")).toBe(text);
  });

  it("names the module and class when the export is missing", async () => {
    await expect(serializeProviderFrom(projectDir, ECHO_MODULE, "NoSuchProvider")).rejects.toThrow(
      /has no exported class NoSuchProvider/,
    );
  });
});

/**
 * The native plugin, started as the engine starts it, driving ContainerRegistryAuth against the
 * emulator through the sequences a program's preview, up, change, refresh and destroy produce,
 * with the registry password secret in and out. Needs the build (`npm run build`).
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { SERVED_CLASSES, tokenOf } from "../../src/plugin/resources";
import {
  Empty,
  failure,
  type PluginProcess,
  type PluginRig,
  pb,
  type providerClient,
  resourceCalls,
  Struct,
  secret,
  startPluginRig,
  UNKNOWN,
  urnOf,
} from "./pluginKit";

const API_KEY = "plugin-test-key-5e1f0a";
const PASSWORD = "s3cr3t-Plugin-Pa55-77aa";
const PASSWORD_2 = "rotated-Plugin-Pa55-88bb";
const TYPE = "runpod-native:index:ContainerRegistryAuth";
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;
type Creds = ReturnType<typeof resourceCalls>;

describe("pulumi-resource-runpod-native: ContainerRegistryAuth over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let engine: PluginRig["engine"];
  let plugin: PluginProcess;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;
  /** The calls of the resource "creds", as the engine makes them. */
  let creds: Creds;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    ({ emu, engine, plugin, rpc } = rig);
    creds = resourceCalls(rpc, TYPE, "creds");
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrl, maxRetries: 0 });
    console.log(`plugin start: ${plugin.startMs.toFixed(0)} ms to its port line`);
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, PASSWORD, PASSWORD_2]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  const managementRequests = () => emu.stats().requestsByInterface.management;

  const check: Creds["check"] = (...args) => creds.check(...args);
  const diff: Creds["diff"] = (...args) => creds.diff(...args);
  const create: Creds["create"] = (...args) => creds.create(...args);
  const read: Creds["read"] = (...args) => creds.read(...args);
  const update: Creds["update"] = (...args) => creds.update(...args);
  const del: Creds["delete"] = (...args) => creds.delete(...args);

  it("says what it is: version, handshake capabilities, and a schema valid against Pulumi's metaschema", async () => {
    const info = await rpc.call("getPluginInfo", new Empty());
    expect(info.getVersion()).toBe(
      JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8")).version,
    );

    const hs = await rpc.call(
      "handshake",
      new pb.ProviderHandshakeRequest().setEngineAddress(engine.address),
    );
    expect([hs.getAcceptSecrets(), hs.getAcceptResources(), hs.getAcceptOutputs()]).toEqual([
      true,
      false,
      false,
    ]);

    const schema = JSON.parse((await rpc.call("getSchema", new pb.GetSchemaRequest())).getSchema());
    const metaschema = JSON.parse(
      readFileSync(path.join(__dirname, "../fixtures/pulumi-package-metaschema.json"), "utf8"),
    );
    const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(
      metaschema,
    );
    expect(validate(schema), JSON.stringify(validate.errors)).toBe(true);
    expect(schema.name).toBe("runpod-native");
    expect(Object.keys(schema.resources)).toEqual([
      TYPE,
      "runpod-native:index:NetworkVolume",
      "runpod-native:index:Template",
      "runpod-native:index:SshKey",
      "runpod-native:index:Pod",
      "runpod-native:index:ServerlessEndpoint",
      "runpod-native:index:JobRun",
      "runpod-native:index:EcrDelegation",
      "runpod-native:index:Cluster",
    ]);
    const auth = schema.resources[TYPE];
    expect(auth.requiredInputs).toEqual(["name", "username", "password"]);
    expect(auth.inputProperties.password).toMatchObject({
      type: "string",
      secret: true,
      replaceOnChanges: true,
    });
    expect(auth.inputProperties.adoptExisting.type).toBe("boolean");
    expect(auth.properties.adoptionNote.type).toBe("string");
    for (const p of Object.values({ ...auth.properties, ...schema.config.variables }) as {
      description?: string;
    }[]) {
      expect(p.description).toBeTruthy();
    }
    expect(schema.config.variables.apiKey.secret).toBe(true);
  });

  it("checks and diffs its config: a typo and a bad URL fail naming the key; a changed key updates, never replaces", async () => {
    const checked = await rpc.call(
      "checkConfig",
      new pb.CheckRequest()
        .setUrn(urnOf("pulumi:providers:runpod-native", "default"))
        .setOlds(Struct.fromJavaScript({}))
        .setNews(
          Struct.fromJavaScript({ apikey: "x", restUrl: "not a url", maxHourlyUsd: "2.5", version: "0.1.0" }),
        ),
    );
    expect(checked.getFailuresList().map((f: any) => [f.getProperty(), f.getReason()])).toEqual([
      [
        "apikey",
        "runpod-native:apikey is not a setting of this provider; the settings are runpod-native:apiKey, runpod-native:restUrl, runpod-native:serverlessUrl, runpod-native:maxHourlyUsd",
      ],
      [
        "restUrl",
        "runpod-native:restUrl must be an http or https URL (fix: pulumi config set runpod-native:restUrl <url>)",
      ],
    ]);
    const diffed = await rpc.call(
      "diffConfig",
      new pb.DiffRequest()
        .setUrn(urnOf("pulumi:providers:runpod-native", "default"))
        .setOlds(Struct.fromJavaScript({ apiKey: "a", restUrl: emu.restUrl }))
        .setNews(Struct.fromJavaScript({ apiKey: "b", restUrl: emu.restUrl })),
    );
    expect([diffed.getChanges(), diffed.getReplacesList(), diffed.getDiffsList()]).toEqual([
      D.DIFF_SOME,
      [],
      ["apiKey"],
    ]);
  });

  it("preview, up, change, refresh and destroy, with the password secret in and out", async () => {
    // Configure as the engine does with acceptSecrets: bare keys, the API key secret-wrapped.
    await rpc.call(
      "configure",
      new pb.ConfigureRequest()
        .setArgs(Struct.fromJavaScript({ apiKey: secret(API_KEY), restUrl: emu.restUrl, version: "0.1.0" }))
        .setAcceptsecrets(true),
    );
    expect(engine.logs.map((l) => l.message)).toContain(
      "runpod-native configured: apiKey from runpod-native:apiKey, restUrl from runpod-native:restUrl, serverlessUrl from unset, maxHourlyUsd from unset",
    );
    const before = managementRequests();

    // preview: the password is an output of another resource, not known yet.
    const previewed = await check({ name: "reg-a", username: "bot", password: UNKNOWN });
    expect(previewed).toEqual({
      inputs: { name: "reg-a", username: "bot", password: secret(UNKNOWN) },
      failures: [],
    });
    expect(await create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(managementRequests()).toBe(before);

    // up: the password given as a secret comes back as one, in inputs and outputs.
    const { inputs } = await check({ name: "reg-a", username: "bot", password: secret(PASSWORD) });
    expect(inputs).toEqual({ name: "reg-a", username: "bot", password: secret(PASSWORD) });
    const made = await create(inputs);
    expect(made.outs).toEqual({ name: "reg-a", username: "bot", password: secret(PASSWORD) });
    expect((await service.registryAuths.list()).map((r) => [r.id, r.name])).toEqual([[made.id, "reg-a"]]);

    // A state moved from the dynamic type carries `__provider`: ignored, no change planned.
    expect(await diff(made.id, { ...made.outs, __provider: "exports.handler = ..." }, inputs)).toEqual({
      changes: D.DIFF_NONE,
      replaces: [],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: {},
    });

    // preview of a change whose new password is unknown: a replacement, planned without a request.
    const atPreview = managementRequests();
    expect(await diff(made.id, made.outs, { ...inputs, password: secret(UNKNOWN) })).toEqual({
      changes: D.DIFF_SOME,
      replaces: ["password"],
      deleteBeforeReplace: true,
      hasDetailedDiff: true,
      detailed: { password: K.UPDATE_REPLACE },
    });
    expect(managementRequests()).toBe(atPreview);

    // An in-place change: adoptExisting only; the update answers the outputs, password still secret.
    const adopted = { ...inputs, adoptExisting: true };
    expect(await diff(made.id, made.outs, adopted)).toMatchObject({
      changes: D.DIFF_SOME,
      replaces: [],
      detailed: { adoptExisting: K.ADD },
    });
    const updated = await update(made.id, made.outs, adopted);
    expect(updated).toEqual({ ...adopted, password: secret(PASSWORD) });

    // A rotated password: replaced, the old one deleted first (same name).
    const rotated = (await check({ ...adopted, password: secret(PASSWORD_2) })).inputs;
    expect(await diff(made.id, updated, rotated)).toMatchObject({
      changes: D.DIFF_SOME,
      replaces: ["password"],
      deleteBeforeReplace: true,
    });
    await del(made.id, updated);
    const remade = await create(rotated);
    expect(remade.outs.password).toEqual(secret(PASSWORD_2));
    expect((await service.registryAuths.list()).map((r) => r.id)).toEqual([remade.id]);

    // refresh: the state read back, the password still secret; gone on the service: an empty id.
    expect(await read(remade.id, remade.outs)).toEqual({ id: remade.id, props: remade.outs });

    // destroy
    await del(remade.id, remade.outs);
    expect(await service.registryAuths.list()).toEqual([]);
    expect(await read(remade.id, remade.outs)).toEqual({ id: "", props: {} });
  });

  it("a check failure names the field and never prints the password", async () => {
    const { failures } = await check({ name: "reg-b", username: " ", password: secret(PASSWORD), colour: 1 });
    expect(failures.length).toBe(2);
    expect(JSON.stringify(failures)).not.toContain(PASSWORD);
    expect(failures.map((f: { reason: string }) => f.reason).join("\n")).toMatch(/username/);
  });

  it("acknowledges Cancel, telling the engine's log", async () => {
    const res = await rpc.call("cancel", new Empty());
    expect(res.toObject()).toEqual({});
    expect(engine.logs.at(-1)).toEqual({
      severity: 0, // LogSeverity.DEBUG
      message: "runpod-native: cancelled; waits in flight end now, nothing new is written",
      urn: "",
    });
  });

  it("a resource type it does not serve is refused, naming what it serves", async () => {
    const { version } = JSON.parse(readFileSync(path.join(__dirname, "../../package.json"), "utf8"));
    const error = await failure(() =>
      rpc.call(
        "create",
        new pb.CreateRequest()
          .setUrn(urnOf("runpod-native:index:Instance", "p"))
          .setType("runpod-native:index:Instance")
          .setProperties(Struct.fromJavaScript({})),
      ),
    );
    expect(error).toEqual({
      code: 3,
      message: `runpod-native does not serve runpod-native:index:Instance: this version (${version}) serves ${SERVED_CLASSES.map(tokenOf).join(", ")}. Check the resource's type, or install a newer pulumi-runpod-dynamic when it names a resource added since.`,
    });
  });
});

describe("pulumi-resource-runpod-native with a wrong API key", () => {
  it("fails a create naming this provider's config key, not the dynamic provider's", async () => {
    const rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    try {
      await rig.configure({ apiKey: secret("wrong-key-31c4"), restUrl: rig.emu.restUrl });
      const error = await failure(() =>
        resourceCalls(rig.rpc, TYPE, "creds").create({
          name: "n",
          username: "u",
          password: secret(PASSWORD),
        }),
      );
      expect(error.code).toBe(2);
      expect(error.message).toContain(
        "Check the API key: the secret stack config runpod-native:apiKey, or the environment variable RUNPOD_API_KEY.",
      );
      expect(error.message).not.toMatch(/\brunpod:apiKey|wrong-key-31c4/);
    } finally {
      await rig.close();
    }
  });
});

describe("pulumi-resource-runpod-native without an API key", () => {
  it("fails a create naming the config key and the environment variable, before any request", async () => {
    const rig = await startPluginRig({ rateLimits: false });
    try {
      await rig.configure({ restUrl: rig.emu.restUrl });
      const error = await failure(() =>
        resourceCalls(rig.rpc, TYPE, "creds").create({
          name: "n",
          username: "u",
          password: secret(PASSWORD),
        }),
      );
      expect(error).toEqual({
        code: 2,
        message:
          'No RunPod API key: set the secret stack config "runpod-native:apiKey" (pulumi config set --secret runpod-native:apiKey ...) or the environment variable RUNPOD_API_KEY.',
      });
      expect(rig.emu.stats().requestsByInterface.management).toBe(0);
    } finally {
      await rig.close();
    }
  });
});

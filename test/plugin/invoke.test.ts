/**
 * The native plugin serving every lookup through `Invoke` over gRPC, against the emulator: each
 * function answers what the TypeScript function answers for the same arguments (the plugin calls
 * it), in the shape its schema declares; a bad argument is an `Invoke` failure naming the property
 * and what is allowed; a service error is the call's error, without the API key; the schema lists
 * exactly the functions served. Needs the build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { getBilling } from "../../src/provider/billing/lookup";
import { getCpuTypes, getDataCenters, getGpuTypes } from "../../src/provider/catalog/lookups";
import { getCluster } from "../../src/provider/cluster/lookup";
import { getEcrDelegations } from "../../src/provider/ecrDelegation/lookup";
import { getEndpointHealth } from "../../src/provider/endpointHealth";
import { getNetworkVolume, getNetworkVolumes } from "../../src/provider/networkVolume/lookups";
import { getPod } from "../../src/provider/pod/lookup";
import { LOOKUPS } from "../../src/provider/resources";
import { getServerlessEndpoint } from "../../src/provider/serverlessEndpoint/lookup";
import { getSshKeys } from "../../src/provider/sshKey/lookup";
import { failure, type PluginRig, pb, Struct, secret, startPluginRig } from "./pluginKit";

const API_KEY = "plugin-invoke-key-4b9d17";
const WRONG_KEY = "plugin-invoke-wrong-key-8c2e55";
const ENV_SECRET = "hf_Plugin-Invoke-Secret-1f6a0c";
const KEY_LINE = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpInvokeTestKeyLine0000000000000000000000000 me@host";
const tok = (fn: string) => `runpod-native:index:${fn}`;

describe("pulumi-resource-runpod-native: Invoke over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let client: RunpodClient;
  let schema: Record<string, any>;
  let podId: string;
  let clusterId: string;

  /** Invoke as the engine sends it (`provider.Invoke`): the token and the arguments. */
  const invoke = async (fn: string, args: object = {}) => {
    const res = await rig.rpc.call(
      "invoke",
      new pb.InvokeRequest().setTok(tok(fn)).setArgs(Struct.fromJavaScript(args)),
    );
    return {
      result: (res.getReturn()?.toJavaScript() ?? {}) as Record<string, any>,
      failures: res.getFailuresList().map((f: any) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  };

  beforeAll(async () => {
    rig = await startPluginRig({
      apiKeys: [API_KEY],
      rateLimits: false,
      // A clock that stands still: the pod's spend is the same for the plugin's call and the direct one.
      clock: new ManualClock(Date.UTC(2026, 5, 1)),
      endpoints: ["echo:2"],
      volumes: [
        { id: "vol-a", name: "models", size: 50, dataCenterId: "EU-RO-1" },
        { id: "vol-b", name: "scratch", size: 20, dataCenterId: "US-KS-2" },
      ],
    });
    emu = rig.emu;
    client = new RunpodClient({
      apiKey: API_KEY,
      restUrl: emu.restUrlV2,
      serverlessUrl: emu.serverlessUrl,
      maxRetries: 0,
      env: {},
    });
    podId = (
      await client.pods.create({
        name: "dev",
        image: "acme/dev:1",
        gpu: { id: "NVIDIA GeForce RTX 4090" },
        env: { HF_TOKEN: ENV_SECRET },
      })
    ).id;
    clusterId = (
      await client.clusters.create({
        name: "train",
        type: "TRAINING",
        image: "acme/train:1",
        compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
      })
    ).id;
    await client.account.setSshKeys([KEY_LINE]);
    await client.registries.delegations.create({
      resource: "arn:aws:ecr:eu-west-1:123456789012:repository/team/app",
      name: "team-app",
    });
    await rig.configure({
      apiKey: secret(API_KEY),
      restUrl: emu.restUrlV2,
      serverlessUrl: emu.serverlessUrl,
    });
    const res = await rig.rpc.call("getSchema", new pb.GetSchemaRequest());
    schema = JSON.parse(res.getSchema());
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, WRONG_KEY, ENV_SECRET]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  /** Each function, arguments that find something, and what the TypeScript function answers for them. */
  const calls: { fn: string; args: object; direct: () => Promise<unknown> }[] = [
    {
      fn: "getGpuTypes",
      args: { serverless: true },
      direct: () => getGpuTypes({ serverless: true }, { client }),
    },
    { fn: "getCpuTypes", args: {}, direct: () => getCpuTypes({}, { client }) },
    {
      fn: "getDataCenters",
      args: { availability: true },
      direct: () => getDataCenters({ availability: true }, { client }),
    },
    {
      fn: "getNetworkVolume",
      args: { name: "models" },
      direct: () => getNetworkVolume({ name: "models" }, { client }),
    },
    {
      fn: "getNetworkVolumes",
      args: { dataCenterId: "US-KS-2" },
      direct: () => getNetworkVolumes({ dataCenterId: "US-KS-2" }, { client }),
    },
    {
      fn: "getServerlessEndpoint",
      args: { id: "echo" },
      direct: () => getServerlessEndpoint({ id: "echo" }, { client }),
    },
    {
      fn: "getEndpointHealth",
      args: { endpointId: "echo" },
      direct: () => getEndpointHealth({ endpointId: "echo" }, { client }),
    },
    { fn: "getPod", args: { id: "" }, direct: () => getPod({ id: podId }, { client }) },
    { fn: "getCluster", args: { id: "" }, direct: () => getCluster({ id: clusterId }, { client }) },
    { fn: "getSshKeys", args: {}, direct: () => getSshKeys({}, { client }) },
    { fn: "getEcrDelegations", args: {}, direct: () => getEcrDelegations({}, { client }) },
    {
      fn: "getBilling",
      args: { lastN: 2, bucketSize: "day" },
      direct: () => getBilling({ lastN: 2, bucketSize: "day" }, { client }),
    },
  ];
  const argsOf = (c: (typeof calls)[number]) =>
    c.fn === "getPod" ? { id: podId } : c.fn === "getCluster" ? { id: clusterId } : c.args;

  it("lists exactly the functions it serves in its schema: every lookup of the package", async () => {
    const listed = Object.keys(schema.functions).sort();
    // What the plugin serves, as it says when asked for a function it does not have.
    const refused = await failure(() => invoke("getNothing"));
    expect(refused.code).toBe(3); // INVALID_ARGUMENT
    const served = /its functions are (.*)$/.exec(refused.message)?.[1]?.split(", ").sort();
    expect(refused.message).toMatch(
      /^runpod-native has no function runpod-native:index:getNothing; its functions are /,
    );
    expect(served).toEqual(listed);
    expect(listed).toEqual(LOOKUPS.map((l) => tok(l.fn)).sort());
    expect(calls.map((c) => tok(c.fn)).sort()).toEqual(listed);
  });

  it("answers each function with what the TypeScript function answers, in the shape its schema declares", async () => {
    for (const c of calls) {
      const { result, failures } = await invoke(c.fn, argsOf(c));
      expect(failures, c.fn).toEqual([]);
      const spec = schema.functions[tok(c.fn)];
      const row = LOOKUPS.find((l) => l.fn === c.fn)!;
      const direct = await c.direct();
      const plain = c.fn === "getPod" ? { ...result, env: result.env?.value } : result;
      expect(plain, c.fn).toEqual(
        JSON.parse(JSON.stringify(row.listResult ? { [row.listResult.property]: direct } : direct)),
      );
      for (const key of spec.outputs.required) expect(result, `${c.fn}.${key}`).toHaveProperty(key);
      // No field the schema does not declare.
      expect(
        Object.keys(result).filter((k) => !(k in spec.outputs.properties)),
        c.fn,
      ).toEqual([]);
    }
    // Concrete figures, so an empty answer on both sides cannot pass.
    expect((await invoke("getNetworkVolumes", { dataCenterId: "US-KS-2" })).result).toEqual({
      volumes: [expect.objectContaining({ id: "vol-b", name: "scratch", size: 20, dataCenterId: "US-KS-2" })],
    });
    expect((await invoke("getSshKeys")).result.keys).toEqual([
      expect.objectContaining({ publicKey: KEY_LINE, type: "ssh-ed25519", comment: "me@host" }),
    ]);
    const gpus = (await invoke("getGpuTypes", { serverless: true })).result.gpuTypes as {
      pool: string | null;
    }[];
    expect(gpus.length).toBeGreaterThan(0);
    // A null argument is one left out, as an SDK that sends None or nil means it.
    expect(await invoke("getGpuTypes", { serverless: true, pool: null })).toEqual({
      result: { gpuTypes: gpus },
      failures: [],
    });
    expect(gpus.every((g) => typeof g.pool === "string")).toBe(true);
    expect((await invoke("getServerlessEndpoint", { id: "echo" })).result).toMatchObject({
      id: "echo",
      workers: { IDLE: 2 },
    });
  });

  it("marks a pod's env secret, as its schema does, and everything an argument given secret touches", async () => {
    expect(schema.functions[tok("getPod")].outputs.properties.env.secret).toBe(true);
    const { result } = await invoke("getPod", { id: podId });
    expect(result.env).toEqual(secret({ HF_TOKEN: ENV_SECRET }));
    expect(result.id).toBe(podId);
    const fromSecret = await invoke("getPod", { id: secret(podId) });
    expect(fromSecret.result.id).toEqual(secret(podId));
    expect(fromSecret.result.env).toEqual(secret({ HF_TOKEN: ENV_SECRET }));
  });

  it("answers a bad argument with a failure naming the property and what is allowed, before any request", async () => {
    const bad: [string, object, { property: string; reason: string }][] = [
      [
        "getGpuTypes",
        { serverless: "yes" },
        { property: "serverless", reason: 'getGpuTypes: serverless must be true or false, got "yes"' },
      ],
      [
        "getGpuTypes",
        { pools: "ADA_24" },
        {
          property: "pools",
          reason: "getGpuTypes takes no argument pools; its arguments are pool, serverless, availability",
        },
      ],
      [
        "getCpuTypes",
        { availability: 1 },
        { property: "availability", reason: "getCpuTypes: availability must be true or false, got 1" },
      ],
      [
        "getDataCenters",
        { availability: "all" },
        { property: "availability", reason: 'getDataCenters: availability must be true or false, got "all"' },
      ],
      [
        "getNetworkVolume",
        { id: "vol-a", name: "models" },
        { property: "name", reason: "getNetworkVolume needs exactly one of id or name (got both)" },
      ],
      ["getNetworkVolumes", { name: " " }, { property: "name", reason: "name must not be empty" }],
      [
        "getServerlessEndpoint",
        { id: "a/b" },
        {
          property: "id",
          reason: expect.stringMatching(
            /^getServerlessEndpoint: id must be the serverless endpoint's id \(.*\), got "a\/b"$/,
          ),
        },
      ],
      [
        "getEndpointHealth",
        { endpointId: " " },
        {
          property: "endpointId",
          reason: expect.stringMatching(/^getEndpointHealth: endpointId must be .*, got " "$/),
        },
      ],
      [
        "getPod",
        { id: "../x" },
        {
          property: "id",
          reason:
            'getPod: id must be a non-empty pod id without whitespace or slashes, other than "." and "..", got "../x"',
        },
      ],
      [
        "getSshKeys",
        { all: true },
        { property: "all", reason: "getSshKeys takes no argument all; its arguments are none" },
      ],
      [
        "getEcrDelegations",
        { all: true },
        { property: "all", reason: "getEcrDelegations takes no argument all; its arguments are none" },
      ],
      [
        "getBilling",
        { bucketSize: "fortnight" },
        {
          property: "bucketSize",
          reason: expect.stringMatching(/^Invalid getBilling: .*bucketSize.*hour, day, week, month.*year/),
        },
      ],
    ];
    const before = emu.stats().requests;
    for (const [fn, args, expected] of bad) {
      const answer = await invoke(fn, args);
      expect(answer, fn).toEqual({ result: {}, failures: [expected] });
    }
    expect(emu.stats().requests).toBe(before);
  });

  it("fails a call the service refuses with the service's message, never the API key", async () => {
    const unknownPod = await failure(() => invoke("getPod", { id: "pod-that-is-not-there" }));
    expect(unknownPod.code).toBe(2); // UNKNOWN, as an operation's error
    expect(unknownPod.message).toMatch(/404|not found/i);
    expect(unknownPod.message).toContain("pod-that-is-not-there");
    // A key the service does not take: every function fails with its answer, and says nothing of the key.
    await rig.configure({
      apiKey: secret(WRONG_KEY),
      restUrl: emu.restUrlV2,
      serverlessUrl: emu.serverlessUrl,
    });
    try {
      for (const c of calls) {
        const refused = await failure(() => invoke(c.fn, argsOf(c)));
        expect(refused.code, c.fn).toBe(2);
        expect(refused.message, c.fn).toMatch(/401|unauthori[sz]ed|API key/i);
        expect(refused.message, c.fn).not.toContain(WRONG_KEY);
        expect(refused.message, c.fn).not.toContain(API_KEY);
      }
    } finally {
      await rig.configure({
        apiKey: secret(API_KEY),
        restUrl: emu.restUrlV2,
        serverlessUrl: emu.serverlessUrl,
      });
    }
  });

  it("never shows an argument given secret in a failure or an error: the lookups echo their arguments", async () => {
    const hidden = "pod-id-from-a-secret-7f3a";
    const missingPod = await failure(() => invoke("getPod", { id: secret(hidden) }));
    expect(missingPod).toEqual({
      code: 2,
      message: "GET /v2/pods/[redacted] failed with 404: Not Found; pod [redacted] not found",
    });
    const missingVolume = await invoke("getNetworkVolume", { id: secret(hidden) });
    expect(missingVolume.result).toEqual({});
    expect(missingVolume.failures).toHaveLength(1);
    expect(missingVolume.failures[0]!.property).toBe("id");
    expect(missingVolume.failures[0]!.reason).toMatch(/^No network volume has id "\[redacted\]"\. /);
    expect(JSON.stringify(missingVolume.failures)).not.toContain(hidden);
  });

  it("names this provider's config key when no API key is set", async () => {
    await rig.configure({ restUrl: emu.restUrlV2 });
    try {
      const refused = await failure(() => invoke("getSshKeys"));
      expect(refused).toEqual({
        code: 2,
        message:
          'No RunPod API key: set the secret stack config "runpod-native:apiKey" ' +
          "(pulumi config set --secret runpod-native:apiKey ...) or the environment variable RUNPOD_API_KEY.",
      });
    } finally {
      await rig.configure({
        apiKey: secret(API_KEY),
        restUrl: emu.restUrlV2,
        serverlessUrl: emu.serverlessUrl,
      });
    }
  });
});

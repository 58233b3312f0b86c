/**
 * The ceiling line: a plain `pulumi preview` shows a price change only as `[diff: ~hourlyCost]`, so
 * the plugin logs a priced resource's ceiling to the engine as an info diagnostic on that resource
 * (`src/plugin/server.ts`, `ceilingOf`): Diff logs `ceiling <old> → <new> USD/h` when they differ,
 * Check of a new resource (no olds) `ceiling <usd> USD/h` when it passes, nothing beside a refusal. Read from the stub engine's recorded
 * logs, over gRPC against the emulator. Needs the build (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EngineLog,
  type PluginRig,
  pb,
  resourceCalls,
  secret,
  startPluginRig,
  UNKNOWN,
} from "./pluginKit";

const API_KEY = "plugin-ceiling-key-91b0e4";
const INFO = 1; // pulumirpc.LogSeverity.INFO
const D = pb.DiffResponse.DiffChanges;

describe("pulumi-resource-runpod-native: a priced resource's ceiling as an info diagnostic", () => {
  let rig: PluginRig;
  /** The log lines the engine received since the last call of `newLogs`. */
  let seen = 0;
  const newLogs = (): EngineLog[] => {
    const logs = rig.engine.logs.slice(seen);
    seen = rig.engine.logs.length;
    return logs;
  };

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    await rig.configure({
      apiKey: secret(API_KEY),
      restUrl: rig.emu.restUrlV2,
      serverlessUrl: rig.emu.serverlessUrl,
    });
    newLogs(); // Configure's debug line
  });

  afterAll(async () => {
    await rig?.close();
  });

  const endpointArgs = (max: unknown) => ({
    name: "priced",
    type: "QUEUE",
    image: "acme/api:1",
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max },
  });

  it("ServerlessEndpoint: a new one's ceiling, then a change's two figures on its URN; nothing when unchanged or unknown", async () => {
    const ep = resourceCalls(rig.rpc, "runpod-native:index:ServerlessEndpoint", "api");

    // A new endpoint: Check without olds (the engine plans a create; no Diff follows) logs its ceiling.
    const two = (await ep.check(endpointArgs(2))).inputs;
    expect(two.hourlyCost).toEqual({ floorUsd: 0, ceilingUsd: 2.2, ratePerWorkerUsd: 1.1 });
    expect(newLogs()).toEqual([{ severity: INFO, message: "ceiling 2.2 USD/h", urn: ep.urn }]);

    // workers.max 2 -> 8: Check with olds logs nothing; Diff logs the change once, both figures.
    const eight = (await ep.check(endpointArgs(8), two)).inputs;
    expect(eight.hourlyCost.ceilingUsd).toBe(8.8);
    const planned = await ep.diff("ep-priced", two, eight, two);
    expect([planned.changes, planned.detailed]).toMatchObject([
      D.DIFF_SOME,
      { hourlyCost: expect.any(Number) },
    ]);
    expect(newLogs()).toEqual([{ severity: INFO, message: "ceiling 2.2 → 8.8 USD/h", urn: ep.urn }]);

    // No change: nothing logged.
    expect((await ep.diff("ep-priced", two, two, two)).changes).toBe(D.DIFF_NONE);
    // A change that keeps the ceiling (a new image): nothing logged.
    const image = (await ep.check({ ...endpointArgs(2), image: "acme/api:2" }, two)).inputs;
    expect((await ep.diff("ep-priced", two, image, two)).changes).toBe(D.DIFF_SOME);
    expect(newLogs()).toEqual([]);

    // A preview whose workers.max is not known yet: the ceiling is unknown, nothing logged.
    const unknown = (await ep.check(endpointArgs(UNKNOWN), two)).inputs;
    expect(unknown.hourlyCost).toBe(UNKNOWN);
    expect((await ep.diff("ep-priced", two, unknown, two)).changes).toBe(D.DIFF_SOME);
    // Nor a new one whose ceiling is unknown.
    const fresh = resourceCalls(rig.rpc, "runpod-native:index:ServerlessEndpoint", "later");
    expect((await fresh.check(endpointArgs(UNKNOWN))).inputs.hourlyCost).toBe(UNKNOWN);
    expect(newLogs()).toEqual([]);
  });

  it("Pod: a change of GPU count logs the ceiling's two figures on its URN", async () => {
    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "dev");
    const args = (count: number) => ({ name: "dev", image: "acme/dev:1", gpu: { id: "NVIDIA H200", count } });
    const one = (await pod.check(args(1))).inputs;
    const four = (await pod.check(args(4), one)).inputs;
    const [a, b] = [one.hourlyCost.ceilingUsd, four.hourlyCost.ceilingUsd];
    expect([a, b]).toEqual([3.59, 14.36]);
    newLogs();
    await pod.diff("pod-dev", one, four, one);
    expect(newLogs()).toEqual([{ severity: INFO, message: "ceiling 3.59 → 14.36 USD/h", urn: pod.urn }]);
  });

  it("a new resource's ceiling only when Check passes: nothing beside its own maxHourlyUsd's refusal", async () => {
    const ep = resourceCalls(rig.rpc, "runpod-native:index:ServerlessEndpoint", "capped");
    const refused = await ep.check({ ...endpointArgs(4), maxHourlyUsd: 1 });
    expect(refused.failures.map((f: { property: string }) => f.property)).toEqual(["maxHourlyUsd"]);
    expect(refused.inputs.hourlyCost.ceilingUsd).toBe(4.4);
    expect(newLogs()).toEqual([]);
    // The same endpoint under a budget it fits: accepted, and its ceiling logged on its URN.
    const accepted = await ep.check({ ...endpointArgs(4), maxHourlyUsd: 5 });
    expect(accepted.failures).toEqual([]);
    expect(newLogs()).toEqual([{ severity: INFO, message: "ceiling 4.4 USD/h", urn: ep.urn }]);
  });

  it("logs nothing for a resource without a price (a NetworkVolume's is monthly, set at create)", async () => {
    const vol = resourceCalls(rig.rpc, "runpod-native:index:NetworkVolume", "data");
    const small = (await vol.check({ name: "data", size: 10, dataCenterId: "EU-RO-1" })).inputs;
    const big = (await vol.check({ name: "data", size: 40, dataCenterId: "EU-RO-1" }, small)).inputs;
    expect((await vol.diff("vol-data", small, big, small)).changes).toBe(D.DIFF_SOME);
    expect(newLogs()).toEqual([]);
  });
});

/**
 * The native plugin serving Pod over gRPC against the emulator: a pod landing on a fallback GPU,
 * `env` secret in and out, and the stack budget (`runpod-native:maxHourlyUsd`) refusing in Check a
 * pod that takes the sum over, each pod counted once by the URN Check adds. Needs the build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { type PluginRig, pb, type providerClient, resourceCalls, secret, startPluginRig } from "./pluginKit";

const API_KEY = "plugin-pod-key-7e3a21";
const ENV_SECRET = "hf_Plugin-Pod-Secret-5d4c3b";
const NO_STOCK = "NVIDIA H200";
const TYPE = "runpod-native:index:Pod";

describe("pulumi-resource-runpod-native: Pod over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;
  let stocked: string;
  let rate: number;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false, podStartMs: 50 });
    ({ emu, rpc } = rig);
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    const gpus = await service.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
    // The emulator's catalog: a type in stock at 0.25 USD/h (secure), and NO_STOCK, the dearest candidate.
    const found = gpus.find((g) => g.availability === "HIGH");
    stocked = found?.id ?? "";
    expect([found?.price?.secure, gpus.find((g) => g.id === NO_STOCK)?.availability]).toEqual([0.25, "NONE"]);
    rate = 3.59;
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, ENV_SECRET]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  it("a stack budget refuses in Check the pod that takes the sum over; one lands on a fallback, updates, with env secret", async () => {
    // A budget of 5 USD/h: one pod of ceiling 3.59 USD/h fits, two do not.
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrlV2, maxHourlyUsd: "5" });
    // Two resources of the program, "a" and "b", whose pods have the same name: only their URNs tell them apart.
    const args = {
      name: "worker",
      image: "acme/dev:1",
      gpu: { id: NO_STOCK },
      fallbackGpuIds: [stocked],
      env: { HF_TOKEN: ENV_SECRET },
    };
    const hourlyCost = { ceilingUsd: rate, floorUsd: 0.25, ratePerWorkerUsd: rate };
    const a = resourceCalls(rpc, TYPE, "a");
    const b = resourceCalls(rpc, TYPE, "b");

    // preview, then the up: "a" checked twice, counted once; env secret though given plain.
    const inputs = { ...args, env: secret({ HF_TOKEN: ENV_SECRET }), hourlyCost };
    const seen = rig.engine.logs.length;
    expect(await a.check(args)).toEqual({ inputs, failures: [] });
    expect(await a.check(args)).toEqual({ inputs, failures: [] });
    // Each accepted Check of the new pod logs its ceiling on its URN (INFO).
    const ceilingLine = { severity: 1, message: `ceiling ${rate} USD/h`, urn: a.urn };
    expect(rig.engine.logs.slice(seen)).toEqual([ceilingLine, ceilingLine]);
    expect(await a.create(inputs, true)).toEqual({ id: "", outs: inputs });

    // "b" takes the sum to 7.18 USD/h: refused in Check, naming this provider's key and both parts.
    const refused = await b.check(args);
    // The wording is the budget module's (another part of the package); what the plugin decides is
    // asserted: one failure, this provider's key, both resources counted (by URN: their pods share a name).
    expect(refused.failures.map((f: { property: string }) => f.property)).toEqual([""]);
    const reason: string = refused.failures[0].reason;
    expect(reason).toMatch(/^runpod-native:maxHourlyUsd is 5 USD\/h, .* add up to 7\.18 USD\/h/);
    expect(reason.split('Pod "worker" 3.59 USD/h (one pod').length - 1).toBe(2);
    expect(reason).toContain("pulumi config set runpod-native:maxHourlyUsd <usd>");
    expect(reason).not.toMatch(/\brunpod:maxHourlyUsd/);
    // No ceiling line beside the refusal: only the accepted pod's two.
    expect(rig.engine.logs.slice(seen)).toEqual([ceilingLine, ceilingLine]);
    // Nothing was written by the checks or the preview.
    expect(await service.pods.list()).toEqual([]);

    // up of "a": gpu.id has no stock, so it lands on the fallback; env still secret.
    const made = await a.create(inputs);
    expect(made.outs).toMatchObject({
      name: "worker",
      status: "RUNNING",
      desiredStatus: "RUNNING",
      gpu: { id: stocked, count: 1 },
      requestedGpu: { id: NO_STOCK },
      hourlyCost,
      env: secret({ HF_TOKEN: ENV_SECRET }),
    });
    expect((await service.pods.list()).map((p) => [p.id, p.name])).toEqual([[made.id, "worker"]]);
    // The id is the answer's id, not an output (the schema declares none: `id` is reserved).
    expect(made.outs).not.toHaveProperty("id");

    // unchanged: no change planned (the state's outputs against the same inputs).
    const D = pb.DiffResponse.DiffChanges;
    expect((await a.diff(made.id, made.outs, inputs)).changes).toBe(D.DIFF_NONE);
    // a longer wait: changed in place, nothing replaced.
    const longer = (await a.check({ ...args, waitTimeoutMs: 120000 }, inputs)).inputs;
    const planned = await a.diff(made.id, made.outs, longer, inputs);
    expect([planned.changes, planned.replaces, planned.deleteBeforeReplace]).toEqual([
      D.DIFF_SOME,
      [],
      false,
    ]);
    expect(planned.detailed.waitTimeoutMs).toBe(pb.PropertyDiff.Kind.ADD);
    const updated = await a.update(made.id, made.outs, longer);
    expect(updated).toEqual({
      ...made.outs,
      waitTimeoutMs: 120000,
      runtime: { ports: [], uptime: expect.any(Number) },
    });

    // refresh: the pod read back, env still secret; destroy; then gone.
    // (the emulator's uptime is the wall clock's: any count of seconds)
    expect(await a.read(made.id, updated)).toEqual({
      id: made.id,
      props: { ...updated, runtime: { ports: [], uptime: expect.any(Number) } },
    });
    await a.delete(made.id, updated);
    expect(await service.pods.list()).toEqual([]);
    expect(await a.read(made.id, made.outs)).toEqual({ id: "", props: {} });
  });

  it("after a refresh finds a pod renamed outside, Diff lists only the name, not what the service filled in", async () => {
    const c = resourceCalls(rpc, TYPE, "drifted");
    const args = { name: "drifted", image: "acme/dev:1", gpu: { id: stocked } };
    const inputs = (await c.check(args)).inputs;
    const made = await c.create(inputs);
    // The service answers the GPU with its count, which the program left out.
    expect(made.outs.gpu).toEqual({ id: stocked, count: 1 });
    await service.pods.update(made.id, { name: "renamed-in-console" });
    // refresh: the pod's outputs now hold the new name; a pod's read keeps the old inputs.
    const refreshed = await c.read(made.id, made.outs, inputs);
    expect([refreshed.id, refreshed.props.name]).toEqual([made.id, "renamed-in-console"]);
    // the next preview, the program unchanged: the name goes back; nothing else changes.
    const planned = await c.diff(made.id, refreshed.props, inputs, inputs);
    expect(planned).toEqual({
      changes: pb.DiffResponse.DiffChanges.DIFF_SOME,
      replaces: [],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { name: pb.PropertyDiff.Kind.UPDATE },
    });
    await c.delete(made.id, refreshed.props);
  });
});

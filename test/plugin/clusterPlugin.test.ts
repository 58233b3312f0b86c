/**
 * The native plugin serving Cluster, driven over gRPC against the emulator (member pods starting in
 * 50 ms of its clock; cluster stock from the catalog's CLUSTER levels, as in
 * test/provider/clusterHost.test.ts) through what a program's preview, up, refresh, change and
 * destroy produce: an unknown passes Check and previews without a write; a create waits until every
 * member runs; a rename changes it in place, a compute change replaces it naming the field; members
 * in ERROR are an init error carrying the id; `maxHourlyUsd` refuses in Check; a new cluster logs its
 * ceiling; `env` stays secret in and out. Needs the build (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { failure, type PluginRig, pb, resourceCalls, secret, startPluginRig, UNKNOWN } from "./pluginKit";

const API_KEY = "plugin-cluster-key-6a0f3e";
const ENV_SECRET = "hf_Plugin-Cluster-Secret-2c8d1a";
const TYPE = "runpod-native:index:Cluster";
const H100 = "NVIDIA H100 80GB HBM3";
/** The catalog's secure pod price of an H100, USD an hour per GPU. */
const H100_PRICE = 2.69;
const INFO = 1; // pulumirpc.LogSeverity.INFO
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

describe("pulumi-resource-runpod-native: Cluster over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let service: RunpodClient;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false, podStartMs: 50 });
    emu = rig.emu;
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrlV2 });
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, ENV_SECRET]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  /** A TRAINING cluster of `podCount` pods of `gpuCountPerPod` H100s, `env` given plain. */
  const args = (name: string, podCount = 2, gpuCountPerPod = 1) => ({
    name,
    type: "TRAINING",
    compute: { gpuTypeId: H100, gpuCountPerPod, podCount },
    image: "acme/train:1",
    env: { HF_TOKEN: ENV_SECRET },
  });
  const priced = (podCount: number, gpuCountPerPod: number) => ({
    floorUsd: podCount * gpuCountPerPod * H100_PRICE,
    ceilingUsd: podCount * gpuCountPerPod * H100_PRICE,
    ratePerWorkerUsd: gpuCountPerPod * H100_PRICE,
  });
  const requests = () => emu.stats().requestsByInterface.management;
  const named = async (name: string) => (await service.clusters.list()).filter((c) => c.name === name);

  it("preview with an unknown, create waited to running, rename in place, a compute change replaces, refresh of one gone", async () => {
    const c = resourceCalls(rig.rpc, TYPE, "train");

    // preview: the image not known yet passes Check (priced from compute, its ceiling logged on
    // the URN as a new resource's), and the create is previewed without a request.
    const seen = rig.engine.logs.length;
    const previewed = await c.check({ ...args("train"), image: UNKNOWN });
    expect(previewed).toEqual({
      inputs: {
        ...args("train"),
        image: UNKNOWN,
        env: secret({ HF_TOKEN: ENV_SECRET }),
        hourlyCost: priced(2, 1),
      },
      failures: [],
    });
    expect(rig.engine.logs.slice(seen)).toEqual([
      { severity: INFO, message: `ceiling ${2 * H100_PRICE} USD/h`, urn: c.urn },
    ]);
    const before = requests();
    expect(await c.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(requests()).toBe(before);
    expect(await service.clusters.list()).toEqual([]);

    // up: created, returned once every member runs; env secret though given plain.
    const { inputs } = await c.check(args("train"));
    expect(inputs).toEqual({ ...previewed.inputs, image: "acme/train:1" });
    const made = await c.create(inputs);
    expect((await named("train")).map((x) => x.id)).toEqual([made.id]);
    const members = await service.clusters.pods(made.id);
    expect(members.map((m) => m.status)).toEqual(["RUNNING", "RUNNING"]);
    expect(made.outs).toMatchObject({
      name: "train",
      type: "TRAINING",
      compute: { gpuTypeId: H100, gpuCountPerPod: 1, podCount: 2 },
      image: "acme/train:1",
      env: secret({ HF_TOKEN: ENV_SECRET }),
      pods: { total: 2, byStatus: { RUNNING: 2 } },
      members: members.map((m) => ({ id: m.id, status: "RUNNING", rank: m.cluster?.rank })),
      hourlyCost: priced(2, 1),
    });

    // unchanged: no change planned.
    expect((await c.diff(made.id, made.outs, inputs)).changes).toBe(D.DIFF_NONE);

    // a rename: changed in place, nothing replaced; the same cluster and members.
    const renamed = (await c.check(args("train-2"), inputs)).inputs;
    const rename = await c.diff(made.id, made.outs, renamed, inputs);
    expect([rename.changes, rename.replaces, rename.deleteBeforeReplace, rename.detailed]).toEqual([
      D.DIFF_SOME,
      [],
      false,
      { name: K.UPDATE },
    ]);
    const updated = await c.update(made.id, made.outs, renamed);
    expect(updated).toMatchObject({ name: "train-2", env: secret({ HF_TOKEN: ENV_SECRET }) });
    expect(updated.members.map((m: { id: string }) => m.id)).toEqual(members.map((m) => m.id));
    expect((await service.clusters.get(made.id)).name).toBe("train-2");

    // more pods: a replacement naming compute (create the new one first), its ceiling's two figures logged.
    const bigger = (await c.check(args("train-2", 3), renamed)).inputs;
    const logged = rig.engine.logs.length;
    const replace = await c.diff(made.id, updated, bigger, renamed);
    expect(rig.engine.logs.slice(logged)).toEqual([
      { severity: INFO, message: `ceiling ${2 * H100_PRICE} → ${3 * H100_PRICE} USD/h`, urn: c.urn },
    ]);
    expect([replace.changes, replace.replaces, replace.deleteBeforeReplace]).toEqual([
      D.DIFF_SOME,
      ["compute"],
      false,
    ]);
    expect(replace.detailed.compute).toBe(K.UPDATE_REPLACE);

    // refresh: read back with env still secret; deleted outside Pulumi, it reads as gone.
    const read = await c.read(made.id, updated);
    expect(read.id).toBe(made.id);
    expect(read.props).toMatchObject({ name: "train-2", env: secret({ HF_TOKEN: ENV_SECRET }) });
    await service.clusters.delete(made.id);
    expect(await c.read(made.id, updated)).toEqual({ id: "", props: {} });
  });

  it("destroys a cluster with its member pods", async () => {
    const c = resourceCalls(rig.rpc, TYPE, "destroy");
    const { inputs } = await c.check(args("destroy"));
    const made = await c.create(inputs);
    await c.delete(made.id, made.outs);
    await expect(service.clusters.get(made.id)).rejects.toBeInstanceOf(NotFoundError);
    for (const m of made.outs.members)
      await expect(service.pods.get(m.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("members in ERROR: an init error carrying the id, the members and env still secret", async () => {
    const c = resourceCalls(rig.rpc, TYPE, "broken");
    const { inputs } = await c.check({ ...args("broken"), image: "acme/train:unpullable" });
    const error = await failure(() => c.create(inputs));
    const [live] = await named("broken");
    const members = await service.clusters.pods(live!.id);
    expect(members.map((m) => m.status)).toEqual(["ERROR", "ERROR"]);
    // gRPC UNKNOWN with an ErrorResourceInitFailed detail: the engine records a partial failure.
    expect([error.code, error.init?.id]).toEqual([2, live!.id]);
    expect(error.message).toContain(
      `Cluster "broken" (id ${live!.id}) is not usable: 2 of its 2 member pods went to ERROR instead of RUNNING. ` +
        `Members not usable: ${members.map((m) => `pod ${m.id}: ERROR`).join("; ")}.`,
    );
    expect(error.init?.reasons).toEqual([error.message]);
    expect(error.init?.properties).toMatchObject({
      name: "broken",
      env: secret({ HF_TOKEN: ENV_SECRET }),
      members: members.map((m) => ({ id: m.id, status: "ERROR" })),
    });
    await c.delete(live!.id, error.init!.properties);
    expect(await named("broken")).toEqual([]);
  });

  it("refuses in Check a cluster over its own maxHourlyUsd, before any write", async () => {
    const c = resourceCalls(rig.rpc, TYPE, "dear");
    const before = requests();
    const seen = rig.engine.logs.length;
    const { failures } = await c.check({ ...args("dear", 2, 8), maxHourlyUsd: 40 });
    const ceiling = 2 * 8 * H100_PRICE;
    expect(failures).toEqual([
      {
        property: "maxHourlyUsd",
        reason:
          `Cluster "dear": its hourly ceiling ${ceiling} USD/h (2 pods × 8 "${H100}" GPUs, ${8 * H100_PRICE} USD/h a pod, ` +
          "list prices) is over maxHourlyUsd 40 USD/h. Nothing was created or changed. Lower its compute.podCount " +
          "or compute.gpuCountPerPod, or a cheaper compute.gpuTypeId, or raise maxHourlyUsd.",
      },
    ]);
    // No request at all: the catalog's prices were read by an earlier Check and are cached.
    expect(requests()).toBe(before);
    expect(await named("dear")).toEqual([]);
    // No ceiling line beside the refusal (Check logs a new resource's only when it passes).
    expect(rig.engine.logs.slice(seen)).toEqual([]);
  });
});

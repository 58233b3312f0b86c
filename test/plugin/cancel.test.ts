/**
 * `Cancel` over gRPC, as the engine sends it on the first Ctrl-C (`SignalCancellation`,
 * pkg/host/host.go): a Create waiting for its object ends now as an init error carrying the id
 * (so the engine keeps the object in the state), however long its own `waitTimeoutMs` is; and
 * nothing new is written afterwards. Each test starts its own plugin: a cancellation is for the
 * process's life. Needs the build.
 */
import { describe, expect, it } from "vitest";
import { FaultProxy } from "../support/faultProxy.mts";
import {
  availableGpu,
  cancel,
  cancelRigPerTest,
  closedAfterEach,
  clusterArgs,
  HOUR_MS,
  until,
  untilExists,
} from "./cancelKit";
import { failure, resourceCalls } from "./pluginKit";

const API_KEY = "plugin-cancel-key-51c9e0";

describe("pulumi-resource-runpod-native: Cancel", () => {
  const rigs = cancelRigPerTest(API_KEY);
  const keepProxy = closedAfterEach<FaultProxy>();

  it("a Pod waiting to run ends as an init error with its id; a later Create or Update sends nothing", async () => {
    // The emulator's pods take an hour to start; the pod's own wait allows an hour too.
    const { rig, service } = await rigs.start({ emulator: { podStartMs: HOUR_MS } });
    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "trainer");
    const gpu = await availableGpu(service);
    const checked = await pod.check({ name: "trainer", image: "acme/train:1", gpu, waitTimeoutMs: HOUR_MS });
    expect(checked.failures).toEqual([]);
    const inputs = checked.inputs;
    const creating = failure(() => pod.create(inputs));
    // The POST landed and the create is waiting: now the engine cancels.
    const [made] = await untilExists(() => service.pods.list());
    await cancel(rig);

    const error = await creating;
    expect(error.init?.id).toBe(made.id);
    // The pod as last read (the emulator's pod is provisioning: an hour to start).
    const status = String(error.init?.properties.status);
    expect([status, error.init?.properties.name]).toEqual(["PROVISIONING", "trainer"]);
    expect(error.init?.reasons).toHaveLength(1);
    expect(error.init?.reasons[0]).toMatch(
      new RegExp(
        `^Pod "trainer" \\(id ${made.id}\\) is not usable: it was not RUNNING when the deployment was ` +
          "cancelled \\(Ctrl-C\\); its status is PROVISIONING\\. Status history: (CREATED -> )?PROVISIONING\\. ",
      ),
    );
    expect(error.init?.reasons[0]).toContain("The pod is kept in the stack");
    // The pod is still there: the engine keeps it (by the init error's id); nothing was deleted.
    expect((await service.pods.list()).map((p) => p.id)).toEqual([made.id]);

    // After the cancellation nothing new is written: a create and an update are refused unsent.
    const other = resourceCalls(rig.rpc, "runpod-native:index:Pod", "second");
    const refused = await failure(() => other.create({ ...inputs, name: "second" }));
    expect([refused.init, refused.message]).toEqual([
      undefined,
      'Pod "second": not created: the deployment was cancelled (Ctrl-C); nothing was sent to RunPod. Run ' +
        "pulumi up again to create it.",
    ]);
    const state = error.init?.properties ?? {};
    const notUpdated = await failure(() => pod.update(made.id, state, { ...inputs, name: "renamed" }));
    expect(notUpdated.message).toBe(
      `Pod "trainer" (id ${made.id}): not updated: the deployment was cancelled (Ctrl-C); nothing was sent to ` +
        "RunPod. Run pulumi up again to update it.",
    );
    expect((await service.pods.list()).map((p) => [p.id, p.name])).toEqual([[made.id, "trainer"]]);
    // Reads and deletes are not refused: they write nothing new.
    expect((await pod.read(made.id, state)).id).toBe(made.id);
    await pod.delete(made.id, state);
    expect(await service.pods.list()).toEqual([]);
  });
  it("a Cluster waiting for its members ends as an init error with its id, naming each member and its status", async () => {
    // The emulator's member pods take an hour to start; the cluster's own wait allows an hour too.
    const { rig, service, config } = await rigs.start({ emulator: { podStartMs: HOUR_MS } });
    // Through a recording proxy, to cancel once the wait has read the members (not before its first read).
    const proxy = keepProxy(await new FaultProxy(rig.emu.restUrlV2.replace(/\/v2$/, "")).start());
    await rig.configure({ ...config, restUrl: `${proxy.url}/v2` });
    const cluster = resourceCalls(rig.rpc, "runpod-native:index:Cluster", "train");
    const checked = await cluster.check(clusterArgs("train", { waitTimeoutMs: HOUR_MS }));
    expect(checked.failures).toEqual([]);
    const creating = failure(() => cluster.create(checked.inputs));
    // The POST landed and the wait has read the members (a second read was sent, so the first was
    // answered and seen): now the engine cancels.
    const [made] = await untilExists(() => service.clusters.list());
    const membersRead = `/v2/clusters/${made.id}/pods`;
    await until("the members read twice", () => {
      const reads = proxy.seen.filter((r) => r.method === "GET" && r.path === membersRead);
      return reads.length >= 2;
    });
    await cancel(rig);

    const error = await creating;
    const members = await service.clusters.pods(made.id);
    expect(members.map((m) => m.status)).toEqual(["PROVISIONING", "PROVISIONING"]);
    expect(error.init?.id).toBe(made.id);
    expect(error.init?.reasons).toEqual([
      `Cluster "train" (id ${made.id}) is not usable: 2 of its 2 member pods were not RUNNING when the ` +
        "deployment was cancelled (Ctrl-C). Members not usable: " +
        `${members.map((m) => `pod ${m.id}: PROVISIONING`).join("; ")}.\n` +
        "The cluster is kept in the stack (its member pods cost money while they hold GPUs): fix the cause and " +
        "run pulumi up again (it checks the members again), or remove the Cluster from the program to delete it.",
    ]);
    // The cluster as last read, its members with their status.
    expect(error.init?.properties).toMatchObject({
      name: "train",
      members: members.map((m) => ({ id: m.id, status: "PROVISIONING" })),
    });
    // The cluster is still there: the engine keeps it (by the init error's id); nothing was deleted.
    expect((await service.clusters.list()).map((c) => c.id)).toEqual([made.id]);
    // And no further cluster is created after the cancellation.
    const other = resourceCalls(rig.rpc, "runpod-native:index:Cluster", "second");
    const refused = await failure(() => other.create({ ...checked.inputs, name: "second" }));
    expect([refused.init, refused.message]).toEqual([
      undefined,
      'Cluster "second": not created: the deployment was cancelled (Ctrl-C); nothing was sent to RunPod. Run ' +
        "pulumi up again to create it.",
    ]);
    expect((await service.clusters.list()).map((c) => c.id)).toEqual([made.id]);
  });
});

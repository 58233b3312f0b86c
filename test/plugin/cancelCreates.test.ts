/**
 * `Cancel` while a Create is still sending (as the engine sends it on the first Ctrl-C,
 * `SignalCancellation`, pkg/host/host.go): nothing new is POSTed after it (a Delete in flight still
 * finishes), neither a pod's next
 * GPU type nor a resend after a 429, yet an earlier POST's answer is still settled by listing (the
 * service may have made the object). Against a scripted service whose POST answers only once the
 * engine has cancelled. Needs the build.
 */
import { describe, expect, it } from "vitest";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { availableGpu, cancel, cancelRigPerTest, closedAfterEach, clusterArgs } from "./cancelKit";
import { failure, resourceCalls } from "./pluginKit";

const API_KEY = "plugin-cancel-create-key-7f31a2";

describe("pulumi-resource-runpod-native: Cancel while a Create sends", () => {
  const rigs = cancelRigPerTest(API_KEY);
  const keepServer = closedAfterEach<ScriptedServer>();

  /** An empty list as the service answers it: `{ pods: [] }`, `{ clusters: [] }`. */
  const emptyList = (pathname: string) => ({ [pathname.split("/").pop() ?? ""]: [] });

  /**
   * A plugin configured against a scripted service whose lists answer empty, and a pod's log empty;
   * `service` is a client of the rig's emulator, which the plugin does not call.
   */
  async function start() {
    const server = keepServer(
      await startScriptedServer({
        fallback: (req) =>
          req.pathname.endsWith("/logs")
            ? { headers: { "content-type": "text/event-stream" }, body: "" }
            : req.method === "GET"
              ? { body: emptyList(req.pathname) }
              : { status: 599, body: { message: "unexpected" } },
      }),
    );
    return { ...(await rigs.start({ restUrl: `${server.url}/v2` })), server };
  }

  /** The requests the service saw: `METHOD /path`. */
  const seen = (s: ScriptedServer) => s.requests.map((r) => `${r.method} ${r.pathname}`);

  it("a Pod refused for capacity on its first GPU type tries no other after the cancel", async () => {
    const { rig, server } = await start();
    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "trainer");
    const checked = await pod.check({
      name: "trainer",
      image: "acme/train:1",
      gpu: { id: "NVIDIA A40" },
      fallbackGpuIds: ["NVIDIA L40S", "NVIDIA RTX A6000"],
    });
    expect(checked.failures).toEqual([]);
    // The list before the POST; the POST is answered "no capacity" once the engine has cancelled.
    server.enqueue({ body: { pods: [] } }, async () => {
      await cancel(rig);
      return { status: 400, body: { error: "There are no instances currently available" } };
    });

    const error = await failure(() => pod.create(checked.inputs));
    expect([error.init, error.message]).toEqual([
      undefined,
      'Pod "trainer" was not created: RunPod refused NVIDIA A40: 400 There are no instances currently ' +
        "available; then the deployment was cancelled (Ctrl-C), so NVIDIA L40S, NVIDIA RTX A6000 were not tried " +
        "and nothing was created. Run pulumi up again to create it.",
    ]);
    // The catalog read for the price ceiling, the list before the POST, the one POST.
    expect(seen(server)).toEqual(["GET /v2/catalog/gpus", "GET /v2/pods", "POST /v2/pods"]);
  });

  it("a Pod whose POST's answer is lost as the cancel comes is found by listing and kept with its id", async () => {
    const { rig, server, service: emu } = await start();
    // A pod record as the service answers it: made on the rig's emulator, then served as the one listed.
    const gpu = await availableGpu(emu);
    const made = await emu.pods.create({ name: "trainer", image: "acme/train:1", gpu });
    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "trainer");
    const checked = await pod.check({ name: "trainer", image: "acme/train:1", gpu });
    expect(checked.failures).toEqual([]);
    // The list before the POST; the POST acts, the engine cancels, the answer is lost; the list shows the pod.
    server.enqueue(
      { body: { pods: [] } },
      async () => {
        await cancel(rig);
        return { reset: true };
      },
      { body: { pods: [made] } },
    );

    const error = await failure(() => pod.create(checked.inputs));
    expect(error.init?.id).toBe(made.id);
    const status = made.status;
    expect(error.init?.reasons).toEqual([
      `Pod "trainer" (id ${made.id}) is not usable: it was not RUNNING when the deployment was cancelled ` +
        `(Ctrl-C); its status is ${status}. Status history: ${status}. The pod's log is empty.\n` +
        "The pod is kept in the stack (it may still cost money while it holds compute): fix the cause and run " +
        "pulumi up again (it checks the pod again), or remove the Pod from the program to terminate it.",
    ]);
    expect([error.init?.properties.name, error.init?.properties.status]).toEqual(["trainer", status]);
    // One POST: the lost answer was settled by the list, not by sending again.
    expect(seen(server)).toEqual([
      "GET /v2/catalog/gpus",
      "GET /v2/pods",
      "POST /v2/pods",
      "GET /v2/pods",
      `GET /v2/pods/${made.id}/logs`,
    ]);
  });

  it("a Pod's Delete in flight when the cancel comes finishes: the step succeeds on the service's answer", async () => {
    const { rig, server } = await start();
    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "trainer");
    server.enqueue(async () => {
      await cancel(rig);
      return { status: 204 };
    });
    // A Delete is never refused after a cancel: it makes nothing, and the engine removes the resource only on success.
    await expect(pod.delete("pod-1", { name: "trainer", image: "acme/train:1" })).resolves.toBeDefined();
    expect(seen(server)).toEqual(["DELETE /v2/pods/pod-1"]);
  });

  it("a Cluster answered 429 is listed, and not sent again after the cancel", async () => {
    const { rig, server } = await start();
    const cluster = resourceCalls(rig.rpc, "runpod-native:index:Cluster", "train");
    const checked = await cluster.check(clusterArgs("train"));
    expect(checked.failures).toEqual([]);
    server.enqueue({ body: { clusters: [] } }, async () => {
      await cancel(rig);
      return { status: 429, headers: { "retry-after": "0" }, body: { error: "rate limited" } };
    });

    const error = await failure(() => cluster.create(checked.inputs));
    expect([error.init, error.message]).toEqual([
      undefined,
      'Cluster "train" was not created: RunPod answered 429, a list shows that made none, and the deployment ' +
        "was cancelled (Ctrl-C) before it was sent again; nothing was created. Run pulumi up again to create it.",
    ]);
    // The catalog read for the price, the list before the POST, the POST, then the lists that settle the 429 (a list may lag): no second POST.
    expect(seen(server)).toEqual([
      "GET /v2/catalog/gpus",
      "GET /v2/clusters",
      "POST /v2/clusters",
      "GET /v2/clusters",
      "GET /v2/clusters",
      "GET /v2/clusters",
    ]);
  });
});

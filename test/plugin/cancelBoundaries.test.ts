/**
 * `Cancel` at the edges: before `Configure`, twice, with no operation in flight. What was decided:
 * the cancellation is the process's (one plugin per deployment), so it holds across a later
 * `Configure`; a second `Cancel` changes nothing; `Check`, `Diff`, `Invoke` and `Read` write
 * nothing and keep working (the engine may still diff, read and run the program's lookups while it
 * winds down: cutting them would only turn a clean stop into errors); `Create` and `Update` are
 * refused before anything is sent. Needs the build.
 */
import { describe, expect, it } from "vitest";
import { availableGpu, cancel, cancelRigPerTest } from "./cancelKit";
import { failure, pb, resourceCalls, Struct } from "./pluginKit";

const API_KEY = "plugin-cancel-edges-key-e8d260";

describe("pulumi-resource-runpod-native: Cancel at the edges", () => {
  const rigs = cancelRigPerTest(API_KEY);

  it("twice before Configure: Check (with its catalog read), Diff, Invoke and Read work; Create sends nothing", async () => {
    const { rig, service, configure } = await rigs.start({ configure: false });
    await cancel(rig);
    await cancel(rig);
    await configure();
    const gpu = await availableGpu(service);
    const made = await service.pods.create({ name: "kept", image: "acme/train:1", gpu });

    const pod = resourceCalls(rig.rpc, "runpod-native:index:Pod", "kept");
    const args = { name: "kept", image: "acme/train:1", gpu };
    // Check reads the catalog for the budget: a refusal names the ceiling, as without a cancel.
    const refused = await pod.check({ ...args, maxHourlyUsd: 0.01 });
    expect(refused.failures.map((f: { property: string }) => f.property)).toEqual(["maxHourlyUsd"]);
    const { inputs, failures } = await pod.check(args);
    expect(failures).toEqual([]);
    // Read and Diff of what exists.
    const read = await pod.read(made.id, {});
    expect([read.id, read.props.name]).toEqual([made.id, "kept"]);
    // (An adopted pod's recorded fields against the program's: an update, as without a cancel.)
    const diff = await pod.diff(made.id, read.props, inputs);
    expect([diff.changes, diff.replaces]).toEqual([pb.DiffResponse.DiffChanges.DIFF_SOME, []]);
    // A lookup.
    const res = await rig.rpc.call(
      "invoke",
      new pb.InvokeRequest()
        .setTok("runpod-native:index:getPod")
        .setArgs(Struct.fromJavaScript({ id: made.id })),
    );
    expect([res.getFailuresList(), res.getReturn()?.toJavaScript().id]).toEqual([[], made.id]);
    // A create is refused unsent: still the one pod.
    const other = resourceCalls(rig.rpc, "runpod-native:index:Pod", "second");
    const error = await failure(() => other.create({ ...inputs, name: "second" }));
    expect([error.init, error.message]).toEqual([
      undefined,
      'Pod "second": not created: the deployment was cancelled (Ctrl-C); nothing was sent to RunPod. Run ' +
        "pulumi up again to create it.",
    ]);
    expect((await service.pods.list()).map((p) => p.id)).toEqual([made.id]);
  });
});

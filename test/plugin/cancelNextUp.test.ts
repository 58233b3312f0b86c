/**
 * What the engine does with a cancelled Update's answer, and that the next `up` finishes the job.
 * A partially failed Update is stored with the OLD inputs and the init error's properties as
 * outputs (`OnResourceStepPost`, pkg/engine/update.go: "old inputs and new outputs"), with the
 * reasons as `InitErrors` (`UpdateStep.Apply`, pkg/resource/deploy/step.go); the next `up` then
 * plans an update even when Diff finds no change (`hasInitErrors` in `stepGenerator.generateSteps`'
 * diff, pkg/resource/deploy/step_generator.go). So the next deployment's Update gets those
 * outputs as `olds`, and must test the release the cancel left untested. Needs the build.
 */
import { describe, expect, it } from "vitest";
import {
  cancel,
  cancelRigPerTest,
  closedAfterEach,
  ENDPOINT,
  endpointArgs,
  LONG_JOB,
  QUICK_SMOKE,
  untilJobInProgress,
} from "./cancelKit";
import {
  failure,
  type PluginProcess,
  pb,
  providerClient,
  resourceCalls,
  Struct,
  startPluginProcess,
} from "./pluginKit";

const API_KEY = "plugin-cancel-next-up-key-4c07d9";
const D = pb.DiffResponse.DiffChanges;

describe("pulumi-resource-runpod-native: the up after a cancelled Update", () => {
  const rigs = cancelRigPerTest(API_KEY);
  const keepPlugin = closedAfterEach<PluginProcess>();

  it("a guarded endpoint's update cancelled in its smoke test: the next up's Update tests that release", async () => {
    const { rig, service, config } = await rigs.start();
    const ep = resourceCalls(rig.rpc, ENDPOINT, "api");
    const base = endpointArgs("api", { workers: { min: 1, max: 1 } });
    const v1 = (await ep.check({ ...base, smokeTest: QUICK_SMOKE })).inputs;
    const made = await ep.create(v1);
    const v2 = (await ep.check({ ...base, image: "acme/api:2", smokeTest: LONG_JOB }, v1)).inputs;
    const updating = failure(() => ep.update(made.id, made.outs, v2));
    await untilJobInProgress(service, async () => made.id);
    await cancel(rig);
    const error = await updating;
    expect(error.init?.id).toBe(made.id);
    // The state now: old inputs (v1), the init error's properties as outputs.
    const outputs = error.init?.properties ?? {};

    // The next deployment: a new plugin process. The program now gives a quick smoke test.
    const next = keepPlugin(await startPluginProcess(rig.engine.address));
    const rpc = providerClient(next.port);
    await rpc.call(
      "configure",
      new pb.ConfigureRequest().setArgs(Struct.fromJavaScript(config)).setAcceptsecrets(true),
    );
    const ep2 = resourceCalls(rpc, ENDPOINT, "api");
    const v3 = (await ep2.check({ ...base, image: "acme/api:2", smokeTest: QUICK_SMOKE }, v1)).inputs;
    expect((await ep2.diff(made.id, outputs, v3, v1)).changes).toBe(D.DIFF_SOME);
    // The engine's Update: olds are the stored outputs, old inputs v1.
    const req = new pb.UpdateRequest()
      .setId(made.id)
      .setUrn(ep2.urn)
      .setType(ENDPOINT)
      .setOlds(Struct.fromJavaScript(outputs))
      .setOldInputs(Struct.fromJavaScript(v1))
      .setNews(Struct.fromJavaScript(v3));
    const updated = (await rpc.call("update", req)).getProperties().toJavaScript();
    rpc.close();
    expect([updated.image, updated.version]).toEqual(["acme/api:2", 2]);
    expect(updated.lastSmokeTest).toMatchObject({ version: 2, passed: true });
    expect((await service.serverless.releases(made.id)).endpointVersion).toBe(2);
  });
});

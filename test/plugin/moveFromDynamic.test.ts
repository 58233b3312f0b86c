/**
 * A TypeScript stack moving a resource from the dynamic type (`pulumi-nodejs:dynamic/runpod:<Class>`)
 * to the plugin's (`runpod-native:index:<Class>`, with an alias to the old type; docs/languages.md)
 * keeps the object: the first `up` after the move plans no replacement and no change.
 *
 * What the engine does then, from pulumi/pulumi's `pkg/resource/deploy/step_generator.go`: the alias
 * finds the old state; the resource's provider changed (the `pulumi-nodejs` default provider to the
 * `runpod-native` one), so `providerChanged` asks the NEW provider's `DiffConfig` about the old
 * provider's inputs against the new ones, and replaces the resource if that answer replaces; if not,
 * `diff` calls the new provider's `Diff` with the old state's inputs and outputs, which carry the
 * dynamic provider's `__provider` and, for a resource that records it, the old URN in `__urn`.
 * This test makes those two calls over gRPC for every served resource, with the state the dynamic
 * path writes (the same operations' outputs, plus `__provider`).
 */
import { describe, expect, it } from "vitest";
import { SERVED_CLASSES, URN_INPUT_CLASSES } from "../../src/plugin/resources";
import { RESOURCES } from "../../src/provider/resources";
import { pb, resourceCalls, Struct, secret, urnOf } from "./pluginKit";
import { SERVED_ARGS as ARGS, servedRigPerSuite } from "./servedArgs";

const API_KEY = "plugin-move-key-2f81c0";
const D = pb.DiffResponse.DiffChanges;
/** What the dynamic host stores in a state's inputs and outputs (a serialized provider; its text does not matter here). */
const PROVIDER_TEXT =
  "exports.handler = __f0; function __f0() { return require('pulumi-runpod-dynamic/dist/provider/common/host.js'); }";

describe("moving a resource from the dynamic type to runpod-native plans no replacement", () => {
  const suite = servedRigPerSuite(API_KEY);

  it("DiffConfig from the pulumi-nodejs default provider's inputs to this provider's asks for no replacement", async () => {
    const { rig } = suite;
    const res = await rig.rpc.call(
      "diffConfig",
      new pb.DiffRequest()
        .setUrn("urn:pulumi:dev::proj::pulumi:providers:runpod-native::default_0_1_0")
        .setOlds(Struct.fromJavaScript({ version: "3.270.0" }))
        .setOldInputs(Struct.fromJavaScript({ version: "3.270.0" }))
        .setNews(
          Struct.fromJavaScript({ apiKey: secret(API_KEY), restUrl: rig.emu.restUrlV2, version: "0.1.0" }),
        ),
    );
    expect(res.getReplacesList()).toEqual([]);
    expect(res.getDeletebeforereplace()).toBe(false);
  });

  it.each(SERVED_CLASSES.map((c) => [c]))(
    "%s: the first Diff after the move plans no change",
    async (className) => {
      const { rig } = suite;
      const args = ARGS[className];
      expect(args, `no arguments for ${className} in this test`).toBeDefined();
      const native = resourceCalls(rig.rpc, `runpod-native:index:${className}`, `moved-${className}`);
      const oldUrn = urnOf(RESOURCES[className].typeToken, `moved-${className}`);

      // The state the dynamic path wrote: its inputs (the old URN in __urn where the class registers
      // one) and the operations' outputs, each with __provider.
      const checked = await native.check(args);
      expect(checked.failures).toEqual([]);
      const oldInputs: Record<string, unknown> = { ...checked.inputs, __provider: PROVIDER_TEXT };
      if (URN_INPUT_CLASSES.includes(className)) oldInputs.__urn = oldUrn;
      const made = await native.create(oldInputs);
      expect(made.id).not.toBe("");
      // The dynamic path's outputs also hold `id` where the service's record does (a Pod's, a
      // Template's); the plugin answers none, so it is put back here, for every resource.
      const oldOutputs = { ...made.outs, id: made.id, __provider: PROVIDER_TEXT };

      // The first up after the move: Check under the new URN, then Diff against the old state.
      const news = (await native.check(args, oldInputs)).inputs;
      const plan = await native.diff(made.id, oldOutputs, news, oldInputs);
      expect({ changes: plan.changes, replaces: plan.replaces, detailed: plan.detailed }).toEqual({
        changes: D.DIFF_NONE,
        replaces: [],
        detailed: {},
      });
      await native.delete(made.id, oldOutputs);
    },
  );
});

/**
 * No answer of the plugin carries `id` among a resource's properties: the engine takes the id from
 * the answer's `id` field (`provider.Create`/`Read`, pkg/resource/plugin/provider_plugin.go), and
 * `id` is reserved in a package schema (`reservedNonComponentPropertyKeys`,
 * pkg/codegen/schema/reserved_keywords.go), so the schema declares no such output and no SDK could
 * read it. The operations' outputs hold it where the service's record does (a Pod's, a
 * Template's), as the dynamic path stores them. Over gRPC against the emulator, for every served
 * resource: Create's properties, Read's properties and inputs. Needs the build.
 */
import { describe, expect, it } from "vitest";
import { SERVED_CLASSES } from "../../src/plugin/resources";
import { pb, resourceCalls, Struct } from "./pluginKit";
import { SERVED_ARGS, servedRigPerSuite } from "./servedArgs";

const API_KEY = "plugin-noid-key-4b7a02";

describe("pulumi-resource-runpod-native: no `id` among a resource's answered properties", () => {
  const suite = servedRigPerSuite(API_KEY);

  it.each(SERVED_CLASSES.map((c) => [c]))(
    "%s: Create and Read answer the id only as the id",
    async (className) => {
      const { rig } = suite;
      const args = SERVED_ARGS[className];
      expect(args, `no arguments for ${className} in servedArgs.ts`).toBeDefined();
      const type = `runpod-native:index:${className}`;
      const calls = resourceCalls(rig.rpc, type, `noid-${className}`);
      const { inputs, failures } = await calls.check(args);
      expect(failures).toEqual([]);

      const made = await calls.create(inputs);
      expect(made.id).not.toBe("");
      expect(Object.keys(made.outs).length).toBeGreaterThan(0);
      expect(made.outs).not.toHaveProperty("id");

      // A refresh: the state's outputs and inputs in, the object's properties and inputs out.
      const read = await rig.rpc.call(
        "read",
        new pb.ReadRequest()
          .setId(made.id)
          .setUrn(calls.urn)
          .setType(type)
          .setProperties(Struct.fromJavaScript(made.outs))
          .setInputs(Struct.fromJavaScript(inputs)),
      );
      expect(read.getId()).toBe(made.id);
      const props = read.getProperties()?.toJavaScript() ?? {};
      expect(Object.keys(props).length).toBeGreaterThan(0);
      expect(props).not.toHaveProperty("id");
      expect(read.getInputs()?.toJavaScript() ?? {}).not.toHaveProperty("id");

      await calls.delete(made.id, made.outs);
    },
  );
});

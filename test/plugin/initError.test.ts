/**
 * A failure after the object exists (an error carrying `id`, as the operations throw for a pod or
 * endpoint that was made but never became usable) reaches the engine as an init error: gRPC status
 * details holding `ErrorResourceInitFailed` with the id, the properties (secrets still wrapped) and
 * the reasons, which `parseError` (pkg/resource/plugin/provider_plugin.go) records as a partial
 * failure. ContainerRegistryAuth never fails that way, so the server runs in this process with an
 * operations stub that does; the wire is the real one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningPlugin, startPlugin } from "../../src/plugin/server";
import type { ResourceOperations } from "../../src/provider/common/dynamicProvider";
import { RESOURCES } from "../../src/provider/resources";
import {
  Empty,
  failure,
  pb,
  pluginPb,
  providerClient,
  Struct,
  secret,
  startStubEngine,
  urnOf,
} from "./pluginKit";

const TYPE = "runpod-native:index:ContainerRegistryAuth";
const PASSWORD = "init-error-Pa55-0d0d";

describe("an init error over gRPC", () => {
  let plugin: RunningPlugin;
  let rpc: ReturnType<typeof providerClient>;
  const calls: Record<string, unknown>[] = [];

  beforeAll(async () => {
    const operations = {
      async create(_settings: unknown, inputs: Record<string, unknown>) {
        calls.push(inputs);
        throw Object.assign(new Error("credential cred-7 was made but the registry refused its login"), {
          id: "cred-7",
          // As a pod's: the service's record, its `id` among the fields.
          properties: { ...inputs, id: "cred-7", state: "refused" },
          reasons: ["credential cred-7 was made but the registry refused its login"],
        });
      },
    } as unknown as ResourceOperations;
    plugin = await startPlugin({
      env: { RUNPOD_API_KEY: "k" },
      resources: [
        { token: TYPE, row: RESOURCES.ContainerRegistryAuth, urnInput: false, operations: () => operations },
      ],
    });
    rpc = providerClient(plugin.port);
  });

  afterAll(async () => {
    rpc?.close();
    await plugin?.close();
  });

  it("carries the id, the properties (no `id` among them) with the password still secret, and the reasons", async () => {
    const error = await failure(() =>
      rpc.call(
        "create",
        new pb.CreateRequest()
          .setUrn(urnOf(TYPE, "creds"))
          .setType(TYPE)
          .setProperties(Struct.fromJavaScript({ name: "n", username: "u", password: secret(PASSWORD) })),
      ),
    );
    expect(calls).toEqual([{ name: "n", username: "u", password: PASSWORD }]);
    expect(error).toEqual({
      code: 2,
      message: "credential cred-7 was made but the registry refused its login",
      init: {
        id: "cred-7",
        properties: { name: "n", username: "u", password: secret(PASSWORD), state: "refused" },
        reasons: ["credential cred-7 was made but the registry refused its login"],
      },
    });
  });

  it("logs to the engine it is attached to (an engine that attached gives its address in Attach)", async () => {
    const engine = await startStubEngine();
    try {
      await rpc.call("attach", new pluginPb.PluginAttach().setAddress(engine.address));
      await rpc.call("cancel", new Empty());
      expect(engine.logs.map((l) => l.message)).toEqual([
        "runpod-native: cancelled; waits in flight end now, nothing new is written",
      ]);
    } finally {
      engine.close();
    }
  });
});

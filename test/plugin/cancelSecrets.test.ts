/**
 * What a `Cancel` answers never shows a secret: an endpoint created with a secret `env` and
 * cancelled while its smoke test runs comes back as an init error whose properties keep `env`
 * secret-wrapped, and no value of it is in the message, the reasons, the plugin's stderr or the
 * engine's logs. Needs the build.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import {
  Empty,
  failure,
  type PluginRig,
  resourceCalls,
  SECRET_SIG_KEY,
  secret,
  startPluginRig,
} from "./pluginKit";

const API_KEY = "plugin-cancel-secret-key-2b8e44";
const TOKEN = "hf_cancel_secret_value_91d3";
const HOUR_MS = 3_600_000;

describe("pulumi-resource-runpod-native: Cancel keeps secrets secret", () => {
  let rig: PluginRig | undefined;

  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a guarded endpoint's create cancelled in its smoke test: env stays wrapped, no value shown anywhere", async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    const { emu } = rig;
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrl, serverlessUrl: emu.serverlessUrl });
    const service = new RunpodClient({
      apiKey: API_KEY,
      restUrl: emu.restUrl,
      serverlessUrl: emu.serverlessUrl,
      maxRetries: 0,
      rateLimits: false,
    });
    const ep = resourceCalls(rig.rpc, "runpod-native:index:ServerlessEndpoint", "api");
    const checked = await ep.check({
      name: "api",
      type: "QUEUE",
      image: "acme/api:1",
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
      env: { HF_TOKEN: secret(TOKEN) },
      smokeTest: { input: { sleepMs: HOUR_MS }, timeoutMs: HOUR_MS },
    });
    expect(checked.failures).toEqual([]);
    const creating = failure(() => ep.create(checked.inputs));
    // The endpoint exists and its smoke-test job was submitted: now the engine cancels.
    await vi.waitFor(
      () => {
        if (!rig?.plugin.stderr().includes("Smoke test on endpoint")) throw new Error("no smoke test yet");
      },
      { timeout: 30_000, interval: 50 },
    );
    await rig.rpc.call("cancel", new Empty());
    const error = await creating;
    const made = (await service.serverless.list()).find((e) => e.name === "api");
    expect(error.init?.id).toBe(made?.id);
    expect(error.init?.properties.env).toEqual({
      [SECRET_SIG_KEY]: expect.any(String),
      value: { HF_TOKEN: TOKEN },
    });
    const props = { ...error.init?.properties, env: undefined };
    const closed = await rig.close();
    rig = undefined;
    const shown = [
      error.message,
      ...(error.init?.reasons ?? []),
      JSON.stringify(props),
      closed.stderr,
      JSON.stringify(closed.logs),
    ];
    for (const text of shown) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(API_KEY);
    }
  });
});

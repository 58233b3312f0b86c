/**
 * What a `Cancel` answers never shows a secret: an endpoint created with a secret `env` and
 * cancelled while its smoke test runs comes back as an init error whose properties keep `env`
 * secret-wrapped, and no value of it is in the message, the reasons, the plugin's stderr or the
 * engine's logs. Needs the build.
 */
import { describe, expect, it } from "vitest";
import { cancel, cancelRigPerTest, ENDPOINT, endpointArgs, LONG_JOB, untilLogged } from "./cancelKit";
import { failure, resourceCalls, SECRET_SIG_KEY, secret } from "./pluginKit";

const API_KEY = "plugin-cancel-secret-key-2b8e44";
const TOKEN = "hf_cancel_secret_value_91d3";

describe("pulumi-resource-runpod-native: Cancel keeps secrets secret", () => {
  const rigs = cancelRigPerTest(API_KEY);

  it("a guarded endpoint's create cancelled in its smoke test: env stays wrapped, no value shown anywhere", async () => {
    const { rig, service, close } = await rigs.start();
    const ep = resourceCalls(rig.rpc, ENDPOINT, "api");
    const checked = await ep.check(
      endpointArgs("api", { env: { HF_TOKEN: secret(TOKEN) }, smokeTest: LONG_JOB }),
    );
    expect(checked.failures).toEqual([]);
    const creating = failure(() => ep.create(checked.inputs));
    // The endpoint exists and its smoke-test job was submitted: now the engine cancels.
    await untilLogged(rig, "Smoke test on endpoint");
    await cancel(rig);
    const error = await creating;
    const made = (await service.serverless.list()).find((e) => e.name === "api");
    expect(error.init?.id).toBe(made?.id);
    expect(error.init?.properties.env).toEqual({
      [SECRET_SIG_KEY]: expect.any(String),
      value: { HF_TOKEN: TOKEN },
    });
    const props = { ...error.init?.properties, env: undefined };
    const closed = await close();
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

/**
 * The emulator as the official JS SDK (`runpod-sdk`) uses it: the SDK is pointed at the emulator by
 * its `baseUrl` and its own calls drive each behaviour. Where the SDK has no call for a route, plain
 * undici speaks to it. The emulator's clock is a ManualClock: tests step time, they never sleep.
 */
import runpodSdk from "runpod-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, KEY } from "./helpers";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The SDK's endpoint object for `id` on the running emulator. */
function sdkEndpoint(id: string) {
  const endpoint = runpodSdk(KEY, { baseUrl: `${(h as Harness).emu.serverlessUrl}/v2` }).endpoint(id);
  if (!endpoint) throw new Error(`runpod-sdk gave no endpoint object for ${id}`);
  return endpoint;
}

describe("/health as the official SDK reads it", () => {
  it("carries every worker count of the SDK's HealthCheck: busy and idle workers are both ready", async () => {
    h = await harness({ endpoints: ["pool:2"] });
    const endpoint = sdkEndpoint("pool");
    const job = await endpoint.run({ input: { sleepMs: 60_000 } });
    expect(job.status).toBe("IN_QUEUE");
    await h.clock.settle();
    const health = await endpoint.health();
    expect(health.workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 2,
      running: 1,
      throttled: 0,
      unhealthy: 0,
    });
    expect(health.jobs).toMatchObject({ inProgress: 1, inQueue: 0 });
  });

  it("counts a starting worker as initializing and a worker that cannot start as unhealthy", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:unpullable" });
    await h.clock.advance(3000);
    const endpoint = sdkEndpoint("svc");
    expect((await endpoint.health()).workers).toEqual({
      idle: 1,
      initializing: 1,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    await h.clock.advance(WORKER_START_MS);
    expect((await endpoint.health()).workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 1,
    });
  });
});

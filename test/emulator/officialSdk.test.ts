/**
 * The emulator as the official JS SDK (`runpod-sdk`) uses it: the SDK is pointed at the emulator by
 * its `baseUrl` and its own calls drive each behaviour. Where the SDK has no call for a route, plain
 * undici speaks to it. The emulator's clock is a ManualClock: tests step time, they never sleep.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import runpodSdk from "runpod-sdk";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, KEY, untilStatus } from "./helpers";

let h: Harness | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps each body it was sent. */
async function receiver(): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      bodies.push(JSON.parse(text));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

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

describe("job requests with the fields the official SDK sends", () => {
  it("accepts webhookV2 and delivers the finished job's status body to it", async () => {
    const hook = await receiver();
    h = await harness();
    const job = await sdkEndpoint("echo").run({ input: { output: "done" }, webhookV2: hook.url });
    expect(job.status).toBe("IN_QUEUE");
    const finished = await untilStatus(h, "echo", job.id, "COMPLETED");
    await vi.waitFor(() => expect(hook.bodies).toHaveLength(1), { timeout: 10_000 });
    expect(hook.bodies[0]).toEqual(finished.body);
  });

  it("delivers once when webhook and webhookV2 name the same URL", async () => {
    const hook = await receiver();
    h = await harness();
    const job = await sdkEndpoint("echo").run({ input: {}, webhook: hook.url, webhookV2: hook.url });
    await untilStatus(h, "echo", job.id, "COMPLETED");
    await vi.waitFor(() => expect(h?.emu.stats().webhooks).toHaveLength(1), { timeout: 10_000 });
    expect(h.emu.stats().webhooks).toEqual([
      { jobId: job.id, url: hook.url, attempt: 1, status: 200, ok: true },
    ]);
  });

  it("passes s3Config with objectPath through to the worker", async () => {
    h = await harness({
      handlers: async (job) => ({ objectPath: job.s3Config?.objectPath, bucket: job.s3Config?.bucketName }),
    });
    const job = await sdkEndpoint("echo").run({
      input: {},
      s3Config: {
        accessId: "id",
        accessSecret: "not-echoed",
        bucketName: "outputs",
        endpointUrl: "https://s3.example.com",
        objectPath: "runs/42",
      },
    });
    const finished = await untilStatus(h, "echo", job.id, "COMPLETED");
    expect(finished.body.output).toEqual({ objectPath: "runs/42", bucket: "outputs" });
    expect(JSON.stringify(finished.body)).not.toContain("not-echoed");
  });

  it("refuses a webhookV2 that is not an http(s) URL with a 400 naming the field", async () => {
    h = await harness();
    const answer = await h.call("POST", "/v2/echo/run", { input: {}, webhookV2: "ftp://example.com/hook" });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain("webhookV2 must be an http(s) URL");
    const badPath = await h.call("POST", "/v2/echo/run", {
      input: {},
      s3Config: {
        accessId: "a",
        accessSecret: "b",
        bucketName: "c",
        endpointUrl: "https://s3.example.com",
        objectPath: 7,
      },
    });
    expect(badPath.status).toBe(400);
    expect(JSON.stringify(badPath.body)).toContain("objectPath must be a string");
  });
});

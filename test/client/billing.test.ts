/**
 * `client.billing` against the emulator over HTTP: every route's answer parsed by the client, a
 * job's spend read back, a bad query refused before any request (naming the parameter), and a v1
 * `restUrl` refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";

const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);
let emu: RunningEmulator;
let clock: ManualClock;
let client: RunpodClient;
beforeAll(async () => {
  clock = new ManualClock(T0);
  emu = await startEmulator({ port: 0, clock, rateLimits: false });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  });
});
afterAll(async () => {
  await emu.close();
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

describe("client.billing", () => {
  it("reads a serverless endpoint's spend for a job it ran", async () => {
    const ep = await client.serverless.create({
      name: "billed",
      type: "QUEUE",
      image: "acme/model:1",
      gpu: { pools: ["AMPERE_16"], count: 1 },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
    });
    const price = (await client.catalog.gpus()).find((g) => g.pool === "AMPERE_16")?.price?.serverless;
    expect(price).toBeGreaterThan(0);
    const job = await client.endpoint(ep.id).run({ input: { sleepMs: 120_000 } });
    await clock.advance(120_000);
    await expect.poll(async () => (await client.endpoint(ep.id).status(job.id)).status).toBe("COMPLETED");

    const spend = await client.billing.serverless({ serverlessId: ep.id, bucketSize: "hour", lastN: 1 });
    expect(spend.records).toHaveLength(1);
    expect(spend.records[0]?.serverlessId).toBe(ep.id);
    expect(spend.metadata.totals.gpuAmount).toBeCloseTo(((price as number) * 120) / 3600, 6);
    expect(spend.metadata.query.serverlessId).toBe(ep.id);
    const all = await client.billing.list({ bucketSize: "hour", lastN: 1 });
    expect(all.records[0]?.serverlessGpuAmount).toBeCloseTo(((price as number) * 120) / 3600, 6);
  });

  it("parses the answer of every route", async () => {
    const window = { startTime: "2026-05-31T00:00:00Z", endTime: "2026-06-02T00:00:00Z" };
    const answers = await Promise.all([
      client.billing.list(window),
      client.billing.pods(window),
      client.billing.serverless(window),
      client.billing.endpoints(window),
      client.billing.networkVolumes({ ...window, networkVolumeId: "vol1" }),
      client.billing.clusters(window),
    ]);
    for (const answer of answers) {
      expect(answer.metadata.query).toMatchObject({ ...window, bucketSize: "day" });
      expect(answer.metadata.recordCount).toBe(answer.records.length);
    }
    expect(answers[0].records.map((r) => r.startTime)).toEqual([
      "2026-05-31T00:00:00Z",
      "2026-06-01T00:00:00Z",
    ]);
    expect(answers[4].metadata.query.networkVolumeId).toBe("vol1");
  });

  it("refuses a bad query before any request, naming the parameter", async () => {
    const before = emu.stats().requests;
    const cases: [() => Promise<unknown>, string][] = [
      [() => client.billing.list({ lastN: 0 }), "lastN"],
      [() => client.billing.pods({ bucketSize: "minute" as "hour" }), "bucketSize"],
      [() => client.billing.serverless({ startTime: "yesterday" }), "startTime"],
      [() => client.billing.list({ lastN: 3, startTime: "2026-05-01T00:00:00Z" }), "lastN"],
      [
        () => client.billing.clusters({ startTime: "2026-06-02T00:00:00Z", endTime: "2026-06-01T00:00:00Z" }),
        "endTime",
      ],
    ];
    for (const [call, field] of cases) {
      const error = await rejection(call());
      expect(error, field).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message, field).toContain(field);
      expect((error as ValidationError).path[0], field).toBe(field);
    }
    const unknown = await rejection(client.billing.pods({ serverlessId: "x" } as never));
    expect((unknown as ValidationError).message).toMatch(/unknown field serverlessId/);
    expect(emu.stats().requests).toBe(before);
  });

  it("refuses a v1 restUrl before any request", async () => {
    const v1 = new RunpodClient({
      apiKey: emu.apiKey,
      restUrl: emu.restUrlV1,
      serverlessUrl: emu.serverlessUrl,
      env: {},
    });
    const before = emu.stats().requests;
    const error = await rejection(v1.billing.pods());
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/client\.billing needs the REST v2 interface/);
    expect(emu.stats().requests).toBe(before);
  });
});

/**
 * The emulator's billing routes add up what its serverless workers and pods ran, at the catalog's
 * prices, per second, in the document's buckets; a ManualClock drives the time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/emulator/clock";
import { type Answer, type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

const T0 = Date.UTC(2026, 5, 1, 0, 0, 0); // an hour (and day) boundary
const START_MS = 1000;
let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function until(path: string, status: string): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < 50; i++) {
    last = await h.call("GET", path);
    if (last.body?.status === status) return last;
    await h.clock.settle();
  }
  throw new Error(`${path} never reached ${status}; last: ${JSON.stringify(last?.body)}`);
}

/** The catalog's serverless price of the first GPU type of `pool`. */
async function poolPrice(pool: string): Promise<number> {
  const gpus = (await h.call("GET", "/v2/catalog/gpus")).body.gpus as {
    pool: string;
    price: { serverless: number };
  }[];
  const gpu = gpus.find((g) => g.pool === pool);
  if (!gpu) throw new Error(`no GPU type in pool ${pool}`);
  return gpu.price.serverless;
}

async function gpuEndpoint(count: number): Promise<string> {
  const created = await h.call("POST", "/v2/serverless", {
    name: "billed",
    type: "QUEUE",
    image: "acme/model:1",
    gpu: { pools: ["ADA_24"], count },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: 1 },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

describe("serverless billing", () => {
  it("bills a job's execution time at the pool's price times the GPU count", async () => {
    h = await harness({ clock: new ManualClock(T0) });
    const id = await gpuEndpoint(2);
    const price = await poolPrice("ADA_24");
    const run = await h.call("POST", `/v2/${id}/run`, { input: { sleepMs: 90_000 } });
    expect(run.status).toBe(200);
    await h.clock.advance(90_000);
    await until(`/v2/${id}/status/${run.body.id}`, "COMPLETED");
    await h.clock.advance(60_000); // idle time after the job bills nothing

    const answer = await h.call("GET", `/v2/billing/serverless?serverlessId=${id}&bucketSize=hour&lastN=1`);
    expect(answer.status).toBe(200);
    expect(check("ListServerlessBillingResponse", answer.body)).toEqual([]);
    const expected = (price * 2 * 90) / 3600;
    expect(answer.body.records).toHaveLength(1);
    expect(answer.body.records[0]).toMatchObject({
      startTime: "2026-06-01T00:00:00Z",
      endTime: "2026-06-01T01:00:00Z",
      serverlessId: id,
    });
    expect(answer.body.records[0].gpuAmount).toBeCloseTo(expected, 6);
    expect(answer.body.records[0].totalAmount).toBeCloseTo(expected, 6);
    expect(answer.body.metadata).toMatchObject({ recordCount: 1, uniqueServerlessCount: 1 });
    expect(answer.body.metadata.totals.totalAmount).toBeCloseTo(expected, 6);
  });

  it("bills nothing for an endpoint whose workers ran no job", async () => {
    h = await harness({ clock: new ManualClock(T0) });
    await gpuEndpoint(1);
    await h.clock.advance(3_600_000);
    const answer = await h.call("GET", "/v2/billing/serverless?lastN=1");
    expect(answer.body.records).toEqual([]);
    expect(answer.body.metadata.totals.totalAmount).toBe(0);
  });
});

describe("pod billing", () => {
  it("bills a pod's cost per hour for the seconds it was RUNNING, not after it stopped", async () => {
    h = await harness({ clock: new ManualClock(T0), podStartMs: START_MS });
    const created = await h.call("POST", "/v2/pods", {
      name: "dev",
      image: "runpod/pytorch:2",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await h.clock.advance(START_MS);
    const running = await until(`/v2/pods/${id}`, "RUNNING");
    const cost = running.body.cost as number;
    expect(cost).toBeGreaterThan(0);
    await h.clock.advance(600_000);
    const stopped = await h.call("POST", `/v2/pods/${id}/action`, { action: "stop" });
    expect(stopped.status).toBe(200);
    await h.clock.advance(600_000);

    const answer = await h.call("GET", `/v2/billing/pods?podId=${id}&bucketSize=day&lastN=1`);
    expect(answer.status).toBe(200);
    expect(check("ListPodBillingResponse", answer.body)).toEqual([]);
    expect(answer.body.records).toHaveLength(1);
    expect(answer.body.records[0].podId).toBe(id);
    expect(answer.body.records[0].gpuAmount).toBeCloseTo((cost * 600) / 3600, 6);
    expect(answer.body.metadata.query).toMatchObject({ bucketSize: "day", podId: id });

    const total = await h.call("GET", "/v2/billing?bucketSize=day&lastN=1");
    expect(check("ListBillingResponse", total.body)).toEqual([]);
    expect(total.body.records[0].podGpuAmount).toBeCloseTo((cost * 600) / 3600, 6);
    expect(total.body.metadata.totals.totalAmount).toBeCloseTo((cost * 600) / 3600, 6);
  });

  it("splits a run across the hour buckets it spans, adding up to the whole", async () => {
    h = await harness({ clock: new ManualClock(T0 + 30 * 60_000 - START_MS), podStartMs: START_MS });
    const created = await h.call("POST", "/v2/pods", {
      name: "dev",
      image: "x",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
    });
    const id = created.body.id as string;
    await h.clock.advance(START_MS); // RUNNING at 00:30
    const cost = (await until(`/v2/pods/${id}`, "RUNNING")).body.cost as number;
    await h.clock.advance(60 * 60_000); // to 01:30
    await h.call("POST", `/v2/pods/${id}/action`, { action: "stop" });

    const answer = await h.call(
      "GET",
      "/v2/billing/pods?bucketSize=hour&startTime=2026-06-01T00:10:00Z&endTime=2026-06-01T02:00:00Z",
    );
    expect(answer.body.metadata.query).toMatchObject({
      startTime: "2026-06-01T00:00:00Z",
      endTime: "2026-06-01T02:00:00Z",
      bucketSize: "hour",
    });
    const records = answer.body.records as { startTime: string; totalAmount: number }[];
    expect(records.map((r) => r.startTime)).toEqual(["2026-06-01T00:00:00Z", "2026-06-01T01:00:00Z"]);
    expect(records[0]?.totalAmount).toBeCloseTo(cost / 2, 6);
    expect(records[1]?.totalAmount).toBeCloseTo(cost / 2, 6);
    expect(answer.body.metadata.totals.totalAmount).toBeCloseTo(cost, 6);
  });
});

describe("billing queries", () => {
  it("refuses lastN with startTime (400) and a malformed bucketSize (422), naming the parameter", async () => {
    h = await harness({ clock: new ManualClock(T0) });
    const both = await h.call("GET", "/v2/billing?lastN=2&startTime=2026-05-01T00:00:00Z");
    expect(both.status).toBe(400);
    expect(both.body.detail).toContain("lastN");
    const bad = await h.call("GET", "/v2/billing/pods?bucketSize=minute");
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContain("bucketSize");
  });

  it("answers every route in the document's shapes, storage and clusters at zero", async () => {
    h = await harness({ clock: new ManualClock(T0) });
    const routes: [string, string][] = [
      ["/v2/billing/endpoints?lastN=3", "ListEndpointBillingResponse"],
      ["/v2/billing/network-volumes?lastN=3", "ListNetworkVolumeBillingResponse"],
      ["/v2/billing/clusters?lastN=3", "ListClusterBillingResponse"],
      ["/v2/billing?lastN=3&bucketSize=week", "ListBillingResponse"],
    ];
    for (const [path, schema] of routes) {
      const answer = await h.call("GET", path);
      expect(answer.status, path).toBe(200);
      expect(check(schema, answer.body), path).toEqual([]);
      expect(answer.body.metadata.totals.totalAmount, path).toBe(0);
    }
    const weeks = await h.call("GET", "/v2/billing?lastN=2&bucketSize=week");
    // 2026-06-01 is a Monday: the current week starts on it.
    expect(weeks.body.metadata.query).toMatchObject({
      startTime: "2026-05-25T00:00:00Z",
      endTime: "2026-06-08T00:00:00Z",
    });
  });
});

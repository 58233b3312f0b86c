/**
 * `getBilling` / `getBillingOutput` against the emulator's billing records: a pod's and the
 * account's spend over a range, an `Output` form under `@pulumi/pulumi/testing` mocks, and the
 * refusals (bad arguments before any request, a missing API key in one line naming both sources);
 * and, on scripted answers, records of one bucket added together and `warnings` for an answer that
 * does not add up.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { getBilling, getBillingOutput } from "../../src/provider/billing/lookup";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);
const START_MS = 1000;
let emu: RunningEmulator;
let clock: ManualClock;
let client: RunpodClient;
let podId: string;
let podCost: number;

beforeAll(async () => {
  clock = new ManualClock(T0);
  emu = await startEmulator({ port: 0, clock, podStartMs: START_MS, rateLimits: false });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  });
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `id-${args.name}`, state: args.inputs }), call: () => ({}) },
    "project",
    "stack",
    false,
  );
  // A pod that runs 30 minutes, from 00:00:01 to 00:30:01, then stops.
  const pod = await client.pods.create({ name: "dev", image: "x", gpu: { id: "NVIDIA GeForce RTX 4090" } });
  podId = pod.id;
  await clock.advance(START_MS);
  for (let i = 0; i < 50 && (await client.pods.get(podId)).status !== "RUNNING"; i++) await clock.settle();
  podCost = (await client.pods.get(podId)).cost as number;
  await clock.advance(30 * 60_000);
  await client.pods.action(podId, "stop");
  await clock.advance(60 * 60_000);
});

afterAll(async () => {
  await emu?.close();
});

const value = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));

describe("getBilling", () => {
  it("reads a pod's spend per bucket over a range", async () => {
    expect(podCost).toBeGreaterThan(0);
    const spent = await getBilling(
      { podId, bucketSize: "hour", startTime: "2026-06-01T00:00:00Z", endTime: "2026-06-01T02:00:00Z" },
      { client },
    );
    expect(spent).toMatchObject({
      scope: "pod",
      id: podId,
      startTime: "2026-06-01T00:00:00Z",
      endTime: "2026-06-01T02:00:00Z",
      bucketSize: "hour",
    });
    expect(spent.totalUsd).toBeCloseTo(podCost / 2, 6);
    expect(spent.amounts.gpuAmount).toBeCloseTo(podCost / 2, 6);
    expect(spent.buckets).toHaveLength(1);
    expect(spent.buckets[0]).toMatchObject({
      startTime: "2026-06-01T00:00:00Z",
      endTime: "2026-06-01T01:00:00Z",
    });
    expect(spent.warnings).toEqual([]);
  });

  it("reads the account's spend, every bucket of the window included", async () => {
    const spent = await getBilling({ bucketSize: "hour", lastN: 2 }, { client });
    expect(spent.scope).toBe("account");
    expect(spent.id).toBeNull();
    expect(spent.buckets.map((b) => b.startTime)).toEqual(["2026-06-01T00:00:00Z", "2026-06-01T01:00:00Z"]);
    expect(spent.totalUsd).toBeCloseTo(podCost / 2, 6);
    expect(spent.amounts.podGpuAmount).toBeCloseTo(podCost / 2, 6);
    expect(spent.warnings).toEqual([]);
  });

  it("resolves getBillingOutput once its Input arguments are known", async () => {
    const spent = getBillingOutput({ podId: pulumi.output(podId), bucketSize: "day", lastN: 1 }, { client });
    expect(await value(spent.totalUsd)).toBeCloseTo(podCost / 2, 6);
  });

  it("refuses bad arguments before any request, naming the argument", async () => {
    const before = emu.stats().requests;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ lastN: 0 }, /lastN must be at least 1/],
      [{ startTime: "June" }, /startTime must be an RFC 3339 date-time/],
      [{ podId, serverlessId: "ep" }, /at most one of serverlessId, podId or clusterId/],
      [{ podId, clusterId: "c1" }, /at most one of serverlessId, podId or clusterId/],
      [{ lastN: 2, endTime: "2026-06-01T00:00:00Z" }, /lastN is mutually exclusive with startTime\/endTime/],
      [{ bucketSize: "minute" }, /bucketSize must be one of hour, day, week, month, year/],
      [{ podid: podId }, /unknown field podid/],
    ];
    for (const [args, message] of cases) {
      const error = await getBilling(args as never, { client }).catch((e: unknown) => e);
      expect(error, JSON.stringify(args)).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(message);
    }
    expect(emu.stats().requests).toBe(before);
  });

  it("says in one line how to give a missing API key", async () => {
    const error = await getBilling({ lastN: 1 }, { settings: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as Error).message;
    expect(message).toContain("runpod:apiKey");
    expect(message).toContain("RUNPOD_API_KEY");
    expect(message).not.toContain("\n");
  });
});

describe("getBilling of a cluster (clusterId)", () => {
  it("reads what the cluster's member pods were billed, per bucket", async () => {
    const clusterClock = new ManualClock(T0);
    const clusterEmu = await startEmulator({
      port: 0,
      clock: clusterClock,
      podStartMs: START_MS,
      rateLimits: false,
    });
    try {
      const c = new RunpodClient({ apiKey: clusterEmu.apiKey, restUrl: clusterEmu.restUrlV2, env: {} });
      // Two pods of one H100 each (2.69 USD/h a GPU in the catalog), running 30 minutes, then deleted.
      const cluster = await c.clusters.create({
        name: "train",
        type: "TRAINING",
        image: "x",
        compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
      });
      await clusterClock.advance(START_MS);
      for (let i = 0; i < 50 && (await c.clusters.get(cluster.id)).pods.byStatus.RUNNING !== 2; i++)
        await clusterClock.settle();
      await clusterClock.advance(30 * 60_000);
      await c.clusters.delete(cluster.id);
      await clusterClock.advance(60 * 60_000);
      const spent = await getBilling(
        {
          clusterId: cluster.id,
          bucketSize: "hour",
          startTime: "2026-06-01T00:00:00Z",
          endTime: "2026-06-01T02:00:00Z",
        },
        { client: c },
      );
      expect(spent).toMatchObject({ scope: "cluster", id: cluster.id, bucketSize: "hour", warnings: [] });
      expect(spent.totalUsd).toBeCloseTo(2 * 2.69 * 0.5, 6);
      expect(spent.buckets.map((b) => b.startTime)).toEqual(["2026-06-01T00:00:00Z"]);
    } finally {
      await clusterEmu.close();
    }
  });
});

describe("getBilling on scripted answers", () => {
  let server: ScriptedServer;
  let scripted: RunpodClient;
  beforeAll(async () => {
    server = await startScriptedServer();
    scripted = new RunpodClient({
      apiKey: "rpa_scripted",
      restUrl: `${server.url}/v2`,
      env: {},
      maxRetries: 0,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const H0 = "2026-06-01T00:00:00Z";
  const H1 = "2026-06-01T01:00:00Z";
  const H2 = "2026-06-01T02:00:00Z";
  /** A pod's billing record of one bucket. */
  const record = (startTime: string, endTime: string, totalAmount: number) => ({
    startTime,
    endTime,
    podId: "pod1",
    totalAmount,
    gpuAmount: totalAmount,
    cpuAmount: 0,
    diskAmount: 0,
  });
  /** `GET /v2/billing/pods`'s answer: these records, and totals of `totalAmount`. */
  const answer = (records: ReturnType<typeof record>[], totalAmount: number) => ({
    body: {
      records,
      metadata: {
        query: { startTime: H0, endTime: H2, bucketSize: "hour", podId: "pod1" },
        recordCount: records.length,
        uniquePodCount: 1,
        totals: { totalAmount, gpuAmount: totalAmount, cpuAmount: 0, diskAmount: 0 },
      },
    },
  });
  const read = () =>
    getBilling({ podId: "pod1", bucketSize: "hour", startTime: H0, endTime: H2 }, { client: scripted });

  it("adds two records of one bucket into that bucket's spend", async () => {
    server.enqueue(answer([record(H0, H1, 1.25), record(H1, H2, 2), record(H0, H1, 0.5)], 3.75));
    const spent = await read();
    expect(spent.buckets).toEqual([
      { startTime: H0, endTime: H1, totalUsd: 1.75 },
      { startTime: H1, endTime: H2, totalUsd: 2 },
    ]);
    expect(spent.totalUsd).toBe(3.75);
    expect(spent.warnings).toEqual([]);
  });

  it("says in warnings when an amount is negative, and returns the figures as the service gave them", async () => {
    server.enqueue(answer([record(H0, H1, 1.5), record(H1, H2, -0.25)], 1.25));
    const spent = await read();
    expect(spent.buckets).toEqual([
      { startTime: H0, endTime: H1, totalUsd: 1.5 },
      { startTime: H1, endTime: H2, totalUsd: -0.25 },
    ]);
    expect(spent.totalUsd).toBe(1.25);
    expect(spent.warnings).toEqual([
      "1 billing record has negative amounts: 2026-06-01T01:00:00Z (totalAmount -0.25, gpuAmount -0.25). " +
        "A credit, a refund or a service error: the figures include them as the service gave them.",
    ]);
  });

  it("says in warnings when the total is not the sum of the records, keeping the service's total", async () => {
    server.enqueue(answer([record(H0, H1, 1.5), record(H1, H2, 2)], 9));
    const spent = await read();
    expect(spent.totalUsd).toBe(9);
    expect(spent.warnings).toEqual([
      "The service's total (9 USD, totalUsd) is not the sum of its 2 records (3.5 USD): the buckets and " +
        "the total disagree by 5.5 USD.",
    ]);
  });

  it("says in warnings when a total is negative, its control characters made printable", async () => {
    const body = answer([record(H0, H1, 0)], 0).body;
    (body.metadata.totals as Record<string, number>)["credit\u001b[2JAmount"] = -4;
    server.enqueue({ body });
    const spent = await read();
    expect(spent.warnings).toEqual([
      "The service's totals have negative amounts (credit\\u001b[2JAmount -4).",
    ]);
  });
});

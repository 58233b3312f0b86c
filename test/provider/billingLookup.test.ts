/**
 * `getBilling` / `getBillingOutput` against the emulator's billing records: a pod's and the
 * account's spend over a range, an `Output` form under `@pulumi/pulumi/testing` mocks, and the
 * refusals (bad arguments before any request, a missing API key in one line naming both sources).
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { getBilling, getBillingOutput } from "../../src/provider/billing/lookup";

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
  });

  it("reads the account's spend, every bucket of the window included", async () => {
    const spent = await getBilling({ bucketSize: "hour", lastN: 2 }, { client });
    expect(spent.scope).toBe("account");
    expect(spent.id).toBeNull();
    expect(spent.buckets.map((b) => b.startTime)).toEqual(["2026-06-01T00:00:00Z", "2026-06-01T01:00:00Z"]);
    expect(spent.totalUsd).toBeCloseTo(podCost / 2, 6);
    expect(spent.amounts.podGpuAmount).toBeCloseTo(podCost / 2, 6);
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
      [{ podId, serverlessId: "ep" }, /at most one of serverlessId or podId/],
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

/**
 * A release whose workers never become healthy: an image whose reference contains
 * `unpullable`, or an env setting `RUNPOD_EMULATOR_UNHEALTHY`. Stepped on a ManualClock: the first
 * replacement worker goes UNHEALTHY once its start time is over, with the reason in its log; the
 * stale workers keep serving the previous release; the rollout never completes until a new
 * release (the fixed image) arrives, which replaces the unhealthy worker too.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { unhealthyReason, WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, KEY } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type W = { id: string; status: string; version: number; isStale: boolean };
const workers = async (id: string): Promise<{ list: W[]; unhealthy: number }> => {
  const answer = await (h as Harness).call("GET", `/v2/serverless/${id}/workers`);
  expect(answer.status).toBe(200);
  expect(check("ListEndpointWorkersResponse", answer.body)).toEqual([]);
  return {
    list: answer.body.workers.map(({ id, status, version, isStale }: W) => ({
      id,
      status,
      version,
      isStale,
    })),
    unhealthy: answer.body.summary.unhealthy,
  };
};
const runsync = async (endpoint: string) =>
  (await (h as Harness).call("POST", `/v2/${endpoint}/runsync`, { input: { n: 1 } })).body;

/** The lines of a worker's log up to (and with) the first that matches `until`. */
async function logUntil(endpoint: string, workerId: string, until: RegExp): Promise<string[]> {
  const client = new RunpodClient({ apiKey: KEY, restUrl: (h as Harness).emu.restUrl, rateLimits: false });
  const lines: string[] = [];
  for await (const event of client.serverless.workerLogs(endpoint, workerId, { tail: 50 })) {
    lines.push(event.line);
    if (until.test(event.line)) break;
  }
  return lines;
}

describe("which releases never become healthy", () => {
  it("is an image whose reference contains unpullable, or an env setting RUNPOD_EMULATOR_UNHEALTHY", () => {
    expect(unhealthyReason({ version: 2, image: "ghcr.io/acme/app:unpullable", env: {} })).toBe(
      "failed to pull image ghcr.io/acme/app:unpullable: manifest unknown",
    );
    expect(unhealthyReason({ version: 2, image: "acme/UNPULLABLE-model:1", env: {} })).toMatch(
      /^failed to pull image/,
    );
    expect(
      unhealthyReason({ version: 2, image: "acme/app:2", env: { RUNPOD_EMULATOR_UNHEALTHY: "x" } }),
    ).toBe(
      "container exited with code 1 during start (RUNPOD_EMULATOR_UNHEALTHY is set); worker is unhealthy",
    );
    expect(
      unhealthyReason({ version: 2, image: "acme/app:2", env: { OTHER: "unpullable" } }),
    ).toBeUndefined();
  });
});

describe("a rollout to an unpullable image", () => {
  it("stalls: one replacement goes UNHEALTHY with the pull error logged, the stale workers keep serving", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:unpullable" });
    await h.clock.advance(3000);
    expect((await workers("svc")).list).toEqual([
      { id: "svc-worker-3", status: "INITIALIZING", version: 2, isStale: false },
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: true },
    ]);
    await h.clock.advance(WORKER_START_MS);
    const stalled = await workers("svc");
    expect(stalled.list).toEqual([
      { id: "svc-worker-3", status: "UNHEALTHY", version: 2, isStale: false },
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: true },
    ]);
    expect(stalled.unhealthy).toBe(1);
    // However long it waits, nothing moves on.
    await h.clock.advance(60_000);
    expect((await workers("svc")).list).toEqual(stalled.list);
    const releases = (await h.call("GET", "/v2/serverless/svc/releases")).body;
    expect(releases.rollout).toEqual({
      inProgress: true,
      workersOnLatest: 1,
      workersTotal: 2,
      percentOnLatest: 50,
    });
    // The stale worker serves jobs; the unhealthy one takes none.
    expect(await runsync("svc")).toMatchObject({ status: "COMPLETED", workerId: "svc-worker-2" });
    expect(await logUntil("svc", "svc-worker-3", /worker unhealthy/)).toEqual([
      "worker svc-worker-3 created: version 2, image acme/app:unpullable, starting",
      "failed to pull image acme/app:unpullable: manifest unknown",
      "worker unhealthy: version 2 cannot start",
    ]);
  });

  it("completes once a new release with a good image arrives, replacing the unhealthy worker too", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:unpullable" });
    await h.clock.advance(3000 + WORKER_START_MS);
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:fixed" });
    expect((await workers("svc")).list).toEqual([
      { id: "svc-worker-3", status: "UNHEALTHY", version: 2, isStale: true },
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: true },
    ]);
    await h.clock.advance(3000 + 2 * WORKER_START_MS);
    expect((await workers("svc")).list).toEqual([
      { id: "svc-worker-4", status: "IDLE", version: 3, isStale: false },
      { id: "svc-worker-5", status: "IDLE", version: 3, isStale: false },
    ]);
    expect((await h.call("GET", "/v2/serverless/svc/releases")).body.rollout.inProgress).toBe(false);
  });

  it("RUNPOD_EMULATOR_UNHEALTHY stalls the rollout the same way", async () => {
    h = await harness({ endpoints: ["svc:1"], rolloutMs: 0 });
    await h.call("PATCH", "/v2/serverless/svc", { env: { RUNPOD_EMULATOR_UNHEALTHY: "1" } });
    await h.clock.advance(WORKER_START_MS);
    expect((await workers("svc")).list).toEqual([
      { id: "svc-worker-2", status: "UNHEALTHY", version: 2, isStale: false },
    ]);
  });
});

describe("an endpoint created with an unpullable image", () => {
  it("has only UNHEALTHY workers, on its first version, and they take no job", async () => {
    h = await harness({ endpoints: [] });
    const created = await h.call("POST", "/v2/serverless", {
      name: "bad",
      type: "QUEUE",
      image: "acme/app:unpullable",
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 2 },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const { list, unhealthy } = await workers(id);
    expect(list.map((w) => [w.status, w.version, w.isStale])).toEqual([
      ["UNHEALTHY", 1, false],
      ["UNHEALTHY", 1, false],
    ]);
    expect(unhealthy).toBe(2);
    const job = (await h.call("POST", `/v2/${id}/run`, { input: {} })).body;
    await h.clock.advance(10_000);
    expect((await h.call("GET", `/v2/${id}/status/${job.id}`)).body.status).toBe("IN_QUEUE");
  });

  it("lowering workers.max removes unhealthy workers first", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:unpullable" });
    await h.clock.advance(3000 + WORKER_START_MS);
    await h.call("PATCH", "/v2/serverless/svc", { workers: { max: 1 } });
    expect((await workers("svc")).list).toEqual([
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: true },
    ]);
  });
});

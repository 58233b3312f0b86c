/**
 * Releases and rolling updates, stepped on a ManualClock: a change of
 * what workers run makes a release (endpointVersion + 1, with its diff); the old workers keep
 * serving, stale, for rolloutMs (default 3000), then are replaced one at a time, each successor
 * INITIALIZING for WORKER_START_MS (500) on a warm endpoint. `/workers` and `/releases` show it as
 * it happens; job status answers carry the workerId that served them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parseCli } from "../../src/emulator/cli";
import { startEmulator } from "../../src/emulator/index";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, untilStatus } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type W = { id: string; status: string; version: number; isStale: boolean };
const workers = async (id: string): Promise<W[]> => {
  const answer = await (h as Harness).call("GET", `/v2/serverless/${id}/workers`);
  expect(answer.status).toBe(200);
  expect(check("ListEndpointWorkersResponse", answer.body)).toEqual([]);
  return answer.body.workers.map(({ id, status, version, isStale }: W) => ({ id, status, version, isStale }));
};
const releases = async (id: string) => {
  const answer = await (h as Harness).call("GET", `/v2/serverless/${id}/releases`);
  expect(answer.status).toBe(200);
  expect(check("ListEndpointReleasesResponse", answer.body)).toEqual([]);
  return answer.body;
};
const runsync = async (endpoint: string, input: Record<string, unknown> = {}) =>
  (await (h as Harness).call("POST", `/v2/${endpoint}/runsync`, { input })).body;

describe("a release", () => {
  it("is made by a change of image or env, with the dotted diff, newest first", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    expect((await releases("svc")).endpointVersion).toBe(1);
    const patched = await h.call("PATCH", "/v2/serverless/svc", {
      image: "acme/model:2",
      env: { MODEL: "b" },
    });
    expect(patched.status).toBe(200);
    const after = await releases("svc");
    expect(after.endpointVersion).toBe(2);
    expect(after.releases.map((r: { version: number }) => r.version)).toEqual([2, 1]);
    expect(after.releases[0]).toMatchObject({
      version: 2,
      source: "MANUAL",
      workerCount: 0,
      diff: [
        { field: "image", old: "runpod-emulator/builtin:latest", new: "acme/model:2" },
        { field: "env.MODEL", old: null, new: "b" },
      ],
    });
    expect(after.releases[1]).toMatchObject({ version: 1, workerCount: 2, diff: [] });
    expect(after.rollout).toEqual({
      inProgress: true,
      workersOnLatest: 0,
      workersTotal: 2,
      percentOnLatest: 0,
    });
  });

  it("is not made by a PATCH that changes nothing workers run", async () => {
    h = await harness({ endpoints: ["svc"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "runpod-emulator/builtin:latest", timeout: 1000 });
    expect((await releases("svc")).releases).toHaveLength(1);
    expect((await workers("svc")).every((w) => !w.isStale)).toBe(true);
  });
});

describe("a rolling update", () => {
  it("keeps stale workers serving for rolloutMs, then replaces them one at a time", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    const old = await workers("svc");
    expect(old).toEqual([
      { id: "svc-worker-1", status: "IDLE", version: 1, isStale: false },
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: false },
    ]);
    await h.call("PATCH", "/v2/serverless/svc", { env: { MODEL: "b" } });
    expect(await workers("svc")).toEqual(old.map((w) => ({ ...w, isStale: true })));
    // A job now lands on an old worker, and says which.
    const during = await runsync("svc");
    expect(during.status).toBe("COMPLETED");
    expect(["svc-worker-1", "svc-worker-2"]).toContain(during.workerId);

    await h.clock.advance(2999);
    expect((await workers("svc")).map((w) => [w.id, w.isStale])).toEqual([
      ["svc-worker-1", true],
      ["svc-worker-2", true],
    ]);
    await h.clock.advance(1);
    expect(await workers("svc")).toEqual([
      { id: "svc-worker-3", status: "INITIALIZING", version: 2, isStale: false },
      { id: "svc-worker-2", status: "IDLE", version: 1, isStale: true },
    ]);
    expect((await h.call("GET", "/v2/svc/health")).body.workers).toEqual({
      idle: 1,
      initializing: 1,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    expect((await releases("svc")).rollout).toEqual({
      inProgress: true,
      workersOnLatest: 1,
      workersTotal: 2,
      percentOnLatest: 50,
    });
    await h.clock.advance(WORKER_START_MS);
    expect(await workers("svc")).toEqual([
      { id: "svc-worker-3", status: "IDLE", version: 2, isStale: false },
      { id: "svc-worker-4", status: "INITIALIZING", version: 2, isStale: false },
    ]);
    await h.clock.advance(WORKER_START_MS);
    expect((await workers("svc")).map((w) => [w.id, w.status, w.version])).toEqual([
      ["svc-worker-3", "IDLE", 2],
      ["svc-worker-4", "IDLE", 2],
    ]);
    const done = await releases("svc");
    expect(done.rollout).toEqual({
      inProgress: false,
      workersOnLatest: 2,
      workersTotal: 2,
      percentOnLatest: 100,
    });
    expect(done.releases.map((r: { workerCount: number }) => r.workerCount)).toEqual([2, 0]);
    expect((await h.call("GET", "/v2/svc/health")).body.workers).toEqual({
      idle: 2,
      initializing: 0,
      ready: 2,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    const after = await runsync("svc");
    expect(["svc-worker-3", "svc-worker-4"]).toContain(after.workerId);
  });

  it("lets a busy stale worker finish its job before it is replaced; queued jobs wait for the new one", async () => {
    h = await harness({ endpoints: ["one:1"] });
    const long = (await h.call("POST", "/v2/one/run", { input: { sleepMs: 5000 } })).body;
    await untilStatus(h, "one", long.id, "IN_PROGRESS");
    await h.call("PATCH", "/v2/serverless/one", { env: { MODEL: "b" } });
    await h.clock.advance(3000);
    expect(await workers("one")).toEqual([
      { id: "one-worker-1", status: "RUNNING", version: 1, isStale: true },
    ]);
    const next = (await h.call("POST", "/v2/one/run", { input: { n: 2 } })).body;
    await h.clock.advance(2000);
    const first = await untilStatus(h, "one", long.id, "COMPLETED");
    expect(first.body.workerId).toBe("one-worker-1");
    expect(await workers("one")).toEqual([
      { id: "one-worker-2", status: "INITIALIZING", version: 2, isStale: false },
    ]);
    expect((await h.call("GET", `/v2/one/status/${next.id}`)).body.status).toBe("IN_QUEUE");
    await h.clock.advance(WORKER_START_MS);
    const second = await untilStatus(h, "one", next.id, "COMPLETED");
    expect(second.body).toMatchObject({ workerId: "one-worker-2", output: { n: 2 } });
  });

  it("restarts its wait on a newer release, and replaces old workers by the newest", async () => {
    h = await harness({ endpoints: ["svc:1"] });
    await h.call("PATCH", "/v2/serverless/svc", { env: { MODEL: "b" } });
    await h.clock.advance(2000);
    await h.call("PATCH", "/v2/serverless/svc", { env: { MODEL: "c" } });
    await h.clock.advance(2999);
    expect(await workers("svc")).toEqual([{ id: "svc-worker-1", status: "IDLE", version: 1, isStale: true }]);
    await h.clock.advance(1);
    expect(await workers("svc")).toEqual([
      { id: "svc-worker-2", status: "INITIALIZING", version: 3, isStale: false },
    ]);
    const list = await releases("svc");
    expect(list.releases.map((r: { version: number }) => r.version)).toEqual([3, 2, 1]);
    expect(list.releases[0].diff).toEqual([{ field: "env.MODEL", old: "b", new: "c" }]);
  });

  it("gives cold (not running) workers the new release at once: nothing to roll out", async () => {
    h = await harness({ endpoints: [{ id: "cold", workersMax: 2, coldStartMs: 1000 }] });
    expect(await workers("cold")).toEqual([]);
    await h.call("PATCH", "/v2/serverless/cold", { image: "acme/model:2" });
    expect((await releases("cold")).rollout).toEqual({
      inProgress: false,
      workersOnLatest: 0,
      workersTotal: 0,
      percentOnLatest: 100,
    });
    const job = (await h.call("POST", "/v2/cold/run", { input: {} })).body;
    await h.clock.advance(1000);
    const done = await untilStatus(h, "cold", job.id, "COMPLETED");
    expect((await workers("cold")).find((w) => w.id === done.body.workerId)).toMatchObject({
      version: 2,
      isStale: false,
    });
  });
});

describe("a broken release", () => {
  it("RUNPOD_EMULATOR_FAIL fails jobs only once its workers serve them", async () => {
    h = await harness({ endpoints: ["svc:1"] });
    await h.call("PATCH", "/v2/serverless/svc", { env: { RUNPOD_EMULATOR_FAIL: "CUDA out of memory" } });
    const onOld = await runsync("svc", { prompt: "x" });
    expect(onOld).toMatchObject({ status: "COMPLETED", workerId: "svc-worker-1", output: { prompt: "x" } });
    await h.clock.advance(3000 + WORKER_START_MS);
    const onNew = await runsync("svc", { prompt: "x" });
    expect(onNew).toMatchObject({ status: "FAILED", workerId: "svc-worker-2", error: "CUDA out of memory" });
  });

  it("RUNPOD_EMULATOR_ERROR_OUTPUT completes jobs with an error as their output", async () => {
    h = await harness({ endpoints: ["svc:1"], rolloutMs: 0 });
    await h.call("PATCH", "/v2/serverless/svc", {
      env: { RUNPOD_EMULATOR_ERROR_OUTPUT: "model not loaded" },
    });
    await h.clock.advance(WORKER_START_MS);
    expect(await runsync("svc")).toMatchObject({
      status: "COMPLETED",
      output: { error: "model not loaded" },
    });
  });
});

describe("handlers keyed by image", () => {
  it("change the code workers run when a release changes the image", async () => {
    h = await harness({
      endpoints: ["svc:1"],
      rolloutMs: 0,
      handlers: {
        "acme/model:2": async (_job, { worker }) => ({ model: 2, version: worker.version }),
        svc: async () => ({ model: 1 }),
      },
    });
    expect((await runsync("svc")).output).toEqual({ model: 1 });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/model:2" });
    await h.clock.advance(WORKER_START_MS);
    expect((await runsync("svc")).output).toEqual({ model: 2, version: 2 });
  });
});

describe("rolloutMs", () => {
  it("sets how long stale workers serve", async () => {
    h = await harness({ endpoints: ["svc:1"], rolloutMs: 100 });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/model:2" });
    await h.clock.advance(99);
    expect((await workers("svc"))[0]?.isStale).toBe(true);
    await h.clock.advance(1);
    expect((await workers("svc"))[0]).toMatchObject({ status: "INITIALIZING", version: 2 });
  });

  it("is --rollout-ms on the command line, and must be a non-negative integer", async () => {
    expect(parseCli(["--rollout-ms", "250"])?.rolloutMs).toBe(250);
    await expect(startEmulator({ rolloutMs: -1 })).rejects.toThrow(
      /^rolloutMs must be a non-negative integer/,
    );
  });
});

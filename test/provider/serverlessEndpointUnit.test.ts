/**
 * ServerlessEndpoint's rules as functions: the change plan `diff` and `update` share (what
 * replaces, what the PATCH sends, what a field removed from the program sends), and the rollout
 * wait on recorded sequences of `/workers` answers (done, stalled, recovered, timed out), replayed
 * on a fake clock.
 */
import { describe, expect, it } from "vitest";
import type { ServerlessWorkerList } from "../../src/client";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { checkEndpointArgs } from "../../src/provider/serverlessEndpoint/args";
import { planEndpointChange } from "../../src/provider/serverlessEndpoint/changes";
import { endpointOutputs, endpointSecrets } from "../../src/provider/serverlessEndpoint/outputs";
import {
  EndpointRolloutError,
  type RolloutReaders,
  waitForEndpointRollout,
  workersByStatus,
} from "../../src/provider/serverlessEndpoint/rolloutWait";
import { WorkerPolls } from "../../src/provider/smokeTestJob/workerPoll";
import { FakeClock } from "../support/fakeClock";
import { ENDPOINT_OUTPUTS, ENDPOINT_PROGRAM } from "./endpointFixtures";

/** Outputs as the emulator reads a fresh GPU endpoint back. */
const OLDS = {
  ...ENDPOINT_OUTPUTS,
  createdAt: "2026-11-25T00:00:00.000Z",
  latestReleaseId: "r1",
  requestUrls: { run: "http://x/v2/ep/run" },
};
const NEWS = ENDPOINT_PROGRAM;

describe("the change plan", () => {
  it("finds nothing to do when an env value equals a word the service answers in (QUEUE, a pool id)", () => {
    const env = { MODEL: "small", MODE: "QUEUE", POOL: "ADA_24" };
    const { id: _id, ...live } = { ...ENDPOINT_OUTPUTS, id: "ep1", env };
    const outs = endpointOutputs(
      { ...live, id: "ep1" } as never,
      undefined,
      {},
      endpointSecrets(undefined, { env }),
    );
    expect(outs).toMatchObject({
      type: "QUEUE",
      scaling: { type: "QUEUE_DELAY" },
      gpu: { pools: ["ADA_24"] },
    });
    expect(planEndpointChange(outs, { ...NEWS, env })).toEqual({ replaces: [], patch: {}, changed: [] });
  });

  it("finds nothing to do when the service holds what the program says (its defaults aside)", () => {
    expect(planEndpointChange(OLDS, NEWS)).toEqual({ replaces: [], patch: {}, changed: [] });
  });

  it("PATCHes only what changed", () => {
    expect(planEndpointChange(OLDS, { ...NEWS, image: "acme/api:2", workers: { max: 3 } })).toEqual({
      replaces: [],
      patch: { image: "acme/api:2", workers: { max: 3 } },
      changed: ["image", "workers"],
    });
  });

  it("sends env as a whole, and sees a key added in the console as a change", () => {
    const olds = { ...OLDS, env: { MODEL: "small", DEBUG: "1" } };
    expect(planEndpointChange(olds, NEWS).patch).toEqual({ env: { MODEL: "small" } });
  });

  it("replaces on type and on the compute family, and patches nothing then", () => {
    expect(planEndpointChange(OLDS, { ...NEWS, type: "LOAD_BALANCER" }).replaces).toEqual(["type"]);
    const { gpu: _gpu, ...cpuNews } = NEWS;
    const toCpu = planEndpointChange(OLDS, { ...cpuNews, cpu: [{ id: "cpu3c", vcpuCount: 2 }] });
    expect(toCpu.replaces).toEqual(["cpu", "gpu"]);
    expect(toCpu.patch).toEqual({});
    const cpuOlds = { ...OLDS, gpu: undefined, cpu: [{ id: "cpu3c", vcpuCount: 2, memory: 8 }] };
    expect(planEndpointChange(cpuOlds, NEWS).replaces).toEqual(["cpu", "gpu"]);
    // The same CPU selection is no change (the service adds memory).
    expect(planEndpointChange(cpuOlds, { ...cpuNews, cpu: [{ id: "cpu3c", vcpuCount: 2 }] }).changed).toEqual(
      [],
    );
  });

  it("drops what the program no longer gives, with the document's 'nothing' for each field", () => {
    const olds = {
      ...OLDS,
      args: "--fast",
      ports: ["8000/http"],
      registry: "reg1",
      dataCenterIds: ["EU-RO-1"],
      networkVolumes: ["vol1"],
      flashboot: "FLASHBOOT",
      timeout: 60_000,
      workers: { min: 1, max: 2, idleTimeout: 30 },
    };
    const { env: _env, ...news } = NEWS;
    expect(planEndpointChange(olds, news).patch).toEqual({
      env: {},
      ports: [],
      args: "",
      registry: null,
      dataCenterIds: [],
      networkVolumes: [],
      flashboot: "OFF",
      timeout: 300_000,
      workers: { max: 2, min: 0, idleTimeout: 10 },
    });
  });

  it("clears GPU constraints the program no longer gives: count, CUDA set and floor, excluded types", () => {
    const olds = {
      ...OLDS,
      gpu: {
        pools: ["ADA_24"],
        count: 2,
        excludedTypes: ["NVIDIA L4"],
        allowedCudaVersions: [],
        minCudaVersion: "12.1",
      },
    };
    expect(planEndpointChange(olds, NEWS).patch).toEqual({
      gpu: { pools: ["ADA_24"], count: 1, minCudaVersion: "" },
    });
    const withSet = { ...OLDS, gpu: { ...OLDS.gpu, allowedCudaVersions: ["12.4"] } };
    expect(planEndpointChange(withSet, NEWS).patch).toEqual({
      gpu: { pools: ["ADA_24"], allowedCudaVersions: [] },
    });
  });

  it("leaves the container settings a template supplies alone when the program omits them", () => {
    const olds = {
      ...OLDS,
      templateId: "tpl1",
      ports: ["8000/http"],
      args: "serve",
      env: { FROM: "template" },
    };
    const { env: _env, image: _image, ...rest } = NEWS;
    expect(planEndpointChange(olds, { ...rest, templateId: "tpl1" })).toEqual({
      replaces: [],
      patch: {},
      changed: [],
    });
    // A new template is applied by the PATCH.
    expect(planEndpointChange(olds, { ...rest, templateId: "tpl2" }).patch).toEqual({ templateId: "tpl2" });
  });

  it("does not send idleTimeout for a queue endpoint scaling on request count (the service omits it)", () => {
    const olds = {
      ...OLDS,
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
      workers: { min: 0, max: 2, idleTimeout: 30 },
    };
    const news = { ...NEWS, scaling: { type: "REQUEST_COUNT" as const, requestCount: 2 } };
    expect(planEndpointChange(olds, news).patch).toEqual({});
  });

  it("compares data centre ids in any letter case, as check accepts them, and still sees a real change", () => {
    const olds = { ...OLDS, dataCenterIds: ["EU-RO-1", "US-KS-2"] };
    expect(planEndpointChange(olds, { ...NEWS, dataCenterIds: ["eu-ro-1", "Us-Ks-2"] })).toEqual({
      replaces: [],
      patch: {},
      changed: [],
    });
    expect(planEndpointChange(olds, { ...NEWS, dataCenterIds: ["eu-ro-1"] }).patch).toEqual({
      dataCenterIds: ["eu-ro-1"],
    });
  });

  it("counts the provider's own settings as changes that send nothing", () => {
    expect(planEndpointChange(OLDS, { ...NEWS, rollout: "ignore", rolloutTimeoutMs: 5000 })).toEqual({
      replaces: [],
      patch: {},
      changed: ["rollout", "rolloutTimeoutMs"],
    });
  });

  it("treats values not known yet as changed, and an unknown type as a possible replacement", () => {
    expect(planEndpointChange(OLDS, { ...NEWS, image: UNKNOWN }).changed).toEqual(["image"]);
    expect(planEndpointChange(OLDS, { ...NEWS, type: UNKNOWN as "QUEUE" }).replaces).toEqual(["type"]);
  });

  it("sends a field not known yet, whole or nested, as given, and counts it as changed", () => {
    for (const [field, value] of [
      ["workers", UNKNOWN],
      ["workers", { max: UNKNOWN }],
      ["gpu", UNKNOWN],
      ["gpu", { pools: [UNKNOWN] }],
    ] as const) {
      expect(planEndpointChange(OLDS, { ...NEWS, [field]: value } as never)).toEqual({
        replaces: [],
        patch: { [field]: value },
        changed: [field],
      });
    }
    const env = { MODEL: UNKNOWN };
    expect(planEndpointChange(OLDS, { ...NEWS, env })).toEqual({
      replaces: [],
      patch: { env },
      changed: ["env"],
    });
    const smokeTest = { input: { prompt: UNKNOWN } };
    expect(planEndpointChange(OLDS, { ...NEWS, smokeTest } as never)).toEqual({
      replaces: [],
      patch: {},
      changed: ["smokeTest"],
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The rollout wait, on recorded sequences of /workers answers
// ---------------------------------------------------------------------------------------------

const worker = (id: string, status: string, version: number, endpointVersion: number) => ({
  id,
  status,
  version,
  isStale: version < endpointVersion,
});
const at = (endpointVersion: number, ...workers: [string, string, number][]): ServerlessWorkerList => ({
  endpointVersion,
  workers: workers.map(([id, status, version]) => worker(id, status, version, endpointVersion)),
  summary: { running: 0, idle: 0, initializing: 0, throttled: 0, unhealthy: 0, total: workers.length },
});

/**
 * Replays `answers` to the wait, one per read (the last one again once they run out), on a fake
 * clock and a poll of its own: the reads happen when the clock says, so the counts and the moment
 * the wait ends are exact.
 */
function replay(...answers: ServerlessWorkerList[]) {
  const clock = new FakeClock();
  const polls = new WorkerPolls<ServerlessWorkerList>(clock);
  const readsAt: number[] = [];
  const readers: RolloutReaders = {
    workers: async () => {
      readsAt.push(clock.now());
      return answers[Math.min(readsAt.length - 1, answers.length - 1)] as ServerlessWorkerList;
    },
    // A log of one line, then the end of the stream.
    workerLogs: async function* (_endpoint, workerId) {
      yield {
        source: "system",
        line: `failed to pull image for ${workerId}`,
        ts: "2026-11-25T00:00:00.000Z",
      };
    },
  };
  /** Runs the wait (the default poll interval, 1 s) until it ends, and says when and how. */
  const wait = (timeoutMs = 60_000) =>
    clock.runUntil(waitForEndpointRollout(readers, "ep", '"api" (id ep)', { timeoutMs, secrets: [], polls }));
  return { clock, polls, readsAt, wait };
}

describe("the endpoint rollout wait", () => {
  it("returns after one read when no worker is stale or unhealthy", async () => {
    const { clock, polls, readsAt, wait } = replay(at(2, ["a", "IDLE", 2], ["b", "RUNNING", 2]));
    expect(await wait()).toEqual({ at: 0, ok: true, value: { version: 2, reads: 1, workers: 2 } });
    expect(readsAt).toEqual([0]);
    // The wait left its poll: nothing more is read, and no timer is left behind.
    await clock.advance(10_000);
    expect(readsAt).toEqual([0]);
    expect(clock.pending()).toBe(0);
    expect(polls.stats()).toEqual({ reads: 1, active: 0 });
  });

  it("reads once a second until the last stale worker is replaced", async () => {
    const { readsAt, wait } = replay(
      at(2, ["a", "IDLE", 1], ["b", "IDLE", 1]),
      at(2, ["c", "INITIALIZING", 2], ["b", "IDLE", 1]),
      at(2, ["c", "IDLE", 2], ["d", "IDLE", 2]),
    );
    expect(await wait()).toEqual({ at: 2_000, ok: true, value: { version: 2, reads: 3, workers: 2 } });
    expect(readsAt).toEqual([0, 1_000, 2_000]);
  });

  it("calls a stall when the same new worker is UNHEALTHY on two reads in a row", async () => {
    const stalled = at(2, ["c", "UNHEALTHY", 2], ["b", "IDLE", 1]);
    const { clock, readsAt, wait } = replay(at(2, ["a", "IDLE", 1], ["b", "IDLE", 1]), stalled, stalled);
    const ended = await wait();
    expect(ended).toMatchObject({ at: 2_000, ok: false });
    const error = (ended as { error: unknown }).error;
    expect(error).toBeInstanceOf(EndpointRolloutError);
    // Stalled on the third answer, and nothing read after it.
    expect(readsAt).toEqual([0, 1_000, 2_000]);
    await clock.advance(10_000);
    expect(readsAt).toHaveLength(3);
    expect((error as Error).message).toBe(
      [
        'ServerlessEndpoint "api" (id ep): the rollout of version 2 stalled: worker c of version 2 is UNHEALTHY ' +
          "(it fails its health checks: an image that cannot be pulled, or a container that exits at start).",
        "Workers: 1 UNHEALTHY on version 2, 1 IDLE on version 1.",
        "Worker log (last 1 lines of c):",
        "  2026-11-25T00:00:00.000Z system failed to pull image for c",
        "The endpoint was changed: it is at version 2, and its stale workers keep serving the previous release. " +
          "Fix the release (the image, its registry credential, env or start command) and run pulumi up again; " +
          'to deploy without waiting for the rollout, set rollout: "ignore".',
      ].join("\n"),
    );
  });

  it("waits on when an unhealthy new worker recovers, or another one takes its place", async () => {
    const { readsAt, wait } = replay(
      at(2, ["c", "UNHEALTHY", 2], ["b", "IDLE", 1]),
      at(2, ["c", "IDLE", 2], ["d", "UNHEALTHY", 2]),
      at(2, ["c", "IDLE", 2], ["d", "IDLE", 2]),
    );
    expect(await wait()).toMatchObject({ at: 2_000, ok: true, value: { version: 2, reads: 3 } });
    expect(readsAt).toEqual([0, 1_000, 2_000]);
  });

  it("does not call a stall when a new worker is unhealthy, healthy, then unhealthy again", async () => {
    const { wait } = replay(
      at(2, ["c", "UNHEALTHY", 2], ["b", "IDLE", 1]),
      at(2, ["c", "IDLE", 2], ["b", "IDLE", 1]),
      at(2, ["c", "UNHEALTHY", 2], ["b", "IDLE", 1]),
      at(2, ["c", "IDLE", 2], ["d", "IDLE", 2]),
    );
    expect(await wait()).toMatchObject({ ok: true, value: { version: 2, reads: 4, workers: 2 } });
  });

  it("does not count a stale UNHEALTHY worker as one of the new release", async () => {
    const oldUnhealthy = at(2, ["a", "UNHEALTHY", 1], ["c", "IDLE", 2]);
    const { wait } = replay(oldUnhealthy, oldUnhealthy, at(2, ["c", "IDLE", 2], ["d", "IDLE", 2]));
    expect(await wait()).toMatchObject({ ok: true, value: { version: 2, reads: 3, workers: 2 } });
  });

  it("times out at timeoutMs, on the first read at or past it, saying how far the rollout got", async () => {
    const { readsAt, wait } = replay(at(2, ["c", "INITIALIZING", 2], ["b", "IDLE", 1]));
    const ended = await wait(5_000);
    expect(ended).toMatchObject({ at: 5_000, ok: false });
    const error = (ended as { error: unknown }).error;
    expect(error).toBeInstanceOf(EndpointRolloutError);
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
    expect((error as Error).message).toContain(
      'ServerlessEndpoint "api" (id ep): the rollout of version 2 did not complete within rolloutTimeoutMs (5000 ms): ' +
        "1 of 2 workers still run an older version, and worker c of version 2 is INITIALIZING.",
    );
    expect((error as Error).message).toContain("if the rollout only needs longer, raise rolloutTimeoutMs;");
  });

  it("names the workers by status and version, newest version first", () => {
    expect(
      workersByStatus(
        at(3, ["a", "UNHEALTHY", 3], ["b", "UNHEALTHY", 3], ["c", "RUNNING", 2], ["d", "IDLE", 2]),
      ),
    ).toBe("2 UNHEALTHY on version 3, 1 IDLE on version 2, 1 RUNNING on version 2");
    expect(workersByStatus(at(1))).toBe("no active workers");
  });
});

describe("check of object arguments given as something else", () => {
  const good = {
    name: "api",
    type: "QUEUE",
    image: "acme/api:1",
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  };
  it("names scaling, smokeTest and workers and says an object is expected, with its shape", () => {
    expect(checkEndpointArgs({ ...good, scaling: "fast" }).failures).toEqual([
      {
        property: "",
        reason:
          'scaling must be an object, { type: "QUEUE_DELAY", queueDelay } or { type: "REQUEST_COUNT", requestCount }, got a string',
      },
    ]);
    expect(checkEndpointArgs({ ...good, smokeTest: "yes" }).failures).toEqual([
      {
        property: "",
        reason:
          "smokeTest must be an object, JobRun's job arguments (input or http, expect, ...) plus runs, maxFailures and onFailure, got a string",
      },
    ]);
    expect(checkEndpointArgs({ ...good, workers: 3 }).failures).toEqual([
      { property: "", reason: "workers must be an object, { min, max, idleTimeout }, got a number" },
    ]);
  });
});

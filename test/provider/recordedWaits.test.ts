/**
 * The waits on recorded sequences of the service's answers (`test/fixtures/recordings/`, read
 * from the emulator once a second of its clock): a rolling update, a release whose workers crash
 * at start, a pod from create to RUNNING. Each recording is replayed by time on a fake clock (a
 * read at time t gets the answer recorded at the latest moment not after t), so the tests say
 * exactly when each wait reads, and when it returns or gives up, with what message.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { Pod, ServerlessWorkerList } from "../../src/client";
import { DeploymentCancelledError, timeoutSignal } from "../../src/provider/clock";
import { waitForPod } from "../../src/provider/pod/wait";
import {
  EndpointRolloutError,
  waitForEndpointRollout,
} from "../../src/provider/serverlessEndpoint/rolloutWait";
import { RolloutTimeoutError, waitForRollout } from "../../src/provider/smokeTestJob/staleWorkers";
import { WorkerPolls } from "../../src/provider/smokeTestJob/workerPoll";
import { PodSchema } from "../../src/wire/pods";
import { ServerlessWorkerListSchema } from "../../src/wire/serverless";
import { FakeClock } from "../support/fakeClock";

interface Recording<T> {
  what: string;
  created?: T;
  answers: { atMs: number; answer: T }[];
}

function recording<T>(name: string, schema: { parse: (value: unknown) => T }): Recording<T> {
  const raw = JSON.parse(
    readFileSync(path.join(__dirname, "..", "fixtures", "recordings", `${name}.json`), "utf8"),
  ) as Recording<unknown>;
  // The recordings keep the service's wire shapes: every answer parses as the client would.
  return {
    ...raw,
    created: raw.created === undefined ? undefined : schema.parse(raw.created),
    answers: raw.answers.map(({ atMs, answer }) => ({ atMs, answer: schema.parse(answer) })),
  };
}

/** Serves `recording` by the fake clock's time, noting when each read happened. */
function replay<T>(recording: Recording<T>) {
  const clock = new FakeClock();
  const readsAt: number[] = [];
  const read = async (): Promise<T> => {
    readsAt.push(clock.now());
    const due = recording.answers.filter((a) => a.atMs <= clock.now());
    const last = due[due.length - 1];
    if (last === undefined) throw new Error(`nothing was recorded at ${clock.now()} ms`);
    return last.answer;
  };
  return { clock, readsAt, read };
}

const rollingUpdate = () => recording("workers-rolling-update", ServerlessWorkerListSchema);
const unhealthyRelease = () => recording("workers-unhealthy-release", ServerlessWorkerListSchema);

/** The ServerlessEndpoint wait on a replayed recording, run until it ends. */
function endpointWait(rec: Recording<ServerlessWorkerList>, id: string, timeoutMs = 60_000) {
  const { clock, readsAt, read } = replay(rec);
  const polls = new WorkerPolls<ServerlessWorkerList>(clock);
  const ended = clock.runUntil(
    waitForEndpointRollout({ workers: read, workerLogs: async function* () {} }, id, `"${id}" (id ${id})`, {
      timeoutMs,
      secrets: [],
      polls,
    }),
  );
  return { clock, readsAt, ended };
}

/** The JobRun wait on a replayed recording, stopped by a deadline at `deadlineMs`. */
function jobRunWait(rec: Recording<ServerlessWorkerList>, id: string, deadlineMs: number) {
  const { clock, readsAt, read } = replay(rec);
  const polls = new WorkerPolls<ServerlessWorkerList>(clock);
  const deadline = timeoutSignal(clock, deadlineMs);
  const ended = clock.runUntil(
    waitForRollout(read, id, { signal: deadline.signal, polls }).finally(deadline.clear),
  );
  return { clock, readsAt, ended };
}

describe("the endpoint rollout wait on recorded /workers answers", () => {
  it("returns on the first read after the last stale worker was replaced (a rolling update)", async () => {
    const { clock, readsAt, ended } = endpointWait(rollingUpdate(), "roll");
    expect(await ended).toEqual({ at: 4_000, ok: true, value: { version: 2, reads: 5, workers: 2 } });
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(clock.pending()).toBe(0);
  });

  it("calls a stall on the second read that finds the same new worker UNHEALTHY", async () => {
    const { clock, readsAt, ended } = endpointWait(unhealthyRelease(), "broken");
    const outcome = await ended;
    expect(outcome).toMatchObject({ at: 5_000, ok: false });
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(EndpointRolloutError);
    expect((error as EndpointRolloutError).kind).toBe("stalled");
    expect((error as Error).message.split("\n").slice(0, 2)).toEqual([
      'ServerlessEndpoint "broken" (id broken): the rollout of version 2 stalled: worker broken-worker-3 of ' +
        "version 2 is UNHEALTHY (it fails its health checks: an image that cannot be pulled, or a container " +
        "that exits at start).",
      "Workers: 1 UNHEALTHY on version 2, 1 IDLE on version 1.",
    ]);
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000]);
    expect(clock.pending()).toBe(0);
  });

  it("gives up at rolloutTimeoutMs when the recording ends before the rollout does", async () => {
    const stalledEarly: Recording<ServerlessWorkerList> = {
      ...rollingUpdate(),
      answers: rollingUpdate().answers.slice(0, 4), // up to the first new worker INITIALIZING
    };
    const { readsAt, ended } = endpointWait(stalledEarly, "roll", 6_000);
    const outcome = await ended;
    expect(outcome).toMatchObject({ at: 6_000, ok: false });
    const error = (outcome as { error: unknown }).error as EndpointRolloutError;
    expect(error.kind).toBe("timeout");
    expect(error.message.split("\n")[0]).toBe(
      'ServerlessEndpoint "roll" (id roll): the rollout of version 2 did not complete within rolloutTimeoutMs ' +
        "(6000 ms): 1 of 2 workers still run an older version, and worker roll-worker-3 of version 2 is INITIALIZING.",
    );
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000, 5_000, 6_000]);
  });
});

describe("the JobRun rollout wait on recorded /workers answers", () => {
  it("ends with the rolling update, on the read that finds no stale worker", async () => {
    const { readsAt, ended } = jobRunWait(rollingUpdate(), "roll", 60_000);
    expect(await ended).toMatchObject({
      at: 4_000,
      ok: true,
      value: { version: 2, stale: 0, total: 2, reads: 5, waited: true },
    });
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  });

  it("waits through an unhealthy release (its stale worker keeps serving) until its deadline", async () => {
    const { clock, readsAt, ended } = jobRunWait(unhealthyRelease(), "broken", 9_500);
    const outcome = await ended;
    expect(outcome).toMatchObject({ at: 9_500, ok: false });
    const error = (outcome as { error: unknown }).error as RolloutTimeoutError;
    expect(error).toBeInstanceOf(RolloutTimeoutError);
    expect(error.message).toBe(
      "endpoint broken was still rolling out version 2: 1 of 2 workers ran an older version",
    );
    expect(error.reads).toBe(10);
    expect(readsAt).toEqual(Array.from({ length: 10 }, (_, i) => i * 1_000));
    expect(clock.pending()).toBe(0);
  });
});

describe("the pod readiness wait on recorded pod statuses", () => {
  const podCreate = () => recording("pod-create", PodSchema);

  /**
   * The wait on the recording; `cancelAtMs` aborts its signal then, as the plugin's Cancel does.
   * `hangFromMs`: reads from then on never answer until their signal aborts (as the client's do).
   */
  function podWait(timeoutMs: number, cancel?: { atMs: number; hangFromMs?: number }) {
    const rec = podCreate();
    const { clock, readsAt, read } = replay(rec);
    const cancellation = new AbortController();
    if (cancel) clock.setTimeout(() => cancellation.abort(new DeploymentCancelledError()), cancel.atMs);
    const get = (_id: string, options?: { signal?: AbortSignal }): Promise<Pod> => {
      if (cancel?.hangFromMs === undefined || clock.now() < cancel.hangFromMs) return read();
      readsAt.push(clock.now());
      const signal = options?.signal;
      return new Promise((_resolve, reject) =>
        signal?.addEventListener("abort", () =>
          reject(new Error("GET /v2/pods aborted by the caller's signal", { cause: signal.reason })),
        ),
      );
    };
    const ended = clock.runUntil(
      waitForPod({
        client: { pods: { get } } as never,
        pod: rec.created as Pod,
        wanted: "RUNNING",
        waitFor: "running",
        timeoutMs,
        clock,
        signal: cancel ? cancellation.signal : undefined,
      }),
    );
    return { clock, readsAt, ended };
  }

  it("is ready on the first read that finds the pod RUNNING, with the statuses it went through", async () => {
    const { readsAt, ended } = podWait(600_000);
    const outcome = await ended;
    expect(outcome).toMatchObject({
      at: 3_000,
      ok: true,
      value: { kind: "ready", pod: { status: "RUNNING" } },
    });
    expect(readsAt).toEqual([1_000, 2_000, 3_000]);
  });

  it("gives up at waitTimeoutMs with the status the pod was left in", async () => {
    const { clock, readsAt, ended } = podWait(2_500);
    const outcome = await ended;
    expect(outcome).toMatchObject({
      at: 2_500,
      ok: true,
      value: {
        kind: "failure",
        history: ["PROVISIONING", "STARTING"],
        why: "it was not RUNNING within waitTimeoutMs (2500 ms); its status is STARTING",
      },
    });
    expect(readsAt).toEqual([1_000, 2_000, 2_500]);
    expect(clock.pending()).toBe(0);
  });

  it("ends when the deployment is cancelled between two reads, saying so, with the status it had", async () => {
    const { clock, readsAt, ended } = podWait(600_000, { atMs: 1_500 });
    expect(await ended).toMatchObject({
      at: 1_500,
      ok: true,
      value: {
        kind: "failure",
        history: ["PROVISIONING"],
        why: "it was not RUNNING when the deployment was cancelled (Ctrl-C); its status is PROVISIONING",
      },
    });
    expect(readsAt).toEqual([1_000]);
    expect(clock.pending()).toBe(0);
  });

  it("ends when the deployment is cancelled while a read hangs: the read is aborted, not waited out", async () => {
    const { clock, readsAt, ended } = podWait(600_000, { atMs: 2_300, hangFromMs: 2_000 });
    expect(await ended).toMatchObject({
      at: 2_300,
      ok: true,
      value: {
        kind: "failure",
        history: ["PROVISIONING"],
        why: "it was not RUNNING when the deployment was cancelled (Ctrl-C); its status is PROVISIONING",
      },
    });
    expect(readsAt).toEqual([1_000, 2_000]);
    expect(clock.pending()).toBe(0);
  });
});

/**
 * A smoke test that knows which release it tested (JobRun `rollout`): the rules as
 * functions first, then JobRuns through Pulumi's real dynamic-provider host with `__provider`
 * serialized from the INSTALLED package, against the emulator's rolling updates (REST v2).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient, type ServerlessWorkerList } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { timeoutSignal } from "../../src/provider/clock";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { executeJobRun } from "../../src/provider/smokeTestJob/run";
import {
  RolloutTimeoutError,
  releaseOfJob,
  rolloutState,
  type WorkerListReader,
  waitForRollout,
} from "../../src/provider/smokeTestJob/staleWorkers";
import { JobRunSubmitError } from "../../src/provider/smokeTestJob/submission";
import { WorkerPolls } from "../../src/provider/smokeTestJob/workerPoll";
import { FakeClock } from "../support/fakeClock";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { createFailing, createPassing, startJobRunHost } from "./jobRunHostKit";

const worker = (id: string, version: number, isStale: boolean) => ({ id, status: "IDLE", version, isStale });
const list = (endpointVersion: number, ...workers: ReturnType<typeof worker>[]): ServerlessWorkerList => ({
  endpointVersion,
  workers,
  summary: {
    running: 0,
    idle: workers.length,
    initializing: 0,
    throttled: 0,
    unhealthy: 0,
    total: workers.length,
  },
});

describe("which release ran a job", () => {
  it("counts a worker on a newer version than the endpoint reports as stale, never recording the worker's", () => {
    // The endpoint's versions went backwards (3 now, the worker still on 5): the worker does not
    // run the endpoint's configuration, whatever its isStale says.
    expect(releaseOfJob(list(3, worker("a", 5, false)), "a", 3)).toMatchObject({
      kind: "stale",
      version: 3,
      workerVersion: 5,
    });
    expect(rolloutState(list(3, worker("a", 5, false), worker("b", 3, false)))).toEqual({
      version: 3,
      stale: 1,
      total: 2,
    });
  });

  it("is the worker's version when the worker is listed, and stale when it is older than the endpoint's", () => {
    expect(releaseOfJob(list(3, worker("a", 3, false)), "a", 3)).toMatchObject({
      kind: "current",
      version: 3,
    });
    expect(releaseOfJob(list(3, worker("a", 2, true)), "a", 3)).toMatchObject({
      kind: "stale",
      version: 3,
      workerVersion: 2,
    });
    // A service that says only the version, not isStale.
    expect(releaseOfJob(list(3, worker("a", 2, false)), "a", 3).kind).toBe("stale");
  });

  it("is the endpoint's version when the worker is gone but no release happened since the rollout wait", () => {
    expect(releaseOfJob(list(3, worker("b", 3, false)), "gone", 3)).toMatchObject({
      kind: "current",
      version: 3,
    });
    expect(releaseOfJob(list(3), undefined, 3)).toMatchObject({ kind: "current", version: 3 });
  });

  it("takes a service that reports no versions at its isStale word", () => {
    const unversioned = (isStale: boolean): ServerlessWorkerList => ({
      workers: [{ id: "b", status: "IDLE", isStale }],
      summary: { running: 0, idle: 1, initializing: 0, throttled: 0, unhealthy: 0, total: 1 },
    });
    expect(releaseOfJob(unversioned(false), "gone", undefined)).toMatchObject({ kind: "current" });
    expect(releaseOfJob(unversioned(true), "gone", undefined).kind).toBe("unknown");
    expect(releaseOfJob(unversioned(true), "b", undefined).kind).toBe("stale");
  });

  it("cannot be told when the worker is gone and the endpoint moved to another version meanwhile", () => {
    const check = releaseOfJob(list(4, worker("b", 4, false)), "gone", 3);
    expect(check).toMatchObject({ kind: "unknown", version: 4 });
    expect(check.how).toBe(
      "worker gone is no longer listed, and the endpoint moved from version 3 to 4 while the job ran",
    );
  });
});

describe("the rollout wait", () => {
  /**
   * A reader answering `answers` in turn (the last one again once they run out) on a fake clock and
   * a poll of its own, noting when each read starts.
   */
  const replay = (...answers: ServerlessWorkerList[]) => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<ServerlessWorkerList>(clock);
    const readsAt: number[] = [];
    const read: WorkerListReader = async () => {
      readsAt.push(clock.now());
      return answers[Math.min(readsAt.length - 1, answers.length - 1)] as ServerlessWorkerList;
    };
    return { clock, polls, read, readsAt };
  };

  it("reads once and does not wait when no worker is stale", async () => {
    const { clock, polls, read, readsAt } = replay(list(2, worker("a", 2, false)));
    const events: string[] = [];
    const ended = await clock.runUntil(
      waitForRollout(read, "ep", {
        signal: new AbortController().signal,
        onWaiting: () => events.push("waiting"),
        polls,
      }),
    );
    expect(ended).toMatchObject({
      at: 0,
      ok: true,
      value: { version: 2, stale: 0, reads: 1, waited: false },
    });
    expect(readsAt).toEqual([0]);
    expect(events).toEqual([]);
    await clock.advance(10_000);
    expect(readsAt).toEqual([0]);
  });

  it("polls once a second until the last stale worker is replaced, reporting the start and the end once", async () => {
    const { clock, polls, read, readsAt } = replay(
      list(2, worker("a", 1, true), worker("b", 1, true)),
      list(2, worker("a", 1, true), worker("c", 2, false)),
      list(2, worker("d", 2, false), worker("c", 2, false)),
    );
    const events: string[] = [];
    const ended = await clock.runUntil(
      waitForRollout(read, "ep", {
        signal: new AbortController().signal,
        onWaiting: (s) => events.push(`waiting ${s.stale}/${s.total} at ${clock.now()}`),
        onRolledOut: (s) => events.push(`rolled out v${s.version} at ${clock.now()}`),
        polls,
      }),
    );
    expect(ended).toMatchObject({
      at: 2_000,
      ok: true,
      value: { version: 2, stale: 0, reads: 3, waited: true },
    });
    expect(readsAt).toEqual([0, 1_000, 2_000]);
    expect(events).toEqual(["waiting 2/2 at 0", "rolled out v2 at 2000"]);
  });

  it("stops at the signal with the last state seen and the reads made", async () => {
    const { clock, polls, read, readsAt } = replay(list(2, worker("a", 1, true)));
    const deadline = timeoutSignal(clock, 3_500);
    const ended = await clock.runUntil(waitForRollout(read, "ep", { signal: deadline.signal, polls }));
    expect(ended).toMatchObject({ at: 3_500, ok: false });
    const error = (ended as { error: unknown }).error;
    expect(error).toBeInstanceOf(RolloutTimeoutError);
    expect((error as Error).message).toBe(
      "endpoint ep was still rolling out version 2: 1 of 1 workers ran an older version",
    );
    expect((error as RolloutTimeoutError).reads).toBe(4);
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000]);
    expect(clock.pending()).toBe(0);
  });
});

describe("a JobRun's rollout wait and deadline on its clock", () => {
  const replay = (...answers: ServerlessWorkerList[]) => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<ServerlessWorkerList>(clock);
    const readsAt: number[] = [];
    const read: WorkerListReader = async () => {
      readsAt.push(clock.now());
      return answers[Math.min(readsAt.length - 1, answers.length - 1)] as ServerlessWorkerList;
    };
    const submittedAt: number[] = [];
    // A job that is over as soon as it is submitted (its status answer names no worker).
    const endpoint = {
      id: "ep",
      run: async () => {
        submittedAt.push(clock.now());
        return { id: "job-1", status: "COMPLETED", output: { ok: true } };
      },
    };
    const execute = (timeoutMs: number) =>
      clock.runUntil(
        executeJobRun(resolveJobRunArgs({ endpointId: "ep", input: {}, timeoutMs, rollout: "wait" }), {
          endpoint: endpoint as unknown as Parameters<typeof executeJobRun>[1]["endpoint"],
          log: () => {},
          workers: read,
          workerPolls: polls,
        }),
      );
    return { clock, readsAt, submittedAt, execute };
  };

  it("submits the moment the last stale worker is replaced, and records the rollout in its timeline", async () => {
    const { readsAt, submittedAt, execute } = replay(
      list(2, worker("a", 1, true), worker("b", 1, true)),
      list(2, worker("a", 1, true), worker("c", 2, false)),
      list(2, worker("d", 2, false), worker("c", 2, false)),
    );
    const ended = await execute(60_000);
    expect(ended).toMatchObject({ at: 2_000, ok: true });
    const outcome = (ended as { value: Awaited<ReturnType<typeof executeJobRun>> }).value;
    expect(outcome.failure).toBeUndefined();
    expect(outcome.result.endpointVersion).toBe(2);
    expect(outcome.result.timeline).toEqual([
      { status: "ROLLOUT_WAIT", atMs: 0 },
      { status: "ROLLED_OUT", atMs: 2_000 },
      { status: "COMPLETED", atMs: 2_000 },
    ]);
    // Three reads of the wait, then the release check's own read after the job.
    expect(readsAt).toEqual([0, 1_000, 2_000, 2_000]);
    expect(submittedAt).toEqual([2_000]);
  });

  it("gives up at timeoutMs when the rollout outlasts it, submitting nothing", async () => {
    const { clock, readsAt, submittedAt, execute } = replay(list(2, worker("a", 1, true)));
    const ended = await execute(4_500);
    expect(ended).toMatchObject({ at: 4_500, ok: false });
    const error = (ended as { error: unknown }).error;
    expect(error).toBeInstanceOf(JobRunSubmitError);
    expect((error as Error).message).toContain(
      "JobRun could not submit a job to endpoint ep within timeoutMs (4500 ms): the deadline passed while it " +
        "waited for the rollout (endpoint ep was still rolling out version 2: 1 of 1 workers ran an older version). " +
        "No job was created.",
    );
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    expect(submittedAt).toEqual([]);
    expect(clock.pending()).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// Through the provider host, against the emulator's rolling updates
// ---------------------------------------------------------------------------------------------

/** How long stale workers keep serving after a release before they are replaced, in this emulator. */
const ROLLOUT_MS = 3_000;

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;
/**
 * The emulator's clock: rollouts move only when a test advances it, once the JobRun is seen
 * waiting, so what the JobRun meets never depends on how fast this machine is.
 */
const clock = new ManualClock();

/** What the handlers answer: the release of the worker that ran the job. */
const release = (_job: unknown, ctx: { worker: { id: string; version: number } }) => ({
  version: ctx.worker.version,
  workerId: ctx.worker.id,
});

beforeAll(async () => {
  emu = await startEmulator({
    clock,
    rolloutMs: ROLLOUT_MS,
    endpoints: ["roll:2", "ignored:2", "redeploy:2", "churn:2", "slow:2", "broken:2", "v1:1"],
    handlers: {
      roll: release,
      ignored: release,
      // Redeploys its own endpoint while it runs the first job: that job runs on a worker that is
      // stale by the time it ends.
      redeploy: async (job, ctx) => {
        if (job.input.redeploy === true && ctx.worker.version === 1) {
          await client.serverless.update("redeploy", { env: { RELEASE: "2" } });
        }
        return release(job, ctx);
      },
      // Redeploys its own endpoint during every job.
      churn: async (job, ctx) => {
        await client.serverless.update("churn", { env: { RELEASE: String(ctx.worker.version + 1) } });
        return release(job, ctx);
      },
      slow: release,
      v1: release,
    },
  });
  client = new RunpodClient({ apiKey: emu.apiKey, serverlessUrl: emu.serverlessUrl, restUrl: emu.restUrl });
  // Reads a rollout every 20 ms, not 1 s: a rollout the test moves on the manual clock is seen at once.
  host = await startJobRunHost(emu, { pollMs: 20 });
});

afterAll(async () => {
  await host?.close();
  await emu?.close();
});

/** check then create, as the engine does; resolves with the created resource. */
const up = (name: string, news: Record<string, unknown>) => createPassing(host, name, news);

/**
 * Lets the rollout of `version` on `endpointId` (2 workers) run its course on the emulator's clock
 * once the JobRun waits for it (its progress line on the host's stderr): the stale workers serve
 * for ROLLOUT_MS, then are replaced one at a time, each new worker starting in WORKER_START_MS.
 */
async function rollOutOnceWaiting(endpointId: string, version: number): Promise<void> {
  const line = `JobRun endpoint ${endpointId}: waiting for version ${version} to roll out`;
  const giveUp = Date.now() + 30_000;
  while (!host.stderr().includes(line)) {
    if (Date.now() > giveUp)
      throw new Error(`the JobRun never waited for version ${version} of ${endpointId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await clock.advance(ROLLOUT_MS);
  for (let i = 0; i < 2; i++) await clock.advance(WORKER_START_MS);
}

const statuses = (timeline: { status: string }[]) => timeline.map((e) => e.status);

describe("JobRun rollout: wait (the default on REST v2), in the provider host", () => {
  it("waits for a rollout under way before submitting, then tests the new release", async () => {
    await client.serverless.update("roll", { env: { RELEASE: "2" } });
    const [{ outs }] = await Promise.all([
      up("rollout-wait", { endpointId: "roll", input: {} }),
      rollOutOnceWaiting("roll", 2),
    ]);
    expect(outs.passed).toBe(true);
    expect(outs.endpointVersion).toBe(2);
    expect(outs.output).toEqual({ version: 2, workerId: outs.workerId });
    expect(statuses(outs.timeline).slice(0, 3)).toEqual(["ROLLOUT_WAIT", "ROLLED_OUT", "IN_QUEUE"]);
    expect((await client.serverless.releases("roll")).rollout.inProgress).toBe(false);
    expect(host.stderr()).toContain("JobRun endpoint roll: version 2 runs on all 2 workers");
  });

  it('with rollout "ignore", submits at once and may test the old release (the problem the wait solves)', async () => {
    await client.serverless.update("ignored", { env: { RELEASE: "2" } });
    const { outs } = await up("rollout-ignore", { endpointId: "ignored", input: {}, rollout: "ignore" });
    expect(outs.passed).toBe(true);
    expect(outs.output.version).toBe(1); // a stale worker of release 1 served it
    expect(outs.endpointVersion).toBeUndefined();
    expect(statuses(outs.timeline)).not.toContain("ROLLOUT_WAIT");
  });

  it("submits once more when the job ran on a worker of an older release, and records the current one", async () => {
    const [{ outs }] = await Promise.all([
      up("rollout-resubmit", { endpointId: "redeploy", input: { redeploy: true } }),
      rollOutOnceWaiting("redeploy", 2),
    ]);
    expect(outs.passed).toBe(true);
    expect(outs.attempts).toBe(2);
    expect(outs.endpointVersion).toBe(2);
    expect(outs.output.version).toBe(2);
    const seen = statuses(outs.timeline);
    expect(seen.slice(seen.indexOf("STALE_WORKER") - 1)).toEqual([
      "COMPLETED",
      "STALE_WORKER",
      "ROLLOUT_WAIT",
      "ROLLED_OUT",
      "IN_QUEUE",
      "COMPLETED",
    ]);
    expect(host.stderr()).toMatch(
      /JobRun endpoint redeploy job \S+: the job did not run the endpoint's current release \(worker \S+ runs version 1, the endpoint is at version 2\); waiting for the rollout and submitting it again/,
    );
  });

  it("fails clearly when the endpoint is redeployed during both jobs", async () => {
    const [error] = await Promise.all([
      createFailing(host, "rollout-churn", { endpointId: "churn", input: {} }),
      rollOutOnceWaiting("churn", 2),
    ]);
    expect(error.message).toMatch(
      /the job was submitted twice and neither ran the endpoint's current release \(worker \S+ runs version 2, the endpoint is at version 3\)/,
    );
    expect(error.message).toContain("the endpoint was redeployed during the smoke test");
    expect(error.message).toMatch(/Hint: Run `pulumi up` again once the endpoint's deploy has settled/);
    expect(error.properties).toMatchObject({ passed: false, attempts: 2, status: "COMPLETED" });
    expect(error.properties).not.toHaveProperty("endpointVersion");
  });

  it("gives up at timeoutMs when the rollout does not end, submitting nothing", async () => {
    await client.serverless.update("slow", { env: { RELEASE: "2" } });
    const before = emu.stats().submitted.slow ?? 0;
    const urn = urnFor("JobRun", "rollout-timeout");
    const { inputs } = await host.check(urn, {}, { endpointId: "slow", input: {}, timeoutMs: 300 });
    const error = (await host.create(urn, inputs).catch((e: unknown) => e)) as HostError;
    expect(error).toBeInstanceOf(HostError);
    expect(error.id).toBeUndefined(); // no job: nothing to keep in state
    expect(error.message).toContain(
      "JobRun could not submit a job to endpoint slow within timeoutMs (300 ms): the deadline passed while it " +
        "waited for the rollout (endpoint slow was still rolling out version 2: 2 of 2 workers ran an older version)",
    );
    expect(emu.stats().submitted.slow ?? 0).toBe(before);
  });

  it("names the release a failed job ran on", async () => {
    await client.serverless.update("broken", { env: { RUNPOD_EMULATOR_FAIL: "weights missing" } });
    const [error] = await Promise.all([
      createFailing(host, "rollout-broken", { endpointId: "broken", input: {} }),
      rollOutOnceWaiting("broken", 2),
    ]);
    expect(error.properties).toMatchObject({ status: "FAILED", endpointVersion: 2 });
    expect(error.message).toContain(`Release: endpoint version 2 (worker ${error.properties.workerId})`);
    expect(error.message).toContain("Worker error: weights missing");
  });
});

describe("JobRun rollout on a REST v1 restUrl", () => {
  let v1Host: ProviderHost;
  beforeAll(async () => {
    v1Host = await startProviderHost({ projectDir: inject("installedProjectDir") });
    await v1Host.configure({
      "runpod:apiKey": emu.apiKey,
      "runpod:serverlessUrl": emu.serverlessUrl,
      "runpod:restUrl": emu.restUrlV1,
    });
  });
  afterAll(async () => {
    await v1Host?.close();
  });

  it('fails check for an explicit rollout "wait", naming the setting, and runs without the check by default', async () => {
    const urn = urnFor("JobRun", "v1-wait");
    const { failures } = await v1Host.check(urn, {}, { endpointId: "v1", input: {}, rollout: "wait" });
    expect(failures).toEqual([
      {
        property: "rollout",
        reason: expect.stringContaining("runpod:restUrl (or RUNPOD_REST_API_URL) is REST v1"),
      },
    ]);
    const plain = urnFor("JobRun", "v1-default");
    const { inputs } = await v1Host.check(plain, {}, { endpointId: "v1", input: {} });
    const { outs } = await v1Host.create(plain, inputs);
    expect(outs.passed).toBe(true);
    expect(outs.endpointVersion).toBeUndefined();
  });
});

/**
 * Guarded releases: `ServerlessEndpoint.smokeTest` through Pulumi's own
 * dynamic-provider host over gRPC, with `__provider` serialized from the INSTALLED package, against
 * the emulator (REST v2) on a ManualClock: a rollout moves only when a test advances the clock,
 * once the host is seen waiting for it. Broken releases are the emulator's own:
 * `RUNPOD_EMULATOR_FAIL=<message>` in the env fails every job on that release's workers, and
 * handlers keyed by image make a release that fails some of its jobs.
 *
 * The host reaches the REST v2 interface through the shared FaultProxy, which a test arms to refuse
 * a PATCH (before the emulator sees it): a rollback that fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { checkEndpointArgs } from "../../src/provider/serverlessEndpoint/args";
import { makesRelease, planEndpointChange } from "../../src/provider/serverlessEndpoint/changes";
import {
  judgeGate,
  rolledBackMessage,
  SmokeTestSchema,
} from "../../src/provider/serverlessEndpoint/smokeTest";
import type { FaultProxy } from "../support/faultProxy.mts";
import type { HostError, ProviderHost } from "../support/providerHost.mts";
import { UNKNOWN } from "../support/providerHost.mts";
import { expectReasons } from "./jobRunHostKit";
import { endpointHostKit } from "./serverlessEndpointHostKit";

const API_KEY = "gate-host-key-7d2e1f";
const TOKEN = "hf_s3cr3t-Gate-T0ken-61ac";
const SECRETS = [TOKEN, API_KEY];
const ROLLOUT_MS = 3_000;
const BROKEN = "model weights missing: /models/gate.bin";

// ---------------------------------------------------------------------------------------------
// Pure parts
// ---------------------------------------------------------------------------------------------

describe("the gate's rules", () => {
  it("passes with at most maxFailures failed jobs, and names the first failure's text when it fails", () => {
    const ok = { jobId: "a", passed: true, timeline: [{ status: "COMPLETED", atMs: 5 }] };
    const bad = (id: string) => ({
      jobId: id,
      passed: false,
      failure: `JobRun failed on endpoint e, job ${id}`,
      timeline: [{ status: "FAILED", atMs: 7 }],
    });
    expect(judgeGate(2, [ok, bad("b"), ok], 1)).toEqual({
      record: {
        version: 2,
        passed: true,
        jobIds: ["a", "b", "a"],
        failures: 1,
        timeline: ["a: COMPLETED 0.01 s", "b: FAILED 0.01 s (failed)", "a: COMPLETED 0.01 s"],
      },
    });
    const failed = judgeGate(2, [bad("b"), bad("c"), ok], 1);
    expect(failed.record).toMatchObject({ passed: false, failures: 2 });
    expect(failed.why).toBe("JobRun failed on endpoint e, job b");
    // A run that could not submit a job has no id.
    expect(judgeGate(3, [{ passed: false, failure: "no job", timeline: [] }], 0).record).toEqual({
      version: 3,
      passed: false,
      jobIds: [],
      failures: 1,
      timeline: ["run 1 (no job): (no status seen) (failed)"],
    });
  });

  it("applies the documented defaults and shares JobRun's job arguments", () => {
    expect(SmokeTestSchema.parse({ input: { ping: 1 } })).toMatchObject({
      input: { ping: 1 },
      runs: 1,
      maxFailures: 0,
      onFailure: "rollback",
      mode: "run",
      timeoutMs: 600_000,
      retries: 0,
      expect: { status: "COMPLETED", allowErrorOutput: false },
    });
  });

  it("gates exactly the changes that make a release", () => {
    const olds = { image: "a:1", env: { A: "1" }, workers: { min: 0, max: 2, idleTimeout: 10 } };
    const given = (extra: Record<string, unknown>) =>
      ({ name: "n", type: "QUEUE", scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, ...extra }) as never;
    expect(makesRelease(planEndpointChange(olds, given({ image: "a:2", env: { A: "1" } })))).toBe(true);
    expect(makesRelease(planEndpointChange(olds, given({ image: "a:1", env: { A: "2" } })))).toBe(true);
    expect(
      makesRelease(planEndpointChange(olds, given({ image: "a:1", env: { A: "1" }, workers: { max: 3 } }))),
    ).toBe(false);
  });

  it("sees a smokeTest change as a change of its own (no PATCH, no release), whatever the key order", () => {
    const olds = { image: "a:1", smokeTest: { input: { ping: 1 }, runs: 2 } };
    const given = (smokeTest: unknown) =>
      ({
        name: "n",
        type: "QUEUE",
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        image: "a:1",
        smokeTest,
      }) as never;
    expect(planEndpointChange(olds, given({ runs: 2, input: { ping: 1 } })).changed).not.toContain(
      "smokeTest",
    );
    const plan = planEndpointChange(olds, given({ runs: 3, input: { ping: 1 } }));
    expect(plan.changed).toContain("smokeTest");
    expect(makesRelease(plan)).toBe(false);
  });

  it("says which release failed, why, and which release serves now", () => {
    const smoke = SmokeTestSchema.parse({ input: {}, runs: 3, maxFailures: 1 });
    const verdict = judgeGate(
      2,
      [
        { jobId: "j1", passed: false, failure: "Worker error: boom", timeline: [] },
        { jobId: "j2", passed: false, failure: "Worker error: boom", timeline: [] },
        { jobId: "j3", passed: true, timeline: [] },
      ],
      1,
    );
    expect(rolledBackMessage('"api" (id e1)', verdict, smoke, 3, "acme/api:1")).toBe(
      [
        'ServerlessEndpoint "api" (id e1): the smoke test of release version 2 failed (2 of 3 jobs failed, maxFailures 1), so it was rolled back.',
        "Now serving: version 3, a new release carrying the previous configuration (image acme/api:1), on every worker.",
        "Why release version 2 failed (the first failing job):",
        "Worker error: boom",
        "Smoke-test jobs: j1: (no status seen) (failed); j2: (no status seen) (failed); j3: (no status seen)",
        "The state records what runs (the previous configuration at version 3), so the next pulumi up tries the " +
          'new release again: fix it (the image, env or start command) first, or set smokeTest.onFailure: "keep" ' +
          "to leave a failing release serving.",
      ].join("\n"),
    );
  });
});

describe("check of smokeTest", () => {
  const args = (smokeTest: unknown) => ({
    name: "n",
    type: "QUEUE",
    image: "a:1",
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    smokeTest,
  });
  const reasons = (smokeTest: unknown) => checkEndpointArgs(args(smokeTest), "v2").failures ?? [];

  it("accepts JobRun's job arguments and the gate's own, and unknown values in a preview", () => {
    expect(
      reasons({
        input: { ping: 1 },
        expect: { output: { ping: 1 }, outputSchema: { type: "object" }, maxExecutionMs: 5000 },
        mode: "runsync",
        timeoutMs: 60_000,
        retries: 1,
        policy: { ttl: 60_000 },
        runs: 3,
        maxFailures: 1,
        onFailure: "keep",
      }),
    ).toEqual([]);
    expect(reasons(UNKNOWN)).toEqual([]);
    expect(reasons({ input: { ping: UNKNOWN }, runs: 2 })).toEqual([]);
  });

  it("needs http on a load-balancer endpoint and refuses it on a queue endpoint", () => {
    const lb = (smokeTest: Record<string, unknown>) => ({
      ...args(smokeTest),
      type: "LOAD_BALANCER",
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
    });
    expect(checkEndpointArgs(lb({ input: {} }), "v2").failures).toEqual([
      {
        property: "",
        reason:
          'smokeTest on a type "LOAD_BALANCER" endpoint needs smokeTest.http (method, path, body, headers, ' +
          "expectStatus): a load balancer serves its workers' own HTTP paths, not queue jobs (/run), so its smoke " +
          'test is an HTTP probe, e.g. http: { path: "/v1/models" }',
      },
    ]);
    expect(
      checkEndpointArgs(lb({ http: { path: "/v1/models", headers: { "X-Token": TOKEN } }, runs: 2 }), "v2")
        .failures,
    ).toEqual([]);
    expect(checkEndpointArgs(lb({ http: { path: "/ping" }, input: {} }), "v2").failures).toEqual([
      {
        property: "",
        reason:
          "smokeTest.input: input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one",
      },
    ]);
    expect(checkEndpointArgs(args({ http: { path: "/ping" } }), "v2").failures).toEqual([
      {
        property: "",
        reason:
          'smokeTest.http probes type "LOAD_BALANCER" endpoints, and this endpoint is type "QUEUE": give ' +
          "smokeTest.input (the queue job to run) instead of smokeTest.http",
      },
    ]);
    expect(checkEndpointArgs({ ...lb({ input: {} }), type: UNKNOWN }, "v2").failures).toEqual([]);
  });

  it.each([
    [{ input: {}, runs: 0 }, "smokeTest.runs: runs must be at least 1"],
    [{ input: {}, runs: 1.5 }, "smokeTest.runs: runs must be an integer"],
    [
      { input: {}, runs: 2, maxFailures: 2 },
      "smokeTest.maxFailures: maxFailures must be less than runs (got maxFailures 2, runs 2)",
    ],
    [{ input: {}, onFailure: "revert" }, 'smokeTest.onFailure: onFailure must be "rollback" or "keep"'],
    [{ input: {}, endpointId: "abc" }, "smokeTest.endpointId is not a smokeTest argument (allowed: "],
    [{ input: {}, triggers: [1] }, "smokeTest.triggers is not a smokeTest argument"],
    [{ input: {}, redact: ["a-secret"] }, "smokeTest.redact is not a smokeTest argument"],
    [{ input: {}, s3Config: { accessId: "a" } }, "smokeTest.s3Config is not a smokeTest argument"],
    [{ input: {}, expect: { status: "DONE" } }, "smokeTest.expect.status: status must be one of"],
    [{ input: {}, expect: { outputSchema: { type: "nope" } } }, "smokeTest.expect.outputSchema"],
    [{ input: {}, timeoutMs: 0 }, "smokeTest.timeoutMs: timeoutMs must be at least 1 ms"],
    [
      { input: {}, mode: "runsync", timeoutMs: 1000 },
      'smokeTest.timeoutMs: timeoutMs must be at least 3000 ms with mode "runsync"',
    ],
    [
      "ping",
      "smokeTest must be an object, JobRun's job arguments (input or http, expect, ...) plus runs, maxFailures and onFailure, got a string",
    ],
  ])("fails %j naming the field", (smokeTest, reason) => {
    const failures = reasons(smokeTest);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toEqual({ property: "", reason: expect.stringContaining(reason) });
  });
});

// ---------------------------------------------------------------------------------------------
// Through the provider host
// ---------------------------------------------------------------------------------------------

let n = 0;
/** Calls of each flaky image's handler so far. */
const calls = new Map<string, number>();

/** A handler failing the first `failures` jobs it runs, then echoing the input. */
const flaky = (image: string, failures: number) => async (job: { input: Record<string, unknown> }) => {
  const call = (calls.get(image) ?? 0) + 1;
  calls.set(image, call);
  if (call <= failures) throw new Error(`flaky call ${call} of ${image}`);
  return job.input;
};

const fresh = (base: string) => `${base}-${++n}`;

const SMOKE = { input: { ping: 1 }, expect: { output: { ping: 1 } }, timeoutMs: 60_000 };
/** `lastSmokeTest` of release `version` passed by {@link SMOKE}'s one job. */
const passedOnce = (version: number) => ({
  version,
  passed: true,
  jobIds: [expect.any(String)],
  failures: 0,
  timeline: [expect.stringMatching(/^[\w-]+: IN_QUEUE .* -> COMPLETED [\d.]+ s$/)],
  costUsd: expect.any(Number),
});

const base = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "QUEUE",
  image: "acme/api:1",
  env: { HF_TOKEN: TOKEN, MODEL: "small" },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 2 },
  smokeTest: SMOKE,
  ...extra,
});

const kit = endpointHostKit({
  apiKey: API_KEY,
  secrets: SECRETS,
  rolloutMs: ROLLOUT_MS,
  handlers: {
    "acme/flaky:1": flaky("acme/flaky:1", 1),
    "acme/flaky:2": flaky("acme/flaky:2", 2),
    // A worker that prints and raises its endpoint's secret.
    "acme/leaky:1": async (
      _job: unknown,
      ctx: { log: (l: string) => void; worker: { env: Record<string, string> } },
    ) => {
      ctx.log(`loading with token ${ctx.worker.env.HF_TOKEN}`);
      throw new Error(`authentication failed for token ${ctx.worker.env.HF_TOKEN}`);
    },
  },
});
const {
  clock,
  expectNoSecret,
  urn,
  checked,
  create,
  failing,
  untilStderr,
  rollOutOnceWaiting,
  expectCleanOutputs,
} = kit;
let proxy: FaultProxy;
let host: ProviderHost;
let client: RunpodClient;
beforeAll(async () => {
  await kit.start();
  ({ proxy, host, client } = kit);
});
afterAll(() => kit.stop());

/**
 * Moves the emulator's clock on (a worker start at a time) until `operation` settles: for
 * scenarios whose waits are not announced by one stderr line each (a stall found by reads a
 * second apart).
 */
async function pumping<T>(operation: Promise<T>): Promise<T> {
  let settled = false;
  const done = operation.finally(() => {
    settled = true;
  });
  while (!settled) {
    await clock.advance(WORKER_START_MS);
    await Promise.race([done.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 50))]);
  }
  return done;
}

/** Every worker of the endpoint runs `version`. */
async function expectAllOn(id: string, version: number): Promise<void> {
  const { workers } = await client.serverless.workers(id);
  expect(workers.map((w) => [w.version, w.isStale])).toEqual([
    [version, false],
    [version, false],
  ]);
}

describe("ServerlessEndpoint smokeTest in the provider host (REST v2)", () => {
  it("gates the create and each release that passes: lastSmokeTest records the release, the jobs and their timeline", async () => {
    const name = fresh("pass");
    const { id, outs, inputs } = await create("pass", base(name));
    expect(outs.lastSmokeTest).toEqual(passedOnce(1));
    expect(outs.smokeTest).toEqual(SMOKE);
    const news = await checked("pass", { ...inputs, image: "acme/api:2" }, inputs);
    const [{ outs: updated }] = await Promise.all([
      host.update(id, urn("pass"), outs, news),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expect(updated).toMatchObject({
      image: "acme/api:2",
      version: 2,
      lastSmokeTest: { version: 2, passed: true, failures: 0 },
    });
    const jobId = updated.lastSmokeTest.jobIds[0];
    expect(await client.endpoint(id).status(jobId)).toMatchObject({
      status: "COMPLETED",
      output: { ping: 1 },
    });
    expectCleanOutputs(updated);

    // A change that makes no release runs no gate; lastSmokeTest stays.
    const scaled = await checked("pass", { ...news, workers: { max: 3 } }, news);
    const { outs: after } = await host.update(id, urn("pass"), updated, scaled);
    expect(after.lastSmokeTest).toEqual(updated.lastSmokeTest);
  });

  it("rolls a failing release back: the previous configuration serves under a new version, and the state says so", async () => {
    const name = fresh("rollback");
    const label = `"${name}" (id `;
    const { id, outs, inputs } = await create("rollback", base(name));
    const broken = {
      ...inputs,
      image: "acme/api:2",
      env: { HF_TOKEN: TOKEN, MODEL: "small", RUNPOD_EMULATOR_FAIL: BROKEN },
    };
    const news = await checked("rollback", broken, inputs);
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("rollback"), outs, news)),
      (async () => {
        await rollOutOnceWaiting(`${label}${id})`, 2);
        await rollOutOnceWaiting(`${label}${id})`, 3);
      })(),
    ]);
    expectReasons(error);
    expect(error.id).toBe(id);
    const message = error.message;
    expect(message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): the smoke test of release version 2 failed (1 of 1 job failed, maxFailures 0), so it was rolled back.`,
    );
    expect(message).toContain(
      "Now serving: version 3, a new release carrying the previous configuration (image acme/api:1), on every worker.",
    );
    expect(message).toContain("Why release version 2 failed (the first failing job):");
    // JobRun's texts in the gate's terms: no JobRun the user never declared, no JobRun hint.
    expect(message).toMatch(/^Smoke-test job \S+: the job ended FAILED, expected COMPLETED$/m);
    expect(message).not.toContain("JobRun");
    expect(message).not.toContain("Hint: ");
    expect(message).toContain(`Worker error: ${BROKEN}`);
    expect(message).toContain("Timeline: IN_QUEUE");
    expect(message).toContain("Worker log (");
    // What runs: the previous settings at the new version numbers.
    const live = await client.serverless.get(id);
    expect(live).toMatchObject({ image: "acme/api:1", env: { HF_TOKEN: TOKEN, MODEL: "small" } });
    await expectAllOn(id, 3);
    expect(error.properties).toMatchObject({
      image: "acme/api:1",
      env: { HF_TOKEN: TOKEN, MODEL: "small" },
      version: 3,
      latestReleaseId: (await client.serverless.releases(id)).releases[0]?.id,
      lastSmokeTest: { version: 2, passed: false, failures: 1 },
      smokeTest: SMOKE,
    });
    expect(error.properties.env).not.toHaveProperty("RUNPOD_EMULATOR_FAIL");
    expect(typeof error.properties.__provider).toBe("string");

    // Refresh (the engine keeps the OLD inputs after a partially failed update): no drift.
    const read = await host.read(id, urn("rollback"), error.properties, inputs);
    expect(read.props).toEqual(error.properties);
    expect(await host.diff(id, urn("rollback"), read.props, inputs)).toMatchObject({ changes: false });

    // The next up tries the new release again: the diff sees it, and the fixed release passes.
    expect(await host.diff(id, urn("rollback"), error.properties, news)).toMatchObject({
      changes: true,
      replaces: [],
    });
    const fixed = await checked("rollback", { ...broken, env: { HF_TOKEN: TOKEN, MODEL: "large" } }, inputs);
    const [{ outs: passed }] = await Promise.all([
      host.update(id, urn("rollback"), error.properties, fixed),
      rollOutOnceWaiting(`${label}${id})`, 4),
    ]);
    expect(passed).toMatchObject({
      image: "acme/api:2",
      version: 4,
      env: { HF_TOKEN: TOKEN, MODEL: "large" },
      lastSmokeTest: { version: 4, passed: true },
    });
  });

  it("says plainly that the failed release still serves when the rollback itself fails", async () => {
    const name = fresh("stuck");
    const { id, outs, inputs } = await create("stuck", base(name));
    const news = await checked(
      "stuck",
      { ...inputs, image: "acme/api:2", env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN } },
      inputs,
    );
    const label = `"${name}" (id ${id})`;
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("stuck"), outs, news)),
      (async () => {
        // The release's PATCH went through (its rollout is awaited): the next one, the rollback, is refused.
        await untilStderr(`ServerlessEndpoint ${label}: waiting for version 2 to roll out`);
        proxy.arm("PATCH", new RegExp(`^/v2/serverless/${id}$`), {
          kind: "reply",
          status: 400,
          body: { title: "Bad Request", status: 400, detail: "the update was refused by a test proxy" },
        });
        await rollOutOnceWaiting(label, 2);
      })(),
    ]);
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): the smoke test of release version 2 failed (1 of 1 job failed, maxFailures 0), ` +
        "and rolling it back FAILED: the endpoint is still on the failed release (version 2).",
    );
    expect(error.message).toContain("Rollback error: ");
    expect(error.message).toContain("the update was refused by a test proxy");
    expect(error.message).toContain(`Worker error: ${BROKEN}`);
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:2" });
    expect(error.properties).toMatchObject({
      image: "acme/api:2",
      env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN },
      version: 2,
      lastSmokeTest: { version: 2, passed: false },
    });
    // The next up, even with nothing changed, tests the release that serves again.
    const again = await failing(() => host.update(id, urn("stuck"), error.properties, news));
    expect(again.message).toContain("the smoke test of release version 2 failed");
    expect(again.properties.lastSmokeTest.jobIds).not.toEqual(error.properties.lastSmokeTest.jobIds);
  });

  it("says the failed release still serves when the rollback's rollout stalls, and records the configuration the service holds", async () => {
    const name = fresh("stall");
    // The previous release cannot start (its image cannot be pulled): rolling back to it stalls.
    const { id, outs, inputs } = await create(
      "stall",
      base(name, { image: "acme/unpullable:1", rollout: "ignore", smokeTest: undefined }),
    );
    const news = await checked(
      "stall",
      {
        ...inputs,
        image: "acme/api:2",
        env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN },
        rollout: "wait",
        rolloutTimeoutMs: 120_000,
        smokeTest: SMOKE,
      },
      inputs,
    );
    const error = await pumping(failing(() => host.update(id, urn("stall"), outs, news)));
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): the smoke test of release version 2 failed (1 of 1 job failed, maxFailures 0), ` +
        "and rolling it back FAILED: the endpoint is still on the failed release (version 2).",
    );
    expect(error.message).toContain("Rollback error: ");
    expect(error.message).toContain("the rollout of version 3 stalled");
    expect(error.message).toContain(
      "The service already holds the previous configuration as version 3, but its rollout did not complete, " +
        "so the workers that serve still run the failed release.",
    );
    // The workers that serve run the failed release; the service holds the previous configuration.
    const { workers } = await client.serverless.workers(id);
    expect(workers.filter((w) => w.status !== "UNHEALTHY").map((w) => w.version)).toEqual([2]);
    expect(error.properties).toMatchObject({
      image: "acme/unpullable:1",
      version: 3,
      lastSmokeTest: { version: 2, passed: false },
    });
    // The next up applies the new release again.
    expect(await host.diff(id, urn("stall"), error.properties, news)).toMatchObject({ changes: true });
  });

  it("rolls back a release that does not roll out (its workers cannot start): its smoke test could not run", async () => {
    const name = fresh("unstartable");
    const { id, outs, inputs } = await create("unstartable", base(name));
    const news = await checked("unstartable", { ...inputs, image: "acme/unpullable:2" }, inputs);
    const error = await pumping(failing(() => host.update(id, urn("unstartable"), outs, news)));
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): release version 2 did not roll out (its smoke test could not run), so it was rolled back.`,
    );
    expect(error.message).toContain(
      "Now serving: version 3, a new release carrying the previous configuration (image acme/api:1), on every worker.",
    );
    expect(error.message).toContain("Why release version 2 failed (its rollout):");
    expect(error.message).toContain("the rollout of version 2 stalled");
    expect(error.message).toContain("failed to pull image acme/unpullable:2: manifest unknown");
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:1" });
    await expectAllOn(id, 3);
    expect(error.properties).toMatchObject({
      image: "acme/api:1",
      version: 3,
      lastSmokeTest: { version: 2, passed: false, jobIds: [], failures: 0 },
    });
  });

  it("does not roll back a good release whose rollout wait runs out of time: it says the wait ended, and the release stays untested", async () => {
    const name = fresh("slowrollout");
    const { id, outs, inputs } = await create("slowrollout", base(name));
    // Below what check allows (state written before the bound), so that the test need not wait
    // 30 s; the clock does not move, so the rollout is still under way when the wait ends.
    const news = {
      ...(await checked("slowrollout", { ...inputs, image: "acme/api:2" }, inputs)),
      rolloutTimeoutMs: 1500,
    };
    const error = await failing(() => host.update(id, urn("slowrollout"), outs, news));
    expectReasons(error);
    expect(error.id).toBe(id);
    expect(error.message).toContain(
      "the rollout of version 2 did not complete within rolloutTimeoutMs (1500 ms)",
    );
    expect(error.message).toContain(
      "The release was not judged: its smoke test did not run and it was not rolled back.",
    );
    expect(error.message).not.toContain("rolled back.\nNow serving");
    expect(error.message).not.toContain("failed");
    // No rollback PATCH: the release taken stays, and the state says its test has not run.
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:2" });
    expect(error.properties).toMatchObject({
      image: "acme/api:2",
      version: 2,
      lastSmokeTest: { version: 2, passed: false, jobIds: [] },
    });
    expect(error.properties.lastSmokeTest.timeline).toEqual([
      "not run: the rollout did not complete within rolloutTimeoutMs",
    ]);
  });

  it("records smokeTest as given when it repeats an env value (a probe naming the served model): no diff on the next up", async () => {
    const name = fresh("model");
    // MODEL is "small" in env: the job names the model it expects, as a vLLM request does.
    const smokeTest = {
      ...SMOKE,
      input: { ping: 1, model: "small" },
      expect: { output: { ping: 1, model: "small" } },
    };
    const { id, outs, inputs } = await create("model", base(name, { smokeTest }));
    expect(outs.smokeTest).toEqual(smokeTest);
    expect(outs.lastSmokeTest).toMatchObject({ version: 1, passed: true });
    // The engine diffs the stored outputs against the program's inputs (DESIGN fact 4).
    expect(await host.diff(id, urn("model"), outs, inputs)).toMatchObject({ changes: false });
    const read = await host.read(id, urn("model"), outs, inputs);
    expect(await host.diff(id, urn("model"), read.props, inputs)).toMatchObject({ changes: false });
  });

  it("keeps the endpoint's secrets out of the failure, the log tail and lastSmokeTest when the worker prints them", async () => {
    const name = fresh("leaky");
    const { id, outs, inputs } = await create("leaky", base(name));
    const news = await checked("leaky", { ...inputs, image: "acme/leaky:1" }, inputs);
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("leaky"), outs, news)),
      (async () => {
        await rollOutOnceWaiting(`"${name}" (id ${id})`, 2);
        await rollOutOnceWaiting(`"${name}" (id ${id})`, 3);
      })(),
    ]);
    expect(error.message).toContain("Worker error: authentication failed for token [redacted]");
    expect(error.message).toContain("container loading with token [redacted]");
    expectNoSecret(error.message);
    expectNoSecret((error.reasons ?? []).join("\n"));
    expectCleanOutputs(error.properties);
    expect(error.properties.env).toEqual({ HF_TOKEN: TOKEN, MODEL: "small" });
  });

  it('with onFailure: "keep", fails the step and leaves the failed release serving', async () => {
    const name = fresh("keep");
    const smokeTest = { ...SMOKE, onFailure: "keep" };
    const { id, outs, inputs } = await create("keep", base(name, { smokeTest }));
    const news = await checked(
      "keep",
      { ...inputs, env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN } },
      inputs,
    );
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("keep"), outs, news)),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expectReasons(error);
    expect(error.message).toContain('onFailure is "keep", so the failed release (version 2) still serves.');
    expect(error.properties).toMatchObject({ version: 2, lastSmokeTest: { version: 2, passed: false } });
    expect((await client.serverless.releases(id)).endpointVersion).toBe(2);
  });

  it("plans a re-test after a refresh when the recorded gate failed on the release that serves", async () => {
    const name = fresh("keep-refresh");
    const smokeTest = { ...SMOKE, onFailure: "keep" };
    const { id, outs, inputs } = await create("keep-refresh", base(name, { smokeTest }));
    const news = await checked(
      "keep-refresh",
      { ...inputs, env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN } },
      inputs,
    );
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("keep-refresh"), outs, news)),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expect(error.properties).toMatchObject({ version: 2, lastSmokeTest: { version: 2, passed: false } });
    // A refresh reads what runs and clears the engine's init errors (step.go RefreshStep.Apply), so
    // only the diff can bring the failed release back to its gate: with the program unchanged, it
    // must still plan an update.
    const read = await host.read(id, urn("keep-refresh"), error.properties, news);
    expect(read.props).toMatchObject({ version: 2, lastSmokeTest: { version: 2, passed: false } });
    expect(await host.diff(id, urn("keep-refresh"), read.props, news)).toMatchObject({
      changes: true,
      replaces: [],
    });
    // And the update it plans runs the gate again on the release that serves.
    const again = await failing(() => host.update(id, urn("keep-refresh"), read.props, news));
    expect(again.message).toContain("the smoke test of release version 2 failed");
    expect(again.properties.lastSmokeTest.jobIds).not.toEqual(error.properties.lastSmokeTest.jobIds);
  });

  it("tests a release that serves untested after a host was killed mid-gate, once a refresh reads it back", async () => {
    const name = fresh("killed");
    const { id, outs, inputs } = await create("killed", base(name, { image: "acme/api:1" }));
    expect(outs).toMatchObject({ version: 1, lastSmokeTest: { version: 1, passed: true } });
    // The killed update's PATCH reached the service and its release rolled out, but the host died
    // before the gate ended: the engine kept the old outputs (version 1).
    const news = await checked("killed", { ...inputs, image: "acme/api:2" }, inputs);
    await client.serverless.update(id, { image: "acme/api:2" });
    // The rollout runs its course on the emulator's clock: stale workers retire, new ones start.
    for (let i = 0; i < 3; i++) await clock.advance(600_000);
    expect((await client.serverless.workers(id)).workers.every((w) => !w.isStale)).toBe(true);
    // A refresh reads version 2 back; the last gate passed on version 1, so the program (which asks
    // for image 2, what runs) still gets an update, and that update runs the gate on version 2.
    const read = await host.read(id, urn("killed"), outs, news);
    expect(read.props).toMatchObject({ version: 2, image: "acme/api:2", lastSmokeTest: { version: 1 } });
    expect(await host.diff(id, urn("killed"), read.props, news)).toMatchObject({
      changes: true,
      replaces: [],
    });
    const { outs: tested } = await host.update(id, urn("killed"), read.props, news);
    expect(tested).toMatchObject({ version: 2, lastSmokeTest: { version: 2, passed: true } });
    // Tested, it settles: the next diff plans nothing.
    expect(await host.diff(id, urn("killed"), tested, news)).toMatchObject({ changes: false });
  });

  it("fails a create whose first release fails its gate: the endpoint stays, and the next up tests it again", async () => {
    const name = fresh("born-broken");
    const props = base(name, { env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN } });
    const inputs = await checked("born-broken", props);
    const error = await failing(() => host.create(urn("born-broken"), inputs));
    expectReasons(error);
    const id = error.id as string;
    expect(error.message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): the smoke test of release version 1 failed (1 of 1 job failed, maxFailures 0). ` +
        "The endpoint was created, and there is no previous release to roll back to: it serves the failed release (version 1).",
    );
    expect(error.message).toContain(`Worker error: ${BROKEN}`);
    expect(error.properties).toMatchObject({
      image: "acme/api:1",
      version: 1,
      lastSmokeTest: { passed: false },
    });
    expect((await client.serverless.list()).filter((e) => e.name === name)).toHaveLength(1);
    // The next up (the engine re-runs a resource with init errors) with the release fixed.
    const fixed = await checked("born-broken", base(name), inputs);
    const [{ outs }] = await Promise.all([
      host.update(id, urn("born-broken"), error.properties, fixed),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expect(outs).toMatchObject({ version: 2, lastSmokeTest: { version: 2, passed: true } });
  });

  /**
   * A create whose rollout wait fails while its one worker reports UNHEALTHY on the first `reads`
   * reads of the workers (the proxy rewrites the emulator's answers: a worker failing its health
   * checks for a while, then healthy), then the next up with the program unchanged: the release
   * must be recorded untested, and tested in place by the update that the next up plans.
   */
  async function createWhileUnhealthy(resource: string, reads: number, extra: Record<string, unknown> = {}) {
    const name = fresh(resource);
    const inputs = {
      ...(await checked(resource, base(name, { workers: { min: 1, max: 2 } }))),
      ...extra,
    };
    for (let i = 0; i < reads; i++) {
      proxy.arm("GET", /^\/v2\/serverless\/[^/]+\/workers$/, {
        kind: "rewrite",
        edit: (list) => ({
          ...list,
          workers: (list.workers as Record<string, unknown>[]).map((w) => ({ ...w, status: "UNHEALTHY" })),
        }),
      });
    }
    const error = await failing(() => host.create(urn(resource), inputs));
    expectReasons(error);
    const id = error.id as string;
    expect((await client.serverless.list()).filter((e) => e.name === name).map((e) => e.id)).toEqual([id]);
    return { name, id, inputs, error };
  }

  /** The init error's properties: release 1 as given, its smoke test recorded as not run (`notRun`: why). */
  function expectRecordedUntested(error: HostError, notRun: string) {
    expect(error.properties).toMatchObject({ image: "acme/api:1", version: 1, smokeTest: SMOKE });
    expect(error.properties.lastSmokeTest).toEqual({
      version: 1,
      passed: false,
      jobIds: [],
      failures: 0,
      timeline: [`not run: ${notRun}`],
    });
  }

  /** The next up of an untested first release: planned even after a refresh, it tests version 1 in place. */
  async function expectTestedOnNextUp(
    resource: string,
    id: string,
    inputs: Record<string, unknown>,
    error: HostError,
  ) {
    // A refresh clears the engine's init errors (step.go RefreshStep.Apply): the diff alone must
    // still plan the update that tests the release.
    const read = await host.read(id, urn(resource), error.properties, inputs);
    expect(read.props.lastSmokeTest).toEqual(error.properties.lastSmokeTest);
    expect(await host.diff(id, urn(resource), read.props, inputs)).toMatchObject({
      changes: true,
      replaces: [],
    });
    const { outs } = await host.update(id, urn(resource), read.props, inputs);
    expect(outs).toMatchObject({ image: "acme/api:1", version: 1 });
    expect(outs.lastSmokeTest).toEqual(passedOnce(1));
    expect(await client.endpoint(id).status(outs.lastSmokeTest.jobIds[0])).toMatchObject({
      status: "COMPLETED",
      output: { ping: 1 },
    });
    // Tested in place: no new release was made for it.
    expect((await client.serverless.releases(id)).endpointVersion).toBe(1);
    expect(await host.diff(id, urn(resource), outs, inputs)).toMatchObject({ changes: false });
  }

  it("records a create whose rollout wait ran out of time as untested, and the next up tests that release", async () => {
    // rolloutTimeoutMs 0 (below what check allows, as a state written before the bound): the wait's
    // deadline is over at its first read, which finds the worker UNHEALTHY once (not yet a stall).
    const { name, id, inputs, error } = await createWhileUnhealthy("create-timeout", 1, {
      rolloutTimeoutMs: 0,
    });
    const lines = error.message.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^ServerlessEndpoint "${name}" \\(id ${id}\\): the rollout of version 1 did not complete within ` +
          "rolloutTimeoutMs \\(0 ms\\): 0 of 2 workers still run an older version, and worker \\S+ of version 1 is UNHEALTHY\\.$",
      ),
    );
    expect(lines[1]).toBe("Workers: 2 UNHEALTHY on version 1.");
    expect(lines.at(-1)).toBe(
      "The release was not judged: its smoke test did not run. The next pulumi up waits for its rollout again and tests it.",
    );
    expectRecordedUntested(error, "the rollout did not complete within rolloutTimeoutMs");
    await expectTestedOnNextUp("create-timeout", id, inputs, error);
  });

  it("records a create whose rollout stalled as untested, and the next up (its worker healthy again) tests that release", async () => {
    // The same worker UNHEALTHY on two reads in a row: a stall, called before rolloutTimeoutMs.
    const { name, id, inputs, error } = await createWhileUnhealthy("create-stall", 2);
    const lines = error.message.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^ServerlessEndpoint "${name}" \\(id ${id}\\): the rollout of version 1 stalled: worker \\S+ of version 1 is UNHEALTHY `,
      ),
    );
    expect(lines.at(-1)).toBe(
      "The release did not roll out, so its smoke test did not run (a new endpoint has no previous release to " +
        "roll back to). The next pulumi up waits for its rollout again and tests it.",
    );
    expectRecordedUntested(error, "the rollout stalled (a worker of the release was UNHEALTHY)");
    await expectTestedOnNextUp("create-stall", id, inputs, error);
  });

  it("counts runs against maxFailures: 1 of 3 failed passes, 2 of 3 failed rolls back", async () => {
    const name = fresh("flaky");
    const smokeTest = { input: { ping: 1 }, runs: 3, maxFailures: 1, timeoutMs: 60_000 };
    const { id, outs, inputs } = await create("flaky", base(name, { smokeTest, image: "acme/api:1" }));
    expect(outs.lastSmokeTest).toMatchObject({ version: 1, passed: true, failures: 0 });
    expect(outs.lastSmokeTest.jobIds).toHaveLength(3);
    const one = await checked("flaky", { ...inputs, image: "acme/flaky:1" }, inputs);
    const [{ outs: passed }] = await Promise.all([
      host.update(id, urn("flaky"), outs, one),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expect(passed.lastSmokeTest).toMatchObject({ version: 2, passed: true, failures: 1 });
    expect(passed.lastSmokeTest.jobIds).toHaveLength(3);
    expect(passed.lastSmokeTest.timeline.filter((l: string) => l.endsWith("(failed)"))).toHaveLength(1);

    const two = await checked("flaky", { ...inputs, image: "acme/flaky:2" }, one);
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("flaky"), passed, two)),
      (async () => {
        await rollOutOnceWaiting(`"${name}" (id ${id})`, 3);
        await rollOutOnceWaiting(`"${name}" (id ${id})`, 4);
      })(),
    ]);
    expect(error.message).toContain(
      "the smoke test of release version 3 failed (2 of 3 jobs failed, maxFailures 1), so it was rolled back.",
    );
    expect(error.message).toContain("Worker error: flaky call ");
    expect(error.properties).toMatchObject({
      image: "acme/flaky:1",
      version: 4,
      lastSmokeTest: { version: 3, passed: false, failures: 2 },
    });
  });

  it("fails check for a bad smokeTest field through the host, naming smokeTest.<field>", async () => {
    const { failures } = await host.check(
      urn("bad"),
      {},
      base(fresh("bad"), { smokeTest: { input: {}, runs: 0 } }),
    );
    expect(failures).toEqual([{ property: "", reason: "smokeTest.runs: runs must be at least 1" }]);
  });

  it('records a release kept after its rollout stalled (onFailure: "keep") as untested when no gate had run, and the next up tests it', async () => {
    const name = fresh("keep-stall");
    const resource = "keep-stall";
    // No smokeTest yet: the endpoint has no lastSmokeTest.
    const { id, outs, inputs } = await create(
      resource,
      base(name, { workers: { min: 1, max: 2 }, smokeTest: undefined }),
    );
    expect(outs.lastSmokeTest).toBeUndefined();
    const keep = { ...SMOKE, onFailure: "keep" };
    /** The next `reads` reads of the workers find every worker on the new release, UNHEALTHY. */
    const unhealthyReads = (reads: number) => {
      for (let i = 0; i < reads; i++) {
        proxy.arm("GET", /^\/v2\/serverless\/[^/]+\/workers$/, {
          kind: "rewrite",
          edit: (list) => ({
            ...list,
            workers: (list.workers as Record<string, unknown>[]).map((w) => ({
              ...w,
              status: "UNHEALTHY",
              version: list.endpointVersion,
              isStale: false,
            })),
          }),
        });
      }
    };
    /** The rollout of what the service holds runs its course on the emulator's clock. */
    const rollOut = async () => {
      for (let i = 0; i < 3; i++) await clock.advance(600_000);
      expect((await client.serverless.workers(id)).workers.every((w) => !w.isStale)).toBe(true);
    };
    const keptLine =
      'The release did not roll out, so its smoke test did not run; onFailure is "keep", so it was not rolled ' +
      "back. The next pulumi up waits for its rollout again and tests it.";

    // The smokeTest comes with release 2, whose rollout stalls (the same worker UNHEALTHY twice).
    const news = await checked(resource, { ...inputs, image: "acme/api:2", smokeTest: keep }, inputs);
    unhealthyReads(2);
    const error = await failing(() => host.update(id, urn(resource), outs, news));
    expectReasons(error);
    expect(error.id).toBe(id);
    const lines = error.message.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^ServerlessEndpoint "${name}" \\(id ${id}\\): the rollout of version 2 stalled: worker \\S+ of version 2 is UNHEALTHY `,
      ),
    );
    expect(lines.at(-1)).toBe(keptLine);
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:2" });
    expect(error.properties).toMatchObject({ image: "acme/api:2", version: 2, smokeTest: keep });
    expect(error.properties.lastSmokeTest).toEqual({
      version: 2,
      passed: false,
      jobIds: [],
      failures: 0,
      timeline: ["not run: the rollout stalled (a worker of the release was UNHEALTHY)"],
    });
    // The next up (after a refresh, which clears the engine's init errors: step.go
    // RefreshStep.Apply) plans an update that tests release 2 in place.
    await rollOut();
    const read = await host.read(id, urn(resource), error.properties, news);
    expect(read.props.lastSmokeTest).toEqual(error.properties.lastSmokeTest);
    expect(await host.diff(id, urn(resource), read.props, news)).toMatchObject({
      changes: true,
      replaces: [],
    });
    const { outs: tested } = await host.update(id, urn(resource), read.props, news);
    expect(tested).toMatchObject({ image: "acme/api:2", version: 2 });
    expect(tested.lastSmokeTest).toEqual(passedOnce(2));
    expect((await client.serverless.releases(id)).endpointVersion).toBe(2);
    expect(await host.diff(id, urn(resource), tested, news)).toMatchObject({ changes: false });

    // With a previous record (passed on version 2), a stalled release 3 keeps it: it passed on an
    // older version than the one that serves (servesUntestedRelease), so the next up tests 3.
    const three = await checked(resource, { ...news, image: "acme/api:3" }, news);
    unhealthyReads(2);
    const again = await failing(() => host.update(id, urn(resource), tested, three));
    expect(again.message).toContain("the rollout of version 3 stalled");
    expect(again.message.split("\n").at(-1)).toBe(keptLine);
    expect(again.properties).toMatchObject({ image: "acme/api:3", version: 3 });
    expect(again.properties.lastSmokeTest).toEqual(tested.lastSmokeTest);
    await rollOut();
    const reread = await host.read(id, urn(resource), again.properties, three);
    expect(await host.diff(id, urn(resource), reread.props, three)).toMatchObject({
      changes: true,
      replaces: [],
    });
    const { outs: retested } = await host.update(id, urn(resource), reread.props, three);
    expect(retested).toMatchObject({ image: "acme/api:3", version: 3 });
    expect(retested.lastSmokeTest).toEqual(passedOnce(3));
  });

  /** The next read matching `path` and every retry of the host's client (5) answer 500. */
  function failEveryTry(path: RegExp) {
    for (let i = 0; i < 6; i++) {
      // Retry-After 1 (s): the retries wait 5 s in all, not the backoff's 15 s.
      proxy.arm("GET", path, {
        kind: "reply",
        status: 500,
        body: { error: "internal error" },
        headers: { "Retry-After": "1" },
      });
    }
  }

  it("records a create whose rollout could not be followed (the workers read kept failing) as untested, and the next up tests that release", async () => {
    const resource = "create-unfollowed";
    const name = fresh(resource);
    const inputs = await checked(resource, base(name, { workers: { min: 1, max: 2 } }));
    // The first read of the workers and every retry of the host's client answer 500.
    const before = proxy.seen.length;
    failEveryTry(/^\/v2\/serverless\/[^/]+\/workers$/);
    const error = await failing(() => host.create(urn(resource), inputs));
    expectReasons(error);
    // The wait read the workers six times (every armed answer taken) and gave up.
    const workerReads = proxy.seen
      .slice(before)
      .filter((r) => r.method === "GET" && r.path.endsWith("/workers"));
    expect(workerReads).toHaveLength(6);
    const id = error.id as string;
    expect((await client.serverless.list()).filter((e) => e.name === name).map((e) => e.id)).toEqual([id]);
    expect(error.message.split("\n")).toEqual([
      `ServerlessEndpoint "${name}" (id ${id}) was created or changed, but waiting for its rollout failed ` +
        `(GET /v2/serverless/${id}/workers failed with 500: internal error). The endpoint is recorded in the ` +
        "state; run pulumi up again to finish (it waits for the rollout again).",
      "The release was not judged: its smoke test did not run. The next pulumi up tests it.",
    ]);
    expectRecordedUntested(error, "the rollout could not be followed (HTTP 500)");
    await expectTestedOnNextUp(resource, id, inputs, error);
  });

  it("records a create whose rollout could not be followed nor its endpoint read back on an unknown version, and the next up (after a refresh) tests the release", async () => {
    const resource = "create-unread";
    const name = fresh(resource);
    const inputs = await checked(resource, base(name, { workers: { min: 1, max: 2 } }));
    failEveryTry(/^\/v2\/serverless\/[^/]+\/workers$/);
    failEveryTry(/^\/v2\/serverless\/[^/]+$/);
    const error = await failing(() => host.create(urn(resource), inputs));
    expectReasons(error);
    const id = error.id as string;
    expect(error.message.split("\n")).toEqual([
      `ServerlessEndpoint "${name}" (id ${id}) was created or changed, but waiting for its rollout failed ` +
        `(GET /v2/serverless/${id}/workers failed with 500: internal error). The endpoint is recorded in the ` +
        "state; run pulumi up again to finish (it waits for the rollout again).",
      "The release was not judged: its smoke test did not run. The next pulumi up tests it.",
    ]);
    // The create's answer names no version: the state holds none, and the record is on none.
    expect(error.properties).toMatchObject({ image: "acme/api:1", version: null, smokeTest: SMOKE });
    expect(error.properties.lastSmokeTest).toEqual({
      version: null,
      passed: false,
      jobIds: [],
      failures: 0,
      timeline: ["not run: the rollout could not be followed (HTTP 500)"],
    });
    // A refresh reads version 1; a record on an unknown version still plans the test.
    await expectTestedOnNextUp(resource, id, inputs, error);
  });
});

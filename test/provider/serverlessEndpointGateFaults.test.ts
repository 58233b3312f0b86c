/**
 * The guarded release under faults and races, through Pulumi's own dynamic-provider host with
 * `__provider` serialized from the INSTALLED package, against the emulator (REST v2) on a
 * ManualClock behind the shared FaultProxy: a rollback whose answer is lost after the service
 * applied it, an update that changes scaling fields with the failed release, a program that says
 * `rollout: "ignore"`, a teammate's deploy landing while the smoke test runs, and a host killed
 * before its gate ended.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import type { FaultProxy } from "../support/faultProxy.mts";
import type { ProviderHost } from "../support/providerHost.mts";
import { expectReasons } from "./jobRunHostKit";
import { endpointHostKit } from "./serverlessEndpointHostKit";

const API_KEY = "gate-faults-key-3c9a0b";
const TOKEN = "hf_s3cr3t-Faults-T0ken-94de";
const ROLLOUT_MS = 3_000;
const BROKEN = "model weights missing: /models/faults.bin";

let n = 0;
const fresh = (base: string) => `${base}-${++n}`;

const SMOKE = { input: { ping: 1 }, expect: { output: { ping: 1 } }, timeoutMs: 60_000 };

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

/** The env of a release whose every job fails (the emulator's broken release). */
const BROKEN_ENV = { HF_TOKEN: TOKEN, MODEL: "small", RUNPOD_EMULATOR_FAIL: BROKEN };

/** What a teammate does while a job of the "acme/race:2" release runs (set by the test). */
let teammate: (() => Promise<unknown>) | undefined;

const kit = endpointHostKit({
  apiKey: API_KEY,
  secrets: [TOKEN, API_KEY],
  rolloutMs: ROLLOUT_MS,
  handlers: {
    // A release whose smoke-test job fails while a teammate's deploy lands.
    "acme/race:2": async () => {
      await teammate?.();
      throw new Error("the smoke test met a teammate's deploy");
    },
  },
});
const { clock, urn, checked, create, failing, untilStderr, rollOutOnceWaiting } = kit;
let proxy: FaultProxy;
let host: ProviderHost;
let client: RunpodClient;
beforeAll(async () => {
  await kit.start();
  ({ proxy, host, client } = kit);
});
afterAll(() => kit.stop());

/** Moves the emulator's clock on, a worker start at a time, until `operation` settles. */
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

/** The bodies of the PATCHes the host sent to the endpoint, in order. */
const patchesOf = (id: string) =>
  proxy.seen
    .filter((r) => r.method === "PATCH" && r.path === `/v2/serverless/${id}`)
    .map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe("ServerlessEndpoint's rollback under faults, in the provider host", () => {
  it("reports the rollback as done when its PATCH was applied but the answer was lost", async () => {
    const name = fresh("lost-rollback");
    const { id, outs, inputs } = await create("lost", base(name));
    const news = await checked("lost", { ...inputs, image: "acme/api:2", env: BROKEN_ENV }, inputs);
    const label = `"${name}" (id ${id})`;
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("lost"), outs, news)),
      (async () => {
        // The release's PATCH went through (its rollout is awaited): the next one, the rollback,
        // reaches the service, which applies it, and its answer is lost on the way back.
        await untilStderr(`ServerlessEndpoint ${label}: waiting for version 2 to roll out`);
        proxy.arm("PATCH", new RegExp(`^/v2/serverless/${id}$`), { kind: "lose-after" });
        await rollOutOnceWaiting(label, 2);
        await rollOutOnceWaiting(label, 3);
      })(),
    ]);
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint ${label}: the smoke test of release version 2 failed (1 of 1 job failed, maxFailures 0), so it was rolled back.`,
    );
    expect(error.message).toContain(
      "Now serving: version 3, a new release carrying the previous configuration (image acme/api:1), on every worker.",
    );
    expect(error.message).not.toContain("still on the failed release");
    // One rollback PATCH: the lost answer was read back, not sent again.
    expect(patchesOf(id)).toHaveLength(2);
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:1" });
    await expectAllOn(id, 3);
    expect(error.properties).toMatchObject({
      image: "acme/api:1",
      version: 3,
      lastSmokeTest: { version: 2, passed: false },
    });
  });
  it("puts back the name, workers and scaling changed with a failed release, so that a refresh against the inputs the engine keeps finds no drift", async () => {
    const name = fresh("mixed");
    const { id, outs, inputs } = await create("mixed", base(name));
    const renamed = `${name}-renamed`;
    const news = await checked(
      "mixed",
      {
        ...inputs,
        name: renamed,
        image: "acme/api:2",
        env: BROKEN_ENV,
        workers: { max: 2, idleTimeout: 30 },
        scaling: { type: "QUEUE_DELAY", queueDelay: 9 },
      },
      inputs,
    );
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("mixed"), outs, news)),
      (async () => {
        await rollOutOnceWaiting(`"${renamed}" (id ${id})`, 2);
        // The rollback puts the name back too: its wait names the endpoint by it.
        await rollOutOnceWaiting(`"${name}" (id ${id})`, 3);
      })(),
    ]);
    expectReasons(error);
    expect(error.message).toContain("so it was rolled back.");
    expect(error.message).toContain(
      "The other changes of this update (name, scaling, workers) were put back with it",
    );
    const rollback = patchesOf(id)[1] as Record<string, unknown>;
    expect(Object.keys(rollback).sort()).toEqual(["env", "image", "name", "scaling", "workers"]);
    const live = await client.serverless.get(id);
    expect(live).toMatchObject({
      name,
      image: "acme/api:1",
      workers: { max: 2, idleTimeout: outs.workers.idleTimeout },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    });
    expect(error.properties).toMatchObject({
      name,
      image: "acme/api:1",
      workers: outs.workers,
      scaling: outs.scaling,
      version: 3,
    });
    // Refresh as RefreshStep.Apply (step.go) runs it: Read with the OLD inputs the engine keeps after
    // a partially failed update, then Diff(new outputs, those inputs): no drift either way.
    const read = await host.read(id, urn("mixed"), error.properties, inputs);
    expect(read.props).toEqual(error.properties);
    expect(await host.diff(id, urn("mixed"), read.props, inputs)).toMatchObject({ changes: false });
    // The next up applies the whole change again.
    expect(await host.diff(id, urn("mixed"), read.props, news)).toMatchObject({
      changes: true,
      replaces: [],
    });
  });

  it("leaves a scaling change made elsewhere out of the rollback PATCH: only what the failed update set goes back", async () => {
    const name = fresh("teammate-scaling");
    const { id, outs, inputs } = await create("teammate", base(name));
    // A teammate changes the scaling in the console after this stack's last up.
    await client.serverless.update(id, { scaling: { type: "QUEUE_DELAY", queueDelay: 7 } });
    const news = await checked("teammate", { ...inputs, image: "acme/api:2", env: BROKEN_ENV }, inputs);
    const label = `"${name}" (id ${id})`;
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("teammate"), outs, news)),
      (async () => {
        await rollOutOnceWaiting(label, 2);
        await rollOutOnceWaiting(label, 3);
      })(),
    ]);
    expect(error.message).toContain("so it was rolled back.");
    const rollback = patchesOf(id)[1] as Record<string, unknown>;
    expect(Object.keys(rollback).sort()).toEqual(["env", "image"]);
    expect(await client.serverless.get(id)).toMatchObject({
      image: "acme/api:1",
      scaling: { type: "QUEUE_DELAY", queueDelay: 7 },
    });
  });

  it('waits for the rollback\'s rollout even when the program says rollout: "ignore"', async () => {
    const name = fresh("ignore");
    const { id, outs, inputs } = await create("ignore", base(name));
    const news = await checked(
      "ignore",
      { ...inputs, image: "acme/api:2", env: BROKEN_ENV, rollout: "ignore" },
      inputs,
    );
    const error = await pumping(failing(() => host.update(id, urn("ignore"), outs, news)));
    expectReasons(error);
    expect(error.message).toContain(
      "Now serving: version 3, a new release carrying the previous configuration (image acme/api:1), on every worker.",
    );
    // When the step ends, every worker runs the rollback: it was waited for, not only sent.
    await expectAllOn(id, 3);
    // The state keeps what the program says, not the forced wait.
    expect(error.properties).toMatchObject({ version: 3, rollout: "ignore", image: "acme/api:1" });
  });
});

describe("ServerlessEndpoint's gate when someone else deploys meanwhile, in the provider host", () => {
  it("does not roll back over a teammate's deploy that landed while the smoke test ran, and says what runs", async () => {
    const name = fresh("race");
    const { id, outs, inputs } = await create("race", base(name));
    teammate = () => client.serverless.update(id, { image: "acme/api:9" });
    const news = await checked("race", { ...inputs, image: "acme/race:2" }, inputs);
    const label = `"${name}" (id ${id})`;
    const error = await pumping(failing(() => host.update(id, urn("race"), outs, news)));
    teammate = undefined;
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint ${label}: the smoke test of release version 2 failed (1 of 1 job failed, maxFailures 0), ` +
        "and it was NOT rolled back: while the smoke test ran, the endpoint moved past the release under test to " +
        "version 3, a change made elsewhere (release ",
    );
    expect(error.message).toContain("created by a user the release does not name");
    expect(error.message).toContain("The state records what runs now (version 3).");
    expect(error.message).not.toContain("so it was rolled back");
    // The teammate's change stands: no rollback PATCH was sent.
    expect(patchesOf(id)).toHaveLength(1);
    expect(await client.serverless.get(id)).toMatchObject({ image: "acme/api:9" });
    expect(error.properties).toMatchObject({
      image: "acme/api:9",
      version: 3,
      lastSmokeTest: { version: 2, passed: false },
    });
  });
});

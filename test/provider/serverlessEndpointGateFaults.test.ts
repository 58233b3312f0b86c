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

const kit = endpointHostKit({ apiKey: API_KEY, secrets: [TOKEN, API_KEY], rolloutMs: ROLLOUT_MS });
const { urn, checked, create, failing, untilStderr, rollOutOnceWaiting } = kit;
let proxy: FaultProxy;
let host: ProviderHost;
let client: RunpodClient;
beforeAll(async () => {
  await kit.start();
  ({ proxy, host, client } = kit);
});
afterAll(() => kit.stop());

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
});

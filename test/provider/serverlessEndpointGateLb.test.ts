/**
 * Guarded releases of load-balancer endpoints: `ServerlessEndpoint.smokeTest.http`
 * through Pulumi's own dynamic-provider host, with `__provider` serialized from the INSTALLED
 * package, against the emulator's load-balancer endpoints on a ManualClock. The gate sends HTTP
 * probes instead of jobs; a release whose server answers 500 (`RUNPOD_EMULATOR_FAIL`) is rolled
 * back as a queue endpoint's is. No header value, env token or key reaches anything but the
 * secret inputs themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import type { ProviderHost } from "../support/providerHost.mts";
import { expectReasons } from "./jobRunHostKit";
import { endpointHostKit } from "./serverlessEndpointHostKit";

const API_KEY = "gate-lb-key-3b8d0e";
const TOKEN = "hf_s3cr3t-GateLb-T0ken-90d2";
const HEADER = "hdr-s3cr3t-GateLb-41aa";
const ROLLOUT_MS = 3_000;
const BROKEN = "tokenizer missing: /models/lb.json";

const kit = endpointHostKit({
  apiKey: API_KEY,
  secrets: [TOKEN, API_KEY, HEADER],
  rolloutMs: ROLLOUT_MS,
  // smokeTest carries the header: the resource stores it as a secret, as it does env.
  secretInputs: ["env", "smokeTest"],
});
const { urn, checked, failing, rollOutOnceWaiting, expectCleanOutputs, expectNoSecret } = kit;
let host: ProviderHost;
let client: RunpodClient;
beforeAll(async () => {
  await kit.start();
  ({ host, client } = kit);
});
afterAll(() => kit.stop());

const SMOKE = {
  http: {
    path: "/v1/chat/completions",
    body: { model: "m", messages: [{ role: "user", content: "ping" }] },
    headers: { "X-Tenant-Token": HEADER },
  },
  expect: { output: { choices: [{ message: { content: "echo: ping" } }] } },
  timeoutMs: 60_000,
};

let n = 0;
const base = (name: string) => ({
  name,
  type: "LOAD_BALANCER",
  image: "acme/server:1",
  env: { HF_TOKEN: TOKEN },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "REQUEST_COUNT", requestCount: 2 },
  workers: { min: 2, max: 2 },
  smokeTest: SMOKE,
});

describe("ServerlessEndpoint smokeTest.http on a load-balancer endpoint (provider host, REST v2)", () => {
  it("gates the create with an HTTP probe and records it in lastSmokeTest", async () => {
    const name = `lb-pass-${++n}`;
    const inputs = await checked("lb-pass", base(name));
    const { outs } = await host.create(urn("lb-pass"), inputs);
    expect(outs.lastSmokeTest).toEqual({
      version: 1,
      passed: true,
      jobIds: [],
      failures: 0,
      timeline: [expect.stringMatching(/^probe 1: REQUEST_SENT [\d.]+ s -> HTTP_200 [\d.]+ s$/)],
    });
    expect(outs.smokeTest).toEqual(SMOKE);
    expectCleanOutputs(outs);
  });

  it("rolls back a release whose server answers 500: the previous configuration serves, the message says why", async () => {
    const name = `lb-rollback-${++n}`;
    const inputs = await checked("lb-rollback", base(name));
    const { id, outs } = await host.create(urn("lb-rollback"), inputs);
    const broken = {
      ...inputs,
      image: "acme/server:2",
      env: { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN },
    };
    const news = await checked("lb-rollback", broken, inputs);
    const label = `"${name}" (id ${id})`;
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("lb-rollback"), outs, news)),
      (async () => {
        await rollOutOnceWaiting(label, 2);
        await rollOutOnceWaiting(label, 3);
      })(),
    ]);
    expectReasons(error);
    const message = error.message;
    expect(message).toContain(
      `ServerlessEndpoint ${label}: the smoke test of release version 2 failed (1 of 1 probe failed, maxFailures 0), so it was rolled back.`,
    );
    expect(message).toContain(
      "Now serving: version 3, a new release carrying the previous configuration (image acme/server:1), on every worker.",
    );
    expect(message).toContain("Why release version 2 failed (the first failing probe):");
    expect(message).toContain(
      `Smoke-test probe POST /v1/chat/completions: the endpoint answered HTTP 500, expected 200`,
    );
    expect(message).toContain(`Answer body: {"error":"${BROKEN}"}`);
    expect(message).toContain("Release: endpoint version 2 (every ready worker runs it)");
    expect(message).toContain(`container error: ${BROKEN}`);
    expect(message).toMatch(
      /Smoke-test probes: probe 1: REQUEST_SENT [\d.]+ s -> HTTP_500 [\d.]+ s \(failed\)/,
    );
    expect(error.properties).toMatchObject({
      image: "acme/server:1",
      version: 3,
      lastSmokeTest: { version: 2, passed: false, failures: 1, jobIds: [] },
    });
    const live = await client.serverless.get(id);
    expect(live).toMatchObject({ image: "acme/server:1", env: { HF_TOKEN: TOKEN } });
    const { workers } = await client.serverless.workers(id);
    expect(workers.map((w) => w.version)).toEqual([3, 3]);
    // The restored release answers the probe again.
    const answer = await client.loadBalancer(id).request({ path: "/v1/models" });
    expect(answer.status).toBe(200);
    expectNoSecret(message);
  });

  it("fails check on a load balancer without smokeTest.http, and on smokeTest.http of a queue endpoint", async () => {
    const lb = await host.check(urn("lb-check"), {}, { ...base("c"), smokeTest: { input: { a: 1 } } });
    expect(lb.failures).toEqual([
      {
        property: "",
        reason:
          'smokeTest on a type "LOAD_BALANCER" endpoint needs smokeTest.http (method, path, body, headers, ' +
          "expectStatus): a load balancer serves its workers' own HTTP paths, not queue jobs (/run), so its smoke " +
          'test is an HTTP probe, e.g. http: { path: "/v1/models" }',
      },
    ]);
    const queue = await host.check(
      urn("lb-check"),
      {},
      {
        ...base("c"),
        type: "QUEUE",
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      },
    );
    expect(queue.failures).toEqual([
      {
        property: "",
        reason:
          'smokeTest.http probes type "LOAD_BALANCER" endpoints, and this endpoint is type "QUEUE": give ' +
          "smokeTest.input (the queue job to run) instead of smokeTest.http",
      },
    ]);
    expectNoSecret(JSON.stringify([lb.failures, queue.failures]));
  });
});

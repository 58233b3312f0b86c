/**
 * JobRun `http` probes through Pulumi's own dynamic-provider host over gRPC, with `__provider`
 * serialized from the INSTALLED package, against the emulator's load-balancer endpoints (REST v2,
 * `<origin>/lb/<id>`): a probe that passes, one whose release answers 500 (with the worker's log
 * tail), one whose chat answer misses `expect.output`, a probe of a QUEUE endpoint, the check
 * failures, and no header value or key anywhere but the `http` argument itself.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { ProviderHost } from "../support/providerHost.mts";
import { urnFor } from "../support/providerHost.mts";
import { createFailing, createPassing, startJobRunHost } from "./jobRunHostKit";

const API_KEY = "probe-host-key-5c1e9a";
const HEADER = "hdr-s3cr3t-Probe-77f0";
const BROKEN = "model weights missing: /models/probe.bin";

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;
/** Every text a user could see, scanned in afterAll. */
const seen: string[] = [];

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
  client = new RunpodClient({
    apiKey: API_KEY,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    rateLimits: false,
  });
  host = await startJobRunHost(emu);
});

afterAll(async () => {
  const stderr = host?.stderr() ?? "";
  await host?.close();
  await emu?.close();
  for (const text of [stderr, ...seen]) {
    expect(text).not.toContain(HEADER);
    expect(text).not.toContain(API_KEY);
  }
});

let n = 0;
/** A new load-balancer endpoint with one warm worker. */
async function loadBalancer(env: Record<string, string> = {}): Promise<string> {
  const created = await client.serverless.create({
    name: `probe-${++n}`,
    type: "LOAD_BALANCER",
    image: "acme/server:1",
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "REQUEST_COUNT", requestCount: 1 },
    workers: { min: 1, max: 1 },
    env,
  });
  return created.id;
}

const chat = (endpointId: string, extra: Record<string, unknown> = {}) => ({
  endpointId,
  http: {
    path: "/v1/chat/completions",
    body: { model: "m", messages: [{ role: "user", content: "ping" }] },
    headers: { "X-Tenant-Token": HEADER },
  },
  timeoutMs: 60_000,
  ...extra,
});

/** The outputs with the secret `http` argument (stored encrypted by the engine) left out. */
const visible = ({ http: _http, ...rest }: Record<string, unknown>) => JSON.stringify(rest);

describe("JobRun http in the provider host (REST v2, load-balancer endpoints)", () => {
  it("passes a chat probe: status, answer, latency, release and timeline recorded", async () => {
    const id = await loadBalancer();
    const { outs } = await createPassing(
      host,
      "probe-pass",
      chat(id, {
        expect: {
          output: {
            object: "chat.completion",
            choices: [{ message: { role: "assistant", content: "echo: ping" } }],
          },
          outputSchema: { type: "object", required: ["choices", "usage"] },
          maxExecutionMs: 30_000,
        },
      }),
    );
    expect(outs).toMatchObject({
      passed: true,
      httpStatus: 200,
      endpointVersion: 1,
      attempts: 1,
      output: { object: "chat.completion", choices: [{ message: { content: "echo: ping" } }] },
      http: chat(id).http,
    });
    expect(outs.latencyMs).toEqual(expect.any(Number));
    expect(outs.timeline.map((t: { status: string }) => t.status)).toEqual(["REQUEST_SENT", "HTTP_200"]);
    expect(outs.jobId).toBeUndefined();
    seen.push(visible(outs));
  });

  it("fails a release that answers 500, with the body, the release and the worker's log tail", async () => {
    const id = await loadBalancer({ RUNPOD_EMULATOR_FAIL: BROKEN });
    const error = await createFailing(host, "probe-500", chat(id));
    const lines = error.message.split("\n");
    expect(lines.slice(0, 4)).toEqual([
      `JobRun failed on endpoint ${id}, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 500, expected 200`,
      expect.stringMatching(/^Answer: HTTP 500 in [\d.]+ ms; attempts: 1$/),
      `Answer body: {"error":"${BROKEN}"}`,
      "Release: endpoint version 1 (every ready worker runs it)",
    ]);
    expect(lines[4]).toMatch(/^Timeline: REQUEST_SENT [\d.]+ s -> HTTP_500 [\d.]+ s$/);
    expect(error.message).toContain(
      "The load balancer does not say which worker answered; the release has one ready worker.",
    );
    expect(error.message).toContain(`Worker log (`);
    expect(error.message).toContain(`container error: ${BROKEN}`);
    expect(error.message).toContain("container POST /v1/chat/completions 500");
    expect(error.properties).toMatchObject({ passed: false, httpStatus: 500, endpointVersion: 1 });
    expect(error.properties?.workerLogTail).toEqual(
      expect.arrayContaining([expect.stringContaining("POST /v1/chat/completions 500")]),
    );
    seen.push(error.message, visible(error.properties ?? {}));

    // The next up re-sends it (the failed run is recorded as not passed).
    const diff = await host.diff(
      error.id as string,
      urnFor("JobRun", "probe-500"),
      error.properties ?? {},
      error.inputs as Record<string, unknown>,
    );
    expect(diff.changes).toBe(true);
  });

  it("fails a chat answer that does not contain expect.output, listing the difference", async () => {
    const id = await loadBalancer();
    const error = await createFailing(
      host,
      "probe-mismatch",
      chat(id, { expect: { output: { choices: [{ message: { content: "echo: pong" } }] } } }),
    );
    expect(error.message.split("\n")[0]).toBe(
      `JobRun failed on endpoint ${id}, HTTP probe POST /v1/chat/completions: the endpoint answered HTTP 200 but its answer does not contain expect.output (1 difference):`,
    );
    expect(error.message).toContain('choices[0].message.content: expected "echo: pong", got "echo: ping"');
    expect(error.message).toContain("container POST /v1/chat/completions 200");
    expect(error.properties).toMatchObject({ passed: false, httpStatus: 200 });
    seen.push(error.message, visible(error.properties ?? {}));
  });

  it("fails a probe of a QUEUE endpoint before sending anything, saying to use input", async () => {
    const queue = await client.serverless.create({
      name: `queue-${++n}`,
      type: "QUEUE",
      image: "acme/api:1",
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
    });
    const urn = urnFor("JobRun", "probe-queue");
    const { inputs, failures } = await host.check(urn, {}, chat(queue.id));
    expect(failures).toEqual([]);
    const error = await host.create(urn, inputs).catch((e: unknown) => e as Error);
    expect((error as Error).message).toBe(
      `JobRun cannot probe endpoint ${queue.id} over HTTP: endpoint ${queue.id} is type QUEUE, not LOAD_BALANCER: it has no HTTP paths of its own (requestUrls.base); send queue jobs with client.endpoint(id).run instead. Nothing was sent. Hint: http probes LOAD_BALANCER endpoints; for a QUEUE endpoint give input (a queue job) instead of http.`,
    );
    seen.push((error as Error).message);
  });

  it("fails check on input with http and on an Authorization header, without the header's value", async () => {
    const urn = urnFor("JobRun", "probe-check");
    const { failures } = await host.check(urn, {}, { ...chat("abc"), input: { a: 1 } });
    expect(failures).toEqual([
      {
        property: "input",
        reason:
          "input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one",
      },
    ]);
    const auth = await host.check(
      urn,
      {},
      {
        endpointId: "abc",
        http: { path: "/ping", headers: { Authorization: `Bearer ${HEADER}` } },
      },
    );
    expect(auth.failures).toEqual([
      {
        property: "",
        reason:
          "http.headers.Authorization may not be set (the client sends Authorization: Bearer with its API key)",
      },
    ]);
    seen.push(JSON.stringify(auth.failures));
  });
});

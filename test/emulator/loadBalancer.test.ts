/**
 * Load-balancer endpoints: `type: "LOAD_BALANCER"` endpoints made
 * over REST v2 serve HTTP at `<origin>/lb/<id>` (their `requestUrls.base`), with health, the
 * built-in model server's routes, cold starts, releases and rollouts, and broken releases as
 * queue endpoints have them. Real HTTP on 127.0.0.1, time on a ManualClock.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RunpodClient } from "../../src/client/index";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Answer, type Harness, harness, KEY } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const hh = () => h as Harness;

/** A load-balancer endpoint's create body. */
const lbBody = (over: Record<string, unknown> = {}) => ({
  name: "lb",
  type: "LOAD_BALANCER",
  image: "acme/server:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "REQUEST_COUNT", requestCount: 1 },
  workers: { min: 1, max: 2 },
  ...over,
});

/** Creates a load-balancer endpoint; returns its answer body. */
async function createLb(over: Record<string, unknown> = {}) {
  const created = await hh().call("POST", "/v2/serverless", lbBody(over));
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body as { id: string; requestUrls: Record<string, string>; type: string };
}

type W = { id: string; status: string; version: number; isStale: boolean };
async function workers(id: string): Promise<W[]> {
  const answer = await hh().call("GET", `/v2/serverless/${id}/workers`);
  expect(answer.status).toBe(200);
  return answer.body.workers.map(({ id, status, version, isStale }: W) => ({ id, status, version, isStale }));
}

/** Waits (settling, no clock move) until `/workers` of `id` satisfies `ok`. */
async function untilWorkers(id: string, ok: (ws: W[]) => boolean): Promise<W[]> {
  let last: W[] = [];
  await vi.waitFor(
    async () => {
      last = await workers(id);
      expect(ok(last), JSON.stringify(last)).toBe(true);
    },
    { timeout: 10_000 },
  );
  return last;
}

/**
 * The lines of a worker's log so far: reads its SSE stream until a line matches `until` (the live
 * stream of a running worker stays open), or to its end for a gone worker.
 */
async function logLines(endpointId: string, workerId: string, until: RegExp): Promise<string[]> {
  const abort = new AbortController();
  const guard = setTimeout(() => abort.abort(), 10_000);
  const lines: string[] = [];
  try {
    const res = await request(
      `${hh().emu.serverlessUrl}/v2/serverless/${endpointId}/workers/${workerId}/logs?tail=5000`,
      { headers: { authorization: `Bearer ${KEY}` }, signal: abort.signal },
    );
    expect(res.statusCode).toBe(200);
    let buffer = "";
    for await (const chunk of res.body) {
      buffer += chunk.toString("utf8");
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const data = buffer
          .slice(0, end)
          .split("\n")
          .find((l) => l.startsWith("data: "));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        if (data) lines.push(JSON.parse(data.slice(6)).line);
      }
      if (lines.some((l) => until.test(l))) break;
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  } finally {
    clearTimeout(guard);
    abort.abort();
  }
  return lines;
}

const lb = (id: string, path: string, method = "GET", body?: unknown, headers?: Record<string, string>) =>
  hh().call(method, `/lb/${id}${path}`, body, headers);

describe("creating a load-balancer endpoint", () => {
  it("answers 201 with requestUrls base and health under the emulator's origin", async () => {
    h = await harness();
    const created = await createLb();
    const base = `${h.emu.serverlessUrl}/lb/${created.id}`;
    expect(created.type).toBe("LOAD_BALANCER");
    expect(created.requestUrls).toEqual({ base, health: `${base}/ping` });
    expect(check("Endpoint", created)).toEqual([]);
    const read = await h.call("GET", `/v2/serverless/${created.id}`);
    expect(read.body.requestUrls).toEqual({ base, health: `${base}/ping` });
    expect(read.body.type).toBe("LOAD_BALANCER");
    // workers.min 1 warm at once, the rest cold (not listed)
    expect(await workers(created.id)).toEqual([
      { id: `${created.id}-worker-1`, status: "IDLE", version: 1, isStale: false },
    ]);
  });

  it("refuses the queue routes of a load-balancer endpoint with a 404 naming its type", async () => {
    h = await harness();
    const { id } = await createLb();
    for (const [method, path] of [
      ["POST", `/v2/${id}/run`],
      ["POST", `/v2/${id}/runsync`],
      ["GET", `/v2/${id}/health`],
      ["GET", `/v2/${id}/status/abc`],
    ] as const) {
      const answer = await h.call(method, path, method === "POST" ? { input: {} } : undefined);
      expect(answer.status).toBe(404);
      expect(answer.body.message).toContain(`endpoint ${id} is a LOAD_BALANCER endpoint`);
      expect(answer.body.message).toContain(`/lb/${id}`);
    }
    expect(h.emu.stats().submitted[id] ?? 0).toBe(0);
  });
});

describe("requests under /lb/<id>", () => {
  it("need Authorization: Bearer <key> (401 otherwise)", async () => {
    h = await harness();
    const { id } = await createLb();
    for (const authorization of ["", "Bearer wrong-key", KEY]) {
      const answer = await lb(id, "/echo", "GET", undefined, { authorization });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        message: "missing or invalid API key: send Authorization: Bearer <API key>",
      });
    }
    expect((await lb(id, "/echo")).status).toBe(200);
  });

  it("answer 404 for an unknown id, and for a queue endpoint's id", async () => {
    h = await harness({ endpoints: ["echo"] });
    expect(await lb("nope", "/ping")).toMatchObject({
      status: 404,
      body: { error: "no load-balancer endpoint nope" },
    });
    expect(await lb("echo", "/echo", "POST", {})).toMatchObject({
      status: 404,
      body: { error: "no load-balancer endpoint echo" },
    });
  });

  it("answer 404 from the worker for a path it does not serve", async () => {
    h = await harness();
    const { id } = await createLb();
    expect(await lb(id, "/v1/embeddings", "POST", { input: "x" })).toMatchObject({
      status: 404,
      body: { error: "no route POST /v1/embeddings" },
    });
    expect(await lb(id, "/v1/chat/completions")).toMatchObject({
      status: 404,
      body: { error: "no route GET /v1/chat/completions" },
    });
  });
});

describe("health", () => {
  it("is 204 while the first worker starts, then 200 healthy", async () => {
    h = await harness({ coldStartMs: 2000 });
    const { id } = await createLb({ workers: { min: 0, max: 1 } });
    expect(await workers(id)).toEqual([]);
    const starting = await lb(id, "/ping");
    expect(starting.status).toBe(204);
    expect(starting.body).toBeUndefined();
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-1`, status: "INITIALIZING", version: 1, isStale: false },
    ]);
    expect((await lb(id, "/ping")).status).toBe(204);
    await h.clock.advance(1999);
    expect((await lb(id, "/ping")).status).toBe(204);
    await h.clock.advance(1);
    expect(await lb(id, "/ping")).toMatchObject({ status: 200, body: { status: "healthy" } });
  });

  it("is 503 when no worker is ready nor can become ready", async () => {
    h = await harness();
    const bad = await createLb({ image: "acme/server:unpullable", workers: { min: 2, max: 2 } });
    expect((await workers(bad.id)).map((w) => w.status)).toEqual(["UNHEALTHY", "UNHEALTHY"]);
    expect(await lb(bad.id, "/ping")).toEqual(
      expect.objectContaining({
        status: 503,
        body: {
          error: `every worker of endpoint ${bad.id} is unhealthy (version 1: failed to pull image acme/server:unpullable: manifest unknown)`,
        },
      }),
    );
    const none = await createLb({ workers: { min: 0, max: 0 } });
    expect(await lb(none.id, "/ping")).toMatchObject({
      status: 503,
      body: { error: `endpoint ${none.id} has no workers (workers.max is 0)` },
    });
    // Any other request says the same at once: nothing can come to serve it.
    expect(await lb(none.id, "/echo")).toMatchObject({
      status: 503,
      body: {
        error: `no worker can serve this request: endpoint ${none.id} has no workers (workers.max is 0)`,
      },
    });
  });

  it("is at HEALTH_CHECK_PATH when the env sets it", async () => {
    h = await harness();
    const created = await createLb({ env: { HEALTH_CHECK_PATH: "/healthz" } });
    expect(created.requestUrls.health).toBe(`${h.emu.serverlessUrl}/lb/${created.id}/healthz`);
    expect(await lb(created.id, "/healthz")).toMatchObject({ status: 200, body: { status: "healthy" } });
    expect(await lb(created.id, "/ping")).toMatchObject({
      status: 404,
      body: { error: "no route GET /ping" },
    });
  });
});

describe("the built-in model server", () => {
  it("echoes a request: method, path, query, JSON body and header names", async () => {
    h = await harness();
    const { id } = await createLb();
    const answer = await lb(id, "/echo?a=1&b=two", "POST", { hello: ["world"] }, { "x-trace": "t1" });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      method: "POST",
      path: "/echo",
      query: { a: "1", b: "two" },
      body: { hello: ["world"] },
      headers: ["authorization", "connection", "content-length", "content-type", "host", "x-trace"],
    });
    const get = await lb(id, "/echo");
    expect(get.body).toMatchObject({ method: "GET", path: "/echo", query: {}, body: null });
    const notJson = await lb(id, "/echo", "POST", "not json", { "content-type": "text/plain" });
    expect(notJson).toMatchObject({ status: 200, body: { body: null } });
  });

  it("lists MODEL_NAME at /v1/models (emulator-model without it)", async () => {
    h = await harness();
    const named = await createLb({ env: { MODEL_NAME: "acme/llama-3-8b" } });
    expect(await lb(named.id, "/v1/models")).toEqual(
      expect.objectContaining({
        status: 200,
        body: {
          object: "list",
          data: [{ id: "acme/llama-3-8b", object: "model", owned_by: "runpod-emulator" }],
        },
      }),
    );
    const plain = await createLb();
    expect((await lb(plain.id, "/v1/models")).body.data[0].id).toBe("emulator-model");
  });

  it("answers /v1/chat/completions as OpenAI does, and 400 without messages", async () => {
    h = await harness();
    const { id } = await createLb({ env: { MODEL_NAME: "m1" } });
    const answer = await lb(id, "/v1/chat/completions", "POST", {
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hello there" },
      ],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9a-f]+$/),
      object: "chat.completion",
      created: Math.floor(h.clock.now() / 1000),
      model: "m1",
      choices: [
        { index: 0, message: { role: "assistant", content: "echo: hello there" }, finish_reason: "stop" },
      ],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
    for (const body of [{}, { messages: "hi" }, undefined]) {
      expect(await lb(id, "/v1/chat/completions", "POST", body)).toMatchObject({
        status: 400,
        body: { error: "messages: required array" },
      });
    }
  });

  it("writes every request to the serving worker's log", async () => {
    h = await harness();
    const { id } = await createLb({ workers: { min: 1, max: 1 } });
    await lb(id, "/v1/models");
    await lb(id, "/v1/chat/completions", "POST", {});
    const lines = await logLines(id, `${id}-worker-1`, /POST \/v1\/chat\/completions 400/);
    expect(lines.filter((l) => /^(GET|POST) /.test(l))).toEqual([
      "GET /v1/models 200",
      "POST /v1/chat/completions 400",
    ]);
  });
});

describe("waiting for a worker", () => {
  it("cold-starts a worker from workers.min 0 and serves once it is ready", async () => {
    h = await harness({ coldStartMs: 4000 });
    const { id } = await createLb({ workers: { min: 0, max: 2 } });
    expect(await workers(id)).toEqual([]);
    const pending = lb(id, "/echo", "POST", { n: 1 });
    await untilWorkers(id, (ws) => ws.length === 1 && ws[0]?.status === "INITIALIZING");
    await h.clock.advance(4000);
    const answer = await pending;
    expect(answer).toMatchObject({ status: 200, body: { path: "/echo", body: { n: 1 } } });
    expect(await workers(id)).toEqual([{ id: `${id}-worker-1`, status: "IDLE", version: 1, isStale: false }]);
  });

  it("answers 503 once the request wait is over with no ready worker", async () => {
    h = await harness({ coldStartMs: 5000, loadBalancerRequestWaitMs: 1000 });
    const { id } = await createLb({ workers: { min: 0, max: 1 } });
    const pending = lb(id, "/v1/models");
    await untilWorkers(id, (ws) => ws.length === 1 && ws[0]?.status === "INITIALIZING");
    await h.clock.advance(999);
    await h.clock.advance(1);
    expect(await pending).toMatchObject({
      status: 503,
      body: { error: "no worker became ready within 1000 ms (the emulator's loadBalancerRequestWaitMs)" },
    });
    // The worker still comes up and serves the next request.
    await h.clock.advance(4000);
    expect((await lb(id, "/v1/models")).status).toBe(200);
  });

  it("waits 60 s by default", async () => {
    h = await harness({ coldStartMs: 120_000 });
    const { id } = await createLb({ workers: { min: 0, max: 1 } });
    const pending = lb(id, "/echo");
    await untilWorkers(id, (ws) => ws.length === 1);
    await h.clock.advance(59_999);
    let settled: Answer | undefined;
    void pending.then((a) => {
      settled = a;
    });
    await h.clock.settle(10);
    expect(settled).toBeUndefined();
    await h.clock.advance(1);
    expect((await pending).body.error).toBe(
      "no worker became ready within 60000 ms (the emulator's loadBalancerRequestWaitMs)",
    );
  });
});

describe("releases", () => {
  it("roll out worker by worker: old workers serve during the rollout, new ones after", async () => {
    h = await harness();
    const { id } = await createLb({ workers: { min: 2, max: 2 }, env: { MODEL_NAME: "old" } });
    const patched = await h.call("PATCH", `/v2/serverless/${id}`, {
      image: "acme/server:2",
      env: { MODEL_NAME: "new" },
    });
    expect(patched.status).toBe(200);
    expect((await h.call("GET", `/v2/serverless/${id}/releases`)).body.endpointVersion).toBe(2);
    // During the rollout's wait, the stale workers of version 1 serve.
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-1`, status: "IDLE", version: 1, isStale: true },
      { id: `${id}-worker-2`, status: "IDLE", version: 1, isStale: true },
    ]);
    expect((await lb(id, "/v1/models")).body.data[0].id).toBe("old");
    // The first replacement is initializing: the other stale worker still serves.
    await h.clock.advance(3000);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-3`, status: "INITIALIZING", version: 2, isStale: false },
      { id: `${id}-worker-2`, status: "IDLE", version: 1, isStale: true },
    ]);
    expect((await lb(id, "/v1/models")).body.data[0].id).toBe("old");
    expect(await logLines(id, `${id}-worker-2`, /GET \/v1\/models 200/)).toContain("GET /v1/models 200");
    // The new worker is ready: the newest release serves.
    await h.clock.advance(WORKER_START_MS);
    expect((await lb(id, "/v1/models")).body.data[0].id).toBe("new");
    await h.clock.advance(WORKER_START_MS);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-3`, status: "IDLE", version: 2, isStale: false },
      { id: `${id}-worker-4`, status: "IDLE", version: 2, isStale: false },
    ]);
    expect((await lb(id, "/v1/models")).body.data[0].id).toBe("new");
  });

  it("an unpullable release stalls: the old workers keep serving and /workers shows it", async () => {
    h = await harness();
    const { id } = await createLb({ workers: { min: 2, max: 2 }, env: { MODEL_NAME: "good" } });
    await h.call("PATCH", `/v2/serverless/${id}`, { image: "acme/server:unpullable" });
    await h.clock.advance(3000 + WORKER_START_MS);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-3`, status: "UNHEALTHY", version: 2, isStale: false },
      { id: `${id}-worker-2`, status: "IDLE", version: 1, isStale: true },
    ]);
    expect(await lb(id, "/ping")).toMatchObject({ status: 200, body: { status: "healthy" } });
    expect((await lb(id, "/v1/models")).body.data[0].id).toBe("good");
    await h.clock.advance(60_000);
    expect((await workers(id)).map((w) => `${w.status} v${w.version}`)).toEqual(["UNHEALTHY v2", "IDLE v1"]);
    expect((await lb(id, "/v1/models")).status).toBe(200);
  });

  it("RUNPOD_EMULATOR_FAIL answers 500 with its text and logs the error; health stays 200", async () => {
    h = await harness();
    const { id } = await createLb({
      workers: { min: 1, max: 1 },
      env: { RUNPOD_EMULATOR_FAIL: "model weights corrupt" },
    });
    expect(await lb(id, "/ping")).toMatchObject({ status: 200, body: { status: "healthy" } });
    for (const [method, path] of [
      ["POST", "/v1/chat/completions"],
      ["GET", "/v1/models"],
      ["GET", "/echo"],
    ] as const) {
      expect(await lb(id, path, method, method === "POST" ? { messages: [] } : undefined)).toMatchObject({
        status: 500,
        body: { error: "model weights corrupt" },
      });
    }
    const lines = await logLines(id, `${id}-worker-1`, /GET \/echo 500/);
    expect(lines.slice(-3)).toEqual([
      "RUNPOD_EMULATOR_FAIL is set: this release fails every request",
      "error: model weights corrupt",
      "GET /echo 500",
    ]);
  });

  it("a worker serving a request shows RUNNING and is replaced only once it answered", async () => {
    h = await harness({ rolloutMs: 0 });
    const { id } = await createLb({
      workers: { min: 1, max: 1 },
      env: { RUNPOD_EMULATOR_LATENCY_MS: "1000" },
    });
    const pending = lb(id, "/echo");
    await untilWorkers(id, (ws) => ws[0]?.status === "RUNNING");
    await h.call("PATCH", `/v2/serverless/${id}`, { image: "acme/server:2" });
    await h.clock.advance(0);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-1`, status: "RUNNING", version: 1, isStale: true },
    ]);
    await h.clock.advance(1000);
    expect((await pending).status).toBe(200);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-2`, status: "INITIALIZING", version: 2, isStale: false },
    ]);
    const lines = await logLines(id, `${id}-worker-1`, /worker stopping/);
    expect(lines.slice(-2)).toEqual(["GET /echo 200", "worker stopping: replaced by a worker of version 2"]);
  });

  it("RUNPOD_EMULATOR_LATENCY_MS delays each answer on the emulator clock", async () => {
    h = await harness();
    const { id } = await createLb({ env: { RUNPOD_EMULATOR_LATENCY_MS: "250" } });
    const pending = lb(id, "/echo");
    let settled: Answer | undefined;
    void pending.then((a) => {
      settled = a;
    });
    await vi.waitFor(() => expect(h?.clock.pending).toBeGreaterThan(0), { timeout: 10_000 });
    await h.clock.advance(249);
    expect(settled).toBeUndefined();
    await h.clock.advance(1);
    expect((await pending).status).toBe(200);
  });
});

describe("workers.min", () => {
  it("raised by a PATCH starts that many workers (on the cold start), without a release", async () => {
    h = await harness({ coldStartMs: 1500 });
    const { id } = await createLb({ workers: { min: 0, max: 3 } });
    expect(await workers(id)).toEqual([]);
    const patched = await h.call("PATCH", `/v2/serverless/${id}`, { workers: { min: 2 } });
    expect(patched.status).toBe(200);
    expect((await workers(id)).map((w) => w.status)).toEqual(["INITIALIZING", "INITIALIZING"]);
    await h.clock.advance(1500);
    expect(await workers(id)).toEqual([
      { id: `${id}-worker-1`, status: "IDLE", version: 1, isStale: false },
      { id: `${id}-worker-2`, status: "IDLE", version: 1, isStale: false },
    ]);
    expect((await h.call("GET", `/v2/serverless/${id}/releases`)).body.endpointVersion).toBe(1);
  });
});

describe("with a state file", () => {
  it("a load-balancer endpoint comes back serving at its version after a restart", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emu-lb-"));
    try {
      const stateFile = path.join(dir, "state.json");
      h = await harness({ stateFile });
      const { id } = await createLb({ workers: { min: 1, max: 1 } });
      await h.call("PATCH", `/v2/serverless/${id}`, { env: { MODEL_NAME: "v2" } });
      await h.close();
      h = await harness({ stateFile });
      const read = await h.call("GET", `/v2/serverless/${id}`);
      const base = `${h.emu.serverlessUrl}/lb/${id}`;
      expect(read.body).toMatchObject({
        type: "LOAD_BALANCER",
        requestUrls: { base, health: `${base}/ping` },
      });
      expect(await workers(id)).toEqual([
        { id: `${id}-worker-1`, status: "IDLE", version: 2, isStale: false },
      ]);
      expect((await lb(id, "/v1/models")).body.data[0].id).toBe("v2");
      expect((await h.call("POST", `/v2/${id}/run`, { input: {} })).status).toBe(404);
    } finally {
      await h?.close();
      h = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("deleting a load-balancer endpoint", () => {
  it("makes /lb/<id> answer 404", async () => {
    h = await harness();
    const { id } = await createLb();
    expect((await lb(id, "/echo")).status).toBe(200);
    expect((await h.call("DELETE", `/v2/serverless/${id}`)).status).toBe(204);
    expect(await lb(id, "/echo")).toMatchObject({
      status: 404,
      body: { error: `no load-balancer endpoint ${id}` },
    });
    expect(await lb(id, "/ping")).toMatchObject({ status: 404 });
  });

  it("ends a request waiting for a worker with a 503 saying so", async () => {
    h = await harness({ coldStartMs: 10_000 });
    const { id } = await createLb({ workers: { min: 0, max: 1 } });
    const pending = lb(id, "/echo");
    await untilWorkers(id, (ws) => ws.length === 1);
    expect((await h.call("DELETE", `/v2/serverless/${id}`)).status).toBe(204);
    expect(await pending).toMatchObject({
      status: 503,
      body: { error: `no worker can serve this request: endpoint ${id} was deleted` },
    });
  });
});

describe("RunpodClient", () => {
  it("creates a load-balancer endpoint whose requestUrls answer, and reads its workers", async () => {
    h = await harness();
    const client = new RunpodClient({
      apiKey: KEY,
      restUrl: h.emu.restUrl,
      serverlessUrl: h.emu.serverlessUrl,
    });
    const created = await client.serverless.create({
      name: "llm",
      type: "LOAD_BALANCER",
      image: "acme/vllm:1",
      env: { MODEL_NAME: "acme/llm" },
      gpu: { pools: ["ADA_24"] },
      workers: { min: 1, max: 1 },
      scaling: { type: "REQUEST_COUNT", requestCount: 1 },
    });
    const base = `${h.emu.serverlessUrl}/lb/${created.id}`;
    expect(created).toMatchObject({ type: "LOAD_BALANCER", requestUrls: { base, health: `${base}/ping` } });
    const auth = { authorization: `Bearer ${KEY}` };
    const health = await request(created.requestUrls?.health as string, { headers: auth });
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: "healthy" });
    const chat = await request(`${created.requestUrls?.base}/v1/chat/completions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "acme/llm", messages: [{ role: "user", content: "ping" }] }),
    });
    expect(chat.statusCode).toBe(200);
    expect(await chat.body.json()).toMatchObject({
      model: "acme/llm",
      choices: [{ message: { role: "assistant", content: "echo: ping" } }],
    });
    const list = await client.serverless.workers(created.id);
    expect(list.endpointVersion).toBe(1);
    expect(list.workers.map((w) => [w.status, w.version, w.isStale])).toEqual([["IDLE", 1, false]]);
    const unauthorized = await request(`${created.requestUrls?.base}/v1/models`);
    expect(unauthorized.statusCode).toBe(401);
    await unauthorized.body.dump();
  });
});

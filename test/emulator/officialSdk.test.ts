/**
 * The emulator as the official JS SDK (`runpod-sdk`) uses it: the SDK is pointed at the emulator by
 * its `baseUrl` and its own calls drive each behaviour. Where the SDK has no call for a route, plain
 * undici speaks to it. The emulator's clock is a ManualClock: tests step time, they never sleep.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import runpodSdk from "runpod-sdk";
import { request } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, KEY, untilStatus } from "./helpers";

let h: Harness | undefined;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A webhook receiver on 127.0.0.1 that answers 200 and keeps each body it was sent. */
async function receiver(): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      bodies.push(JSON.parse(text));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies };
}

/** The SDK's endpoint object for `id` on the running emulator. */
function sdkEndpoint(id: string) {
  const endpoint = runpodSdk(KEY, { baseUrl: `${(h as Harness).emu.serverlessUrl}/v2` }).endpoint(id);
  if (!endpoint) throw new Error(`runpod-sdk gave no endpoint object for ${id}`);
  return endpoint;
}

describe("/health as the official SDK reads it", () => {
  it("carries every worker count of the SDK's HealthCheck: busy and idle workers are both ready", async () => {
    h = await harness({ endpoints: ["pool:2"] });
    const endpoint = sdkEndpoint("pool");
    const job = await endpoint.run({ input: { sleepMs: 60_000 } });
    expect(job.status).toBe("IN_QUEUE");
    await h.clock.settle();
    const health = await endpoint.health();
    expect(health.workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 2,
      running: 1,
      throttled: 0,
      unhealthy: 0,
    });
    expect(health.jobs).toMatchObject({ inProgress: 1, inQueue: 0 });
  });

  it("counts a starting worker as initializing and a worker that cannot start as unhealthy", async () => {
    h = await harness({ endpoints: ["svc:2"] });
    await h.call("PATCH", "/v2/serverless/svc", { image: "acme/app:unpullable" });
    await h.clock.advance(3000);
    const endpoint = sdkEndpoint("svc");
    expect((await endpoint.health()).workers).toEqual({
      idle: 1,
      initializing: 1,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    await h.clock.advance(WORKER_START_MS);
    expect((await endpoint.health()).workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 1,
    });
  });
});

describe("job requests with the fields the official SDK sends", () => {
  it("accepts webhookV2 and delivers the finished job's status body to it", async () => {
    const hook = await receiver();
    h = await harness();
    const job = await sdkEndpoint("echo").run({ input: { output: "done" }, webhookV2: hook.url });
    expect(job.status).toBe("IN_QUEUE");
    const finished = await untilStatus(h, "echo", job.id, "COMPLETED");
    await vi.waitFor(() => expect(hook.bodies).toHaveLength(1), { timeout: 10_000 });
    expect(hook.bodies[0]).toEqual(finished.body);
  });

  it("delivers once when webhook and webhookV2 name the same URL", async () => {
    const hook = await receiver();
    h = await harness();
    const job = await sdkEndpoint("echo").run({ input: {}, webhook: hook.url, webhookV2: hook.url });
    await untilStatus(h, "echo", job.id, "COMPLETED");
    await vi.waitFor(() => expect(h?.emu.stats().webhooks).toHaveLength(1), { timeout: 10_000 });
    expect(h.emu.stats().webhooks).toEqual([
      { jobId: job.id, url: hook.url, attempt: 1, status: 200, ok: true },
    ]);
  });

  it("passes s3Config with objectPath through to the worker", async () => {
    h = await harness({
      handlers: async (job) => ({ objectPath: job.s3Config?.objectPath, bucket: job.s3Config?.bucketName }),
    });
    const job = await sdkEndpoint("echo").run({
      input: {},
      s3Config: {
        accessId: "id",
        accessSecret: "not-echoed",
        bucketName: "outputs",
        endpointUrl: "https://s3.example.com",
        objectPath: "runs/42",
      },
    });
    const finished = await untilStatus(h, "echo", job.id, "COMPLETED");
    expect(finished.body.output).toEqual({ objectPath: "runs/42", bucket: "outputs" });
    expect(JSON.stringify(finished.body)).not.toContain("not-echoed");
  });

  it("refuses a webhookV2 that is not an http(s) URL with a 400 naming the field", async () => {
    h = await harness();
    const answer = await h.call("POST", "/v2/echo/run", { input: {}, webhookV2: "ftp://example.com/hook" });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body)).toContain("webhookV2 must be an http(s) URL");
    const badPath = await h.call("POST", "/v2/echo/run", {
      input: {},
      s3Config: {
        accessId: "a",
        accessSecret: "b",
        bucketName: "c",
        endpointUrl: "https://s3.example.com",
        objectPath: 7,
      },
    });
    expect(badPath.status).toBe(400);
    expect(JSON.stringify(badPath.body)).toContain("objectPath must be a string");
  });
});

/** A plain HTTP call with the emulator's key; the body as text, with its content type. */
async function http(method: "GET" | "POST", url: string, body?: unknown) {
  const res = await request(url, {
    method,
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, type: String(res.headers["content-type"]), text: await res.body.text() };
}

/** The `data:` payloads of a server-sent event stream, JSON parsed except `[DONE]`. */
function events(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

/** The text a stream of chat chunks spells. */
const spelled = (chunks: unknown[]) =>
  chunks
    .map((c) => (c as { choices?: Array<{ delta?: { content?: string }; text?: string }> }).choices?.[0])
    .map((choice) => choice?.delta?.content ?? choice?.text ?? "")
    .join("");

describe("a load-balancer endpoint's OpenAI-compatible server", () => {
  const lbBody = {
    name: "lb",
    type: "LOAD_BALANCER",
    image: "acme/server:1",
    gpu: { pools: ["ADA_24"] },
    env: { MODEL_NAME: "m1" },
    scaling: { type: "REQUEST_COUNT", requestCount: 1 },
    workers: { min: 1, max: 1 },
  };

  it("streams a chat completion as server-sent events when the request says stream: true", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/serverless", lbBody);
    expect(created.status).toBe(201);
    const answer = await http("POST", `${created.body.requestUrls.base}/v1/chat/completions`, {
      messages: [{ role: "user", content: "hello there" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^text\/event-stream/);
    const sent = events(answer.text);
    expect(sent.at(-1)).toBe("[DONE]");
    const chunks = sent.slice(0, -1) as Array<Record<string, any>>;
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "m1")).toBe(true);
    expect(chunks[0]?.choices[0].delta.role).toBe("assistant");
    expect(spelled(chunks)).toBe("echo: hello there");
    expect(chunks.at(-2)?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "stop" });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
  });

  it("serves /v1/completions, whole and streamed, and 400 without a prompt", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/serverless", lbBody);
    const url = `${created.body.requestUrls.base}/v1/completions`;
    const whole = await http("POST", url, { prompt: "say hi" });
    expect(whole.status).toBe(200);
    expect(JSON.parse(whole.text)).toMatchObject({
      object: "text_completion",
      model: "m1",
      choices: [{ index: 0, text: "echo: say hi", finish_reason: "stop" }],
      usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 },
    });
    const streamed = await http("POST", url, { prompt: "say hi", stream: true });
    expect(streamed.type).toMatch(/^text\/event-stream/);
    const sent = events(streamed.text);
    expect(sent.at(-1)).toBe("[DONE]");
    expect(spelled(sent.slice(0, -1))).toBe("echo: say hi");
    const missing = await http("POST", url, { model: "m1" });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toEqual({ error: "prompt: required string or array of strings" });
  });
});

describe("a queue endpoint's OpenAI-compatible route /v2/{id}/openai/v1", () => {
  it("lists the model and answers a chat completion through a job on a worker", async () => {
    h = await harness({ endpoints: ["llm:1"] });
    const base = `${h.emu.serverlessUrl}/v2/llm/openai/v1`;
    const models = await http("GET", `${base}/models`);
    expect(models.status).toBe(200);
    expect(JSON.parse(models.text).data.map((m: { id: string }) => m.id)).toEqual(["emulator-model"]);
    const chat = await http("POST", `${base}/chat/completions`, {
      messages: [{ role: "user", content: "hi" }],
    });
    expect(chat.status).toBe(200);
    expect(JSON.parse(chat.text)).toMatchObject({
      object: "chat.completion",
      choices: [{ message: { role: "assistant", content: "echo: hi" }, finish_reason: "stop" }],
    });
    expect((await sdkEndpoint("llm").health()).jobs.completed).toBe(2);
  });

  it("streams chat and text completions as server-sent events with stream: true", async () => {
    h = await harness({ endpoints: ["llm"] });
    const base = `${h.emu.serverlessUrl}/v2/llm/openai/v1`;
    const chat = await http("POST", `${base}/chat/completions`, {
      messages: [{ role: "user", content: "one two three" }],
      stream: true,
    });
    expect(chat.status).toBe(200);
    expect(chat.type).toMatch(/^text\/event-stream/);
    const sent = events(chat.text);
    expect(sent.at(-1)).toBe("[DONE]");
    expect(spelled(sent.slice(0, -1))).toBe("echo: one two three");
    const text = await http("POST", `${base}/completions`, { prompt: ["a", "b"], stream: true });
    expect(spelled(events(text.text).slice(0, -1))).toBe("echo: a\nb");
  });

  it("answers a refused request 400 and a failed job 500 as OpenAI errors", async () => {
    h = await harness({
      endpoints: ["llm", "broken"],
      handlers: {
        broken: async () => {
          throw new Error("model crashed");
        },
      },
    });
    const refused = await http("POST", `${h.emu.serverlessUrl}/v2/llm/openai/v1/chat/completions`, {
      model: "x",
    });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual({
      error: { message: "messages: required array", type: "invalid_request_error" },
    });
    const failed = await http("POST", `${h.emu.serverlessUrl}/v2/broken/openai/v1/completions`, {
      prompt: "x",
    });
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.text).error).toMatchObject({
      message: expect.stringContaining("FAILED: model crashed"),
      type: "server_error",
    });
    const unknown = await http("GET", `${h.emu.serverlessUrl}/v2/nope/openai/v1/models`);
    expect(unknown.status).toBe(404);
  });
});

describe("a network volume's data centre", () => {
  it("must be one the catalog lists: v2 answers 422 and v1 400, naming the field and the ids allowed", async () => {
    h = await harness();
    const listed = (await h.call("GET", "/v2/catalog/datacenters")).body.dataCenters.map(
      (d: { id: string }) => d.id,
    );
    expect(listed).toContain("EU-RO-1");
    const v2 = await h.call("POST", "/v2/network-volumes", { name: "n", size: 10, dataCenter: "MARS-1" });
    expect(v2.status).toBe(422);
    expect(v2.body.errors).toEqual([
      `dataCenter: unknown data center MARS-1; GET /v2/catalog/datacenters lists ${listed.join(", ")}`,
    ]);
    const v1 = await h.call("POST", "/v1/networkvolumes", { name: "n", size: 10, dataCenterId: "MARS-1" });
    expect(v1.status).toBe(400);
    expect(v1.body.message).toMatch(/^dataCenterId: unknown data center MARS-1;/);
    const ok = await h.call("POST", "/v2/network-volumes", { name: "n", size: 10, dataCenter: listed[0] });
    expect(ok.status).toBe(201);
    expect((await h.call("GET", "/v2/network-volumes")).body.networkVolumes).toHaveLength(1);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIUserAbortError,
  type Job,
  JobWaitTimeoutError,
  NotFoundError,
  ResponseValidationError,
  type StreamChunk,
} from "../../src/client";
import { defaultSleep } from "../../src/client/transport";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { clientFor, job, recordingSleep } from "./helpers";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});
const ep = (options = {}) => clientFor(server, options).endpoint("ep-1");
const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);

describe("job operations", () => {
  it("run posts the body to /run and returns id and status", async () => {
    server.enqueue({ body: { id: "abc-u1", status: "IN_QUEUE" } });
    const result = await ep().run({
      input: { n: 1 },
      webhook: "https://hook.example/x",
      policy: { ttl: 20_000 },
    });
    expect(result).toEqual({ id: "abc-u1", status: "IN_QUEUE" });
    expect(sent()).toEqual(["POST /v2/ep-1/run"]);
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({
      input: { n: 1 },
      webhook: "https://hook.example/x",
      policy: { ttl: 20_000 },
    });
  });

  it("runSync passes wait and returns the finished job", async () => {
    server.enqueue({ body: job("COMPLETED", { output: { ok: true }, delayTime: 3, executionTime: 9 }) });
    const result = await ep().runSync({ input: {} }, { wait: 5000 });
    expect(result.output).toEqual({ ok: true });
    expect(result.executionTime).toBe(9);
    expect(sent()).toEqual(["POST /v2/ep-1/runsync?wait=5000"]);
  });

  it("runSync returns the non-terminal job when wait ends first", async () => {
    server.enqueue({ body: { id: "sync-1", status: "IN_PROGRESS" } });
    expect(await ep().runSync({ input: {} })).toEqual({ id: "sync-1", status: "IN_PROGRESS" });
    expect(sent()).toEqual(["POST /v2/ep-1/runsync"]);
  });

  it("status passes ttl and keeps unknown fields", async () => {
    server.enqueue({ body: job("FAILED", { error: "boom", workerId: "w1" }) });
    const result = await ep().status("job-1", { ttl: 60_000 });
    expect(result).toEqual({ id: "job-1", status: "FAILED", error: "boom", workerId: "w1" });
    expect(sent()).toEqual(["GET /v2/ep-1/status/job-1?ttl=60000"]);
  });

  it("statusSync long-polls /status-sync with wait", async () => {
    server.enqueue({ body: job("COMPLETED") });
    await ep().statusSync("job-1", { wait: 30_000 });
    expect(sent()).toEqual(["GET /v2/ep-1/status-sync/job-1?wait=30000"]);
  });

  it("health returns job and worker counts", async () => {
    const health = {
      jobs: { completed: 1, failed: 2, inProgress: 3, inQueue: 4, retried: 5 },
      workers: { idle: 6, running: 7 },
    };
    server.enqueue({ body: health });
    expect(await ep().health()).toEqual(health);
    expect(sent()).toEqual(["GET /v2/ep-1/health"]);
  });

  it("health rejects an answer without worker counts", async () => {
    server.enqueue({ body: { jobs: { completed: 1, failed: 2, inProgress: 3, inQueue: 4, retried: 5 } } });
    await expect(ep().health()).rejects.toBeInstanceOf(ResponseValidationError);
  });

  it("cancel, retry and purgeQueue post to their paths", async () => {
    server.enqueue(
      { body: job("CANCELLED") },
      { body: job("IN_QUEUE") },
      { body: { removed: 3, status: "completed" } },
    );
    expect((await ep().cancel("job-1")).status).toBe("CANCELLED");
    expect((await ep().retry("job-1")).status).toBe("IN_QUEUE");
    expect(await ep().purgeQueue()).toEqual({ removed: 3, status: "completed" });
    expect(sent()).toEqual([
      "POST /v2/ep-1/cancel/job-1",
      "POST /v2/ep-1/retry/job-1",
      "POST /v2/ep-1/purge-queue",
    ]);
  });
});

describe("stream", () => {
  const collect = async (iterable: AsyncIterable<StreamChunk>) => {
    const out: StreamChunk[] = [];
    for await (const chunk of iterable) out.push(chunk);
    return out;
  };

  it("yields chunks of the {status, stream} envelope until the job is terminal", async () => {
    server.enqueue(
      { body: { status: "IN_PROGRESS", stream: [{ output: "a" }, { output: "b", metrics: { n: 1 } }] } },
      { body: { status: "IN_PROGRESS", stream: [] } },
      { body: { status: "COMPLETED", stream: [{ output: "c" }] } },
    );
    const { sleeps, sleep } = recordingSleep();
    const chunks = await collect(ep({ sleep }).stream("job-1"));
    expect(chunks).toEqual([{ output: "a" }, { output: "b", metrics: { n: 1 } }, { output: "c" }]);
    expect(sent()).toEqual(Array(3).fill("GET /v2/ep-1/stream/job-1"));
    expect(sleeps).toEqual([50]);
  });

  it("accepts a bare array and asks /status when the job ended, then drains once more", async () => {
    server.enqueue(
      { body: [{ output: 1 }] },
      { body: [] },
      { body: job("IN_PROGRESS") },
      { body: [] },
      { body: job("COMPLETED") },
      { body: [{ output: 2 }] },
    );
    const { sleeps, sleep } = recordingSleep();
    const chunks = await collect(ep({ sleep }).stream("job-1"));
    expect(chunks).toEqual([{ output: 1 }, { output: 2 }]);
    expect(sent()).toEqual([
      "GET /v2/ep-1/stream/job-1",
      "GET /v2/ep-1/stream/job-1",
      "GET /v2/ep-1/status/job-1",
      "GET /v2/ep-1/stream/job-1",
      "GET /v2/ep-1/status/job-1",
      "GET /v2/ep-1/stream/job-1",
    ]);
    expect(sleeps).toEqual([50]);
  });

  it("stops when the consumer breaks out", async () => {
    server.enqueue({ body: { status: "IN_PROGRESS", stream: [{ output: 1 }, { output: 2 }] } });
    for await (const chunk of ep().stream("job-1")) {
      expect(chunk).toEqual({ output: 1 });
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it("rejects a chunk list that is not an array of chunks", async () => {
    server.enqueue({ body: { status: "IN_PROGRESS", stream: "nope" } });
    await expect(collect(ep().stream("job-1"))).rejects.toBeInstanceOf(ResponseValidationError);
  });
});

describe("waitForJob", () => {
  it("uses one long poll for a job that finishes within its wait", async () => {
    server.enqueue({ body: job("COMPLETED", { output: 42 }) });
    const seen: string[] = [];
    const result = await ep().waitForJob("job-1", { onStatus: (j) => seen.push(j.status) });
    expect(result.output).toBe(42);
    expect(sent()).toEqual(["GET /v2/ep-1/status-sync/job-1?wait=90000"]);
    expect(seen).toEqual(["COMPLETED"]);
  });

  it("keeps long-polling while the job runs and reports each status change once", async () => {
    // This server ignores `wait` and answers at once: the client then pauses between polls.
    server.enqueue(
      { body: job("IN_QUEUE") },
      { body: job("IN_PROGRESS") },
      { body: job("IN_PROGRESS") },
      {
        body: job("FAILED", { error: "bad" }),
      },
    );
    const seen: Job[] = [];
    const { sleeps, sleep } = recordingSleep();
    const result = await ep({ sleep }).waitForJob("job-1", { onStatus: (j) => seen.push(j) });
    expect(sleeps).toEqual([50, 100, 200]);
    expect(result).toEqual(job("FAILED", { error: "bad" }));
    expect(seen.map((j) => j.status)).toEqual(["IN_QUEUE", "IN_PROGRESS", "FAILED"]);
    expect(server.requests.every((r) => r.pathname === "/v2/ep-1/status-sync/job-1")).toBe(true);
  });

  it("falls back to /status polling with backoff when /status-sync is missing", async () => {
    server.enqueue(
      { status: 404, body: "Not Found" },
      { body: job("IN_QUEUE") },
      { body: job("IN_PROGRESS") },
      { body: job("IN_PROGRESS") },
      { body: job("COMPLETED") },
    );
    const { sleeps, sleep } = recordingSleep();
    const endpoint = ep({ sleep });
    const result = await endpoint.waitForJob("job-1");
    expect(result.status).toBe("COMPLETED");
    expect(sent()).toEqual([
      "GET /v2/ep-1/status-sync/job-1?wait=90000",
      "GET /v2/ep-1/status/job-1",
      "GET /v2/ep-1/status/job-1",
      "GET /v2/ep-1/status/job-1",
      "GET /v2/ep-1/status/job-1",
    ]);
    expect(sleeps).toEqual([50, 100, 200]);
    // The process remembers for this host: the next wait goes straight to /status.
    server.enqueue({ body: job("COMPLETED") });
    await ep().waitForJob("job-1");
    expect(sent().at(-1)).toBe("GET /v2/ep-1/status/job-1");
  });

  it("falls back on 405 as well", async () => {
    server.enqueue({ status: 405 }, { body: job("COMPLETED") });
    expect((await ep().waitForJob("job-1")).status).toBe("COMPLETED");
    expect(server.requests).toHaveLength(2);
  });

  it("throws NotFoundError for a job neither /status-sync nor /status knows", async () => {
    server.enqueue(
      { status: 404, body: { error: "job not found" } },
      { status: 404, body: { error: "job not found" } },
    );
    await expect(ep().waitForJob("job-1")).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(2);
  });

  it("throws JobWaitTimeoutError carrying the last status when timeoutMs passes", async () => {
    // A long-polling server: holds each /status-sync for its wait.
    server.fallback = (req) => ({ delayMs: Number(req.query.get("wait") ?? 0), body: job("IN_PROGRESS") });
    const e = (await ep({ sleep: defaultSleep })
      .waitForJob("job-1", { timeoutMs: 1500 })
      .catch((x: unknown) => x)) as JobWaitTimeoutError;
    expect(e).toBeInstanceOf(JobWaitTimeoutError);
    expect(e.code).toBe("job_wait_timeout");
    expect(e.lastStatus).toEqual(job("IN_PROGRESS"));
    expect(e.message).toContain("job-1");
    // One long poll that ends before the deadline, then a few /status polls in the time left.
    expect(server.requests[0]?.url).toMatch(/^\/v2\/ep-1\/status-sync\/job-1\?wait=/);
    const wait = Number(server.requests[0]?.query.get("wait"));
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThan(1500);
    expect(server.requests.length).toBeLessThanOrEqual(5);
  });

  it("stops with APIUserAbortError when the signal aborts", async () => {
    const controller = new AbortController();
    server.enqueue({ body: job("IN_QUEUE") }, () => {
      controller.abort();
      return { hang: true };
    });
    await expect(ep().waitForJob("job-1", { signal: controller.signal })).rejects.toBeInstanceOf(
      APIUserAbortError,
    );
    expect(server.requests).toHaveLength(2);
  });
});

describe("waitForJob deadline", () => {
  it("gives up at timeoutMs even while a retry pause is pending (503 with Retry-After: 30)", async () => {
    server.fallback = () => ({ status: 503, headers: { "retry-after": "30" }, body: { message: "busy" } });
    const e = await ep({ sleep: defaultSleep })
      .waitForJob("job-1", { timeoutMs: 300, maxRetries: 3 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobWaitTimeoutError);
    expect(server.requests).toHaveLength(1);
  });

  it("gives up at timeoutMs while a request hangs", async () => {
    server.fallback = () => ({ hang: true });
    const e = await ep()
      .waitForJob("job-1", { timeoutMs: 300 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobWaitTimeoutError);
    expect((e as JobWaitTimeoutError).message).toContain("keeps running on the service");
  });

  it("lets the caller's own signal win over the deadline", async () => {
    server.fallback = () => ({ hang: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const e = await ep()
      .waitForJob("job-1", { timeoutMs: 60_000, signal: controller.signal })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIUserAbortError);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { type Harness, harness, untilStatus } from "./helpers";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(-u\d+)?$/;
let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("job lifecycle", () => {
  it("run answers IN_QUEUE with a uuid id, then the built-in worker echoes the input", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { hello: "world" } });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ id: expect.stringMatching(UUID), status: "IN_QUEUE" });
    const done = await untilStatus(h, "echo", run.body.id, "COMPLETED");
    expect(done.body).toMatchObject({
      id: run.body.id,
      output: { hello: "world" },
      delayTime: 0,
      executionTime: 0,
    });
  });

  it("a job with sleepMs stays IN_PROGRESS until that much clock time passes", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 5000, output: 42 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    await h.clock.advance(4999);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).body.status).toBe("IN_PROGRESS");
    await h.clock.advance(1);
    const done = await untilStatus(h, "echo", run.body.id, "COMPLETED");
    expect(done.body).toMatchObject({ output: 42, executionTime: 5000 });
  });

  it("input.fail ends the job FAILED with that error and no output", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { fail: "model exploded" } });
    const failed = await untilStatus(h, "echo", run.body.id, "FAILED");
    expect(failed.body.error).toBe("model exploded");
    expect(failed.body).not.toHaveProperty("output");
  });

  it("queued jobs wait for a free worker and delayTime counts the wait", async () => {
    h = await harness({ endpoints: ["solo:1"] });
    const first = await h.call("POST", "/v2/solo/run", { input: { sleepMs: 1000 } });
    const second = await h.call("POST", "/v2/solo/run", { input: { sleepMs: 1000 } });
    await untilStatus(h, "solo", first.body.id, "IN_PROGRESS");
    expect((await h.call("GET", `/v2/solo/status/${second.body.id}`)).body.status).toBe("IN_QUEUE");
    await h.clock.advance(1000);
    await untilStatus(h, "solo", second.body.id, "IN_PROGRESS");
    await h.clock.advance(1000);
    const done = await untilStatus(h, "solo", second.body.id, "COMPLETED");
    expect(done.body.delayTime).toBe(1000);
  });

  it("runsync returns the finished job with a sync- id", async () => {
    h = await harness();
    const res = await h.call("POST", "/v2/echo/runsync", { input: { output: { ok: true } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^sync-/),
      status: "COMPLETED",
      output: { ok: true },
    });
    expect(res.body.id.slice(5)).toMatch(UUID);
  });

  it("runsync answers the non-terminal status when its wait ends first", async () => {
    h = await harness();
    const pending = h.call("POST", "/v2/echo/runsync?wait=1000", { input: { sleepMs: 60_000 } });
    await vi.waitFor(() => expect(h.emu.stats().submitted.echo).toBe(1), { timeout: 10_000 });
    await h.clock.advance(1000);
    const res = await pending;
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^sync-/), status: "IN_PROGRESS" });
    expect(res.body).not.toHaveProperty("output");
  });

  it("runsync rejects a wait outside 1000..300000 ms", async () => {
    h = await harness();
    const res = await h.call("POST", "/v2/echo/runsync?wait=999", { input: {} });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("wait must be at least 1000 ms");
    expect(h.emu.stats().submitted.echo).toBe(0);
  });

  it("status-sync long-polls until the job is terminal", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 3000 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    const polled = h.call("GET", `/v2/echo/status-sync/${run.body.id}?wait=10000`);
    await h.clock.settle(10);
    await h.clock.advance(3000);
    expect((await polled).body).toMatchObject({ status: "COMPLETED", executionTime: 3000 });
  });

  it("status-sync answers the current status when its wait ends first", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 60_000 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    const polled = h.call("GET", `/v2/echo/status-sync/${run.body.id}?wait=1000`);
    await h.clock.settle(10);
    await h.clock.advance(1000);
    expect((await polled).body.status).toBe("IN_PROGRESS");
  });

  it("unknown job ids get 404 with a message", async () => {
    h = await harness();
    const res = await h.call("GET", "/v2/echo/status/nope");
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/job nope not found/);
  });

  it("a job of one endpoint is not visible through another", async () => {
    h = await harness({ endpoints: ["a", "b"] });
    const run = await h.call("POST", "/v2/a/run", { input: {} });
    expect((await h.call("GET", `/v2/b/status/${run.body.id}`)).status).toBe(404);
  });
});

describe("stream", () => {
  it("wraps chunks with the status and drains what was buffered on each call", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { stream: ["a", "b", "c"], sleepMs: 100 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    await h.clock.advance(100);
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    const first = await h.call("GET", `/v2/echo/stream/${run.body.id}`);
    expect(first.body).toEqual({
      status: "COMPLETED",
      stream: [{ output: "a" }, { output: "b" }, { output: "c" }],
    });
    const second = await h.call("GET", `/v2/echo/stream/${run.body.id}`);
    expect(second.body).toEqual({ status: "COMPLETED", stream: [] });
    const status = await h.call("GET", `/v2/echo/status/${run.body.id}`);
    expect(status.body.output).toEqual(["a", "b", "c"]);
  });

  it("waits for the first chunk instead of answering an empty page", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 500, stream: [1] } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    const page = h.call("GET", `/v2/echo/stream/${run.body.id}`);
    await h.clock.settle(10);
    await h.clock.advance(500);
    expect((await page).body.stream).toEqual([{ output: 1 }]);
  });

  it("splits a string over 1 MB into chunks of at most 1 MB that join back to it", async () => {
    h = await harness();
    const big = "x".repeat(2_500_000);
    const run = await h.call("POST", "/v2/echo/run", { input: { stream: [big], output: "done" } });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    const res = await h.call("GET", `/v2/echo/stream/${run.body.id}`);
    const chunks = res.body.stream as { output: string }[];
    expect(chunks.length).toBe(3);
    for (const c of chunks) expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(1_000_000);
    expect(chunks.map((c) => c.output).join("")).toBe(big);
  });

  it("fails the job when a stream item over 1 MB is neither a string nor an array", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", {
      input: { stream: [{ blob: "y".repeat(1_100_000) }] },
    });
    const failed = await untilStatus(h, "echo", run.body.id, "FAILED");
    expect(failed.body.error).toMatch(/stream chunk is at most 1000000 bytes/);
  });
});

describe("cancel, retry, purge", () => {
  it("cancels a queued job, which never runs", async () => {
    h = await harness({ endpoints: ["solo:1"] });
    await h.call("POST", "/v2/solo/run", { input: { sleepMs: 1000 } });
    const queued = await h.call("POST", "/v2/solo/run", { input: {} });
    const res = await h.call("POST", `/v2/solo/cancel/${queued.body.id}`);
    expect(res.body).toEqual({ id: queued.body.id, status: "CANCELLED" });
    await h.clock.advance(1000);
    expect((await h.call("GET", `/v2/solo/status/${queued.body.id}`)).body.status).toBe("CANCELLED");
  });

  it("cancels a running job and aborts its handler; the worker is free again", async () => {
    h = await harness({ endpoints: ["solo:1"] });
    const run = await h.call("POST", "/v2/solo/run", { input: { sleepMs: 60_000 } });
    await untilStatus(h, "solo", run.body.id, "IN_PROGRESS");
    expect((await h.call("POST", `/v2/solo/cancel/${run.body.id}`)).body.status).toBe("CANCELLED");
    expect((await h.call("GET", "/v2/solo/health")).body.workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    const next = await h.call("POST", "/v2/solo/run", { input: {} });
    await untilStatus(h, "solo", next.body.id, "COMPLETED");
  });

  it("cancelling a finished job answers 200 with its unchanged status", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    const res = await h.call("POST", `/v2/echo/cancel/${run.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: run.body.id, status: "COMPLETED" });
  });

  it("retries a FAILED job with the same id and input, previous error removed", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { fail: "boom", sleepMs: 10 } });
    await h.clock.advance(10);
    await untilStatus(h, "echo", run.body.id, "FAILED");
    const retried = await h.call("POST", `/v2/echo/retry/${run.body.id}`);
    expect(retried.body).toEqual({ id: run.body.id, status: "IN_QUEUE" });
    const status = await h.call("GET", `/v2/echo/status/${run.body.id}`);
    expect(status.body).not.toHaveProperty("error");
    await h.clock.advance(10);
    expect((await untilStatus(h, "echo", run.body.id, "FAILED")).body.error).toBe("boom");
    expect((await h.call("GET", "/v2/echo/health")).body.jobs).toMatchObject({ retried: 1, failed: 2 });
  });

  it("refuses to retry a COMPLETED job with 400", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    const res = await h.call("POST", `/v2/echo/retry/${run.body.id}`);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/only FAILED or TIMED_OUT/);
  });

  it("cannot retry once the results expired (404)", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { fail: "x" } });
    await untilStatus(h, "echo", run.body.id, "FAILED");
    await h.clock.advance(30 * 60 * 1000);
    expect((await h.call("POST", `/v2/echo/retry/${run.body.id}`)).status).toBe(404);
  });

  it("purge-queue removes queued jobs only; running ones keep running; purged ids are 404", async () => {
    h = await harness({ endpoints: ["solo:1"] });
    const running = await h.call("POST", "/v2/solo/run", { input: { sleepMs: 100 } });
    const q1 = await h.call("POST", "/v2/solo/run", { input: {} });
    await h.call("POST", "/v2/solo/run", { input: {} });
    await untilStatus(h, "solo", running.body.id, "IN_PROGRESS");
    const res = await h.call("POST", "/v2/solo/purge-queue");
    expect(res.body).toEqual({ removed: 2, status: "completed" });
    expect((await h.call("GET", `/v2/solo/status/${q1.body.id}`)).status).toBe(404);
    await h.clock.advance(100);
    await untilStatus(h, "solo", running.body.id, "COMPLETED");
  });
});

describe("health", () => {
  it("counts jobs by state and workers busy or idle", async () => {
    h = await harness({ endpoints: ["pool:2"] });
    await h.call("POST", "/v2/pool/run", { input: { sleepMs: 100 } });
    await h.call("POST", "/v2/pool/run", { input: { sleepMs: 100 } });
    await h.call("POST", "/v2/pool/run", { input: { sleepMs: 100 } });
    await h.clock.settle();
    expect((await h.call("GET", "/v2/pool/health")).body).toEqual({
      jobs: { completed: 0, failed: 0, inProgress: 2, inQueue: 1, retried: 0 },
      workers: { idle: 0, initializing: 0, ready: 2, running: 2, throttled: 0, unhealthy: 0 },
    });
    await h.clock.advance(200);
    expect((await h.call("GET", "/v2/pool/health")).body).toEqual({
      jobs: { completed: 3, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
      workers: { idle: 2, initializing: 0, ready: 2, running: 0, throttled: 0, unhealthy: 0 },
    });
  });
});

describe("timers", () => {
  it("executionTimeout ends a running job TIMED_OUT and aborts the handler", async () => {
    const aborted: string[] = [];
    h = await harness({
      handlers: (_job, { signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => {
            aborted.push(String((signal.reason as Error).message));
            reject(signal.reason);
          }),
        ),
    });
    const run = await h.call("POST", "/v2/echo/run", { input: {}, policy: { executionTimeout: 6000 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    await h.clock.advance(5999);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).body.status).toBe("IN_PROGRESS");
    expect(aborted).toEqual([]);
    await h.clock.advance(1);
    const out = await untilStatus(h, "echo", run.body.id, "TIMED_OUT");
    expect(out.body.error).toMatch(/executionTimeout of 6000 ms/);
    expect(aborted).toEqual(["execution timeout of 6000 ms reached"]);
  });

  it("the default executionTimeout is 600000 ms", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 10_000_000 } });
    await untilStatus(h, "echo", run.body.id, "IN_PROGRESS");
    await h.clock.advance(599_999);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).body.status).toBe("IN_PROGRESS");
    await h.clock.advance(1);
    await untilStatus(h, "echo", run.body.id, "TIMED_OUT");
  });

  it("ttl ends a job still queued TIMED_OUT; a running job is not affected by it", async () => {
    h = await harness({ endpoints: ["solo:1"] });
    const running = await h.call("POST", "/v2/solo/run", {
      input: { sleepMs: 20_000 },
      policy: { ttl: 10_000 },
    });
    const queued = await h.call("POST", "/v2/solo/run", { input: {}, policy: { ttl: 10_000 } });
    await untilStatus(h, "solo", running.body.id, "IN_PROGRESS");
    await h.clock.advance(10_000);
    const timedOut = await untilStatus(h, "solo", queued.body.id, "TIMED_OUT");
    expect(timedOut.body.error).toMatch(/ttl of 10000 ms/);
    expect((await h.call("GET", `/v2/solo/status/${running.body.id}`)).body.status).toBe("IN_PROGRESS");
    await h.clock.advance(10_000);
    await untilStatus(h, "solo", running.body.id, "COMPLETED");
  });

  it("keeps /run results 30 minutes after completion, then 404", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    await h.clock.advance(30 * 60 * 1000 - 1);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).status).toBe(200);
    await h.clock.advance(1);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).status).toBe(404);
  });

  it("keeps /runsync results 60 seconds after completion", async () => {
    h = await harness();
    const res = await h.call("POST", "/v2/echo/runsync", { input: {} });
    await h.clock.advance(59_999);
    expect((await h.call("GET", `/v2/echo/status/${res.body.id}`)).status).toBe(200);
    await h.clock.advance(1);
    expect((await h.call("GET", `/v2/echo/status/${res.body.id}`)).status).toBe(404);
  });

  it("status with ttl removes the result sooner", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}?ttl=5000`)).status).toBe(200);
    await h.clock.advance(5000);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).status).toBe(404);
  });

  it("retention periods are configurable", async () => {
    h = await harness({ retention: { runMs: 1000 } });
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    await untilStatus(h, "echo", run.body.id, "COMPLETED");
    await h.clock.advance(1000);
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).status).toBe(404);
  });
});

describe("cold start and low priority", () => {
  it("a normal job warms a cold worker; a lowPriority job alone does not", async () => {
    h = await harness({ endpoints: [{ id: "cold", workersMax: 1, coldStartMs: 2000 }] });
    const low = await h.call("POST", "/v2/cold/run", { input: {}, policy: { lowPriority: true } });
    await h.clock.advance(5000);
    expect((await h.call("GET", `/v2/cold/status/${low.body.id}`)).body.status).toBe("IN_QUEUE");
    expect((await h.call("GET", "/v2/cold/health")).body.workers).toEqual({
      idle: 0,
      initializing: 0,
      ready: 0,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    const normal = await h.call("POST", "/v2/cold/run", { input: { sleepMs: 100 } });
    await h.clock.settle();
    expect((await h.call("GET", "/v2/cold/health")).body.workers).toMatchObject({ initializing: 1 });
    await h.clock.advance(2000);
    // The warm worker takes the normal job first, then the low-priority one.
    await untilStatus(h, "cold", normal.body.id, "IN_PROGRESS");
    expect((await h.call("GET", `/v2/cold/status/${low.body.id}`)).body.status).toBe("IN_QUEUE");
    await h.clock.advance(100);
    await untilStatus(h, "cold", low.body.id, "COMPLETED");
  });
});

describe("request validation", () => {
  it("names the offending field of a bad body", async () => {
    h = await harness();
    const cases: [unknown, string][] = [
      [{}, "input is required: a JSON object"],
      [{ input: [] }, "input must be a JSON object"],
      [
        { input: {}, policy: { executionTimeout: 5000 } },
        "policy.executionTimeout must be greater than 5000 ms",
      ],
      [{ input: {}, policy: { ttl: 604_800_001 } }, "policy.ttl must be at most 604800000 ms (1 week)"],
      [{ input: {}, webhook: "ftp://x" }, "webhook must be an http(s) URL"],
      [{ input: {}, extra: 1 }, "unknown field extra: not allowed here"],
    ];
    for (const [body, message] of cases) {
      const res = await h.call("POST", "/v2/echo/run", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toBe(message);
    }
    expect(h.emu.stats().submitted.echo).toBe(0);
  });

  it("answers 400 to malformed JSON", async () => {
    h = await harness();
    const res = await h.call("POST", "/v2/echo/run", "{nope");
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^body: not valid JSON/);
  });

  it("rejects a non-positive status ttl", async () => {
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    const res = await h.call("GET", `/v2/echo/status/${run.body.id}?ttl=0`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("ttl must be positive");
  });
});

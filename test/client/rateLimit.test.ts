import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIUserAbortError,
  type LimiterClock,
  RateLimiter,
  type RateLimitTable,
  RunpodClient,
  SERVICE_RATE_LIMITS,
  sharedLimiter,
} from "../../src/client";
import {
  type RecordedRequest,
  type Reply,
  type ScriptedServer,
  startScriptedServer,
} from "../support/scriptedServer";
import { API_KEY, job } from "./helpers";

/** A clock tests advance by hand. */
function manualClock(): LimiterClock & { advance(ms: number): void; timers: number } {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      timers.set(++nextId, { at: now + ms, fn });
      return nextId;
    },
    clearTimeout: (id) => {
      timers.delete(id as number);
    },
    advance(ms) {
      now += ms;
      for (const [id, t] of [...timers].sort((a, b) => a[1].at - b[1].at)) {
        if (t.at <= now && timers.has(id)) {
          timers.delete(id);
          t.fn();
        }
      }
    },
    get timers() {
      return timers.size;
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock whose time stands still except at its timers: the earliest due one fires on the next turn
 * of the event loop, and time jumps to when it was due. A limiter's wait then costs no real time,
 * while everything read off this clock (the limiter's window and the server's) sees the wait whole.
 * Requests under way when time jumps finish at the later time, which only makes the limiter count
 * them longer.
 */
function jumpingClock(): LimiterClock {
  let now = 0;
  let nextId = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  let draining = false;
  const drain = () => {
    draining = false;
    const [id, timer] = [...timers].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0] ?? [];
    if (id === undefined || !timer) return;
    timers.delete(id);
    now = Math.max(now, timer.at);
    timer.fn();
    if (timers.size > 0 && !draining) {
      draining = true;
      setImmediate(drain);
    }
  };
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      timers.set(++nextId, { at: now + ms, fn });
      if (!draining) {
        draining = true;
        setImmediate(drain);
      }
      return nextId;
    },
    clearTimeout: (id) => {
      timers.delete(id as number);
    },
  };
}

describe("RateLimiter", () => {
  it("lets `requests` through per window, then queues until the oldest answer is a window old", async () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ requests: 2, windowMs: 1000 }, clock);
    const order: string[] = [];
    const a = await limiter.acquire();
    const b = await limiter.acquire();
    const c = limiter.acquire().then((release) => {
      order.push("c");
      return release;
    });
    await settled();
    expect(order).toEqual([]);
    clock.advance(100);
    a();
    b();
    clock.advance(999);
    await settled();
    expect(order).toEqual([]);
    clock.advance(2);
    await settled();
    expect(order).toEqual(["c"]);
    (await c)();
    expect(limiter.waiting).toBe(0);
  });

  it("caps requests in flight and serves waiters first-in, first-out", async () => {
    const limiter = new RateLimiter({ requests: 100, windowMs: 1000, concurrent: 1 }, manualClock());
    const order: number[] = [];
    const first = await limiter.acquire();
    const waiters = [1, 2, 3].map((n) =>
      limiter.acquire().then((release) => {
        order.push(n);
        release();
      }),
    );
    await settled();
    expect(order).toEqual([]);
    expect(limiter.waiting).toBe(3);
    first();
    await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
    expect(limiter.active).toBe(0);
  });

  it("rejects a waiter whose signal aborts, and leaves the queue and timers clean", async () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ requests: 1, windowMs: 1000 }, clock);
    (await limiter.acquire())();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    await settled();
    expect(clock.timers).toBe(1);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(APIUserAbortError);
    expect(limiter.waiting).toBe(0);
    expect(clock.timers).toBe(0);
  });

  it("does not count a released slot twice", async () => {
    const limiter = new RateLimiter({ requests: 5, windowMs: 1000, concurrent: 1 }, manualClock());
    const release = await limiter.acquire();
    release();
    release();
    expect(limiter.active).toBe(0);
  });
});

/** A server that answers 429 like the service when a row's window or in-flight cap is exceeded. */
function enforcing(
  limit: { requests: number; windowMs: number; concurrent?: number },
  holdMs = () => 0,
  clock: { now(): number } = performance,
) {
  const arrivals: number[] = [];
  let inFlight = 0;
  const stats = { ok: 0, rejected: 0, maxInFlight: 0, maxInWindow: 0 };
  const handler = async (req: RecordedRequest): Promise<Reply> => {
    const now = clock.now();
    while (arrivals.length > 0 && (arrivals[0] as number) <= now - limit.windowMs) arrivals.shift();
    if (
      arrivals.length >= limit.requests ||
      (limit.concurrent !== undefined && inFlight >= limit.concurrent)
    ) {
      stats.rejected++;
      return { status: 429, body: { error: "rate limited" } };
    }
    arrivals.push(now);
    stats.maxInWindow = Math.max(stats.maxInWindow, arrivals.length);
    inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
    const hold = holdMs();
    if (hold > 0) await new Promise((r) => setTimeout(r, hold));
    inFlight--;
    stats.ok++;
    return { body: job("IN_QUEUE", { id: `j-${req.url.length}-${stats.ok}` }) };
  };
  return { handler, stats };
}

describe("client-side limits against a server enforcing them", () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
  });
  const client = (rateLimits: false | RateLimitTable) =>
    new RunpodClient({
      apiKey: API_KEY,
      serverlessUrl: server.url,
      maxRetries: 0,
      rateLimits,
      env: {},
    });

  it("spreads a burst of 150 run calls so none gets a 429 (100 per 1 s, 20 in flight)", async () => {
    const rule = { requests: 100, windowMs: 1000, concurrent: 20 };
    // One clock for the limiter and the server, jumping over the limiter's waits (see jumpingClock).
    const clock = jumpingClock();
    const { handler, stats } = enforcing(rule, () => Math.random() * 10, clock);
    server.fallback = handler;
    const runpod = client({ run: rule });
    sharedLimiter(runpod.serverlessUrl, "burst", "run", rule, clock);
    const ep = runpod.endpoint("burst");
    const results = await Promise.allSettled(Array.from({ length: 150 }, (_, i) => ep.run({ input: { i } })));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(stats).toMatchObject({ ok: 150, rejected: 0 });
    expect(stats.maxInFlight).toBeLessThanOrEqual(20);
  });

  it("the same burst without client limits does get 429s (the check above can fail)", async () => {
    const rule = { requests: 100, windowMs: 1000, concurrent: 20 };
    const { handler, stats } = enforcing(rule, () => 5);
    server.fallback = handler;
    const ep = client(false).endpoint("burst");
    await Promise.allSettled(Array.from({ length: 150 }, (_, i) => ep.run({ input: { i } })));
    expect(stats.rejected).toBeGreaterThan(0);
  });

  it("spreads 1,500 run calls under the service's own table so none gets a 429 (1000 per 10 s)", async () => {
    // The limiter and the server count on one clock that jumps over the limiter's waits: the 10 s
    // window passes in no real time, and both see it pass.
    const clock = jumpingClock();
    const { handler, stats } = enforcing(SERVICE_RATE_LIMITS.run, () => 0, clock);
    server.fallback = handler;
    const runpod = client(SERVICE_RATE_LIMITS);
    // The endpoint takes the process-wide limiter of its (URL, endpoint, row, rule): made here first, on the clock.
    const limiter = sharedLimiter(runpod.serverlessUrl, "burst-real", "run", SERVICE_RATE_LIMITS.run, clock);
    const ep = runpod.endpoint("burst-real");
    const results = await Promise.allSettled(
      Array.from({ length: 1500 }, (_, i) => ep.run({ input: { i } })),
    );
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(stats).toMatchObject({ ok: 1500, rejected: 0 });
    expect(stats.maxInWindow).toBeLessThanOrEqual(1000);
    // The last 500 waited a whole window on the clock: the limiter held them, not luck.
    expect(clock.now()).toBeGreaterThanOrEqual(SERVICE_RATE_LIMITS.run.windowMs);
    expect(limiter.active).toBe(0);
  });

  it("shares one budget between clients in the process, and queued calls can be aborted", async () => {
    server.fallback = () => ({ body: job("IN_QUEUE") });
    const table = { run: { requests: 3, windowMs: 60_000 } };
    const a = client(table).endpoint("shared");
    const b = client(table).endpoint("shared");
    await Promise.all([a.run({ input: {} }), a.run({ input: {} }), b.run({ input: {} })]);
    const controller = new AbortController();
    const queued = b.run({ input: {} }, { signal: controller.signal });
    // The one limiter both clients share holds the fourth call.
    const limiter = sharedLimiter(client(table).serverlessUrl, "shared", "run", table.run);
    await settled();
    expect(limiter.waiting).toBe(1);
    expect(server.requests).toHaveLength(3);
    controller.abort();
    await expect(queued).rejects.toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(3);
  });

  it("counts status, status-sync and stream against one row, and leaves health unlimited", async () => {
    server.fallback = (req) =>
      req.pathname.endsWith("/health")
        ? {
            body: {
              jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
              workers: { idle: 1, running: 0 },
            },
          }
        : req.pathname.includes("/stream/")
          ? { body: { status: "COMPLETED", stream: [] } }
          : { body: job("COMPLETED") };
    const ep = client({ status: { requests: 2, windowMs: 60_000 } }).endpoint("rows");
    await ep.status("j");
    await ep.statusSync("j", { wait: 1000 });
    const controller = new AbortController();
    const iterator = ep.stream("j", { signal: controller.signal })[Symbol.asyncIterator]();
    const pending = iterator.next();
    for (let i = 0; i < 5; i++) await ep.health();
    expect(server.requests.map((r) => r.pathname.split("/")[3])).toEqual([
      "status",
      "status-sync",
      ...Array(5).fill("health"),
    ]);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
  });
});

describe("process lifetime", () => {
  it("keeps the process alive while calls wait for a slot", async () => {
    const { execFile } = await import("node:child_process");
    const path = await import("node:path");
    // The server is unref'd and closes each connection, so only the limiter's wake-up timer can
    // keep this process running between the two calls.
    const script = `
      const http = require("node:http");
      const { RunpodClient } = require(${JSON.stringify(path.resolve(__dirname, "../../dist/client"))});
      const server = http.createServer((req, res) => {
        req.resume();
        req.on("end", () => { res.setHeader("content-type", "application/json"); res.setHeader("connection", "close"); res.end('{"id":"j","status":"IN_QUEUE"}'); });
      });
      server.listen(0, "127.0.0.1", async () => {
        server.unref();
        const ep = new RunpodClient({ apiKey: "k", serverlessUrl: "http://127.0.0.1:" + server.address().port,
          rateLimits: { run: { requests: 1, windowMs: 300 } }, env: {} }).endpoint("e");
        await Promise.all([ep.run({ input: {} }), ep.run({ input: {} })]);
        console.log("both done");
        process.exit(0);
      });`;
    const output = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["-e", script], { timeout: 20_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(output.trim()).toBe("both done");
  });
});

describe("shared limiter registry", () => {
  it("drops idle limiters once many endpoints were used, and keeps busy ones", async () => {
    const rule = { requests: 5, windowMs: 1 };
    const busy = sharedLimiter("http://sweep.test", "busy", "run", { requests: 5, windowMs: 60_000 });
    const release = await busy.acquire();
    const clock = manualClock();
    const first = sharedLimiter("http://sweep.test", "ep-0", "run", rule, clock);
    (await first.acquire())();
    clock.advance(2); // ep-0's 1 ms window passes: it is idle
    for (let i = 1; i <= 300; i++) sharedLimiter("http://sweep.test", `ep-${i}`, "run", rule);
    expect(sharedLimiter("http://sweep.test", "ep-0", "run", rule)).not.toBe(first);
    expect(sharedLimiter("http://sweep.test", "busy", "run", { requests: 5, windowMs: 60_000 })).toBe(busy);
    release();
  });
});

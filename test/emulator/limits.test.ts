import { request } from "undici";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startEmulator } from "../../src/emulator/index";
import { type Harness, harness, KEY } from "./helpers";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("auth", () => {
  it("answers 401 to a missing or wrong key on both interfaces, never echoing the key", async () => {
    h = await harness();
    for (const path of ["/v2/echo/health", "/v1/networkvolumes", "/v2/registries"]) {
      const missing = await h.call("GET", path, undefined, { authorization: "" });
      expect(missing.status, path).toBe(401);
      const wrong = await h.call("GET", path, undefined, { authorization: "Bearer wrong-key-123" });
      expect(wrong.status, path).toBe(401);
      expect(JSON.stringify(wrong.body)).not.toContain("wrong-key-123");
    }
  });

  it("accepts the bare key on the job interface only", async () => {
    h = await harness();
    expect((await h.call("GET", "/v2/echo/health", undefined, { authorization: KEY })).status).toBe(200);
    expect((await h.call("GET", "/v1/networkvolumes", undefined, { authorization: KEY })).status).toBe(401);
  });

  it("accepts every configured key", async () => {
    h = await harness({ apiKeys: ["one", "two"] });
    expect((await h.call("GET", "/v2/echo/health", undefined, { authorization: "Bearer two" })).status).toBe(
      200,
    );
  });

  it("makes a random key when none is given", async () => {
    const emu = await startEmulator({ rateLimits: false });
    try {
      expect(emu.apiKey).toMatch(/^emu_[A-Za-z0-9_-]{24}$/);
      const res = await request(`${emu.serverlessUrl}/v2/echo/health`, {
        headers: { authorization: `Bearer ${emu.apiKey}` },
      });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    } finally {
      await emu.close();
    }
  });

  it("answers 404 to an unknown endpoint after checking the key", async () => {
    h = await harness();
    expect((await h.call("POST", "/v2/nope/run", { input: {} })).body).toEqual({
      message: "endpoint nope not found",
    });
    expect((await h.call("POST", "/v2/nope/run", { input: {} }, { authorization: "Bearer x" })).status).toBe(
      401,
    );
  });
});

describe("rate limits", () => {
  it("enforces the service table by default: purge-queue 2 per 10 s, then 429 with Retry-After", async () => {
    h = await harness({ rateLimits: true });
    expect((await h.call("POST", "/v2/echo/purge-queue")).status).toBe(200);
    await h.clock.advance(4000);
    expect((await h.call("POST", "/v2/echo/purge-queue")).status).toBe(200);
    const limited = await h.call("POST", "/v2/echo/purge-queue");
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("6");
    expect(limited.body.message).toMatch(/rate limit of purge-queue exceeded/);
    await h.clock.advance(6000);
    expect((await h.call("POST", "/v2/echo/purge-queue")).status).toBe(200);
  });

  it("counts per endpoint", async () => {
    h = await harness({ rateLimits: true, endpoints: ["a", "b"] });
    await h.call("POST", "/v2/a/purge-queue");
    await h.call("POST", "/v2/a/purge-queue");
    expect((await h.call("POST", "/v2/a/purge-queue")).status).toBe(429);
    expect((await h.call("POST", "/v2/b/purge-queue")).status).toBe(200);
  });

  it("status, status-sync and stream share one row", async () => {
    h = await harness({ rateLimits: { status: { requests: 3, windowMs: 10_000 } } });
    const run = await h.call("POST", "/v2/echo/run", { input: {} });
    const id = run.body.id;
    expect((await h.call("GET", `/v2/echo/status/${id}`)).status).toBe(200);
    expect((await h.call("GET", `/v2/echo/stream/${id}?wait=0`)).status).toBe(200);
    expect((await h.call("GET", `/v2/echo/status-sync/${id}`)).status).toBe(200);
    for (const path of ["status", "stream", "status-sync"]) {
      expect((await h.call("GET", `/v2/echo/${path}/${id}`)).status, path).toBe(429);
    }
    expect((await h.call("POST", "/v2/echo/run", { input: {} })).status).toBe(200);
  });

  it("caps requests in flight", async () => {
    h = await harness({ rateLimits: { status: { requests: 100, windowMs: 10_000, concurrent: 1 } } });
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 5000 } });
    const polling = h.call("GET", `/v2/echo/status-sync/${run.body.id}?wait=5000`);
    await vi.waitFor(() => expect(h.emu.stats().requests).toBe(2), { timeout: 10_000 });
    const second = await h.call("GET", `/v2/echo/status/${run.body.id}`);
    expect(second.status).toBe(429);
    expect(second.body.message).toMatch(/more than 1 requests in flight/);
    await h.clock.advance(5000);
    expect((await polling).body.status).toBe("COMPLETED");
    expect((await h.call("GET", `/v2/echo/status/${run.body.id}`)).status).toBe(200);
  });

  it("frees the in-flight slot of a request whose client left during injected latency, once", async () => {
    h = await harness({
      rateLimits: { status: { requests: 1000, windowMs: 10_000, concurrent: 2 } },
      faults: { latency: { min: 1000, max: 1000 } },
    });
    const run = await h.call("POST", "/v2/echo/run", { input: { sleepMs: 5000 } });
    const before = h.emu.stats().requests;
    const aborts = [new AbortController(), new AbortController()];
    const abandoned = aborts.map((ac) =>
      request(`${h.emu.serverlessUrl}/v2/echo/status/${run.body.id}`, {
        headers: { authorization: `Bearer ${KEY}` },
        signal: ac.signal,
      }).catch((err: Error) => err.name),
    );
    // Both requests have reached the server and wait out their latency: hang up now.
    await vi.waitFor(() => expect(h.emu.stats().requests).toBe(before + 2), { timeout: 10_000 });
    for (const ac of aborts) ac.abort();
    expect(await Promise.all(abandoned)).toEqual(["AbortError", "AbortError"]);
    // Asked after them, so admitted after their latency ended: both slots must be free.
    const status = (path: string, query = "") => h.call("GET", `/v2/echo/${path}/${run.body.id}${query}`);
    const later = await status("status");
    expect(later.status, JSON.stringify(later.body)).toBe(200);
    // Released once only: two requests held in flight still fill the cap of 2.
    const held = [status("status-sync", "?wait=5000"), status("status-sync", "?wait=5000")];
    await vi.waitFor(() => expect(h.emu.stats().requests).toBe(before + 5), { timeout: 10_000 });
    // Sent after them with the same latency, so admitted after them.
    const third = await status("status");
    expect(third.status).toBe(429);
    expect(third.body.message).toMatch(/more than 2 requests in flight/);
    await h.clock.advance(5000);
    for (const answer of await Promise.all(held)) expect(answer.body.status).toBe("COMPLETED");
  }, 20_000);

  it("leaves health and retry unlimited and turns off with rateLimits: false", async () => {
    h = await harness({ rateLimits: { "purge-queue": { requests: 1, windowMs: 10_000 } } });
    for (let i = 0; i < 5; i++) expect((await h.call("GET", "/v2/echo/health")).status).toBe(200);
    await h.close();
    h = await harness({ rateLimits: false });
    for (let i = 0; i < 4; i++) expect((await h.call("POST", "/v2/echo/purge-queue")).status).toBe(200);
  });

  it("limits health and retry when a table given to it has rows of those names", async () => {
    h = await harness({
      rateLimits: { health: { requests: 2, windowMs: 10_000 }, retry: { requests: 1, windowMs: 10_000 } },
    });
    expect((await h.call("GET", "/v2/echo/health")).status).toBe(200);
    expect((await h.call("GET", "/v2/echo/health")).status).toBe(200);
    const third = await h.call("GET", "/v2/echo/health");
    expect(third.status).toBe(429);
    expect(third.headers["retry-after"]).toBe("10");
    expect(third.body.message).toMatch(/rate limit of health exceeded \(more than 2 requests in 10 s\)/);
    expect((await h.call("POST", "/v2/echo/retry/no-such-job")).status).toBe(404);
    const retry = await h.call("POST", "/v2/echo/retry/no-such-job");
    expect(retry.status).toBe(429);
    expect(retry.body.message).toMatch(/rate limit of retry exceeded/);
    await h.clock.advance(10_000);
    expect((await h.call("GET", "/v2/echo/health")).status).toBe(200);
  });

  it("never limits health with the service's default table", async () => {
    h = await harness({ rateLimits: true });
    for (let i = 0; i < 30; i++) expect((await h.call("GET", "/v2/echo/health")).status).toBe(200);
  });

  it("limits management only with a management row, with RateLimit headers on v2", async () => {
    h = await harness({ rateLimits: { management: { requests: 2, windowMs: 60_000 } } });
    const ok = await h.call("GET", "/v2/registries");
    expect(ok.headers.ratelimit).toBe('"minute";r=1;t=60');
    expect(ok.headers["ratelimit-policy"]).toBe('"minute";q=2;w=60');
    await h.call("GET", "/v1/networkvolumes");
    const limited = await h.call("GET", "/v2/network-volumes");
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("60");
    expect(limited.headers.ratelimit).toBe('"minute";r=0;t=60');
    expect(limited.headers["content-type"]).toMatch(/problem\+json/);
    expect(limited.body).toMatchObject({ title: "Too Many Requests", status: 429 });
  });
});

describe("queue full", () => {
  // Spec: 429 "when the queue holds more than 50 jobs AND more than WorkersMax x 500 jobs". With
  // workersMax 0 the bound is 50: submissions are accepted while the queue holds 0..50 jobs (so it
  // reaches 51) and refused once it holds 51, i.e. more than 50.
  it("answers 429 once the queue holds more than max(50, workersMax x 500) jobs", async () => {
    h = await harness({ endpoints: ["idle:0"] });
    for (let i = 0; i < 51; i++)
      expect((await h.call("POST", "/v2/idle/run", { input: { i } })).status).toBe(200);
    const full = await h.call("POST", "/v2/idle/run", { input: {} });
    expect(full.status).toBe(429);
    expect(full.headers["retry-after"]).toBe("1");
    expect(full.body.message).toMatch(/queue is full \(it holds 51 jobs, more than 50/);
    expect(h.emu.stats().submitted.idle).toBe(51);
    await h.call("POST", "/v2/idle/purge-queue");
    expect((await h.call("POST", "/v2/idle/run", { input: {} })).status).toBe(200);
  });
});

describe("payload sizes (MB = 1,000,000 bytes)", () => {
  const bodyOf = (bytes: number) => {
    const shell = JSON.stringify({ input: { pad: "" } });
    return JSON.stringify({ input: { pad: "p".repeat(bytes - shell.length) } });
  };

  it("accepts exactly 10 MB on /run and answers 413 above it", async () => {
    h = await harness();
    const exact = bodyOf(10_000_000);
    expect(Buffer.byteLength(exact)).toBe(10_000_000);
    expect((await h.call("POST", "/v2/echo/run", exact)).status).toBe(200);
    const over = await h.call("POST", "/v2/echo/run", bodyOf(10_000_001));
    expect(over.status).toBe(413);
    expect(over.body.message).toMatch(
      /^body: larger than the 10 MB \(10000000 bytes\) allowed for POST \/v2\/:endpointId\/run/,
    );
  });

  it("accepts 20 MB on /runsync and answers 413 above it", async () => {
    h = await harness();
    expect((await h.call("POST", "/v2/echo/runsync", bodyOf(20_000_000))).status).toBe(200);
    expect((await h.call("POST", "/v2/echo/runsync", bodyOf(20_000_001))).status).toBe(413);
  });
});

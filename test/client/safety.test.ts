/**
 * The client's answers to "may the service have acted?" and the edges of its quota handling:
 * what callers of non-idempotent POSTs (JobRun, registry-auth create) rely on.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  mayHaveActed,
  ResponseValidationError,
  RunpodClient,
  ValidationError,
} from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { API_KEY, clientFor, recordingSleep } from "./helpers";

/** A scripted 127.0.0.1 server per test (the mayHaveActed table does not use it). */
let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

describe("mayHaveActed", () => {
  const cases: [string, unknown, boolean][] = [
    ["input refused before sending", new ValidationError("input is required", ["input"]), false],
    ["aborted while waiting for a slot", new APIUserAbortError("aborted"), false],
    ["aborted with the request on the wire", new APIUserAbortError("aborted", { sent: true }), true],
    ["400 refused", APIError.from({ status: 400 }), false],
    ["401 refused", APIError.from({ status: 401 }), false],
    ["404 unknown endpoint", APIError.from({ status: 404 }), false],
    ["429 rate limited", APIError.from({ status: 429 }), false],
    ["503 said it did nothing", APIError.from({ status: 503 }), false],
    ["408 request timeout", APIError.from({ status: 408 }), true],
    ["500 after acting", APIError.from({ status: 500 }), true],
    ["502 from a gateway", APIError.from({ status: 502 }), true],
    ["connection refused", new APIConnectionError("refused", { notSent: true }), false],
    ["reset mid-request", new APIConnectionError("reset"), true],
    ["timed out", new APITimeoutError("timeout"), true],
    ["2xx with a malformed body", new ResponseValidationError("bad body"), true],
    ["an error of unknown origin", new TypeError("x is not a function"), true],
  ];
  it.each(cases)("%s -> %s", (_what, error, expected) => {
    expect(mayHaveActed(error)).toBe(expected);
  });
});

describe("request edges", () => {
  it("accepts an answer that repeats the RateLimit header (a created job is never reported as an error)", async () => {
    server.enqueue({
      body: { id: "job-1", status: "IN_QUEUE" },
      headers: { ratelimit: ['"burst";r=5;t=1', '"minute";r=100;t=30'] },
    });
    const job = await clientFor(server).endpoint("ep").run({ input: {} });
    expect(job).toEqual({ id: "job-1", status: "IN_QUEUE" });
  });

  it("pauses only the account whose quota window is used up", async () => {
    const { sleeps, sleep } = recordingSleep();
    server.fallback = () => ({ body: { registries: [] } });
    server.enqueue({ body: { registries: [] }, headers: { ratelimit: '"minute";r=0;t=5' } });
    const restUrl = `${server.url}/v2`;
    const exhausted = clientFor(server, { restUrl, sleep });
    const other = clientFor(server, { restUrl, sleep, apiKey: `${API_KEY}-other-account` });
    await exhausted.registryAuths.list();
    await other.registryAuths.list();
    expect(sleeps).toEqual([]);
    await exhausted.registryAuths.list();
    expect(sleeps).toHaveLength(1);
  });

  it("takes a serverlessUrl written with /v2 as its host, not /v2/v2", async () => {
    server.enqueue({ body: { jobs: {}, workers: {} } });
    const client = new RunpodClient({
      apiKey: API_KEY,
      serverlessUrl: `${server.url}/v2/`,
      rateLimits: false,
      env: {},
    });
    expect(client.serverlessUrl).toBe(server.url);
    await client
      .endpoint("ep")
      .health()
      .catch(() => undefined);
    expect(server.requests[0]?.url).toBe("/v2/ep/health");
  });
});

describe("rate-limit rows beyond the published table", () => {
  const health = {
    jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
    workers: { idle: 1, running: 0 },
  };

  it("limits /health when the table given has a health row", async () => {
    server.fallback = () => ({ body: health });
    const ep = clientFor(server, { rateLimits: { health: { requests: 1, windowMs: 60_000 } } }).endpoint(
      "ep-health-row",
    );
    await ep.health();
    // The window's one request is spent: the next call waits for a slot until its waitSignal ends.
    const e = await ep.health({ waitSignal: AbortSignal.timeout(100) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIUserAbortError);
    expect((e as APIUserAbortError).sent).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("does not limit /health under the service's table (it has no health row)", async () => {
    server.fallback = () => ({ body: health });
    const ep = clientFor(server, { rateLimits: undefined }).endpoint("ep-health-default");
    await Promise.all(Array.from({ length: 30 }, () => ep.health()));
    expect(server.requests).toHaveLength(30);
  });
});

describe("secrets echoed by an error answer", () => {
  /** Everything an error exposes: message, stack, enumerable fields (body, headers) and cause. */
  const exposed = (e: unknown) => {
    const err = e as Error & { body?: unknown };
    return [err.message, err.stack ?? "", JSON.stringify(err), JSON.stringify(err.body ?? null)].join("\n");
  };

  it("never carries the registry password (even JSON-escaped or past the message's cut) or the API key", async () => {
    const password = `p"ss\\word-${"x".repeat(600)}-end`;
    server.enqueue({
      status: 400,
      body: { message: `bad credential ${password} for key ${API_KEY}`, echo: { password } },
    });
    const e = await clientFor(server)
      .registryAuths.create({ name: "n", username: "u", password })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIError);
    const text = exposed(e);
    expect(text).toContain("[redacted]");
    expect(text).not.toContain('p"ss');
    expect(text).not.toContain('p\\"ss');
    expect(text).not.toContain(API_KEY);
  });

  it("never carries the s3 accessSecret or accessId of a job request", async () => {
    const s3Config = {
      accessId: "AKIA-ECHOED-ID",
      accessSecret: "s3-secret-echoed-by-service",
      bucketName: "b",
      endpointUrl: "https://s3.example.com",
    };
    server.enqueue({ status: 400, body: { error: `cannot reach bucket with ${JSON.stringify(s3Config)}` } });
    const e = await clientFor(server)
      .endpoint("ep")
      .run({ input: {}, s3Config })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIError);
    const text = exposed(e);
    expect(text).not.toContain(s3Config.accessSecret);
    expect(text).not.toContain(s3Config.accessId);
    expect(text).toContain("bucketName");
  });
});

describe("waitSignal: a deadline for the waits before sending, not for the request on the wire", () => {
  it("lets a request already sent run to its answer", async () => {
    server.enqueue({ delayMs: 300, body: { id: "sync-1", status: "COMPLETED", output: 1 } });
    const waitSignal = AbortSignal.timeout(50);
    const job = await clientFor(server).endpoint("ep").runSync({ input: {} }, { waitSignal, wait: 1000 });
    expect(waitSignal.aborted).toBe(true);
    expect(job.id).toBe("sync-1");
  });

  it("stops a request still waiting for a rate-limit slot, marked as not sent", async () => {
    server.fallback = () => ({ body: { id: "j", status: "IN_QUEUE" } });
    const ep = clientFor(server, { rateLimits: { run: { requests: 1, windowMs: 60_000 } } }).endpoint(
      "ep-wait-signal",
    );
    await ep.run({ input: {} });
    const e = await ep.run({ input: {} }, { waitSignal: AbortSignal.timeout(50) }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIUserAbortError);
    expect((e as APIUserAbortError).sent).toBe(false);
    expect(mayHaveActed(e)).toBe(false);
    expect(server.requests).toHaveLength(1);
  });
});

describe("stream reads drain the service's buffer", () => {
  it("does not retry a read that was reset after sending: the iteration fails instead of skipping chunks", async () => {
    server.enqueue(
      { body: { status: "IN_PROGRESS", stream: [{ output: "a" }] } },
      { reset: true },
      { body: { status: "COMPLETED", stream: [{ output: "c" }] } },
    );
    const seen: unknown[] = [];
    const e = await (async () => {
      for await (const chunk of clientFor(server).endpoint("ep").stream("job-1")) seen.push(chunk.output);
    })().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(seen).toEqual(["a"]);
    expect(server.requests).toHaveLength(2);
  });

  it("still retries a read the service refused (503: nothing was drained)", async () => {
    server.enqueue(
      { status: 503, headers: { "retry-after": "0" } },
      { body: { status: "COMPLETED", stream: [{ output: "z" }] } },
    );
    const seen: unknown[] = [];
    for await (const chunk of clientFor(server).endpoint("ep").stream("job-1")) seen.push(chunk.output);
    expect(seen).toEqual(["z"]);
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ResponseValidationError,
  RunpodError,
  UnprocessableEntityError,
} from "../../src/client";
import { type ScriptedServer, startScriptedServer, unusedPort } from "../support/scriptedServer";
import { API_KEY, clientFor, job, recordingSleep } from "./helpers";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

describe("requests", () => {
  it("sends the key as a bearer token, JSON bodies and a user agent", async () => {
    server.enqueue({ body: job("IN_QUEUE") });
    await clientFor(server)
      .endpoint("ep")
      .run({ input: { prompt: "hi" } });
    const [req] = server.requests;
    expect(req?.method).toBe("POST");
    expect(req?.pathname).toBe("/v2/ep/run");
    expect(req?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["user-agent"]).toMatch(/^pulumi-runpod-dynamic/);
    expect(JSON.parse(req?.body ?? "")).toEqual({ input: { prompt: "hi" } });
  });

  it("percent-encodes path parameters", async () => {
    server.enqueue({ body: job("IN_QUEUE", { id: "a/b c" }) });
    await clientFor(server).endpoint("ep").status("a/b c");
    expect(server.requests[0]?.url).toBe("/v2/ep/status/a%2Fb%20c");
  });

  it("reads every body, so keep-alive connections are reused after errors and retries", async () => {
    const big = { error: "x".repeat(100_000) };
    for (let i = 0; i < 4; i++) server.enqueue({ status: 500, body: big }, { status: 404, body: big });
    for (let i = 0; i < 4; i++) server.enqueue({ body: job("COMPLETED", { output: big }) });
    const ep = clientFor(server).endpoint("ep");
    for (let i = 0; i < 4; i++) await expect(ep.status("j")).rejects.toBeInstanceOf(NotFoundError);
    for (let i = 0; i < 4; i++) await ep.status("j");
    // Without draining, each of the 12 requests would need its own connection.
    expect(server.requests).toHaveLength(12);
    expect(new Set(server.requests.map((r) => r.connection)).size).toBeLessThanOrEqual(2);
  });
});

describe("error mapping", () => {
  const cases = [
    [400, BadRequestError, "bad_request"],
    [401, AuthenticationError, "authentication_error"],
    [403, PermissionDeniedError, "permission_denied"],
    [404, NotFoundError, "not_found"],
    [409, ConflictError, "conflict"],
    [422, UnprocessableEntityError, "unprocessable_entity"],
    [429, RateLimitError, "rate_limited"],
    [500, InternalServerError, "internal_server_error"],
    [502, InternalServerError, "internal_server_error"],
  ] as const;
  for (const [status, ErrorClass, code] of cases) {
    it(`maps ${status} to ${ErrorClass.name} with status, body, headers and request id`, async () => {
      server.enqueue({ status, headers: { "x-request-id": "req-42" }, body: { message: `boom ${status}` } });
      const error = await clientFor(server, { maxRetries: 0 })
        .registryAuths.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toBeInstanceOf(APIError);
      expect(error).toBeInstanceOf(RunpodError);
      const e = error as APIError;
      expect(e.code).toBe(code);
      expect(e.status).toBe(status);
      expect(e.body).toEqual({ message: `boom ${status}` });
      expect(e.requestId).toBe("req-42");
      expect(e.message).toBe(`GET /v1/containerregistryauth failed with ${status}: boom ${status}`);
    });
  }

  it("keeps a non-JSON error body as text", async () => {
    server.enqueue({ status: 400, body: "plain trouble" });
    const e = (await clientFor(server)
      .endpoint("ep")
      .health()
      .catch((x: unknown) => x)) as APIError;
    expect(e).toBeInstanceOf(BadRequestError);
    expect(e.body).toBe("plain trouble");
  });

  it("raises ResponseValidationError naming the path and field for a malformed 2xx body", async () => {
    server.enqueue({ body: { id: "j" } });
    const e = (await clientFor(server)
      .endpoint("ep")
      .status("j")
      .catch((x: unknown) => x)) as ResponseValidationError;
    expect(e).toBeInstanceOf(ResponseValidationError);
    expect(e.code).toBe("response_validation_error");
    expect(e.message).toContain("GET /v2/ep/status/j");
    expect(e.message).toContain("status");
    expect(e.path).toEqual(["status"]);
  });

  it("raises ResponseValidationError for a 2xx body that is not JSON", async () => {
    server.enqueue({ headers: { "content-type": "application/json" }, body: "{not json" });
    const e = await clientFor(server)
      .endpoint("ep")
      .health()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResponseValidationError);
  });
});

describe("retries", () => {
  it("retries GET on 408, 429, 500, 502, 503 and 504, then succeeds", async () => {
    for (const status of [408, 429, 500, 502, 503, 504])
      server.enqueue({ status, body: { message: "again" } });
    server.enqueue({ body: job("COMPLETED") });
    const result = await clientFor(server, { maxRetries: 6 }).endpoint("ep").status("j");
    expect(result.status).toBe("COMPLETED");
    expect(server.requests.map((r) => r.status)).toEqual([408, 429, 500, 502, 503, 504, 200]);
  });

  it("retries DELETE on 5xx", async () => {
    server.enqueue({ status: 500 }, { status: 204 });
    await clientFor(server).registryAuths.delete("r1");
    expect(server.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["DELETE 500", "DELETE 204"]);
  });

  it("gives up after maxRetries retries and throws the last error", async () => {
    for (let i = 0; i < 3; i++) server.enqueue({ status: 503 });
    const e = await clientFor(server, { maxRetries: 2 })
      .endpoint("ep")
      .health()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(3);
  });

  it("makes 1 + 5 attempts by default", async () => {
    for (let i = 0; i < 6; i++) server.enqueue({ status: 500 });
    await expect(clientFor(server).endpoint("ep").health()).rejects.toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(6);
  });

  it("does not retry 400, 401, 403, 404, 409 or 422", async () => {
    for (const status of [400, 401, 403, 404, 409, 422]) {
      server.enqueue({ status });
      await expect(clientFor(server).endpoint("ep").health()).rejects.toBeInstanceOf(APIError);
    }
    expect(server.requests).toHaveLength(6);
  });

  it("retries a POST answered 429 or 503 (the service did not act)", async () => {
    server.enqueue({ status: 429 }, { status: 503 }, { body: job("IN_QUEUE") });
    const result = await clientFor(server).endpoint("ep").run({ input: {} });
    expect(result.status).toBe("IN_QUEUE");
    expect(server.requests.map((r) => r.status)).toEqual([429, 503, 200]);
  });

  it("never retries a POST answered 500: the service may have acted on it", async () => {
    server.enqueue({ status: 500, body: { error: "worker crashed" } }, { body: job("IN_QUEUE") });
    await expect(clientFor(server).endpoint("ep").run({ input: {} })).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(server.requests).toHaveLength(1);
  });

  it("never retries a POST whose connection was reset after sending", async () => {
    server.enqueue({ reset: true }, { body: job("IN_QUEUE") });
    const e = (await clientFor(server)
      .endpoint("ep")
      .run({ input: {} })
      .catch((x: unknown) => x)) as APIConnectionError;
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(e.code).toBe("connection_error");
    expect(e.notSent).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a GET whose connection was reset", async () => {
    server.enqueue({ reset: true }, { body: job("COMPLETED") });
    await clientFor(server).endpoint("ep").status("j");
    expect(server.requests).toHaveLength(2);
  });

  it("retries a POST whose connection was refused, once the server is up", async () => {
    const port = await unusedPort();
    let late: ScriptedServer | undefined;
    const client = clientFor(server, {
      serverlessUrl: `http://127.0.0.1:${port}`,
      sleep: async () => {
        late ??= await startScriptedServer({ port });
        late.enqueue({ body: job("IN_QUEUE") });
      },
    });
    try {
      const result = await client.endpoint("ep").run({ input: {} });
      expect(result.status).toBe("IN_QUEUE");
      expect(late?.requests).toHaveLength(1);
    } finally {
      await late?.close();
    }
  });

  it("reports a refused connection as APIConnectionError with notSent", async () => {
    const port = await unusedPort();
    const e = (await clientFor(server, { serverlessUrl: `http://127.0.0.1:${port}`, maxRetries: 1 })
      .endpoint("ep")
      .health()
      .catch((x: unknown) => x)) as APIConnectionError;
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(e.notSent).toBe(true);
    expect(e.message).toContain(`could not connect to http://127.0.0.1:${port}`);
  });

  it("waits Retry-After seconds, capped at 60 s", async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue(
      { status: 429, headers: { "retry-after": "2" } },
      { status: 503, headers: { "retry-after": "120" } },
      { body: job("COMPLETED") },
    );
    await clientFor(server, { sleep }).endpoint("ep").status("j");
    expect(sleeps).toEqual([2000, 60_000]);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const { sleeps, sleep } = recordingSleep();
    const at = new Date(Date.now() + 30_000).toUTCString();
    server.enqueue({ status: 429, headers: { "retry-after": at } }, { body: job("COMPLETED") });
    await clientFor(server, { sleep }).endpoint("ep").status("j");
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(25_000);
    expect(sleeps[0]).toBeLessThanOrEqual(30_000);
  });

  it("backs off 0.5 s x 2^n with jitter, at most 8 s, without Retry-After", async () => {
    const { sleeps, sleep } = recordingSleep();
    for (let i = 0; i < 6; i++) server.enqueue({ status: 500 });
    server.enqueue({ body: job("COMPLETED") });
    await clientFor(server, { sleep, maxRetries: 6 }).endpoint("ep").status("j");
    const steps = [500, 1000, 2000, 4000, 8000, 8000];
    expect(sleeps).toHaveLength(6);
    sleeps.forEach((ms, i) => {
      expect(ms).toBeGreaterThanOrEqual((steps[i] as number) / 2);
      expect(ms).toBeLessThanOrEqual(steps[i] as number);
    });
  });

  it("logs each retry without the key", async () => {
    const lines: string[] = [];
    server.enqueue({ status: 503 }, { body: job("COMPLETED") });
    await clientFor(server, { logger: { debug: (m) => lines.push(m) } })
      .endpoint("ep")
      .status("j");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("retrying GET /status/j after 503");
    expect(lines.join("\n")).not.toContain(API_KEY);
  });
});

describe("timeouts and aborts", () => {
  it("throws APITimeoutError after timeoutMs and does not retry a POST", async () => {
    server.enqueue({ hang: true });
    const e = (await clientFor(server, { timeoutMs: 100 })
      .endpoint("ep")
      .run({ input: {} })
      .catch((x: unknown) => x)) as APITimeoutError;
    expect(e).toBeInstanceOf(APITimeoutError);
    expect(e.code).toBe("timeout");
    expect(e.message).toContain("timed out after 100 ms");
    expect(server.requests).toHaveLength(1);
  });

  it("retries a timed-out GET", async () => {
    server.enqueue({ hang: true }, { body: job("COMPLETED") });
    const result = await clientFor(server).endpoint("ep").status("j", { timeoutMs: 100 });
    expect(result.status).toBe("COMPLETED");
    expect(server.requests).toHaveLength(2);
  });

  it("throws APIUserAbortError when the signal aborts mid-request", async () => {
    const controller = new AbortController();
    server.enqueue((req) => {
      controller.abort();
      return { hang: true, status: req ? 200 : 200 };
    });
    const e = await clientFor(server)
      .endpoint("ep")
      .status("j", { signal: controller.signal })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIUserAbortError);
    expect((e as APIUserAbortError).code).toBe("aborted");
    expect(server.requests).toHaveLength(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    const e = await clientFor(server)
      .endpoint("ep")
      .health({ signal: AbortSignal.abort() })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(0);
  });

  it("stops waiting for a retry when the signal aborts", async () => {
    const controller = new AbortController();
    server.enqueue({ status: 503, headers: { "retry-after": "30" } });
    const client = clientFor(server, { sleep: undefined });
    const pending = client.endpoint("ep").health({ signal: controller.signal });
    await new Promise<void>((resolve) => {
      const check = () => (server.requests.length > 0 ? resolve() : setTimeout(check, 5));
      check();
    });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(1);
  });
});

describe("the key never leaks", () => {
  const leaks = (e: unknown) => {
    const err = e as Error & { cause?: unknown };
    const texts = [
      JSON.stringify(err),
      err.message,
      err.stack ?? "",
      String(err),
      JSON.stringify((err as { headers?: unknown }).headers ?? {}),
      err.cause instanceof Error
        ? `${err.cause.message} ${err.cause.stack}`
        : JSON.stringify(err.cause ?? ""),
    ];
    return texts.some((t) => t.includes(API_KEY));
  };

  it("not from a 401 whose body and headers echo it", async () => {
    server.enqueue({
      status: 401,
      headers: { "www-authenticate": "Bearer", authorization: `Bearer ${API_KEY}` },
      body: { message: "unauthorized" },
    });
    const e = await clientFor(server)
      .registryAuths.list()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AuthenticationError);
    expect((e as APIError).headers.authorization).toBe("[redacted]");
    expect(leaks(e)).toBe(false);
  });

  it("not from a timeout", async () => {
    server.enqueue({ hang: true });
    const e = await clientFor(server, { timeoutMs: 50 })
      .endpoint("ep")
      .run({ input: {} })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APITimeoutError);
    expect(leaks(e)).toBe(false);
  });

  it("not from a connection failure", async () => {
    const port = await unusedPort();
    const e = await clientFor(server, { serverlessUrl: `http://127.0.0.1:${port}`, maxRetries: 0 })
      .endpoint("ep")
      .health()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(APIConnectionError);
    expect(leaks(e)).toBe(false);
  });

  it("not from a reset, a 500 or a malformed answer", async () => {
    server.enqueue({ reset: true }, { status: 500, body: { message: "x" } }, { body: { nope: true } });
    const ep = clientFor(server, { maxRetries: 0 }).endpoint("ep");
    for (let i = 0; i < 3; i++) {
      const e = await ep.run({ input: {} }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RunpodError);
      expect(leaks(e)).toBe(false);
    }
  });

  it("not from the client object itself", async () => {
    const client = clientFor(server);
    expect(JSON.stringify(client)).not.toContain(API_KEY);
    expect(JSON.stringify(client.endpoint("ep"))).not.toContain(API_KEY);
    const { inspect } = await import("node:util");
    expect(inspect(client, { depth: 10 })).not.toContain(API_KEY);
  });
});

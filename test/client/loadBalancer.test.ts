/**
 * `client.loadBalancer(id)`: one HTTP request to a load-balancer endpoint's own path, against a
 * small node:http server on 127.0.0.1 that plays both the REST v2 lookup and the endpoint.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
  RunpodClient,
  ValidationError,
} from "../../src/client";
import { checkCredentialScope } from "../../src/client/loadBalancer";
import { startEmulator } from "../../src/emulator";
import { API_KEY } from "./helpers";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse) => void;

let server: Server;
let origin: string;
let seen: Seen[];
let handler: Handler;
let endpointType: string;
/** The endpoint's `requestUrls.base` the lookup answers; undefined: this server's `/lb/lb1`. */
let answeredBase: string | undefined;

beforeEach(async () => {
  seen = [];
  endpointType = "LOAD_BALANCER";
  answeredBase = undefined;
  handler = (_req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ ok: true }));
  };
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const entry = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      if (entry.url === "/v2/serverless/lb1") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            id: "lb1",
            name: "lb",
            type: endpointType,
            requestUrls: { base: answeredBase ?? `${origin}/lb/lb1`, health: `${origin}/lb/lb1/ping` },
          }),
        );
        return;
      }
      seen.push(entry);
      handler(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(options: ConstructorParameters<typeof RunpodClient>[0] = {}): RunpodClient {
  return new RunpodClient({
    apiKey: API_KEY,
    restUrl: `${origin}/v2`,
    serverlessUrl: origin,
    rateLimits: false,
    sleep: async () => {},
    env: {},
    ...options,
  });
}

describe("client.loadBalancer(id).request", () => {
  it("sends the request to requestUrls.base with the bearer key and answers status, headers, JSON body and latency", async () => {
    handler = (req, res) => {
      res.statusCode = 201;
      res.setHeader("content-type", "application/json; charset=utf-8");
      res.setHeader("x-model", "m1");
      res.end(JSON.stringify({ echo: JSON.parse(req.body) }));
    };
    const answer = await client()
      .loadBalancer("lb1")
      .request({ path: "/v1/chat/completions?x=1", body: { messages: [] }, headers: { "X-Trace": "t1" } });
    expect(answer).toMatchObject({
      status: 201,
      body: { echo: { messages: [] } },
      bodyTruncated: false,
      attempts: 1,
    });
    expect(answer.headers["x-model"]).toBe("m1");
    expect(answer.bodyBytes).toBe(Buffer.byteLength(JSON.stringify({ echo: { messages: [] } })));
    expect(typeof answer.latencyMs).toBe("number");
    expect(answer.latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe("POST");
    expect(seen[0]?.url).toBe("/lb/lb1/v1/chat/completions?x=1");
    expect(seen[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen[0]?.headers["x-trace"]).toBe("t1");
    expect(seen[0]?.headers["content-type"]).toBe("application/json");
  });

  it("defaults to GET without a body and answers a text body as text", async () => {
    handler = (_req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end("pong");
    };
    const answer = await client().loadBalancer("lb1").request({ path: "/ping" });
    expect(seen[0]?.method).toBe("GET");
    expect(seen[0]?.body).toBe("");
    expect(answer.body).toBe("pong");
    expect(answer.status).toBe(200);
  });

  it("resolves a 500 as an answer and does not resend a POST", async () => {
    handler = (_req, res) => {
      res.statusCode = 500;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: "boom" }));
    };
    const answer = await client().loadBalancer("lb1").request({ path: "/x", body: {} });
    expect(answer).toMatchObject({ status: 500, body: { error: "boom" }, attempts: 1 });
    expect(seen).toHaveLength(1);
  });

  it("resends a GET after a 500 under the retry policy, and not with idempotent: false", async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls += 1;
      res.statusCode = calls < 3 ? 500 : 200;
      res.end(calls < 3 ? "bad" : "good");
    };
    const answer = await client().loadBalancer("lb1").request({ path: "/x" });
    expect(answer).toMatchObject({ status: 200, body: "good", attempts: 3 });
    calls = 0;
    const strict = await client().loadBalancer("lb1").request({ path: "/x" }, { idempotent: false });
    expect(strict).toMatchObject({ status: 500, body: "bad", attempts: 1 });
  });

  it("resends a POST after a 503 (the service did nothing) and returns the last answer when retries run out", async () => {
    handler = (_req, res) => {
      res.statusCode = 503;
      res.end("busy");
    };
    const answer = await client({ maxRetries: 2 }).loadBalancer("lb1").request({ path: "/x", body: {} });
    expect(answer).toMatchObject({ status: 503, attempts: 3 });
    expect(seen).toHaveLength(3);
  });

  it("reads at most maxBodyBytes and says the body was truncated", async () => {
    handler = (_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ data: "x".repeat(10_000) }));
    };
    const answer = await client().loadBalancer("lb1").request({ path: "/big" }, { maxBodyBytes: 100 });
    expect(answer.bodyTruncated).toBe(true);
    expect(answer.bodyBytes).toBe(100);
    expect(typeof answer.body).toBe("string");
    expect((answer.body as string).length).toBe(100);
  });

  it("times out with APITimeoutError naming the request, never the key or a header value", async () => {
    handler = () => {
      // never answers
    };
    const error = await client({ maxRetries: 0 })
      .loadBalancer("lb1")
      .request({ path: "/slow", headers: { "X-Secret-Token": "tok_SECRET_123456" } }, { timeoutMs: 100 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toBe(
      "GET /lb/lb1/slow timed out after 100 ms (raise timeoutMs for slow calls; a timed-out request may still have been acted on)",
    );
    const text = JSON.stringify(error) + String((error as Error).stack);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain("tok_SECRET_123456");
  });

  it("stops on the caller's signal with APIUserAbortError", async () => {
    handler = () => {};
    const controller = new AbortController();
    const pending = client().loadBalancer("lb1").request({ path: "/slow" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect((error as APIUserAbortError).sent).toBe(true);
  });

  it("fails with APIConnectionError (not sent) when nothing listens, without the key", async () => {
    const dead = client({ maxRetries: 0 }).loadBalancer("lb1", { baseUrl: "http://127.0.0.1:1/lb/lb1" });
    const error = await dead.request({ path: "/ping" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect((error as APIConnectionError).notSent).toBe(true);
    expect((error as Error).message).toMatch(
      /^GET \/lb\/lb1\/ping failed: could not connect to http:\/\/127\.0\.0\.1:1/,
    );
    expect(JSON.stringify(error) + String((error as Error).stack)).not.toContain(API_KEY);
  });

  it("refuses a QUEUE endpoint, naming its type and what to use instead", async () => {
    endpointType = "QUEUE";
    const error = await client()
      .loadBalancer("lb1")
      .request({ path: "/ping" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(
      "endpoint lb1 is type QUEUE, not LOAD_BALANCER: it has no HTTP paths of its own (requestUrls.base); send queue jobs with client.endpoint(id).run instead",
    );
    expect(seen).toHaveLength(0);
  });

  it("refuses a v1 restUrl before any request", async () => {
    const error = await client({ restUrl: `${origin}/v1` })
      .loadBalancer("lb1")
      .request({ path: "/ping" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(["restUrl"]);
  });

  it.each([
    [{ path: "ping" }, 'path must be a string starting with "/", got "ping"'],
    [{ path: "/a/../b" }, 'path must not contain "." or ".." segments'],
    [
      { path: "//evil.example/x" },
      "path must not contain spaces, control characters or '#', nor start with '//'",
    ],
    [
      { path: "/x", headers: { Authorization: "Bearer other" } },
      "headers: Authorization may not be set (the client sends Authorization: Bearer with its API key)",
    ],
    [
      { path: "/x", headers: { "X-A": "a\r\nb" } },
      "headers: the value of X-A must be a string without line breaks",
    ],
    [{ path: "/x", method: "TRACE" }, "method must be one of GET, POST, PUT, PATCH, DELETE, got TRACE"],
  ])("refuses %j before any request", async (req, message) => {
    const error = await client()
      .loadBalancer("lb1", { baseUrl: `${origin}/lb/lb1` })
      .request(req as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(message);
    expect(JSON.stringify(error)).not.toContain("Bearer other");
    expect(seen).toHaveLength(0);
  });

  it("health() GETs requestUrls.health", async () => {
    handler = (_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ status: "healthy" }));
    };
    const answer = await client().loadBalancer("lb1").health();
    expect(seen[0]?.url).toBe("/lb/lb1/ping");
    expect(answer).toMatchObject({ status: 200, body: { status: "healthy" } });
  });
});

describe("client.loadBalancer against the emulator's load-balancer endpoints", () => {
  it("reaches the built-in server with the bearer key, and a wrong key answers 401 without the key in it", async () => {
    const emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    try {
      const options = {
        apiKey: API_KEY,
        restUrl: emu.restUrl,
        serverlessUrl: emu.serverlessUrl,
        rateLimits: false as const,
      };
      const good = new RunpodClient(options);
      const { id } = await good.serverless.create({
        name: "lb",
        type: "LOAD_BALANCER",
        image: "acme/server:1",
        gpu: { pools: ["ADA_24"] },
        scaling: { type: "REQUEST_COUNT", requestCount: 1 },
        workers: { min: 1, max: 1 },
      });
      const echo = await good.loadBalancer(id).request({
        method: "POST",
        path: "/echo?x=1",
        body: { a: 1 },
        headers: { "X-Tenant": "t-secret-9911" },
      });
      expect(echo.status).toBe(200);
      expect(echo.body).toMatchObject({ method: "POST", path: "/echo", body: { a: 1 } });
      expect((echo.body as { headers: string[] }).headers).toEqual(
        expect.arrayContaining(["authorization", "x-tenant"]),
      );
      expect(JSON.stringify(echo)).not.toContain("t-secret-9911");
      expect((await good.loadBalancer(id).health()).body).toEqual({ status: "healthy" });

      const wrong = new RunpodClient({ ...options, apiKey: "wrong-key-0000" });
      const refused = await wrong
        .loadBalancer(id, { baseUrl: `${emu.serverlessUrl}/lb/${id}` })
        .request({ path: "/v1/models" });
      expect(refused.status).toBe(401);
      expect(JSON.stringify(refused)).not.toContain("wrong-key-0000");
    } finally {
      await emu.close();
    }
  });
});

describe("the API key goes only to the service's own hosts", () => {
  it("refuses a requestUrls.base on another host before connecting, saying why, without the key", async () => {
    // The service lives at api.runpod.ai; the lookup (REST, here on loopback) names another host.
    answeredBase = "https://api.runpod.ai.attacker.invalid/lb/lb1";
    const lb = client({ serverlessUrl: "https://api.runpod.ai" }).loadBalancer("lb1");
    const error = await lb.request({ path: "/ping" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(
      /requestUrls\.base is on https:\/\/api\.runpod\.ai\.attacker\.invalid, which is not one of the service's hosts/,
    );
    expect((error as Error).message).toMatch(/it sent nothing/);
    expect((error as Error).message).not.toContain(API_KEY);
    expect(seen).toEqual([]);
  });

  it("refuses a requestUrls.base over plain http on the service's own domain", async () => {
    answeredBase = "http://lb1.api.runpod.ai";
    const lb = client({ serverlessUrl: "https://api.runpod.ai" }).loadBalancer("lb1");
    await expect(lb.request({ path: "/ping" })).rejects.toThrow(
      /plain http: the client sends its API key only over https/,
    );
  });

  it("refuses a loopback base when the service is not on loopback, and a baseUrl given on another host", () => {
    expect(() =>
      client({ serverlessUrl: "https://api.runpod.ai", restUrl: "https://rest.runpod.io/v2" }).loadBalancer(
        "lb1",
        { baseUrl: `${origin}/lb/lb1` },
      ),
    ).toThrow(/not one of the service's hosts/);
    expect(() => client().loadBalancer("lb1", { baseUrl: "https://example.com/lb/lb1" })).toThrow(
      /not one of the service's hosts/,
    );
  });

  it("does not follow a redirect: the 3xx is the answer, and its target never sees a request", async () => {
    const elsewhere: IncomingMessage["headers"][] = [];
    const other = createServer((req, res) => {
      elsewhere.push(req.headers);
      res.end("{}");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      handler = (_req, res) => {
        res.statusCode = 302;
        res.setHeader("location", `http://127.0.0.1:${(other.address() as AddressInfo).port}/steal`);
        res.end();
      };
      const answer = await client().loadBalancer("lb1").request({ path: "/ping" });
      expect(answer.status).toBe(302);
      expect(seen).toHaveLength(1);
      expect(elsewhere).toEqual([]);
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it.each([
    ["https://lb1.api.runpod.ai", "https://api.runpod.ai", true],
    ["https://API.runpod.ai./x", "https://api.runpod.ai", true],
    ["https://api.runpod.ai", "https://api.runpod.ai", true],
    ["https://runpod.ai", "https://api.runpod.ai", false],
    ["https://other.runpod.ai", "https://api.runpod.ai", false],
    ["https://xapi.runpod.ai", "https://api.runpod.ai", false],
    ["https://api.runpod.ai.evil.com", "https://api.runpod.ai", false],
    ["http://lb1.api.runpod.ai", "https://api.runpod.ai", false],
    ["http://127.0.0.1:9/lb/x", "http://127.0.0.1:8", true],
    ["http://[::1]:9/lb/x", "http://localhost:8", true],
    ["http://127.0.0.1:9/lb/x", "https://api.runpod.ai", false],
    ["https://api.runpod.ai", "http://127.0.0.1:8", false],
  ])("base %s with the service at %s: key sent %s", (base, service, allowed) => {
    const judge = () => checkCredentialScope(base, [service], "requestUrls.base");
    if (allowed) expect(judge()).toBe(base);
    else expect(judge).toThrow(ValidationError);
  });
});

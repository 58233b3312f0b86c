/**
 * `client.serverless.workerLogs` against a real SSE server on 127.0.0.1: each connection is
 * answered by the next handler of a script, which writes events, drops the socket, answers an
 * error, or stays open, as the test says.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  NotFoundError,
  ResponseValidationError,
  type WorkerLogEvent,
} from "../../src/client";
import { defaultSleep } from "../../src/client/transport";
import { API_KEY, clientFor, recordingSleep } from "./helpers";

interface SseRequest {
  url: URL;
  headers: http.IncomingHttpHeaders;
  /** Resolves when the client closes (or the server ends) this connection. */
  closed: Promise<void>;
}

type Handler = (req: SseRequest, res: http.ServerResponse) => void | Promise<void>;

interface SseServer {
  url: string;
  requests: SseRequest[];
  close(): Promise<void>;
}

const servers: SseServer[] = [];

/** Starts a server answering the n-th request with `handlers[n]` (the last one repeats). */
async function sseServer(...handlers: Handler[]): Promise<SseServer> {
  const requests: SseRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const closed = new Promise<void>((resolve) => res.on("close", () => resolve()));
    const recorded = { url: new URL(req.url ?? "/", "http://127.0.0.1"), headers: req.headers, closed };
    requests.push(recorded);
    const handler = handlers[Math.min(requests.length - 1, handlers.length - 1)];
    void handler?.(recorded, res);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const api: SseServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(api);
  return api;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const ts = (n: number) => `2026-11-22T10:00:${String(n).padStart(2, "0")}.000Z`;
const logEvent = (n: number, source = "container") => ({ source, line: `line ${n}`, ts: ts(n) });
/** One SSE event as the v2 document describes it: `id` = `ts`, JSON data. */
const frame = (n: number, source = "container") =>
  `id: ${ts(n)}\ndata: ${JSON.stringify(logEvent(n, source))}\n\n`;

const openStream = (res: http.ServerResponse) =>
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });

/** Writes `text` and waits until it is flushed to the socket. */
const write = (res: http.ServerResponse, text: string) =>
  new Promise<void>((resolve, reject) => res.write(text, (e) => (e ? reject(e) : resolve())));

/** Sends the frames for `from..to` and ends the response cleanly. */
const sendAndEnd =
  (from: number, to: number): Handler =>
  async (_req, res) => {
    openStream(res);
    for (let n = from; n <= to; n++) await write(res, frame(n));
    res.end();
  };

/** Sends the frames for `from..to`, then a half-written event, then drops the socket. */
const sendAndDrop =
  (from: number, to: number): Handler =>
  async (_req, res) => {
    openStream(res);
    for (let n = from; n <= to; n++) await write(res, frame(n));
    await write(res, `id: ${ts(to + 1)}\ndata: {"source":"container","li`);
    res.socket?.destroy();
  };

const v2Client = (server: SseServer, options: Parameters<typeof clientFor>[1] = {}) =>
  clientFor(server as never, { restUrl: `${server.url}/v2`, ...options });

async function collect(iterable: AsyncIterable<WorkerLogEvent>): Promise<WorkerLogEvent[]> {
  const out: WorkerLogEvent[] = [];
  for await (const event of iterable) out.push(event);
  return out;
}

describe("client.serverless.workerLogs", () => {
  it("yields { source, line, ts } from the SSE stream and ends when the server ends it", async () => {
    const server = await sseServer(sendAndEnd(1, 3));
    const client = v2Client(server);
    const events = await collect(client.serverless.workerLogs("ep1", "w/1"));
    expect(events).toEqual([logEvent(1), logEvent(2), logEvent(3)]);
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0];
    expect(req?.url.pathname).toBe("/v2/serverless/ep1/workers/w%2F1/logs");
    expect(req?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req?.headers.accept).toBe("text/event-stream");
    expect(req?.headers["last-event-id"]).toBeUndefined();
  });

  it("sends tail, since and source as query parameters (a Date as RFC 3339)", async () => {
    const server = await sseServer(sendAndEnd(1, 1), sendAndEnd(1, 1));
    const client = v2Client(server);
    await collect(client.serverless.workerLogs("ep1", "w1", { tail: 0, source: "system" }));
    await collect(client.serverless.workerLogs("ep1", "w1", { since: new Date(Date.UTC(2026, 10, 22, 10)) }));
    expect(Object.fromEntries(server.requests[0]?.url.searchParams ?? [])).toEqual({
      tail: "0",
      source: "system",
    });
    expect(Object.fromEntries(server.requests[1]?.url.searchParams ?? [])).toEqual({
      since: "2026-11-22T10:00:00.000Z",
    });
  });

  it("resumes a dropped stream with Last-Event-ID of the last event, losing and repeating no line", async () => {
    // A log of 8 lines served as the v2 document says: after the Last-Event-ID when one is sent,
    // else from the start. The first connection drops after 3 events, the second after 2 (each
    // with half of the next event written), the third ends cleanly.
    const drops = [3, 2];
    const server = await sseServer(async (req, res) => {
      const after = req.headers["last-event-id"];
      let n = after === undefined ? 1 : [1, 2, 3, 4, 5, 6, 7, 8].findIndex((i) => ts(i) === after) + 2;
      const drop = drops.shift();
      openStream(res);
      for (let sent = 0; n <= 8 && (drop === undefined || sent < drop); n++, sent++)
        await write(res, frame(n));
      if (drop === undefined) return void res.end();
      await write(res, `id: ${ts(n)}\ndata: {"source":"container","li`);
      res.socket?.destroy();
    });
    const { sleeps, sleep } = recordingSleep();
    const client = v2Client(server, { sleep });
    const events = await collect(client.serverless.workerLogs("ep1", "w1", { tail: 100 }));
    expect(events.map((e) => e.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => `line ${n}`));
    expect(server.requests.map((r) => r.headers["last-event-id"])).toEqual([undefined, ts(3), ts(5)]);
    // The same query goes along; the v2 document says Last-Event-ID takes precedence over it.
    expect(server.requests.map((r) => r.url.searchParams.get("tail"))).toEqual(["100", "100", "100"]);
    expect(sleeps).toHaveLength(2);
  });

  it("keeps the last event id across events that carry none", async () => {
    const server = await sseServer(
      async (_req, res) => {
        openStream(res);
        await write(res, frame(1));
        await write(res, `data: ${JSON.stringify(logEvent(2))}\n\n`);
        res.socket?.destroy();
      },
      sendAndEnd(3, 3),
    );
    const client = v2Client(server);
    const events = await collect(client.serverless.workerLogs("ep1", "w1"));
    expect(events.map((e) => e.line)).toEqual(["line 1", "line 2", "line 3"]);
    expect(server.requests[1]?.headers["last-event-id"]).toBe(ts(1));
  });

  it("sends no Last-Event-ID after an event with an empty id reset it", async () => {
    const server = await sseServer(
      async (_req, res) => {
        openStream(res);
        await write(res, `${frame(1)}id\ndata: ${JSON.stringify(logEvent(2))}\n\n`);
        res.socket?.destroy();
      },
      sendAndEnd(3, 3),
    );
    const events = await collect(v2Client(server).serverless.workerLogs("ep1", "w1"));
    expect(events.map((e) => e.line)).toEqual(["line 1", "line 2", "line 3"]);
    expect(server.requests.map((r) => r.headers["last-event-id"])).toEqual([undefined, undefined]);
  });

  it("gives up after maxRetries reconnects in a row that bring no event", async () => {
    const server = await sseServer((_req, res) => {
      openStream(res);
      res.flushHeaders();
      setImmediate(() => res.socket?.destroy());
    });
    const { sleeps, sleep } = recordingSleep();
    const client = v2Client(server, { sleep, maxRetries: 2 });
    const error = await collect(client.serverless.workerLogs("ep1", "w1")).catch((e) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.message).toContain("gave up after 2 reconnect attempts");
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it("counts reconnects from the last event received, and maxReconnects overrides the client's", async () => {
    // Every connection brings one new event, then drops: progress, so never "in a row".
    const server = await sseServer(
      sendAndDrop(1, 1),
      sendAndDrop(2, 2),
      sendAndDrop(3, 3),
      sendAndDrop(4, 4),
      sendAndEnd(5, 5),
    );
    const client = v2Client(server, { maxRetries: 0 });
    const events = await collect(client.serverless.workerLogs("ep1", "w1", { maxReconnects: 1 }));
    expect(events.map((e) => e.line)).toEqual([1, 2, 3, 4, 5].map((n) => `line ${n}`));
    expect(server.requests).toHaveLength(5);
  });

  it("waits as long as the stream's retry: field says before reconnecting", async () => {
    const server = await sseServer(
      async (_req, res) => {
        openStream(res);
        await write(res, `retry: 1234\n\n${frame(1)}`);
        res.socket?.destroy();
      },
      sendAndEnd(2, 2),
    );
    const { sleeps, sleep } = recordingSleep();
    const client = v2Client(server, { sleep });
    expect((await collect(client.serverless.workerLogs("ep1", "w1"))).length).toBe(2);
    expect(sleeps).toEqual([1234]);
  });

  it("retries 503 and 429 answers after their Retry-After, then streams", async () => {
    const refuse =
      (status: number): Handler =>
      (_req, res) => {
        res.writeHead(status, { "content-type": "application/problem+json", "retry-after": "2" });
        res.end(JSON.stringify({ title: "busy", status, detail: "try later" }));
      };
    const server = await sseServer(refuse(503), refuse(429), sendAndEnd(1, 1));
    const { sleeps, sleep } = recordingSleep();
    const client = v2Client(server, { sleep });
    expect(await collect(client.serverless.workerLogs("ep1", "w1"))).toEqual([logEvent(1)]);
    expect(sleeps).toEqual([2000, 2000]);
    expect(server.requests).toHaveLength(3);
  });

  it.each([
    [404, NotFoundError, "worker w1 not found"],
    [401, AuthenticationError, "bad key"],
  ])("raises the typed error for a %i answer without retrying", async (status, ErrorClass, detail) => {
    const server = await sseServer((_req, res) => {
      res.writeHead(status, { "content-type": "application/problem+json" });
      res.end(JSON.stringify({ title: "Error", status, detail: `${detail} (key ${API_KEY})` }));
    });
    const client = v2Client(server);
    const error = await collect(client.serverless.workerLogs("ep1", "w1")).catch((e) => e);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.status).toBe(status);
    expect(error.message).toContain(detail);
    expect(error.message).toContain("GET /v2/serverless/ep1/workers/w1/logs");
    expect(JSON.stringify(error.body)).not.toContain(API_KEY);
    expect(server.requests).toHaveLength(1);
  });

  it("ends with no events on a 204 answer", async () => {
    const server = await sseServer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    expect(await collect(v2Client(server).serverless.workerLogs("ep1", "w1"))).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("stops promptly with APIUserAbortError when the signal aborts a quiet stream", async () => {
    const server = await sseServer(async (_req, res) => {
      openStream(res);
      await write(res, frame(1)); // then nothing: the stream stays open
    });
    const controller = new AbortController();
    const logs = v2Client(server).serverless.workerLogs("ep1", "w1", { signal: controller.signal });
    expect((await logs.next()).value).toEqual(logEvent(1));
    const pending = logs.next();
    controller.abort();
    const error = await pending.catch((e) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    await server.requests[0]?.closed; // the connection is closed, not left open
    expect(server.requests).toHaveLength(1);
  });

  it("stops with APIUserAbortError while waiting to reconnect", async () => {
    const server = await sseServer((_req, res) => {
      res.writeHead(503, { "retry-after": "30" });
      res.end();
    });
    const controller = new AbortController();
    const client = v2Client(server, { sleep: defaultSleep });
    const logs = client.serverless.workerLogs("ep1", "w1", { signal: controller.signal });
    const pending = logs.next();
    while (server.requests.length === 0) await new Promise((r) => setImmediate(r));
    await server.requests[0]?.closed;
    controller.abort();
    expect(await pending.catch((e) => e)).toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(1);
  });

  it("closes the connection when the caller breaks out of the loop", async () => {
    const server = await sseServer(async (_req, res) => {
      openStream(res);
      await write(res, frame(1) + frame(2));
    });
    for await (const event of v2Client(server).serverless.workerLogs("ep1", "w1")) {
      expect(event).toEqual(logEvent(1));
      break;
    }
    await server.requests[0]?.closed;
  });

  it("skips comments and events of other types", async () => {
    const server = await sseServer(async (_req, res) => {
      openStream(res);
      await write(res, `: keep-alive\n\nevent: ping\ndata: {}\n\n${frame(1)}event: log\n${frame(2)}`);
      res.end();
    });
    const events = await collect(v2Client(server).serverless.workerLogs("ep1", "w1"));
    expect(events).toEqual([logEvent(1), logEvent(2)]);
  });

  it("parses events split across chunks and multi-byte characters split across writes", async () => {
    const data = JSON.stringify({ source: "container", line: "température 🌡️", ts: ts(1) });
    const bytes = Buffer.from(`id: ${ts(1)}\ndata: ${data}\n\n`);
    const server = await sseServer(async (_req, res) => {
      openStream(res);
      // One byte at a time: splits the emoji's four bytes over four writes.
      for (const byte of bytes) await new Promise<void>((r) => res.write(Buffer.from([byte]), () => r()));
      res.end();
    });
    const events = await collect(v2Client(server).serverless.workerLogs("ep1", "w1"));
    expect(events.map((e) => e.line)).toEqual(["température 🌡️"]);
  });

  it("raises ResponseValidationError for an event that is not { source, line, ts }", async () => {
    const server = await sseServer(async (_req, res) => {
      openStream(res);
      await write(res, `id: 1\ndata: {"source":"container","ts":"x"}\n\n`);
      res.end();
    });
    const error = await collect(v2Client(server).serverless.workerLogs("ep1", "w1")).catch((e) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toContain("line");
  });

  it("raises ResponseValidationError when a 200 answer is not an event stream", async () => {
    const server = await sseServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    const error = await collect(v2Client(server).serverless.workerLogs("ep1", "w1")).catch((e) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.message).toContain("not text/event-stream");
  });
});

describe("an error answer's body is bounded", () => {
  it("reads at most timeoutMs of a 503 whose body never ends, then fails with what arrived", async () => {
    let sent = 0;
    const server = await sseServer((_req, res) => {
      res.writeHead(503, { "content-type": "text/plain" });
      const timer = setInterval(() => {
        sent += 1;
        res.write("overloaded ");
      }, 20);
      res.on("close", () => clearInterval(timer));
    });
    const client = v2Client(server, { timeoutMs: 500 });
    const error = await collect(client.serverless.workerLogs("ep1", "w1", { maxReconnects: 0 })).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(APIError);
    expect(error.status).toBe(503);
    expect(String(error.body)).toMatch(/^(overloaded )+/);
    expect(sent).toBeGreaterThan(0);
  });

  it("keeps at most 64 KB of an endless error body, so memory stays bounded", async () => {
    const server = await sseServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      const chunk = "x".repeat(16 * 1024);
      const pump = () => {
        while (res.write(chunk)) {}
        res.once("drain", pump);
      };
      pump();
    });
    const client = v2Client(server, { timeoutMs: 30_000 });
    const error = await collect(client.serverless.workerLogs("ep1", "w1", { maxReconnects: 0 })).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(APIError);
    // Cut at 4 KB for the message, after reading no more than 64 KB (else this would never return).
    expect(String(error.body).length).toBeLessThanOrEqual(4096 + 3);
  });
});

/**
 * A scripted HTTP server on 127.0.0.1 (port 0) for exact transport tests: it answers requests
 * from a FIFO script (then from a fallback handler) and records every request it received.
 *
 * ```ts
 * const server = await startScriptedServer();
 * server.enqueue({ status: 503, headers: { "retry-after": "0" } }, { body: { id: "j", status: "IN_QUEUE" } });
 * ...
 * expect(server.requests.map((r) => r.status)).toEqual([503, 200]);
 * await server.close();
 * ```
 *
 * A step can also reset the connection (`reset: true`, after reading the request), hang until the
 * client gives up (`hang: true`), or wait first (`delayMs`). With the script empty and no fallback
 * the server answers 599 `script exhausted`, which fails the test visibly.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  pathname: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Which TCP connection carried it (1, 2, ...), to see keep-alive reuse. */
  connection: number;
  /** Status the script answered (undefined for a reset or hang). */
  status?: number;
}

/** What to answer. `body`: an object/array is sent as JSON; a string as is. */
export interface Reply {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: unknown;
  /** Destroy the socket instead of answering. */
  reset?: boolean;
  /** Never answer (the client must time out or abort). */
  hang?: boolean;
  /** Wait this long before answering, in ms. */
  delayMs?: number;
}

export type Step = Reply | ((req: RecordedRequest) => Reply | Promise<Reply>);

export interface ScriptedServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Appends steps to the script. */
  enqueue(...steps: Step[]): void;
  /** Answers requests once the script is empty. */
  fallback: ((req: RecordedRequest) => Reply | Promise<Reply>) | undefined;
  /** Steps not used yet. */
  readonly pending: number;
  close(): Promise<void>;
}

/** Starts a scripted server; `port` 0 picks a free one. */
export async function startScriptedServer(
  options: { port?: number; fallback?: (req: RecordedRequest) => Reply | Promise<Reply> } = {},
): Promise<ScriptedServer> {
  const script: Step[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const connectionIds = new WeakMap<Socket, number>();
  let connections = 0;
  const hung = new Set<http.ServerResponse>();

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      url: req.url ?? "/",
      pathname: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
      connection: connectionIds.get(req.socket) ?? 0,
    };
    requests.push(recorded);
    const step = script.shift();
    let reply: Reply;
    if (step !== undefined) reply = typeof step === "function" ? await step(recorded) : step;
    else if (api.fallback) reply = await api.fallback(recorded);
    else reply = { status: 599, body: { message: "script exhausted" } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.reset) {
      req.socket.destroy();
      return;
    }
    if (reply.hang) {
      hung.add(res);
      return;
    }
    const status = reply.status ?? 200;
    recorded.status = status;
    const headers: Record<string, string | string[]> = { ...reply.headers };
    let payload = "";
    if (reply.body !== undefined) {
      payload = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
        headers["content-type"] = typeof reply.body === "string" ? "text/plain" : "application/json";
      }
    }
    res.writeHead(status, headers);
    res.end(payload);
  });
  server.on("connection", (socket) => {
    connectionIds.set(socket, ++connections);
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const api: ScriptedServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    fallback: options.fallback,
    enqueue: (...steps) => {
      script.push(...steps);
    },
    get pending() {
      return script.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return api;
}

/** A port that was free a moment ago and has nothing listening on it now. */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

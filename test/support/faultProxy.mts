/**
 * A pass-through HTTP proxy on 127.0.0.1 with one-shot fault rules, for provider tests that must
 * lose an answer after the service acted (the hardest case for a create), refuse a request,
 * rewrite an answer, or run another client's request in between. Unarmed it forwards everything
 * unchanged, streaming answers through (worker-log Server-Sent Events arrive as they come), and
 * records every request it saw.
 *
 * ```ts
 * const proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
 * await host.configure({ "runpod:apiKey": key, "runpod:restUrl": `${proxy.url}/v2` });
 * proxy.arm("POST", /\/v2\/serverless$/, { kind: "lose-after" }); // the emulator creates, the answer is lost
 * ...
 * expect(proxy.seen.filter((r) => r.method === "POST")).toHaveLength(1);
 * await proxy.close();
 * ```
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  body: string;
}

/**
 * What to do with the next matching request: `lose-after`: forward, then reset the connection
 * instead of answering; `fail-after`: forward, then answer 500 (or `status`); `lose-before`: reset
 * without forwarding (after `run`, if given); `reply`: answer this without forwarding (content type
 * `application/json` below 300, else `application/problem+json`, unless given; `headers` added);
 * `rewrite`: forward
 * and edit the JSON answer; `before`: run something (another client's request), then forward.
 */
export type FaultAction =
  | { kind: "lose-after" }
  | { kind: "fail-after"; status?: number }
  | { kind: "lose-before"; run?: () => Promise<unknown> }
  | { kind: "before"; run: () => Promise<unknown> }
  | { kind: "reply"; status: number; body: unknown; contentType?: string; headers?: Record<string, string> }
  | { kind: "rewrite"; edit: (body: Record<string, unknown>) => unknown };

interface Rule {
  method: string;
  /** Matches the request path (no query). */
  path: RegExp;
  action: FaultAction;
}

/** Request headers passed on to the upstream (the client's own; hop-by-hop ones are not). */
const FORWARDED_HEADERS = ["authorization", "accept", "last-event-id"] as const;

export class FaultProxy {
  readonly seen: ProxiedRequest[] = [];
  readonly #rules: Rule[] = [];
  readonly #server: http.Server;
  readonly #upstream: string;
  /** Base URL of the proxy (`http://127.0.0.1:PORT`), set by {@link start}. */
  url = "";

  /** `upstream`: the origin to forward to, e.g. the emulator's `http://127.0.0.1:PORT`. */
  constructor(upstream: string) {
    this.#upstream = upstream;
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.#handle(req, res, Buffer.concat(chunks).toString("utf8")).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(599);
          res.end(String(error));
        });
      });
    });
  }

  /** Arms a one-shot rule for the next request with this method whose path matches. */
  arm(method: string, path: RegExp, action: FaultAction): void {
    this.#rules.push({ method, path, action });
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] as string;
    const method = req.method ?? "GET";
    this.seen.push({ method, path, body });
    const index = this.#rules.findIndex((r) => r.method === method && r.path.test(path));
    const action = index >= 0 ? this.#rules.splice(index, 1)[0]?.action : undefined;
    if (action?.kind === "lose-before") {
      await action.run?.();
      req.socket.destroy();
      return;
    }
    if (action?.kind === "before") await action.run();
    if (action?.kind === "reply") {
      const type =
        action.contentType ?? (action.status < 300 ? "application/json" : "application/problem+json");
      res
        .writeHead(action.status, { ...action.headers, "content-type": type })
        .end(JSON.stringify(action.body));
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_HEADERS) {
      if (req.headers[name] !== undefined) headers[name] = String(req.headers[name]);
    }
    if (body) headers["content-type"] = "application/json";
    const answer = await fetch(this.#upstream + req.url, { method, headers, body: body || undefined });
    if (action?.kind === "lose-after" || action?.kind === "fail-after") {
      await answer.text(); // the upstream acted; its answer never reaches the client
      if (action.kind === "lose-after") req.socket.destroy();
      else {
        res
          .writeHead(action.status ?? 500, { "content-type": "application/json" })
          .end('{"message":"internal error"}');
      }
      return;
    }
    const out: Record<string, string> = {};
    const type = answer.headers.get("content-type");
    if (type) out["content-type"] = type;
    if (action?.kind === "rewrite") {
      res.writeHead(answer.status, out).end(JSON.stringify(action.edit(JSON.parse(await answer.text()))));
      return;
    }
    res.writeHead(answer.status, out);
    if (answer.body === null) {
      res.end();
      return;
    }
    const reader = answer.body.getReader();
    res.on("close", () => void reader.cancel().catch(() => {}));
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      res.write(value);
    }
    res.end();
  }

  /** Listens on 127.0.0.1, port 0; resolves once {@link url} is set. */
  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

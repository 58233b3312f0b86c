/**
 * The per-attempt `timeoutMs` fires within 10% + 50 ms of what was asked. undici's own
 * `headersTimeout` / `bodyTimeout` run on its coarse fast timers (up to ~1 s late, ~0.5 s early:
 * 200 ms fired after 1001 ms), so short timeouts must not be handed to them. These tests assert
 * the timer chosen and the options undici received (seen on its `undici:request:create`
 * diagnostics channel), not wall time, which a loaded machine would make flaky.
 */
import diagnostics from "node:diagnostics_channel";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { APITimeoutError, attemptTimers, COARSE_TIMEOUT_MIN_MS, DEFAULT_TIMEOUT_MS } from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { clientFor, job } from "./helpers";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

/** The header and body timeouts undici was given for each request to `origin`, in order. */
function undiciTimeouts(origin: string): {
  seen: { headersTimeout: number; bodyTimeout: number }[];
  stop(): void;
} {
  const seen: { headersTimeout: number; bodyTimeout: number }[] = [];
  const onCreate = (message: unknown) => {
    const { request } = message as {
      request: { origin: string; headersTimeout: number; bodyTimeout: number };
    };
    if (String(request.origin) === origin) {
      seen.push({ headersTimeout: request.headersTimeout, bodyTimeout: request.bodyTimeout });
    }
  };
  diagnostics.subscribe("undici:request:create", onCreate);
  return { seen, stop: () => diagnostics.unsubscribe("undici:request:create", onCreate) };
}

describe("which timer bounds an attempt", () => {
  it("short timeouts get a native timer of their own; undici's coarse timers are off for them", () => {
    for (const ms of [1, 200, 1500, 5000, COARSE_TIMEOUT_MIN_MS - 1]) {
      expect([ms, attemptTimers(ms)]).toEqual([ms, { precise: true, headersTimeout: 0, bodyTimeout: 0 }]);
    }
  });

  it("long timeouts (the 60 s default among them) stay on undici's timers, whose error is within 10% there", () => {
    // undici's fast timers err by at most ~1 s late / ~0.5 s early (lib/util/timers.js ticks every
    // 499 ms); 10% + 50 ms covers that from 9.5 s up.
    expect(COARSE_TIMEOUT_MIN_MS * 0.1 + 50).toBeGreaterThanOrEqual(1000);
    for (const ms of [COARSE_TIMEOUT_MIN_MS, DEFAULT_TIMEOUT_MS]) {
      expect(attemptTimers(ms)).toEqual({ precise: false, headersTimeout: ms, bodyTimeout: ms });
    }
  });

  it("passes undici no coarse timeout for a 200 ms call, and throws APITimeoutError for a hung server", async () => {
    const tap = undiciTimeouts(server.url);
    try {
      server.enqueue({ hang: true });
      const started = performance.now();
      const error = await clientFor(server, { timeoutMs: 200 })
        .endpoint("ep")
        .run({ input: {} })
        .catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(error).toBeInstanceOf(APITimeoutError);
      expect((error as APITimeoutError).message).toContain("timed out after 200 ms");
      // A native timer never fires early (a coarse one may, by up to ~0.5 s).
      expect(elapsed).toBeGreaterThanOrEqual(195);
      expect(tap.seen).toEqual([{ headersTimeout: 0, bodyTimeout: 0 }]);
    } finally {
      tap.stop();
    }
  });

  it("passes the default timeout to undici as before (no per-request timer on the fast path)", async () => {
    const tap = undiciTimeouts(server.url);
    try {
      server.enqueue({ body: job("COMPLETED") });
      await clientFor(server).endpoint("ep").status("j");
      expect(tap.seen).toEqual([{ headersTimeout: DEFAULT_TIMEOUT_MS, bodyTimeout: DEFAULT_TIMEOUT_MS }]);
    } finally {
      tap.stop();
    }
  });
});

describe("timeoutMs bounds the whole answer, pauses inside the body included", () => {
  let stalled: http.Server;
  let url: string;
  beforeEach(async () => {
    // Sends the headers and half a body, then stalls (until the test closes the server).
    stalled = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":"j","status":');
    });
    await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", () => resolve()));
    url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    stalled.closeAllConnections();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));
  });

  it("throws APITimeoutError when the body stalls after the headers", async () => {
    const client = clientFor({ url } as ScriptedServer, { timeoutMs: 300, maxRetries: 0 });
    const error = await client
      .endpoint("ep")
      .status("j")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
  });

  it("ends an answer that trickles in, each pause under the timeout, at the timeout", async () => {
    stalled.removeAllListeners("request");
    let sent = 0;
    stalled.on("request", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      // A byte every 100 ms, for ever: each pause is far under the 600 ms timeout.
      const timer = setInterval(() => {
        sent += 1;
        res.write(" ");
      }, 100);
      res.on("close", () => clearInterval(timer));
    });
    const client = clientFor({ url } as ScriptedServer, { timeoutMs: 600, maxRetries: 0 });
    const error = await client
      .endpoint("ep")
      .status("j")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toMatch(/timed out after 600 ms/);
    // The server kept the pauses short: the timer that fired bounds the whole answer, not a pause.
    expect(sent).toBeGreaterThan(1);
  });

  it("ends a trickled answer on the coarse path too: a long timeout bounds the whole body", async () => {
    // The body's deadline is epoch time (`Date.now()`), swept every BODY_DEADLINE_SWEEP_MS of real
    // time; undici's own timers run on a clock of their own (lib/util/timers.js), never on Date. So
    // with only Date faked, moving it past the deadline once the request is sent lets the sweep end
    // the body at its next real tick, while undici's 10 s timers stay far off: the sweep alone ends it.
    vi.useFakeTimers({ toFake: ["Date"] });
    const tap = undiciTimeouts(url);
    try {
      stalled.removeAllListeners("request");
      stalled.on("request", (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" });
        // A byte every 400 ms: undici's body timer (a pause bound) would never fire.
        const timer = setInterval(() => res.write(" "), 400);
        res.on("close", () => clearInterval(timer));
        // The attempt's deadline was set when it was sent: move epoch time past it.
        vi.setSystemTime(Date.now() + COARSE_TIMEOUT_MIN_MS);
      });
      const client = clientFor({ url } as ScriptedServer, {
        timeoutMs: COARSE_TIMEOUT_MIN_MS,
        maxRetries: 0,
      });
      const error = await client
        .endpoint("ep")
        .status("j")
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APITimeoutError);
      expect((error as Error).message).toMatch(new RegExp(`timed out after ${COARSE_TIMEOUT_MIN_MS} ms`));
      // The coarse path: undici had the timeouts, and no native timer of the attempt's own.
      expect(tap.seen).toEqual([
        { headersTimeout: COARSE_TIMEOUT_MIN_MS, bodyTimeout: COARSE_TIMEOUT_MIN_MS },
      ]);
    } finally {
      tap.stop();
      vi.useRealTimers();
    }
  });
});

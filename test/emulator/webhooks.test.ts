import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Harness, harness, untilStatus } from "./helpers";

interface Receiver {
  url: string;
  bodies: unknown[];
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 answering the given statuses in order (then 200). */
async function receiver(statuses: number[] = []): Promise<Receiver> {
  const bodies: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => {
      bodies.push(JSON.parse(text));
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let h: Harness;
let r: Receiver;
afterEach(async () => {
  await h?.close();
  await r?.close();
});

describe("webhooks", () => {
  it("POSTs the status body when the job completes", async () => {
    r = await receiver();
    h = await harness();
    const run = await h.call("POST", "/v2/echo/run", { input: { output: "hi" }, webhook: r.url });
    await vi.waitFor(() => expect(r.bodies).toHaveLength(1), { timeout: 10_000 });
    const status = await untilStatus(h, "echo", run.body.id, "COMPLETED");
    expect(r.bodies[0]).toEqual(status.body);
    expect(h.emu.stats().webhooks).toEqual([
      { jobId: run.body.id, url: r.url, attempt: 1, status: 200, ok: true },
    ]);
  });

  it("retries a failed delivery twice more, each after the retry delay", async () => {
    r = await receiver([500, 503, 200]);
    h = await harness();
    await h.call("POST", "/v2/echo/run", { input: { fail: "bad" }, webhook: r.url });
    await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(1), { timeout: 10_000 });
    expect(h.clock.pending).toBe(2); // the result retention timer and the retry
    await h.clock.advance(9999);
    expect(h.clock.pending).toBe(2); // the retry has not fired early
    expect(r.bodies).toHaveLength(1);
    await h.clock.advance(1);
    await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(2), { timeout: 10_000 });
    await h.clock.advance(10_000);
    await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(3), { timeout: 10_000 });
    expect(h.emu.stats().webhooks.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(r.bodies[2]).toMatchObject({ status: "FAILED", error: "bad" });
  });

  it("gives up after three attempts", async () => {
    r = await receiver([500, 500, 500, 500]);
    h = await harness({ webhookRetryDelayMs: 500 });
    await h.call("POST", "/v2/echo/run", { input: {}, webhook: r.url });
    for (let n = 1; n <= 3; n++) {
      await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(n), { timeout: 10_000 });
      // After attempts 1 and 2 a retry is scheduled beside the retention timer; after 3, none.
      expect(h.clock.pending).toBe(n < 3 ? 2 : 1);
      await h.clock.advance(500);
    }
    await h.clock.advance(60_000);
    expect(h.clock.pending).toBe(1); // only the result retention timer is left
    expect(r.bodies).toHaveLength(3);
  });

  it("retries when the receiver cannot be reached", async () => {
    const gone = await receiver();
    const url = gone.url;
    await gone.close();
    h = await harness({ webhookRetryDelayMs: 100 });
    await h.call("POST", "/v2/echo/run", { input: {}, webhook: url });
    await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(1), { timeout: 10_000 });
    expect(h.emu.stats().webhooks[0]).toMatchObject({ ok: false, error: expect.any(String) });
    await h.clock.advance(100);
    await vi.waitFor(() => expect(h.emu.stats().webhooks).toHaveLength(2), { timeout: 10_000 });
  });
});

/**
 * The emulator under load at its documented limits (the service's table: `run` 1000 per 10 s and
 * 200 in flight, `status` 2000 per 10 s and 400 in flight, per endpoint): it keeps answering,
 * loses no job, and its `/health` counts match what was submitted.
 */
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import { SERVICE_RATE_LIMITS } from "../../src/client/limits";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

const API_KEY = "load-test-key-b81c";
const RUN_LIMIT = SERVICE_RATE_LIMITS.run.requests;

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], endpoints: ["load:50", "burst:50"] });
});

afterAll(async () => {
  await emu?.close();
});

describe("emulator under load at the service's limits", () => {
  it("ten clients submitting a full run window (1000 jobs) and long-polling each get every job done", async () => {
    const retries: string[] = [];
    const clients = Array.from(
      { length: 10 },
      () =>
        new RunpodClient({
          apiKey: API_KEY,
          serverlessUrl: emu.serverlessUrl,
          restUrl: emu.restUrl,
          logger: { debug: (line) => retries.push(line) },
        }),
    );
    const perClient = RUN_LIMIT / clients.length;
    const done = await Promise.all(
      clients.flatMap((client, c) =>
        Array.from({ length: perClient }, async (_, i) => {
          const endpoint = client.endpoint("load");
          const job = await endpoint.run({
            input: { sleepMs: (c * perClient + i) % 50, n: c * perClient + i },
          });
          return endpoint.waitForJob(job.id, { timeoutMs: 30_000 });
        }),
      ),
    );
    expect(done).toHaveLength(RUN_LIMIT);
    expect(done.every((job) => job.status === "COMPLETED")).toBe(true);
    // Every input came back once: no job lost, none answered for another.
    const outputs = done.map((job) => (job.output as { n: number }).n).sort((a, b) => a - b);
    expect(outputs).toEqual(Array.from({ length: RUN_LIMIT }, (_, n) => n));
    const health = await clients[0]!.endpoint("load").health();
    expect(health.jobs).toMatchObject({ completed: RUN_LIMIT, failed: 0, inProgress: 0, inQueue: 0 });
    expect(emu.stats().submitted.load).toBe(RUN_LIMIT);
    // The client-side limiter kept the submissions inside the service's budget.
    expect(retries.filter((line) => line.includes("POST") && line.includes("429"))).toEqual([]);
  }, 60_000);

  it("a raw burst over the run limit gets exactly the budget accepted and the rest 429 with Retry-After, every request answered", async () => {
    const total = RUN_LIMIT + 100;
    const agent = new Agent({ connections: 100 });
    const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
    const base = `${emu.serverlessUrl}/v2/burst`;
    const answers: Array<{ status: number; retryAfter?: string }> = [];
    let healthDuringBurst: number | undefined;
    try {
      const sends = Array.from({ length: total }, async (_, i) => {
        if (i === total / 2) {
          const health = await request(`${base}/health`, { headers, dispatcher: agent });
          await health.body.json();
          healthDuringBurst = health.statusCode;
        }
        const answer = await request(`${base}/run`, {
          method: "POST",
          headers,
          body: JSON.stringify({ input: { sleepMs: 0 } }),
          dispatcher: agent,
        });
        await answer.body.json();
        answers.push({
          status: answer.statusCode,
          retryAfter: answer.headers["retry-after"] as string | undefined,
        });
      });
      await Promise.all(sends);
    } finally {
      await agent.close();
    }
    expect(answers).toHaveLength(total);
    const accepted = answers.filter((a) => a.status === 200).length;
    const limited = answers.filter((a) => a.status === 429);
    expect(accepted).toBe(RUN_LIMIT);
    expect(limited).toHaveLength(total - RUN_LIMIT);
    expect(limited.every((a) => Number(a.retryAfter) >= 1)).toBe(true);
    expect(healthDuringBurst).toBe(200);
    // Every accepted job runs to the end, and /health counts exactly those.
    await vi.waitFor(
      async () => {
        const health = await new RunpodClient({
          apiKey: API_KEY,
          serverlessUrl: emu.serverlessUrl,
          restUrl: emu.restUrl,
        })
          .endpoint("burst")
          .health();
        expect(health.jobs).toMatchObject({ completed: RUN_LIMIT, inProgress: 0, inQueue: 0 });
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(emu.stats().submitted.burst).toBe(RUN_LIMIT);
  }, 60_000);
});

/**
 * An endpoint update driven through the provider's operations entry point on a fake clock: the
 * settings carry the clock, and the update's rollout wait (its reads of the workers, its deadline)
 * runs on it. A 127.0.0.1 server answers the workers from a recorded rolling update by the fake
 * clock's time, so the test says exactly when the update returns, with no wall-clock waits.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunpodSettings } from "../../src/provider/config";
import { operations } from "../../src/provider/serverlessEndpoint/operations";
import { FakeClock } from "../support/fakeClock";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const API_KEY = "operations-clock-test-key";
const rolling = JSON.parse(
  readFileSync(path.join(__dirname, "..", "fixtures", "recordings", "workers-rolling-update.json"), "utf8"),
) as { answers: { atMs: number; answer: { endpointVersion: number } }[] };

const endpoint = {
  id: "roll",
  name: "roll",
  type: "QUEUE",
  image: "acme/worker:2",
  env: {},
  gpu: { pools: ["ADA_24"], count: 1 },
  workers: { min: 0, max: 2 },
  createdAt: "2026-11-25T00:00:00Z",
};
const releases = {
  endpointVersion: 2,
  rollout: { inProgress: false, workersOnLatest: 2, workersTotal: 2, percentOnLatest: 100 },
  releases: [],
};

/**
 * A fake clock that says when a timer is set for a given time. The update's reads go over real
 * HTTP, which the fake clock does not see; the test moves time only once the wait has scheduled
 * its next read, so no read is skipped however slow the machine.
 */
class SignallingClock extends FakeClock {
  #waiting: { at: number; resolve: () => void }[] = [];
  #set = new Map<unknown, number>();

  override setTimeout(fn: () => void, ms: number): unknown {
    const handle = super.setTimeout(() => {
      this.#set.delete(handle);
      fn();
    }, ms);
    const at = this.now() + Math.max(0, ms);
    this.#set.set(handle, at);
    for (const w of this.#waiting.filter((w) => w.at === at)) w.resolve();
    this.#waiting = this.#waiting.filter((w) => w.at !== at);
    return handle;
  }

  override clearTimeout(handle: unknown): void {
    this.#set.delete(handle);
    super.clearTimeout(handle);
  }

  /** Resolves once a timer is pending for time `at` (at once if one is). */
  timerAt(at: number): Promise<void> {
    if ([...this.#set.values()].includes(at)) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push({ at, resolve }));
  }
}

/** Runs `promise` to its end, moving the clock a poll interval each time the wait schedules a read. */
async function drive<T>(clock: SignallingClock, promise: Promise<T>, pollMs = 1_000) {
  let outcome: { ok: true; value: T; at: number } | { ok: false; error: unknown; at: number } | undefined;
  const ended = promise.then(
    (value) => {
      outcome = { ok: true, value, at: clock.now() };
    },
    (error: unknown) => {
      outcome = { ok: false, error, at: clock.now() };
    },
  );
  while (outcome === undefined) {
    await Promise.race([ended, clock.timerAt(clock.now() + pollMs)]);
    if (outcome === undefined) await clock.advance(pollMs);
  }
  return outcome as NonNullable<typeof outcome>;
}

let server: ScriptedServer;
const clock = new SignallingClock();
const workerReadsAt: number[] = [];
beforeAll(async () => {
  server = await startScriptedServer();
  server.fallback = (req) => {
    if (req.method === "GET" && req.pathname === "/v2/serverless/roll/workers") {
      workerReadsAt.push(clock.now());
      const due = rolling.answers.filter((a) => a.atMs <= clock.now());
      return { body: due[due.length - 1]?.answer };
    }
    if (req.method === "GET" && req.pathname === "/v2/serverless/roll/releases") return { body: releases };
    if (req.pathname === "/v2/serverless/roll") return { body: endpoint };
    return { status: 404, body: { message: "not in this test" } };
  };
});
afterAll(async () => {
  await server?.close();
});

it("an endpoint update waits out its rollout on the clock the settings give, returning when no worker is stale", async () => {
  const settings: RunpodSettings = {
    apiKey: API_KEY,
    restUrl: `${server.url}/v2`,
    serverlessUrl: server.url,
    clock,
  };
  const olds = { ...endpoint, rollout: "wait" };
  const news = { ...olds, image: "acme/worker:2", rolloutTimeoutMs: 60_000 };
  const ended = await drive(clock, operations.update(settings, "roll", olds, news));
  expect(ended).toMatchObject({ ok: true });
  // The recording's last stale worker is replaced at 4 s: reads once a second until then.
  expect(workerReadsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  expect(ended.at).toBe(4_000);
  expect((ended as { value: { outs: Record<string, unknown> } }).value.outs).toMatchObject({ version: 2 });
});

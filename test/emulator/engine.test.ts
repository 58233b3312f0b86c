import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/emulator/clock";
import { EngineClosedError, JobEngine } from "../../src/emulator/jobs/engine";
import { WebhookSender } from "../../src/emulator/webhooks";

function engineOn(clock: ManualClock): JobEngine {
  return new JobEngine({
    clock,
    endpoints: [{ id: "ep", workersMax: 1 }],
    retention: { runMs: 1_800_000, runsyncMs: 60_000, maxBytes: 256_000_000, maxJobs: 100_000 },
    webhooks: new WebhookSender(clock),
  });
}

describe("JobEngine.close", () => {
  it("leaves no timer behind and changes no count, even as aborted handlers settle later", async () => {
    const clock = new ManualClock();
    const engine = engineOn(clock);
    const failed = engine.submit("ep", { input: { fail: "boom" } }, "run");
    await clock.settle();
    expect(failed.status).toBe("FAILED");
    const running = engine.submit("ep", { input: { sleepMs: 100_000 } }, "run");
    const queued = engine.submit("ep", { input: {} }, "run");
    await clock.settle();
    expect(running.status).toBe("IN_PROGRESS");
    expect(queued.status).toBe("IN_QUEUE");
    expect(clock.pending).toBeGreaterThan(0);
    const counts = engine.counters("ep");

    engine.close();
    await clock.settle(); // the aborted handler of `running` rejects now
    expect(clock.pending).toBe(0);
    expect(engine.counters("ep")).toEqual(counts);
    expect(running.status).toBe("IN_PROGRESS");
    expect(running.expiryTimer).toBeUndefined();

    // Between engine.close() and the server's close: refused, and still no timer.
    expect(() => engine.submit("ep", { input: {} }, "run")).toThrow(EngineClosedError);
    expect(() => engine.submit("ep", { input: {} }, "run")).toThrow(/emulator is closing/);
    expect(() => engine.retry(failed)).toThrow(EngineClosedError);
    expect(() => engine.cancel(queued)).toThrow(EngineClosedError);
    expect(() => engine.purgeQueue("ep")).toThrow(EngineClosedError);
    engine.setResultTtl(failed, 1000);
    await engine.waitTerminal(running, 60_000);
    await clock.settle();
    expect(clock.pending).toBe(0);
    expect(engine.counters("ep")).toEqual(counts);
    expect([failed.status, queued.status]).toEqual(["FAILED", "IN_QUEUE"]);
  });
});

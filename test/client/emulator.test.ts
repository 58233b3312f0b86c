/**
 * The job interface against the emulator: every operation end to end, and waitForJob's request
 * economy on a server that supports /status-sync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Endpoint, JobWaitTimeoutError, RunpodClient, type StreamChunk } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

let emu: RunningEmulator;
let ep: Endpoint;
beforeAll(async () => {
  emu = await startEmulator({ port: 0, endpoints: ["echo:3"] });
  ep = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  }).endpoint("echo");
});
afterAll(async () => {
  await emu.close();
});
const requestsDuring = async <T>(fn: () => Promise<T>): Promise<{ result: T; requests: number }> => {
  const before = emu.stats().requests;
  const result = await fn();
  return { result, requests: emu.stats().requests - before };
};

describe("against the emulator", () => {
  it("runs a job and waits for it with one long poll: two requests in all", async () => {
    const seen: string[] = [];
    const { result, requests } = await requestsDuring(async () => {
      const { id } = await ep.run({ input: { sleepMs: 400, output: { ok: 1 } } });
      return ep.waitForJob(id, { onStatus: (job) => seen.push(job.status) });
    });
    expect(result).toMatchObject({ status: "COMPLETED", output: { ok: 1 } });
    expect(requests).toBe(2);
    expect(seen.at(-1)).toBe("COMPLETED");
  });

  it("returns a FAILED job with its error", async () => {
    const { id } = await ep.run({ input: { fail: "no GPU today" } });
    expect(await ep.waitForJob(id)).toMatchObject({ status: "FAILED", error: "no GPU today" });
  });

  it("runSync returns the finished job, or the running one when wait ends first", async () => {
    expect(await ep.runSync({ input: { hello: "world" } }, { wait: 5000 })).toMatchObject({
      status: "COMPLETED",
      output: { hello: "world" },
    });
    const early = await ep.runSync({ input: { sleepMs: 3000 } }, { wait: 1000 });
    expect(["IN_QUEUE", "IN_PROGRESS"]).toContain(early.status);
    await ep.cancel(early.id);
  });

  it("streams the chunks a job yields, then ends", async () => {
    const { id } = await ep.run({ input: { stream: ["a", "b", "c"], sleepMs: 50 } });
    const chunks: StreamChunk[] = [];
    for await (const chunk of ep.stream(id)) chunks.push(chunk);
    expect(chunks.map((c) => c.output)).toEqual(["a", "b", "c"]);
  });

  it("cancels, retries, reads status with ttl, purges and reports health", async () => {
    const { id } = await ep.run({ input: { sleepMs: 10_000 } });
    expect((await ep.cancel(id)).status).toBe("CANCELLED");
    const failed = await ep.run({ input: { fail: "once" } });
    await ep.waitForJob(failed.id);
    expect((await ep.retry(failed.id)).id).toBe(failed.id);
    await ep.waitForJob(failed.id);
    expect((await ep.status(failed.id, { ttl: 60_000 })).status).toBe("FAILED");
    expect(await ep.purgeQueue()).toMatchObject({ status: "completed" });
    const health = await ep.health();
    expect(health.jobs.failed).toBeGreaterThanOrEqual(1);
    expect(health.workers.idle + health.workers.running).toBe(3);
  });

  it("gives up after timeoutMs with the last status, and the job keeps running", async () => {
    const { id } = await ep.run({ input: { sleepMs: 5000 } });
    const e = (await ep.waitForJob(id, { timeoutMs: 1500 }).catch((x: unknown) => x)) as JobWaitTimeoutError;
    expect(e).toBeInstanceOf(JobWaitTimeoutError);
    expect((e.lastStatus as { status: string }).status).toBe("IN_PROGRESS");
    await ep.cancel(id);
  });
});

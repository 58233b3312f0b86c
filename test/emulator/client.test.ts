/**
 * The project's own client against the emulator (real clock, short jobs): the two must agree on
 * every wire shape, in both management dialects.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadRequestError, NotFoundError, RateLimitError, RunpodClient } from "../../src/client/index";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index";

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKeys: ["client-key"], endpoints: ["echo:2"] });
});
afterAll(async () => {
  await emu.close();
});

const client = (restUrl = emu.restUrl, extra: Partial<ConstructorParameters<typeof RunpodClient>[0]> = {}) =>
  new RunpodClient({ apiKey: emu.apiKey, restUrl, serverlessUrl: emu.serverlessUrl, ...extra });

describe("RunpodClient against the emulator", () => {
  it("runs a job, waits for it, and reads its stream", async () => {
    const ep = client().endpoint("echo");
    const job = await ep.run({ input: { stream: ["x", "y"], sleepMs: 20 } });
    expect(job.status).toBe("IN_QUEUE");
    const chunks: unknown[] = [];
    for await (const chunk of ep.stream(job.id)) chunks.push(chunk);
    expect(chunks).toEqual([{ output: "x" }, { output: "y" }]);
    const done = await ep.waitForJob(job.id, { timeoutMs: 10_000 });
    expect(done).toMatchObject({ id: job.id, status: "COMPLETED", output: ["x", "y"] });
  });

  it("runSync, health, cancel and purge speak the same shapes", async () => {
    const ep = client().endpoint("echo");
    expect(await ep.runSync({ input: { output: 7 } })).toMatchObject({ status: "COMPLETED", output: 7 });
    const long = await ep.run({ input: { sleepMs: 60_000 } });
    expect((await ep.cancel(long.id)).status).toBe("CANCELLED");
    expect(await ep.purgeQueue()).toEqual({ removed: 0, status: "completed" });
    expect((await ep.health()).workers).toEqual({
      idle: 2,
      initializing: 0,
      ready: 2,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    await expect(ep.status("no-such-job")).rejects.toBeInstanceOf(NotFoundError);
  });

  for (const dialect of ["v1", "v2"] as const) {
    it(`manages registry auths and volumes over REST ${dialect}`, async () => {
      const c = client(dialect === "v1" ? emu.restUrl : emu.restUrlV2);
      const name = `reg-${dialect}`;
      const reg = await c.registryAuths.create({ name, username: "u", password: "p" });
      expect((await c.registryAuths.list()).map((r) => r.name)).toContain(name);
      await expect(c.registryAuths.create({ name, username: "u", password: "p" })).rejects.toBeInstanceOf(
        BadRequestError,
      );
      await c.registryAuths.delete(reg.id);
      await expect(c.registryAuths.get(reg.id)).rejects.toBeInstanceOf(NotFoundError);
      const vol = await c.networkVolumes.create({ name: "v", size: 20, dataCenterId: "EU-RO-1" });
      expect(vol).toMatchObject({ name: "v", size: 20, dataCenterId: "EU-RO-1" });
      expect((await c.networkVolumes.update(vol.id, { size: 30 })).size).toBe(30);
      expect(await c.networkVolumes.get(vol.id)).toMatchObject({ id: vol.id, size: 30 });
      await c.networkVolumes.delete(vol.id);
    });
  }

  it("sees a 429 from the emulator's limits as RateLimitError when it has no retries left", async () => {
    const local = await startEmulator({
      apiKeys: ["k"],
      rateLimits: { "purge-queue": { requests: 1, windowMs: 60_000 } },
    });
    try {
      const ep = new RunpodClient({
        apiKey: "k",
        restUrl: local.restUrl,
        serverlessUrl: local.serverlessUrl,
        rateLimits: false,
        maxRetries: 0,
      }).endpoint("echo");
      await ep.purgeQueue();
      const err = await ep.purgeQueue().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitError);
      expect((err as RateLimitError).headers["retry-after"]).toBe("60");
    } finally {
      await local.close();
    }
  });
});

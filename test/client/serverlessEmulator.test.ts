/**
 * The REST v2 serverless client driven end to end against the emulator: a template, an
 * endpoint made from it, a job through `client.endpoint(id)`, an image change rolled out worker by
 * worker as `releases()` and `workers()` show it, the replaced worker's logs (tail, since), a live
 * worker's logs resumed with Last-Event-ID after a silence, and deletion. Both sides parse with
 * the one wire module (src/wire/serverless.ts), so the client reading the emulator's answers is
 * the check that the two agree.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, RunpodClient, type ServerlessWorker, type WorkerLogEvent } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

let emu: RunningEmulator;
let client: RunpodClient;
beforeAll(async () => {
  // rolloutMs: how long stale workers keep serving before the first replacement. Long enough that
  // the reads right after the PATCH see the rollout in progress, short enough to finish quickly.
  emu = await startEmulator({ port: 0, rolloutMs: 1000 });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  });
});
afterAll(async () => {
  await emu.close();
});

/** Polls `read` until `done` holds for its value (the test's own timeout bounds it). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function collect(events: AsyncIterable<WorkerLogEvent>): Promise<WorkerLogEvent[]> {
  const out: WorkerLogEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const text = (events: WorkerLogEvent[]) => events.map((e) => `${e.source}: ${e.line}`);

describe("client.serverless and client.templates against the emulator", () => {
  it("make a template and an endpoint, run a job, roll out a new image, read worker logs, delete", async () => {
    const template = await client.templates.create({
      name: "e2e-template",
      image: "acme/worker:1",
      env: { MODE: "a" },
      serverless: true,
    });
    expect(await client.templates.get(template.id)).toMatchObject({
      id: template.id,
      image: "acme/worker:1",
      env: { MODE: "a" },
      serverless: true,
    });
    expect((await client.templates.list()).map((t) => t.id)).toContain(template.id);

    const created = await client.serverless.create({
      name: "e2e",
      type: "QUEUE",
      templateId: template.id,
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { min: 0, max: 1 },
    });
    expect(created).toMatchObject({
      name: "e2e",
      image: "acme/worker:1",
      env: { MODE: "a" },
      templateId: template.id,
      workers: { max: 1 },
    });
    expect(created.requestUrls?.run).toBe(`${emu.serverlessUrl}/v2/${created.id}/run`);
    expect((await client.serverless.list()).map((e) => e.id)).toContain(created.id);

    const job = await client.endpoint(created.id).runSync({ input: { output: { ok: 1 } } });
    expect(job).toMatchObject({ status: "COMPLETED", output: { ok: 1 } });

    const before = await client.serverless.workers(created.id);
    expect(before.endpointVersion).toBe(1);
    expect(before.workers).toHaveLength(1);
    const old = before.workers[0] as ServerlessWorker;
    expect(old).toMatchObject({ version: 1, isStale: false, image: "acme/worker:1" });
    expect(before.summary.total).toBe(1);

    // A new image is a new release; the old worker goes on serving, stale, until it is replaced.
    const updated = await client.serverless.update(created.id, { image: "acme/worker:2" });
    expect(updated.image).toBe("acme/worker:2");
    const rolling = await client.serverless.releases(created.id);
    expect(rolling.endpointVersion).toBe(2);
    expect(rolling.releases.map((r) => r.version)).toEqual([2, 1]);
    expect(rolling.releases[0]?.diff).toEqual([
      { field: "image", old: "acme/worker:1", new: "acme/worker:2" },
    ]);
    expect(rolling.rollout).toEqual({
      inProgress: true,
      workersOnLatest: 0,
      workersTotal: 1,
      percentOnLatest: 0,
    });
    const stale = await client.serverless.workers(created.id);
    expect(stale.workers).toMatchObject([{ id: old.id, version: 1, isStale: true }]);

    const done = await until(
      () => client.serverless.releases(created.id),
      (r) => !r.rollout.inProgress,
    );
    expect(done.rollout).toEqual({
      inProgress: false,
      workersOnLatest: 1,
      workersTotal: 1,
      percentOnLatest: 100,
    });
    expect(done.releases.map((r) => [r.version, r.workerCount])).toEqual([
      [2, 1],
      [1, 0],
    ]);
    const after = await until(
      () => client.serverless.workers(created.id),
      (w) => w.workers.every((x) => x.status !== "INITIALIZING"),
    );
    expect(after.workers).toHaveLength(1);
    const fresh = after.workers[0] as ServerlessWorker;
    expect(fresh).toMatchObject({ version: 2, isStale: false, image: "acme/worker:2" });
    expect(fresh.id).not.toBe(old.id);

    // The replaced worker's stream ends after its kept log, so a plain for-await finishes.
    const history = await collect(client.serverless.workerLogs(created.id, old.id, { tail: 5000 }));
    expect(text(history)).toEqual(
      expect.arrayContaining([
        `container: job ${job.id} started (version 1)`,
        "system: worker is stale: the endpoint is now at version 2",
        "system: worker stopping: replaced by a worker of version 2",
      ]),
    );
    expect(text(await collect(client.serverless.workerLogs(created.id, old.id, { tail: 2 })))).toEqual(
      text(history.slice(-2)),
    );
    const from = history[1] as WorkerLogEvent;
    const since = await collect(client.serverless.workerLogs(created.id, old.id, { since: from.ts }));
    expect(since[0]).toEqual(from); // since is inclusive
    expect(text(since)).toEqual(text(history.slice(history.findIndex((e) => e.ts === from.ts))));
    const system = await collect(client.serverless.workerLogs(created.id, old.id, { source: "system" }));
    expect(system.length).toBeGreaterThan(0);
    expect(system.every((e) => e.source === "system")).toBe(true);

    // A live worker's stream stays open; with idleTimeoutMs a silence counts as a drop, and the
    // client reopens it with Last-Event-ID: the next job's lines arrive once each.
    const abort = new AbortController();
    const live = client.serverless.workerLogs(created.id, fresh.id, {
      tail: 0,
      idleTimeoutMs: 200,
      maxReconnects: 50,
      signal: abort.signal,
    });
    const seen: WorkerLogEvent[] = [];
    const reading = (async () => {
      try {
        for await (const event of live) {
          seen.push(event);
          if (seen.filter((e) => e.line.includes("completed")).length === 2) break;
        }
      } finally {
        abort.abort();
      }
    })();
    const first = await client.endpoint(created.id).runSync({ input: { output: 1 } });
    await until(
      async () => seen,
      (s) => s.some((e) => e.line.includes(`job ${first.id} completed`)),
    );
    // Quiet: once idleTimeoutMs passes with no event (undici checks its body timeout on a coarse
    // timer, so this takes up to about a second more), the client treats the stream as dropped and
    // reopens it. The only requests made while the test waits are those reconnects.
    const requestsBefore = emu.stats().requests;
    await until(
      async () => emu.stats().requests,
      (n) => n > requestsBefore,
    );
    const second = await client.endpoint(created.id).runSync({ input: { output: 2 } });
    await reading;
    expect(text(seen)).toEqual([
      `container: job ${first.id} started (version 2)`,
      expect.stringMatching(new RegExp(`^container: job ${first.id} completed`)),
      `container: job ${second.id} started (version 2)`,
      expect.stringMatching(new RegExp(`^container: job ${second.id} completed`)),
    ]);

    await client.serverless.delete(created.id);
    await expect(client.serverless.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
    // Deleting an endpoint deletes its bound template too (the v2 document's deleteEndpoint).
    await expect(client.templates.get(template.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.templates.delete(template.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

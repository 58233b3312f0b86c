/**
 * Worker logs as Server-Sent Events:
 * `/v2/serverless/{id}/workers/{workerId}/logs` with `tail`, `since`, `source` and `Last-Event-ID`,
 * read with plain undici. A replaced worker's stream ends after its kept log, so the backfill rules
 * can be checked exactly; a live worker's stream stays open and carries new lines as they come.
 */
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type Harness, harness, KEY } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Event {
  id: string;
  data: { ts: string; source: string; line: string };
}

/**
 * Reads SSE events from `path` until the stream ends or `count` events arrived (then hangs up).
 * Also returns the answer's status and headers.
 */
async function readEvents(
  path: string,
  options: { count?: number; headers?: Record<string, string>; onOpen?: () => Promise<void> } = {},
) {
  const abort = new AbortController();
  const res = await request(`${(h as Harness).emu.serverlessUrl}${path}`, {
    headers: { authorization: `Bearer ${KEY}`, ...options.headers },
    signal: abort.signal,
  });
  const events: Event[] = [];
  if (res.statusCode !== 200) {
    return { status: res.statusCode, headers: res.headers, events, body: await res.body.json() };
  }
  const opened = options.onOpen?.();
  let buffer = "";
  try {
    for await (const chunk of res.body) {
      buffer += chunk.toString("utf8");
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        const fields = Object.fromEntries(
          block.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)]),
        );
        events.push({ id: fields.id, data: JSON.parse(fields.data) });
      }
      if (options.count !== undefined && events.length >= options.count) break;
    }
  } finally {
    abort.abort();
    await opened;
  }
  return { status: res.statusCode, headers: res.headers, events, body: undefined };
}

const lines = (events: Event[]) => events.map((e) => `${e.data.source}: ${e.data.line}`);

/**
 * One worker (svc-worker-1) runs two jobs 1 s apart, then is replaced by a release: its log is
 * complete and closed. Returns the job ids and the clock times of the jobs.
 */
async function replacedWorker() {
  h = await harness({ endpoints: ["svc:1"] });
  const t1 = h.clock.now();
  const job1 = (await h.call("POST", "/v2/svc/runsync", { input: {} })).body;
  await h.clock.advance(1000);
  const t2 = h.clock.now();
  const job2 = (await h.call("POST", "/v2/svc/runsync", { input: { fail: "boom" } })).body;
  await h.clock.advance(1000);
  await h.call("PATCH", "/v2/serverless/svc", { env: { MODEL: "b" } });
  await h.clock.advance(3000);
  expect((await h.call("GET", "/v2/serverless/svc/workers")).body.workers[0].id).toBe("svc-worker-2");
  return { job1: job1.id as string, job2: job2.id as string, t1, t2 };
}

describe("worker logs", () => {
  it("are Server-Sent Events of {ts, source, line} with ids: worker lifecycle, job start and end, errors", async () => {
    const { job1, job2, t1 } = await replacedWorker();
    const read = await readEvents("/v2/serverless/svc/workers/svc-worker-1/logs");
    expect(read.status).toBe(200);
    expect(read.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(read.headers["cache-control"]).toBe("no-cache");
    expect(read.headers["x-accel-buffering"]).toBe("no");
    expect(lines(read.events)).toEqual([
      "system: worker svc-worker-1 created: version 1, image runpod-emulator/builtin:latest, idle",
      `container: job ${job1} started (version 1)`,
      `container: job ${job1} completed after 0 ms`,
      `container: job ${job2} started (version 1)`,
      `container: job ${job2} failed after 0 ms: boom`,
      "container: error: boom",
      "system: worker is stale: the endpoint is now at version 2",
      "system: worker stopping: replaced by a worker of version 2",
    ]);
    expect(read.events[0]?.data.ts).toBe(new Date(t1).toISOString());
    for (const e of read.events) expect(e.id).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z\/\d{12}$/);
    expect(new Set(read.events.map((e) => e.id)).size).toBe(read.events.length);
  });

  it("take tail (default 100, 0 = none), source, since (inclusive) and Last-Event-ID (exclusive)", async () => {
    const { job2, t2 } = await replacedWorker();
    const all = (await readEvents("/v2/serverless/svc/workers/svc-worker-1/logs")).events;
    const path = "/v2/serverless/svc/workers/svc-worker-1/logs";
    expect((await readEvents(`${path}?tail=2`)).events).toEqual(all.slice(-2));
    expect((await readEvents(`${path}?tail=0`)).events).toEqual([]);
    expect(lines((await readEvents(`${path}?source=system`)).events)).toEqual([
      "system: worker svc-worker-1 created: version 1, image runpod-emulator/builtin:latest, idle",
      "system: worker is stale: the endpoint is now at version 2",
      "system: worker stopping: replaced by a worker of version 2",
    ]);
    const since = (await readEvents(`${path}?since=${new Date(t2).toISOString()}&tail=1`)).events;
    expect(lines(since)[0]).toBe(`container: job ${job2} started (version 1)`);
    expect(since).toEqual(all.slice(3));
    const resumed = await readEvents(path, { headers: { "last-event-id": all[2]?.id as string } });
    expect(resumed.events).toEqual(all.slice(3));
    const byTime = await readEvents(`${path}?tail=1`, {
      headers: { "last-event-id": new Date(t2).toISOString() },
    });
    expect(byTime.events).toEqual(all.filter((e) => Date.parse(e.data.ts) > t2));
  });

  it("carry new lines live, including what a handler passes to log()", async () => {
    h = await harness({
      endpoints: ["svc:1"],
      handlers: async (job, { log, worker }) => {
        log(`loading ${String(job.input.model)} on ${worker.id} (version ${worker.version})`);
        return { ok: true };
      },
    });
    let jobId = "";
    const read = await readEvents("/v2/serverless/svc/workers/svc-worker-1/logs?tail=0", {
      count: 3,
      onOpen: async () => {
        jobId = (await (h as Harness).call("POST", "/v2/svc/runsync", { input: { model: "llama" } })).body.id;
      },
    });
    expect(lines(read.events)).toEqual([
      `container: job ${jobId} started (version 1)`,
      "container: loading llama on svc-worker-1 (version 1)",
      `container: job ${jobId} completed after 0 ms`,
    ]);
  });

  it("end a live stream when the emulator closes", async () => {
    h = await harness({ endpoints: ["svc:1"] });
    const emulator = h;
    const read = await readEvents("/v2/serverless/svc/workers/svc-worker-1/logs", {
      onOpen: () => emulator.close(),
    });
    expect(lines(read.events)).toEqual([
      "system: worker svc-worker-1 created: version 1, image runpod-emulator/builtin:latest, idle",
    ]);
  });

  it("of a broken release show its error on the new worker", async () => {
    h = await harness({ endpoints: ["svc:1"], rolloutMs: 0 });
    await h.call("PATCH", "/v2/serverless/svc", { env: { RUNPOD_EMULATOR_FAIL: "CUDA out of memory" } });
    await h.clock.advance(WORKER_START_MS);
    const job = (await h.call("POST", "/v2/svc/runsync", { input: {} })).body;
    expect(job).toMatchObject({ status: "FAILED", workerId: "svc-worker-2" });
    const read = await readEvents("/v2/serverless/svc/workers/svc-worker-2/logs?source=container", {
      count: 4,
    });
    expect(lines(read.events)).toEqual([
      `container: job ${job.id} started (version 2)`,
      "container: RUNPOD_EMULATOR_FAIL is set: this release fails every job",
      `container: job ${job.id} failed after 0 ms: CUDA out of memory`,
      "container: error: CUDA out of memory",
    ]);
  });

  it("answer 404 for an unknown worker or one of another endpoint, 422/400 for bad parameters", async () => {
    h = await harness({ endpoints: ["svc:1", "other:1"] });
    const base = "/v2/serverless/svc/workers";
    for (const p of [`${base}/nope/logs`, `${base}/other-worker-1/logs`]) {
      const answer = await h.call("GET", p);
      expect(answer.status, p).toBe(404);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(check("ErrorResponse", answer.body)).toEqual([]);
    }
    for (const q of ["tail=5001", "tail=x", "since=yesterday", "source=stdout"]) {
      const answer = await h.call("GET", `${base}/svc-worker-1/logs?${q}`);
      expect(answer.status, q).toBe(422);
      expect(check("ErrorResponse", answer.body)).toEqual([]);
    }
    const badCursor = await h.call("GET", `${base}/svc-worker-1/logs`, undefined, { "last-event-id": "x" });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.detail).toMatch(/Last-Event-ID/);
  });
});

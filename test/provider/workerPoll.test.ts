/**
 * The shared worker poll, one per endpoint: many waiters on one endpoint, one
 * read per interval; a waiter's first answer is read after it joined; abort of one; a failed read
 * reaches every waiter; the loop stops when the last waiter leaves. Driven by a fake clock whose
 * timers run only when the test advances it, and a reader the test answers by hand.
 */
import { describe, expect, it } from "vitest";
import type { ServerlessWorkerList } from "../../src/client";
import { waitForEndpointRollout } from "../../src/provider/serverlessEndpoint/rolloutWait";
import { waitForRollout } from "../../src/provider/smokeTestJob/staleWorkers";
import { clientPollKey, WorkerPolls } from "../../src/provider/smokeTestJob/workerPoll";
import { FakeClock } from "../support/fakeClock";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A reader whose reads stay open until the test answers them. */
function manualReader<T>() {
  const open: { resolve: (v: T) => void; reject: (e: unknown) => void; signal: AbortSignal }[] = [];
  let reads = 0;
  const read = (signal: AbortSignal) =>
    new Promise<T>((resolve, reject) => {
      reads += 1;
      open.push({ resolve, reject, signal });
    });
  return {
    read,
    reads: () => reads,
    open,
    answer(value: T) {
      const r = open.shift();
      if (r === undefined) throw new Error("no read is open");
      r.resolve(value);
    },
    fail(error: unknown) {
      const r = open.shift();
      if (r === undefined) throw new Error("no read is open");
      r.reject(error);
    },
  };
}

describe("the shared worker poll", () => {
  it("serves many waiters on one endpoint with one read per interval", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const subs = Array.from({ length: 64 }, () => polls.join("k\u0000ep", reader.read, 1_000));
    expect(reader.reads()).toBe(1); // the first joiner started a read; the others joined while it ran
    const first = subs[0]?.next();
    reader.answer("a1");
    expect(await first).toBe("a1");
    const all = Promise.all(subs.map((s) => s.next()));
    await clock.advance(999);
    expect(reader.reads()).toBe(1);
    await clock.advance(1);
    expect(reader.reads()).toBe(2);
    reader.answer("a2");
    expect(await all).toEqual(Array(64).fill("a2"));
    for (let second = 3; second <= 12; second++) {
      const next = Promise.all(subs.map((s) => s.next()));
      await clock.advance(1_000);
      reader.answer(`a${second}`);
      expect(await next).toEqual(Array(64).fill(`a${second}`));
    }
    expect(reader.reads()).toBe(12); // one a second, not 64
    expect(polls.stats()).toEqual({ reads: 12, active: 1 });
    for (const s of subs) s.leave();
  });

  it("gives a waiter only answers of reads started after it joined, and the newest it has not seen", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const a = polls.join("k", reader.read, 1_000);
    // b joins while r1 is under way: r1 may have been read before what b waits for (a PATCH).
    const b = polls.join("k", reader.read, 1_000);
    let bGot: string | undefined;
    void b.next().then((v) => {
      bGot = v;
    });
    reader.answer("r1");
    expect(await a.next()).toBe("r1");
    await flush();
    expect(bGot).toBeUndefined();
    await clock.advance(1_000);
    reader.answer("r2");
    await flush();
    expect(bGot).toBe("r2");
    // `a` did not ask during r2; it gets r2 now, and after r3 (which it also did not wait for, b
    // did) r3, not r2 again.
    expect(await a.next()).toBe("r2");
    const bThird = b.next();
    await clock.advance(1_000);
    reader.answer("r3");
    await flush();
    expect(await a.next()).toBe("r3");
    expect(await bThird).toBe("r3");
    a.leave();
    b.leave();
  });

  it("lets a waiter abort without disturbing the others", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const a = polls.join("k", reader.read, 1_000);
    const b = polls.join("k", reader.read, 1_000);
    const stop = new AbortController();
    const aFirst = a.next();
    reader.answer("r1");
    expect(await aFirst).toBe("r1");
    const aNext = a.next(stop.signal).catch((e: unknown) => e);
    const bNext = b.next();
    await clock.advance(1_000); // r2 starts
    stop.abort(new Error("a's deadline"));
    expect(await aNext).toEqual(new Error("a's deadline"));
    a.leave();
    expect(reader.open[0]?.signal.aborted).toBe(false); // the read goes on for b
    reader.answer("r2");
    expect(await bNext).toBe("r2");
    void b.next();
    await clock.advance(1_000);
    expect(reader.reads()).toBe(3);
    b.leave();
  });

  it("reads only when a waiter asks, never ahead of one busy with the last answer", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const a = polls.join("k", reader.read, 1_000);
    const first = a.next();
    reader.answer("r1");
    expect(await first).toBe("r1");
    await clock.advance(5_000);
    expect(reader.reads()).toBe(1); // nobody asked: nothing read for nobody
    const second = a.next(); // asked long after the interval: read at once
    expect(reader.reads()).toBe(2);
    reader.answer("r2");
    expect(await second).toBe("r2");
    const third = a.next(); // asked at once: read one interval after the last read started
    await clock.advance(999);
    expect(reader.reads()).toBe(2);
    await clock.advance(1);
    expect(reader.reads()).toBe(3);
    reader.answer("r3");
    expect(await third).toBe("r3");
    a.leave();
    expect(clock.pending()).toBe(0);
    expect(polls.stats()).toEqual({ reads: 3, active: 0 });
  });

  it("gives a failed read's error to every current waiter", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const subs = [1, 2, 3].map(() => polls.join("k", reader.read, 1_000));
    reader.answer("r1");
    await clock.advance(1_000);
    const got = Promise.all(subs.map((s) => s.next().catch((e: unknown) => e)));
    const error = new Error("429 too many requests");
    reader.fail(error);
    const seen = await got;
    expect(seen[0]).toBe("r1"); // the first joiner had r1 to take
    const again = await subs[0]?.next().catch((e: unknown) => e);
    expect([seen[1], seen[2], again]).toEqual([error, error, error]);
    for (const s of subs) s.leave();
  });

  it("stops when the last waiter leaves: no timer, the read in flight aborted, no read after", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const a = polls.join("k", reader.read, 1_000);
    const b = polls.join("k", reader.read, 1_000);
    reader.answer("r1");
    await a.next();
    a.leave();
    await clock.advance(1_000);
    expect(reader.reads()).toBe(2); // b still waits
    b.leave();
    expect(reader.open[0]?.signal.aborted).toBe(true);
    expect(clock.pending()).toBe(0);
    await clock.advance(10_000);
    expect(reader.reads()).toBe(2);
    expect(polls.stats()).toEqual({ reads: 2, active: 0 });
  });

  it("starts a loop with a read at once, also right after the previous loop on the endpoint stopped", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const a = polls.join("k", reader.read, 1_000);
    reader.answer("r1");
    expect(await a.next()).toBe("r1");
    a.leave();
    await clock.advance(400);
    // A wait alone on its endpoint answers as soon as before the loops were shared.
    const b = polls.join("k", reader.read, 1_000);
    expect(reader.reads()).toBe(2);
    reader.answer("r2");
    expect(await b.next()).toBe("r2");
    b.leave();
  });

  it("keeps endpoints and clients apart, and keys clients by a digest of the API key", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<string>(clock);
    const reader = manualReader<string>();
    const one = clientPollKey({ restUrl: "https://rest.runpod.io/v2", apiKey: "rpa_SECRET1" });
    const two = clientPollKey({ restUrl: "https://rest.runpod.io/v2", apiKey: "rpa_SECRET2" });
    expect(one).not.toContain("rpa_SECRET1");
    expect(one).not.toBe(two);
    expect(clientPollKey({ restUrl: "https://rest.runpod.io/v2", apiKey: "rpa_SECRET1" })).toBe(one);
    const subs = [`${one}\u0000ep1`, `${one}\u0000ep2`, `${two}\u0000ep1`, `${one}\u0000ep1`].map((k) =>
      polls.join(k, reader.read, 1_000),
    );
    expect(reader.reads()).toBe(3);
    for (const s of subs) s.leave();
  });
});

const list = (endpointVersion: number, ...versions: number[]): ServerlessWorkerList => ({
  endpointVersion,
  workers: versions.map((version, i) => ({
    id: `w${i}`,
    status: "IDLE",
    version,
    isStale: version < endpointVersion,
  })),
  summary: {
    running: 0,
    idle: versions.length,
    initializing: 0,
    throttled: 0,
    unhealthy: 0,
    total: versions.length,
  },
});

describe("rollout waits on the shared poll", () => {
  it("JobRun and ServerlessEndpoint waits on one endpoint share the reads and each ends by its own rule", async () => {
    const clock = new FakeClock();
    const polls = new WorkerPolls<ServerlessWorkerList>(clock);
    const answers = [list(2, 1, 1), list(2, 2, 1), list(2, 2, 2)];
    let reads = 0;
    const read = async () => answers[Math.min(reads++, answers.length - 1)] as ServerlessWorkerList;
    const jobRuns = Array.from({ length: 16 }, () =>
      waitForRollout(read, "ep", { signal: new AbortController().signal, pollKey: "client", polls }),
    );
    const endpoint = waitForEndpointRollout(
      { workers: read, workerLogs: async function* () {} },
      "ep",
      '"api" (id ep)',
      { timeoutMs: 60_000, secrets: [], pollKey: "client", polls },
    );
    await clock.advance(2_000);
    const done = await Promise.all(jobRuns);
    // The first wait started the loop and saw all three reads; the others joined while the first
    // read was under way, so their first answer was the second read.
    expect(done.map((d) => d.reads)).toEqual([3, ...Array(15).fill(2)]);
    expect(done.map((d) => d.waited)).toEqual(Array(16).fill(true));
    expect(await endpoint).toEqual({ version: 2, reads: 2, workers: 2 });
    expect(reads).toBe(3);
    expect(polls.stats()).toEqual({ reads: 3, active: 0 });
  });
});

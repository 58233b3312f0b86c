/**
 * A failed JobRun explains itself with its worker's log tail (JobRun "On failure"):
 * the bounds as a function, then failed runs through Pulumi's real dynamic-provider host with
 * `__provider` serialized from the INSTALLED package, against the emulator's worker logs (SSE).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Job, RunpodClient } from "../../src/client";
import { type JobRunFailedError, NotFoundError, ResponseValidationError } from "../../src/client/errors";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { sleep } from "../../src/provider/clock";
import { contextFromSettings, runAndRecord } from "../../src/provider/jobRun/operations";
import type { LifecycleContext } from "../../src/provider/smokeTestJob/context";
import { recordJob } from "../../src/provider/smokeTestJob/execution";
import {
  boundLogTail,
  LOG_TAIL_IDLE_MS,
  MAX_LOG_TAIL_BYTES,
  MAX_LOG_TAIL_LINES,
  readLogTail,
  tailLines,
  type WorkerLogReader,
} from "../../src/provider/smokeTestJob/logTail";
import type { JobRunResult } from "../../src/provider/smokeTestJob/result";
import { FakeClock } from "../support/fakeClock";
import { type ProviderHost, urnFor } from "../support/providerHost.mts";
import { createFailing, startJobRunHost } from "./jobRunHostKit";

const bytes = (lines: readonly string[]) => Buffer.byteLength(lines.join("\n"), "utf8");

describe("the log tail's bounds", () => {
  it("keeps the newest 50 lines, then the newest 8 KB, and the end of one line over 8 KB", () => {
    const many = Array.from({ length: 120 }, (_, i) => `line ${i}`);
    expect(boundLogTail(many)).toEqual(many.slice(-MAX_LOG_TAIL_LINES));
    const wide = Array.from({ length: 40 }, (_, i) => `${i} ${"é".repeat(300)}`);
    const kept = boundLogTail(wide);
    expect(bytes(kept)).toBeLessThanOrEqual(MAX_LOG_TAIL_BYTES);
    expect(kept.length).toBeLessThan(40);
    expect(kept).toEqual(wide.slice(-kept.length)); // whole lines, the newest
    expect(bytes(wide.slice(-(kept.length + 1)))).toBeGreaterThan(MAX_LOG_TAIL_BYTES); // no more fits
    const [one] = boundLogTail([`start ${"x".repeat(20_000)} end`]);
    expect(Buffer.byteLength(one ?? "", "utf8")).toBeLessThanOrEqual(MAX_LOG_TAIL_BYTES);
    expect(one).toMatch(/^\.\.\. x+ end$/);
  });
});

/** A stream that yields `events`, then stays open (a live worker) until its signal aborts. */
function liveStream(events: { ts: string; line: string }[]): WorkerLogReader {
  return async function* (_id, _worker, { signal }) {
    for (const e of events) yield { source: "container", ...e };
    await new Promise((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  };
}

describe("reading the tail of a live worker's log", () => {
  /** A fake clock for the read's deadline and idle timers; the service's timestamps are on it too. */
  const clock = new FakeClock();
  const past = (s: number) => new Date(clock.wallNow() - s * 1000).toISOString();
  /** Reads the tail on the fake clock until it ends, and says when (the clock's time) and what. */
  const tailOf = async (read: WorkerLogReader, secrets: string[], deadlineMs: number) => {
    const started = clock.now();
    const ended = await clock.runUntil(readLogTail(read, "ep", "w1", secrets, deadlineMs, clock));
    if (!ended.ok) throw ended.error;
    return { after: ended.at - started, tail: ended.value };
  };

  it("stops at the first line written after the read began, keeping only the backfill", async () => {
    const later = new Date(clock.wallNow() + 60_000).toISOString();
    const read = liveStream([
      { ts: past(3), line: "a" },
      { ts: past(2), line: "b secret-xyz-123" },
      { ts: later, line: "live" },
    ]);
    const { after, tail } = await tailOf(read, ["secret-xyz-123"], 5_000);
    expect(after).toBe(0);
    expect("lines" in tail).toBe(true);
    const lines = (tail as { lines: string[] }).lines;
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/ container b \[redacted\]$/);
  });

  it("ends a quiet live stream LOG_TAIL_IDLE_MS after its last line, and a silent one at its deadline", async () => {
    const quiet = await tailOf(liveStream([{ ts: past(1), line: "only" }]), [], 5_000);
    expect(quiet.after).toBe(LOG_TAIL_IDLE_MS);
    expect((quiet.tail as { lines: string[] }).lines).toEqual([expect.stringMatching(/ container only$/)]);
    const silent = await tailOf(liveStream([]), [], 200);
    expect(silent).toEqual({ after: 200, tail: { unavailable: "no answer within 200 ms" } });
    expect(await tailOf(liveStream([]), [], 0)).toEqual({
      after: 0,
      tail: { unavailable: "the JobRun's timeoutMs left no time to read it" },
    });
    expect(clock.pending()).toBe(0);
  });

  it("keeps the backfill of a service whose clock runs 3 s ahead", async () => {
    const ahead = (s: number) => new Date(clock.wallNow() + 3_000 - s * 1000).toISOString();
    const { tail } = await tailOf(
      liveStream([
        { ts: ahead(1), line: "loading" },
        { ts: ahead(0), line: "error: CUDA" },
      ]),
      [],
      5_000,
    );
    expect((tail as { lines: string[] }).lines).toEqual([
      expect.stringMatching(/ container loading$/),
      expect.stringMatching(/ container error: CUDA$/),
    ]);
  });

  it("keeps the lines read before a malformed event, and stops once the whole backfill has come", async () => {
    const broken: WorkerLogReader = async function* () {
      yield { source: "container", ts: past(2), line: "good 1" };
      yield { source: "container", ts: past(1), line: "good 2" };
      throw new ResponseValidationError("an event whose data is not { source, line, ts }");
    };
    expect((await tailOf(broken, [], 5_000)).tail).toEqual({
      lines: [expect.stringMatching(/ good 1$/), expect.stringMatching(/ good 2$/)],
    });
    // A chatty worker: 50 backfill lines, then live ones for ever; the read ends at the 50th.
    let sent = 0;
    const chatty: WorkerLogReader = async function* () {
      for (;;) {
        sent += 1;
        yield { source: "container", ts: past(0), line: `line ${sent}` };
      }
    };
    const { after, tail } = await tailOf(chatty, [], 5_000);
    expect(after).toBe(0);
    expect((tail as { lines: string[] }).lines).toHaveLength(MAX_LOG_TAIL_LINES);
    expect(sent).toBe(MAX_LOG_TAIL_LINES);
  });

  it("turns a refused read into a short reason instead of throwing", async () => {
    const gone: WorkerLogReader = () => {
      throw new NotFoundError("worker w1 not found", { status: 404 });
    };
    expect((await tailOf(gone, [], 1_000)).tail).toEqual({
      unavailable: "the service has no log for this worker (404)",
    });
  });
});

describe("a failed run on the run's clock", () => {
  it("records when the job ended by the run's clock, and reads the log tail within what timeoutMs leaves on it", async () => {
    const clock = new FakeClock();
    const logReadsAt: number[] = [];
    // A job the service reports FAILED 58 s (of the fake clock) after it was submitted.
    const endpoint = {
      id: "ep",
      run: async () => ({ id: "job-1", status: "IN_QUEUE" }),
      waitForJob: async () => {
        await sleep(clock, 58_000);
        return { id: "job-1", status: "FAILED", error: "boom", workerId: "w1" };
      },
    };
    // A live worker's log that sends nothing: the read ends only at its bound.
    const silent: WorkerLogReader = (_endpointId, _workerId, { signal }) => ({
      [Symbol.asyncIterator]: () => ({
        next: () => {
          logReadsAt.push(clock.now());
          return new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
          );
        },
      }),
    });
    const ctx: LifecycleContext = {
      endpoint: () => endpoint as unknown as ReturnType<LifecycleContext["endpoint"]>,
      log: () => {},
      workerLogs: silent,
      clock,
    };
    const ended = await clock.runUntil(
      runAndRecord(ctx, "id-clock", { endpointId: "ep", input: {}, timeoutMs: 60_000 }),
    );
    // 2 s of the 60 s timeoutMs are left when the job ends: the tail gets those, not its usual 5 s.
    expect(ended).toMatchObject({ at: 60_000, ok: false });
    const error = (ended as { error: unknown }).error as JobRunFailedError;
    expect(error.code).toBe("job_run_failed");
    expect(logReadsAt).toEqual([58_000]);
    expect(error.message).toContain("worker log unavailable: no answer within 2000 ms (worker w1).");
    expect(error.properties).toMatchObject({
      timeline: [
        { status: "IN_QUEUE", atMs: 0 },
        { status: "FAILED", atMs: 58_000 },
      ],
      startedAt: "2026-11-25T00:00:00.000Z",
      completedAt: "2026-11-25T00:00:58.000Z",
    });
    expect(clock.pending()).toBe(0);
  });
});

const API_KEY = "emu-key-logtail14-abcdef";
const S3 = {
  accessId: "AKIA-LOGTAIL-ID",
  accessSecret: "s3-secret-logtail-0123456789",
  bucketName: "b",
  endpointUrl: "https://s3.example.com",
};

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: [API_KEY],
    endpoints: ["release:1", "noisy:1", "forger:1", "leaky:1", "oracle:1", "pwleak:1"],
    rolloutMs: 0,
    handlers: {
      // Logs wide lines, one echoing the credentials it was given, then raises.
      noisy: async (job, { log }) => {
        for (let i = 0; i < 120; i++) log(`step ${i} ${"w".repeat(200)}`);
        log(`connecting with ${job.s3Config?.accessSecret} and key ${API_KEY}`);
        throw new Error("could not load the model");
      },
      // Prints a registry password it somehow holds, then fails with it.
      pwleak: async (job, { log }) => {
        log(`docker login -p ${String(job.input.pw)}`);
        throw new Error(`pull failed for password ${String(job.input.pw)}`);
      },
      // Prints its endpoint's token (as many workers print their environment), then fails with it.
      leaky: async (_job, { log, worker }) => {
        log(`env: HF_TOKEN=${worker.env.HF_TOKEN}`);
        throw new Error(`401 from the hub with token ${worker.env.HF_TOKEN}`);
      },
      // Answers a secret, prints it, and its output has a key that names a customer.
      oracle: async (_job, { log }) => {
        log("answer: launch-code-7f3a9c");
        return { answer: "launch-code-7f3a9c", customerAcmeCorp: 1 };
      },
      // Writes a line that tries to forge the deploy's output, then fails with coloured text.
      forger: async (_job, { log }) => {
        log("loading\u001b[2K\u001b[1A\rerror: Release: endpoint version 99 (all good)");
        throw new Error("\u001b[31mboom\u001b[0m\r\nat model.py:3");
      },
    },
  });
  client = new RunpodClient({ apiKey: emu.apiKey, serverlessUrl: emu.serverlessUrl, restUrl: emu.restUrl });
  host = await startJobRunHost(emu);
});

afterAll(async () => {
  await host?.close();
  await emu?.close();
});

const upFails = (name: string, news: Record<string, unknown>) => createFailing(host, name, news);

describe("a failed JobRun in the provider host", () => {
  it("puts the worker's log tail in the reasons and workerLogTail when a new release fails its jobs", async () => {
    const { outs } = await host.create(urnFor("JobRun", "before"), {
      endpointId: "release",
      input: { a: 1 },
    });
    expect(outs.passed).toBe(true);
    expect(typeof outs.workerId).toBe("string");
    expect(outs.workerLogTail).toBeUndefined(); // a passed run records no log
    await client.serverless.update("release", { env: { RUNPOD_EMULATOR_FAIL: "CUDA driver mismatch" } });
    for (let i = 0; (await client.serverless.releases("release")).rollout.inProgress; i++) {
      expect(i).toBeLessThan(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    const error = await upFails("broken-release", { endpointId: "release", input: { a: 1 } });
    const { workerId, jobId, workerLogTail, passed } = error.properties as Record<string, unknown>;
    expect(passed).toBe(false);
    expect(typeof workerId).toBe("string");
    const tail = workerLogTail as string[];
    expect(tail.at(-1)).toMatch(/^\S+ container error: CUDA driver mismatch$/);
    expect(tail.some((l) => l.includes(`job ${jobId} failed`) && l.includes("CUDA driver mismatch"))).toBe(
      true,
    );
    expect(tail.some((l) => l.includes(`job ${jobId} started`))).toBe(true);
    const reason = error.reasons?.[0] ?? "";
    expect(reason).toContain(`Worker log (last ${tail.length} lines of ${workerId}):\n`);
    for (const line of tail) expect(reason).toContain(`\n  ${line}`);
  });

  it("bounds the tail to 50 lines and 8 KB and redacts the credentials the worker echoed", async () => {
    const error = await upFails("noisy", { endpointId: "noisy", input: {}, s3Config: S3 });
    const tail = error.properties.workerLogTail as string[];
    expect(tail.length).toBeLessThanOrEqual(MAX_LOG_TAIL_LINES);
    expect(bytes(tail)).toBeLessThanOrEqual(MAX_LOG_TAIL_BYTES);
    expect(tail.length).toBeGreaterThan(20); // about 8 KB of ~240-byte lines, not fewer
    expect(tail.at(-1)).toContain("error: could not load the model");
    expect(tail.some((l) => l.includes("step 119 "))).toBe(true); // the newest lines are the kept ones
    expect(tail.some((l) => l.includes("step 0 "))).toBe(false);
    const echoed = tail.find((l) => l.includes("connecting with"));
    expect(echoed).toContain("connecting with [redacted] and key [redacted]");
    const everything = JSON.stringify({ message: error.message, reasons: error.reasons, tail });
    expect(everything).not.toContain(S3.accessSecret);
    expect(everything).not.toContain(API_KEY);
  });
});

describe("a log that cannot be read", () => {
  it("never hides the failure: a REST v1 restUrl says the log is unavailable and records no tail", async () => {
    const lines: string[] = [];
    const ctx = {
      ...contextFromSettings({
        apiKey: emu.apiKey,
        serverlessUrl: emu.serverlessUrl,
        restUrl: emu.restUrlV1,
      }),
      log: (line: string) => lines.push(line),
    };
    const failed = await runAndRecord(ctx, "id-v1", { endpointId: "noisy", input: {} }).then(
      () => undefined,
      (e: unknown) => e as Error & { properties: Record<string, unknown> },
    );
    expect(failed?.message).toContain("could not load the model");
    expect(failed?.message).toContain(
      "worker log unavailable: it needs the REST v2 interface and restUrl is REST v1",
    );
    expect(typeof failed?.properties.workerId).toBe("string");
    expect(failed?.properties.workerLogTail).toBeUndefined();
  });
});

describe("text the worker writes cannot forge the deploy's output", () => {
  it("drops ANSI sequences from log lines, escapes carriage returns, and escapes both in the error, keeping its line feeds", async () => {
    const error = await upFails("forger", { endpointId: "forger", input: {} });
    const tail = error.properties.workerLogTail as string[];
    const forged = tail.find((l) => l.includes("loading"));
    expect(forged).toMatch(/loading\\u000derror: Release: endpoint version 99 \(all good\)$/);
    const reason = error.reasons?.[0] ?? "";
    expect(reason.includes("\u001b") || reason.includes("\r")).toBe(false);
    expect(reason.split("\n").some((l) => l.startsWith("error: Release"))).toBe(false);
    expect(error.properties.error).toBe("\\u001b[31mboom\\u001b[0m\\u000d\nat model.py:3");
  });

  it("keeps a log event whose text holds a line feed on one line of the tail", async () => {
    async function* reader() {
      yield { ts: new Date(0).toISOString(), source: "container", line: "ok\nerror: Release: forged" };
    }
    const tail = await readLogTail(reader, "ep", "w1", [], 1000);
    expect(tail).toEqual({ lines: ["1970-01-01T00:00:00.000Z container ok\\u000aerror: Release: forged"] });
  });

  it("redacts a secret split across two log lines, or printed in colour", () => {
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    const at = (n: number) => new Date(n * 1000).toISOString();
    const lines = tailLines(
      [
        { ts: at(1), source: "container", line: `token=${secret.slice(0, 17)}` },
        { ts: at(2), source: "container", line: `${secret.slice(17)} (loaded)` },
        {
          ts: at(3),
          source: "container",
          line: `key \u001b[1m${secret.slice(0, 9)}\u001b[0m${secret.slice(9)}`,
        },
      ],
      [secret],
    );
    expect(lines).toEqual([
      `${at(1)} container token=[redacted]`,
      `${at(2)} container [redacted] (loaded)`,
      `${at(3)} container key [redacted]`,
    ]);
  });

  it("caps a workerId the service sends at 128 characters, escaped", () => {
    const result: JobRunResult = { attempts: 1, timeline: [] };
    recordJob(result, { id: "j", status: "COMPLETED", workerId: `w\n${"x".repeat(5_000_000)}` } as Job);
    expect(result.workerId?.startsWith("w\\u000axxx")).toBe(true);
    expect(result.workerId?.length).toBeLessThan(200);
    expect(result.workerId).toMatch(/\.\.\. \[\d+ more characters\]$/);
  });
});

describe("secrets the run did not get as arguments", () => {
  const HF_TOKEN = "hf_LeakyTokenForTests0123456789abcd";

  it("redacts the endpoint's env values from the log tail, the error and the reasons", async () => {
    await client.serverless.update("leaky", { env: { HF_TOKEN } });
    for (let i = 0; (await client.serverless.releases("leaky")).rollout.inProgress; i++) {
      expect(i).toBeLessThan(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    const error = await upFails("leaky", { endpointId: "leaky", input: {} });
    const tail = error.properties.workerLogTail as string[];
    expect(tail.some((l) => l.endsWith("env: HF_TOKEN=[redacted]"))).toBe(true);
    expect(error.properties.error).toBe("401 from the hub with token [redacted]");
    expect(JSON.stringify(error.properties)).not.toContain(HF_TOKEN);
    expect(error.reasons?.join("\n")).not.toContain(HF_TOKEN);
    expect(host.stderr()).not.toContain(HF_TOKEN);
  });

  it("with secretOutput, keeps the output's values out of the log tail and its keys out of schema violations", async () => {
    const error = await upFails("oracle", {
      endpointId: "oracle",
      input: {},
      secretOutput: true,
      expect: { outputSchema: { type: "object", required: ["text"], additionalProperties: false } },
    });
    const reason = error.reasons?.[0] ?? "";
    expect(reason).toContain("violations, by schema location (instance paths hidden: secretOutput is set)");
    expect(reason).toContain("  #/required: must have required property 'text'");
    expect(reason).toContain("  #/additionalProperties: must NOT have additional properties");
    expect(reason).toContain("answer: [redacted]");
    expect(reason).not.toContain("launch-code-7f3a9c");
    expect(reason).not.toContain("customerAcmeCorp");
    const tail = error.properties.workerLogTail as string[];
    expect(tail.some((l) => l.endsWith("answer: [redacted]"))).toBe(true);
    // The output itself is kept whole: it is the secret output (the engine marks it secret).
    expect(error.properties.output).toEqual({ answer: "launch-code-7f3a9c", customerAcmeCorp: 1 });
  });
});

describe("redact: secrets the stack knows", () => {
  const PASSWORD = "registry-Pa55-for-tests-7e1c";

  it("keeps the listed values out of the message, error and log tail; refuses a bad list without printing it", async () => {
    const error = await upFails("pwleak", {
      endpointId: "pwleak",
      input: { pw: PASSWORD },
      redact: [PASSWORD],
    });
    expect(error.properties.error).toBe("pull failed for password [redacted]");
    expect(
      (error.properties.workerLogTail as string[]).some((l) => l.endsWith("docker login -p [redacted]")),
    ).toBe(true);
    expect(error.reasons?.join("\n")).not.toContain(PASSWORD);
    // The input echo is the one place it stays: the engine marks `redact` secret (a secret input).
    const { redact, input, ...rest } = error.properties;
    expect(redact).toEqual([PASSWORD]);
    expect(JSON.stringify(rest)).not.toContain(PASSWORD);
    const { failures } = await host.check(
      urnFor("JobRun", "bad-redact"),
      {},
      {
        endpointId: "pwleak",
        input: {},
        redact: [PASSWORD, 42],
      },
    );
    expect(failures).toEqual([
      { property: "", reason: expect.stringContaining("redact must be an array of strings") },
    ]);
    expect(JSON.stringify(failures)).not.toContain(PASSWORD);
  });
});

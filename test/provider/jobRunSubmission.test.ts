/**
 * JobRun submission and waiting edge cases, through Pulumi's real dynamic-provider host running
 * the INSTALLED package, against the emulator. The host reaches the job interface through a
 * scripted 127.0.0.1 proxy (test/support/scriptedServer.ts) that forwards to the emulator unless
 * a test scripts an exact answer: refusals (429) before the emulator sees the request, or a lost
 * answer (500 / reset) after the emulator created the job. The emulator runs on a `ManualClock`,
 * so the service-side times (executionTimeout, runsync wait, worker run time) move only when a
 * test advances them, never by sleeping; the host's client backs off from 5 ms instead of 0.5 s
 * (`retryBackoffMs`), so its retries do not wait out real seconds either.
 */
import { EventEmitter } from "node:events";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { ManualClock, type RunningEmulator, startEmulator } from "../../src/emulator";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import {
  type RecordedRequest,
  type Reply,
  type ScriptedServer,
  startScriptedServer,
} from "../support/scriptedServer";

const API_KEY = "jobrun-submission-key-5b1d";
/** Headers not to copy between the two legs of the proxy. */
const HOP_BY_HOP = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding"]);

const clock = new ManualClock();
let emu: RunningEmulator;
let proxy: ScriptedServer;
let host: ProviderHost;

/**
 * How the proxy answers a POST /run (the test's script for submissions); undefined forwards it.
 * Reset before each test, so one failing test leaves nothing behind for the next.
 */
let onRun: ((req: RecordedRequest) => Reply | Promise<Reply>) | undefined;
/** How the proxy answers a POST /runsync; undefined forwards it. Reset before each test. */
let onRunsync: ((req: RecordedRequest) => Reply | Promise<Reply>) | undefined;
/** Every request the proxy forwarded or answered from its fallback, as it arrives. */
const arrivals = new EventEmitter();
/** Runs of each "timeout-once" job seen by its handler, by job id. */
const attemptsByJob = new Map<string, number>();
/** Emits "started" (job id, attempt) when a worker handler starts. */
const workers = new EventEmitter();

/** Forwards a request to the emulator and relays its answer unchanged. */
async function forward(req: RecordedRequest): Promise<Reply> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers[name] = value;
  }
  const answer = await fetch(emu.serverlessUrl + req.url, {
    method: req.method,
    headers,
    body: req.method === "GET" || req.method === "DELETE" ? undefined : req.body,
  });
  const relayed: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) relayed[name] = value;
  });
  return { status: answer.status, headers: relayed, body: await answer.text() };
}

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: [API_KEY],
    endpoints: ["quick:2", "timeout-once:1", "slow:1"],
    clock,
    handlers: {
      quick: async (job) => ({ echo: job.input.n }),
      // The first run outlasts its executionTimeout (it ends only when the service aborts it);
      // the second answers at once.
      "timeout-once": async (job, { signal }) => {
        const attempt = (attemptsByJob.get(job.id) ?? 0) + 1;
        attemptsByJob.set(job.id, attempt);
        workers.emit("started", job.id, attempt);
        if (attempt === 1) {
          await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        }
        return { attempt };
      },
      // Runs `input.ms` of the emulator's (manual) clock.
      slow: async (job) => {
        workers.emit("started", job.id, 1);
        await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), Number(job.input.ms)));
        return { slept: job.input.ms };
      },
    },
  });
  proxy = await startScriptedServer({
    fallback: (req) => {
      arrivals.emit("request", req);
      if (onRun && req.method === "POST" && req.pathname.endsWith("/run")) return onRun(req);
      if (onRunsync && req.method === "POST" && req.pathname.endsWith("/runsync")) return onRunsync(req);
      return forward(req);
    },
  });
  // The client's retry backoff from 5 ms instead of 0.5 s: the resends below are the policy's, in
  // milliseconds instead of up to 15 s (a Retry-After the proxy sends is still waited in full).
  host = await startProviderHost({ projectDir: inject("installedProjectDir"), retryBackoffMs: 5 });
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:serverlessUrl": proxy.url,
    "runpod:restUrl": emu.restUrl,
  });
});

afterAll(async () => {
  await host?.close();
  await proxy?.close();
  await emu?.close();
});

let firstRequest = 0;
beforeEach(() => {
  onRun = undefined;
  onRunsync = undefined;
  firstRequest = proxy.requests.length;
});

/** `METHOD /path` of each request the proxy received during the current test. */
const seen = () => proxy.requests.slice(firstRequest).map((r) => `${r.method} ${r.pathname}`);
const submitted = (endpointId: string) => emu.stats().submitted[endpointId] ?? 0;
/** The answer of a full queue: nothing was done, try again after `retryAfter` seconds. */
const refusal = (retryAfter: string): Reply => ({
  status: 429,
  headers: { "retry-after": retryAfter },
  body: { error: "the queue is full; retry later" },
});
const statuses = (timeline: { status: string }[]) => timeline.map((e) => e.status);

/** Resolves with the first request (already received or arriving) that `match` accepts. */
function nextRequest(match: (req: RecordedRequest) => boolean): Promise<RecordedRequest> {
  const already = proxy.requests.slice(firstRequest).find(match);
  if (already) return Promise.resolve(already);
  return new Promise((resolve) => {
    const listener = (req: RecordedRequest) => {
      if (!match(req)) return;
      arrivals.off("request", listener);
      resolve(req);
    };
    arrivals.on("request", listener);
  });
}

/** Resolves when a worker handler starts the given attempt of a job on `endpointId`. */
function workerStarted(attempt: number): Promise<string> {
  return new Promise((resolve) => {
    const listener = (jobId: string, n: number) => {
      if (n !== attempt) return;
      workers.off("started", listener);
      resolve(jobId);
    };
    workers.on("started", listener);
  });
}

/**
 * Resolves with `step`, or fails as soon as the create in flight ends first (it must not end yet),
 * so a broken JobRun fails the test at once instead of leaving it waiting for an event.
 */
function whileCreating<T>(creating: Promise<unknown>, step: Promise<T>): Promise<T> {
  const ended = creating.then(
    (result) => {
      throw new Error(`the create ended early: ${JSON.stringify(result)}`);
    },
    (error: unknown) => {
      throw error;
    },
  );
  return Promise.race([step, ended]);
}

/** check then create, as the engine does. */
async function create(name: string, news: Record<string, unknown>) {
  const urn = urnFor("JobRun", name);
  const { inputs, failures } = await host.check(urn, {}, news);
  expect(failures).toEqual([]);
  return host.create(urn, inputs);
}

/** check then create, expecting the create to fail; resolves with the HostError. */
async function createFails(name: string, news: Record<string, unknown>): Promise<HostError> {
  const error = await create(name, news).then(
    () => {
      throw new Error("create succeeded; a failure was expected");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  return error as HostError;
}

describe("JobRun submission through the provider host", () => {
  it("sends a refused (429) submission again, under the client's retry policy, until it is accepted, creating exactly one job", async () => {
    // Fewer refusals than the client's default retries (5): the client's one retry policy resends them.
    let refusals = 4;
    onRun = (req) => (refusals-- > 0 ? refusal("0") : forward(req));
    const before = submitted("quick");

    const { outs } = await create("refused-then-accepted", {
      endpointId: "quick",
      input: { n: 1 },
      timeoutMs: 20_000,
    });

    expect(outs).toMatchObject({ status: "COMPLETED", output: { echo: 1 }, attempts: 1 });
    expect(submitted("quick")).toBe(before + 1);
    const runs = proxy.requests.slice(firstRequest).filter((r) => r.pathname === "/v2/quick/run");
    expect(runs.map((r) => r.status)).toEqual([429, 429, 429, 429, 200]);
  });

  it("stops resending after the client's maxRetries (5), however long timeoutMs is, and creates no job", async () => {
    // Before: JobRun's own resend loop had no attempt bound and sent POST /run until timeoutMs.
    onRun = () => refusal("0");
    const before = submitted("quick");

    const error = await createFails("refused-past-max-retries", {
      endpointId: "quick",
      input: { n: 7 },
      timeoutMs: 600_000,
    });

    expect(error.id).toBeUndefined();
    expect(error.message).toContain("the service kept refusing it");
    expect(error.message).toContain("No job was created");
    expect(submitted("quick")).toBe(before);
    expect(seen()).toEqual(Array.from({ length: 6 }, () => "POST /v2/quick/run"));
  }, 40_000);

  it("fails without any job when every submission is refused until timeoutMs", async () => {
    onRun = () => refusal("1");
    const before = submitted("quick");

    const error = await createFails("refused-until-timeout", {
      endpointId: "quick",
      input: { n: 2 },
      timeoutMs: 2_500,
    });

    // Nothing exists, so this is a plain failure: no partial resource, no job id.
    expect(error.id).toBeUndefined();
    expect(error.message).toContain("could not submit a job to endpoint quick within timeoutMs (2500 ms)");
    // The deadline stopped the client's retry pause (Retry-After: 1) before the next send.
    expect(error.message).toContain("the deadline passed while POST /run waited to be sent");
    expect(error.message).toContain("No job was created");
    expect(error.message).not.toContain("may or may not");
    expect(submitted("quick")).toBe(before);
    expect(seen().filter((r) => r === "POST /v2/quick/run").length).toBeGreaterThanOrEqual(2);
    expect(seen().every((r) => r === "POST /v2/quick/run")).toBe(true);
  });

  it("keeps the s3 credentials out of the error and host stderr when a 400 echoes them", async () => {
    const s3Config = {
      accessId: "AKIA-submission-echo-77",
      accessSecret: "s3-secret-echoed-by-a-400-9f2c",
      bucketName: "results",
      endpointUrl: "https://s3.example.com",
    };
    onRun = () => ({
      status: 400,
      body: {
        error: `invalid s3Config: accessId ${s3Config.accessId} accessSecret ${s3Config.accessSecret}`,
        input: { s3Config },
      },
    });
    const error = await createFails("s3-echo", { endpointId: "quick", input: { n: 5 }, s3Config });
    expect(error.message).toContain("invalid s3Config: accessId [redacted] accessSecret [redacted]");
    for (const secret of [s3Config.accessSecret, s3Config.accessId]) {
      expect(error.message).not.toContain(secret);
      expect(host.stderr()).not.toContain(secret);
    }
  });

  for (const lost of [
    { how: "a 500", reply: { status: 500, body: { error: "internal error" } } as Reply },
    { how: "a reset connection", reply: { reset: true } as Reply },
  ]) {
    it(`never sends a second job when the answer to POST /run is lost (${lost.how})`, async () => {
      const before = submitted("quick");
      // The emulator creates the job; the proxy then throws its answer away.
      let created: number | undefined;
      onRun = async (req) => {
        created = (await forward(req)).status;
        return lost.reply;
      };

      const error = await createFails(`ambiguous-${lost.reply.reset ? "reset" : "500"}`, {
        endpointId: "quick",
        input: { n: 3 },
        timeoutMs: 20_000,
      });

      expect(error.id).toBeUndefined();
      expect(error.message).toContain("cannot tell whether a job was submitted to endpoint quick");
      expect(error.message).toContain("The submission may or may not have happened");
      expect(error.message).toContain("JobRun did not send a second job");
      expect(created).toBe(200);
      expect(submitted("quick")).toBe(before + 1);
      // One request in all: no retry by the client, none by the JobRun, no status poll.
      expect(seen()).toEqual(["POST /v2/quick/run"]);
    });
  }
});

describe("JobRun waiting through the provider host", () => {
  it("retries a job the service TIMED_OUT by policy.executionTimeout and records the completed retry", async () => {
    const firstRun = workerStarted(1);
    const creating = create("timed-out-then-completed", {
      endpointId: "timeout-once",
      input: {},
      policy: { executionTimeout: 6_000 },
      retries: 1,
      timeoutMs: 20_000,
    });
    const jobId = await whileCreating(creating, firstRun);
    // The first run is on the worker: let its executionTimeout pass on the service's clock.
    await clock.advance(6_000);
    const { outs } = await creating;

    expect(outs.jobId).toBe(jobId);
    expect(attemptsByJob.get(jobId)).toBe(2);
    expect(outs).toMatchObject({ status: "COMPLETED", attempts: 2, output: { attempt: 2 } });
    const timeline = statuses(outs.timeline);
    expect(timeline).toContain("TIMED_OUT");
    expect(timeline.at(-1)).toBe("COMPLETED");
    expect(timeline.indexOf("TIMED_OUT")).toBeLessThan(timeline.lastIndexOf("COMPLETED"));
    expect(seen()).toContain(`POST /v2/timeout-once/retry/${jobId}`);
    expect(emu.stats().endpoints["timeout-once"]).toMatchObject({ submitted: 1, retried: 1, timedOut: 1 });
    expect(host.stderr()).toContain(`job ${jobId}: TIMED_OUT; retry 1 of 1`);
  });

  it("keeps waiting with status polls when the job outlasts runsync's wait", async () => {
    const timeoutMs = 10_000;
    const started = workerStarted(1);
    const creating = create("runsync-outlasted", {
      endpointId: "slow",
      input: { ms: timeoutMs }, // longer than the runsync wait the JobRun asks for
      mode: "runsync",
      timeoutMs,
    });
    await whileCreating(creating, started);
    const runsync = await nextRequest((r) => r.method === "POST" && r.pathname === "/v2/slow/runsync");
    // The wait leaves RUNSYNC_MARGIN_MS (1 s) of timeoutMs free for the answer.
    const wait = Number(runsync.query.get("wait"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(timeoutMs - 1_000);

    // The runsync wait ends on the service's clock before the job: it answers IN_PROGRESS.
    const poll = nextRequest((r) => r.method === "GET" && r.pathname.startsWith("/v2/slow/status-sync/"));
    await clock.advance(wait);
    await whileCreating(creating, poll);
    await clock.advance(timeoutMs - wait);
    const { outs } = await creating;

    expect(outs).toMatchObject({ status: "COMPLETED", output: { slept: timeoutMs }, attempts: 1 });
    expect(outs.jobId).toMatch(/^sync-/);
    expect(statuses(outs.timeline)).toEqual(["IN_PROGRESS", "COMPLETED"]);
    expect(seen()).toEqual([`POST /v2/slow/runsync`, `GET /v2/slow/status-sync/${outs.jobId}`]);
    expect(submitted("slow")).toBe(1);
  });

  it("ends a runsync the server holds past its wait at timeoutMs plus the answer grace, not after the client's 60 s", async () => {
    // Before: the per-attempt timeout was max(60 s, wait + 15 s), so a held /runsync kept the
    // deploy ~60 s whatever timeoutMs said. Now the request is cut RUNSYNC_ANSWER_GRACE_MS (2 s)
    // after timeoutMs and the submission reported as in doubt. The server here never answers: the
    // create ending at all (well inside the test's timeout) is the behaviour under test.
    onRunsync = () => ({ hang: true });
    const before = submitted("quick");

    const error = await createFails("runsync-held", {
      endpointId: "quick",
      input: { n: 8 },
      mode: "runsync",
      timeoutMs: 3_000,
    });

    expect(error.id).toBeUndefined();
    expect(error.message).toContain("cannot tell whether a job was submitted to endpoint quick");
    expect(error.message).toContain("timeoutMs (3000 ms) expired while POST /runsync was in flight");
    expect(seen()).toEqual(["POST /v2/quick/runsync"]);
    expect(submitted("quick")).toBe(before);
  }, 20_000);
});

/**
 * JobRun submission under the client's one retry policy: a scripted
 * 127.0.0.1 server refuses every `POST /run` with 429, and the client's `sleep` is a fake clock,
 * so the test counts the requests sent within a fixed span of (fake) time without sleeping.
 *
 * Before: JobRun had its own resend loop with no attempt bound; with a junk `Retry-After` read as
 * 0 ms it sent 1000 `POST /run` in 3 s. Now every resend is the client's: at most `maxRetries`
 * (5) of them, each after the server's valid Retry-After or the client's backoff (0.5 s x 2^n,
 * jitter over the upper half: at least 250, 500, 1000, 2000 ms).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { executeJobRun, JobRunSubmitError } from "../../src/provider/smokeTestJob/run";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server?.close();
});

/** Fake time, in ms, advanced only by the client's sleeps. */
let fakeNow = 0;
/** The fake time at which each request arrived at the server. */
let sentAt: number[] = [];
afterEach(() => {
  server.fallback = undefined;
});

/** A client whose retry pauses advance the fake clock instead of waiting. */
function fakeClockClient(): RunpodClient {
  return new RunpodClient({
    apiKey: "retry-policy-key",
    serverlessUrl: server.url,
    restUrl: `${server.url}/v2`,
    rateLimits: false,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      fakeNow += ms;
    },
  });
}

/** Runs one JobRun against a server refusing every POST /run with these headers. */
async function refusedRun(headers: Record<string, string>): Promise<JobRunSubmitError> {
  fakeNow = 0;
  sentAt = [];
  const first = server.requests.length;
  server.fallback = () => {
    sentAt.push(fakeNow);
    return { status: 429, headers, body: { error: "the queue is full" } };
  };
  const client = fakeClockClient();
  const error = await executeJobRun(resolveJobRunArgs({ endpointId: "ep", input: {}, timeoutMs: 600_000 }), {
    endpoint: client.endpoint("ep"),
    log: () => {},
  }).then(
    () => {
      throw new Error("the JobRun succeeded; every submission was refused");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobRunSubmitError);
  expect(server.requests.slice(first).every((r) => r.method === "POST" && r.pathname === "/v2/ep/run")).toBe(
    true,
  );
  return error as JobRunSubmitError;
}

/** Requests that arrived within the first `ms` of fake time. */
const within = (ms: number) => sentAt.filter((t) => t <= ms).length;

describe("JobRun resends a refused submission only under the client's retry policy", () => {
  for (const [label, headers] of [
    ["Retry-After: 5, 5 (a repeated header, joined)", { "retry-after": "5, 5" }],
    ["no Retry-After", {}],
  ] as const) {
    it(`sends at most 1 + maxRetries (6) POST /run in all, with ${label}`, async () => {
      const error = await refusedRun(headers);
      expect(error.ambiguous).toBe(false);
      expect(error.message).toContain("the service kept refusing it");
      expect(sentAt).toHaveLength(6);
    });

    // With "5, 5" this relies on the client's RFC 9110 Retry-After parsing: read by Date.parse, "5, 5"
    // is a past date, a 0 ms wait, and the test would see 6 sends at fake time 0.
    it(`sends at most 4 POST /run within 3 s of fake time (the backoff's pace), with ${label}`, async () => {
      await refusedRun(headers);
      // Backoff lower bounds 250 + 500 + 1000 ms put the 4th send at >= 1750 ms and the 5th at
      // >= 3750 ms; a valid Retry-After of 5 s allows only the first send in 3 s.
      expect(within(3_000)).toBeLessThanOrEqual(4);
      for (let i = 1; i < sentAt.length; i++) {
        const gap = (sentAt[i] ?? 0) - (sentAt[i - 1] ?? 0);
        expect(gap).toBeGreaterThanOrEqual(Math.min(250 * 2 ** (i - 1), 4_000));
      }
    });
  }
});

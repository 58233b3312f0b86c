/**
 * Retry-After as RFC 9110 section 10.2.3 reads it (delta-seconds `1*DIGIT` or an HTTP-date), and
 * the backoff every caller gets without a usable hint: a scripted server answers 429 with each
 * variant, and the client's injectable sleep records the pause it chose.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  APIUserAbortError,
  MAX_BACKOFF_MS,
  parseHttpDate,
  parseRetryAfter,
  RateLimitError,
  retryDelayMs,
  serverDelayMs,
} from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { clientFor, job, recordingSleep } from "./helpers";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

/** The pause the client takes after one 429 carrying `retryAfter`, for a GET and for a POST. */
async function pauseAfter(retryAfter: string | string[]): Promise<{ get: number; post: number }> {
  const pauses: number[] = [];
  for (const call of ["get", "post"] as const) {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue({ status: 429, headers: { "retry-after": retryAfter } }, { body: job("IN_QUEUE") });
    const ep = clientFor(server, { sleep }).endpoint("ep");
    if (call === "get") await ep.status("j");
    else await ep.run({ input: {} });
    expect(sleeps).toHaveLength(1);
    pauses.push(sleeps[0] as number);
  }
  return { get: pauses[0] as number, post: pauses[1] as number };
}

/** First backoff step: 0.5 s with jitter over its upper half. */
const FIRST_BACKOFF = { min: 250, max: 500 };

describe("Retry-After over the wire", () => {
  const hinted: [string, string | string[], number][] = [
    ["a repeated header joined by a comma", "5, 5", 5000],
    ["a repeated header sent twice", ["5", "5"], 5000],
    ["a comma list, first element", "1,5", 1000],
    ["junk before a valid element", "soon, 7", 7000],
  ];
  for (const [what, value, ms] of hinted) {
    it(`waits the first valid value of ${what} (${JSON.stringify(value)})`, async () => {
      expect(await pauseAfter(value)).toEqual({ get: ms, post: ms });
    });
  }

  const invalid: [string, string][] = [
    ["a signed number", "+5"],
    ["a negative number", "-1"],
    ["a fraction (not 1*DIGIT)", "1.5"],
    ["an exponent", "1e3"],
    ["zero", "0"],
    ["a date in the past", "Sun, 06 Nov 1994 08:49:37 GMT"],
    ["an impossible date", "Mon, 31 Feb 2095 00:00:00 GMT"],
    ["a date in a form HTTP does not use", "2095-01-01T00:00:00Z"],
    ["an empty value", ""],
  ];
  for (const [what, value] of invalid) {
    it(`backs off as without a hint for ${what} (${JSON.stringify(value)})`, async () => {
      const { get, post } = await pauseAfter(value);
      for (const pause of [get, post]) {
        expect(pause).toBeGreaterThanOrEqual(FIRST_BACKOFF.min);
        expect(pause).toBeLessThanOrEqual(FIRST_BACKOFF.max);
      }
    });
  }

  it("waits until an IMF-fixdate, joined with a second copy of the header", async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const { get } = await pauseAfter(`${at}, 3`);
    expect(get).toBeGreaterThan(25_000);
    expect(get).toBeLessThanOrEqual(30_000);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(2026, 10, 22, 12, 0, 0);
  it("reads delta-seconds and the three HTTP-date forms", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 12:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Sunday, 22-Nov-26 12:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Sun Nov 22 12:00:10 2026", now)).toBe(10_000);
    expect(parseRetryAfter("Sun Nov  1 12:00:00 2026", now)).toBe(0);
  });
  it("takes the first valid element of a list, whose dates keep their own comma", () => {
    expect(parseRetryAfter("Sun, 22 Nov 2026 12:00:10 GMT, 5", now)).toBe(10_000);
    expect(parseRetryAfter(["x", "Sunday, 22-Nov-26 12:00:20 GMT"], now)).toBe(20_000);
    expect(parseRetryAfter("Sun, 5", now)).toBe(5000);
  });
  it("refuses what RFC 9110 does not allow", () => {
    for (const bad of [
      "+5",
      "-1",
      "1.5",
      " ",
      "5s",
      "Sun, 22 Nov 2026 25:00:00 GMT",
      "Sun, 22 Nov 2026 12:00:10 UTC",
    ]) {
      expect([bad, parseRetryAfter(bad, now)]).toEqual([bad, undefined]);
    }
  });
  it("reads a two-digit RFC 850 year as at most 50 years ahead", () => {
    expect(parseHttpDate("Monday, 01-Jan-76 00:00:00 GMT", now)).toBe(Date.UTC(2076, 0, 1));
    expect(parseHttpDate("Thursday, 01-Jan-77 00:00:00 GMT", now)).toBe(Date.UTC(1977, 0, 1));
  });
  it("caps a hint at 60 s and treats 0 as no hint", () => {
    expect(serverDelayMs({ "retry-after": "600" }, now)).toBe(60_000);
    expect(serverDelayMs({ "retry-after": "0" }, now)).toBeUndefined();
    expect(serverDelayMs({ "retry-after": "0", ratelimit: '"default";r=0;t=4' }, now)).toBe(4000);
  });
});

describe("a caller that must keep resending (JobRun's submission)", () => {
  it("retries under the policy until its waitSignal aborts, never faster than the backoff", async () => {
    server.fallback = () => ({ status: 429, headers: { "retry-after": "0" } });
    const waitSignal = new AbortController();
    const sleeps: number[] = [];
    const client = clientFor(server, {
      sleep: async (ms, signal) => {
        sleeps.push(ms);
        if (sleeps.length === 8) waitSignal.abort();
        if (signal?.aborted) throw signal.reason;
      },
    });
    const error = await client
      .endpoint("ep")
      .run({ input: {} }, { maxRetries: Number.POSITIVE_INFINITY, waitSignal: waitSignal.signal })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect((error as APIUserAbortError).sent).toBe(false);
    expect((error as APIUserAbortError).cause).toBeInstanceOf(RateLimitError);
    expect(server.requests).toHaveLength(8);
    sleeps.forEach((ms, attempt) => {
      const step = Math.min(500 * 2 ** attempt, MAX_BACKOFF_MS);
      expect(ms).toBeGreaterThanOrEqual(step / 2);
    });
  });

  it("retryDelayMs is the pause the client takes: the hint, else the backoff", () => {
    const refusal = new RateLimitError("429", { status: 429, headers: { "retry-after": "3" } });
    expect(retryDelayMs(refusal, 0)).toBe(3000);
    const bare = new RateLimitError("429", { status: 429, headers: { "retry-after": "-1" } });
    expect(retryDelayMs(bare, 3, () => 0)).toBe(2000);
  });
});

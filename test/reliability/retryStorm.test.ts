/**
 * The retry storm: a server (or a proxy) answering every POST /run with 429
 * and a Retry-After the old parser read as "0 ms" ("5, 5", "+5", "-1", "1,5", a past date, "0").
 * A caller that keeps resending through the client's one policy (`maxRetries: Infinity` bounded
 * by a `waitSignal`, as JobRun's submission does) must never resend faster than the backoff
 * (0.5 s x 2^n, jittered over the upper half of each step, max 8 s) or the valid hint.
 *
 * Timed on a virtual clock: the client's pauses go through its injectable `sleep`, which moves
 * the clock by each pause at once, so the window costs no real time and the count is exact for the
 * pauses the client chose (the jitter still varies it, within the bound). Before the fix, one such
 * caller sent hundreds of requests in this window; a clock that stops moving (pauses of 0 ms) ends
 * the run after {@link MAX_PAUSES} pauses, so such a regression fails the bound instead of spinning.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { APIUserAbortError, RunpodClient } from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const WINDOW_MS = 1600;
/**
 * Most sends the backoff allows in WINDOW_MS: the first at 0, then pauses of at least 250, 500,
 * 1000 ms (the lower half of each step), so sends at >= 0, 250, 750, 1750: three in 1.6 s.
 */
const MAX_SENDS_BY_BACKOFF = 3;
/** Pauses after which the virtual window ends anyway (far more than any bound here allows). */
const MAX_PAUSES = 50;

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

async function sendsWithin(retryAfter: string): Promise<number> {
  server.fallback = () => ({
    status: 429,
    headers: { "retry-after": retryAfter },
    body: { error: "slow down" },
  });
  // The window on a virtual clock: each pause moves it; the pause that reaches WINDOW_MS ends the
  // window as a real AbortSignal.timeout(WINDOW_MS) would, aborting the waits.
  const window = new AbortController();
  let elapsedMs = 0;
  let pauses = 0;
  const sleep = async (ms: number, signal?: AbortSignal) => {
    if (signal?.aborted) throw signal.reason;
    elapsedMs += ms;
    if (elapsedMs >= WINDOW_MS || ++pauses >= MAX_PAUSES) {
      window.abort(new Error("the window is over"));
      throw window.signal.reason;
    }
  };
  const client = new RunpodClient({
    apiKey: "retry-storm-key-1",
    serverlessUrl: server.url,
    restUrl: `${server.url}/v2`,
    rateLimits: false,
    env: {},
    sleep,
  });
  const error = await client
    .endpoint("ep")
    .run({ input: {} }, { maxRetries: Number.POSITIVE_INFINITY, waitSignal: window.signal })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(APIUserAbortError);
  expect((error as APIUserAbortError).sent).toBe(false);
  return server.requests.length;
}

describe("no resend faster than the backoff, whatever Retry-After says", () => {
  for (const value of ["5, 5", "+5", "-1", "0", "1.5", "Sun, 06 Nov 1994 08:49:37 GMT", "soon"]) {
    it(`Retry-After ${JSON.stringify(value)}`, async () => {
      const sends = await sendsWithin(value);
      expect(sends).toBeGreaterThanOrEqual(1);
      expect(sends).toBeLessThanOrEqual(
        value === "5, 5" ? 1 : MAX_SENDS_BY_BACKOFF, // "5, 5" asks for 5 s: one send in the window
      );
    });
  }

  it('Retry-After "1,5" waits its first value, 1 s', async () => {
    expect(await sendsWithin("1,5")).toBeLessThanOrEqual(2);
  });
});

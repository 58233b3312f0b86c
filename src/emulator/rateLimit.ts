/**
 * Server-side rate limiting: per endpoint and per row of a `RateLimitTable`, a sliding window of
 * `requests` per `windowMs` plus a cap on requests in flight. A refused request learns how long
 * to wait (`retryAfterMs`), which the server turns into `Retry-After` (whole seconds, at least 1).
 */
import type { RateLimitRule } from "../wire/limits";
import type { Clock } from "./clock";

/** Outcome of `RateLimitEnforcer.acquire`. */
export type Admission =
  | { ok: true; release: () => void; remaining: number; resetMs: number }
  | { ok: false; retryAfterMs: number; reason: "rate" | "concurrency"; remaining: 0; resetMs: number };

interface Bucket {
  /** Admission times inside the window, oldest first. */
  times: number[];
  inFlight: number;
}

/** Sliding-window and in-flight limiter keyed by any string (here `endpointId|row`). */
export class RateLimitEnforcer {
  readonly #clock: Clock;
  readonly #buckets = new Map<string, Bucket>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Admits one request under `rule` for `key`, or says how long to wait. */
  acquire(key: string, rule: RateLimitRule): Admission {
    const now = this.#clock.now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = { times: [], inFlight: 0 };
      this.#buckets.set(key, bucket);
    }
    const times = bucket.times;
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= now - rule.windowMs) drop++;
    if (drop > 0) times.splice(0, drop);
    const resetMs = times.length > 0 ? (times[0] as number) + rule.windowMs - now : rule.windowMs;
    if (times.length >= rule.requests) {
      return { ok: false, reason: "rate", retryAfterMs: Math.max(1, resetMs), remaining: 0, resetMs };
    }
    if (rule.concurrent !== undefined && bucket.inFlight >= rule.concurrent) {
      return { ok: false, reason: "concurrency", retryAfterMs: 1000, remaining: 0, resetMs };
    }
    times.push(now);
    bucket.inFlight++;
    let released = false;
    const owner = bucket;
    return {
      ok: true,
      remaining: rule.requests - times.length,
      resetMs,
      release: () => {
        if (released) return;
        released = true;
        owner.inFlight--;
      },
    };
  }
}

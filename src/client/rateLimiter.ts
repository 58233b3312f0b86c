/**
 * Client-side rate and concurrency limiting, per (serverless URL, endpoint, table row).
 *
 * Each limiter enforces one row of a `RateLimitTable`: at most `requests` in any sliding window
 * of `windowMs`, and at most `concurrent` in flight. Callers that would exceed either wait in a
 * FIFO queue (abortable) instead of failing, so a burst is spread out rather than answered 429.
 *
 * Counting is conservative so a server that counts by arrival time never sees too many: a request
 * occupies the window from the moment it is sent until `windowMs` after its answer arrived (the
 * answer comes after the server received it). Proof sketch: for any server window holding
 * requests R, take the one sent last; when it was sent, every other member of R had been sent and
 * had either not finished or finished less than `windowMs` before, so the limiter counted it.
 *
 * Limiters live in one module-level registry, so every `RunpodClient` in the process shares the
 * budget of an endpoint. They hold no sockets; a limiter with nobody waiting holds no timer.
 */
import { APIUserAbortError } from "./errors";
import type { RateLimitRule } from "./limits";

/** Time source of a limiter; injectable for tests. */
export interface LimiterClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const systemClock: LimiterClock = {
  now: () => performance.now(),
  // Not unref'd: a timer exists only while callers wait, and they must keep the process alive.
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Waiter {
  resolve(release: () => void): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** One row's budget: sliding window plus in-flight cap, with a FIFO queue of waiters. */
export class RateLimiter {
  private inFlight = 0;
  /** Finish times of requests still inside the window, oldest first. */
  private finished: number[] = [];
  private head = 0;
  private readonly queue: Waiter[] = [];
  private timer: unknown;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    readonly rule: RateLimitRule,
    private readonly clock: LimiterClock = systemClock,
  ) {
    if (!(rule.requests >= 1) || !(rule.windowMs > 0)) {
      throw new RangeError("rate limit rule needs requests >= 1 and windowMs > 0");
    }
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Requests currently holding a slot. */
  get active(): number {
    return this.inFlight;
  }

  /** True when nothing holds or waits for a slot and no request is left inside the window. */
  isIdle(): boolean {
    if (this.inFlight > 0 || this.queue.length > 0) return false;
    this.prune(this.clock.now());
    return this.used() === 0;
  }

  /**
   * Waits (FIFO) for a slot and resolves to its `release` function, which must be called exactly
   * once when the request's answer has arrived or it failed. Rejects with `APIUserAbortError`
   * when `signal` aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.queue.length === 0 && this.canStart()) return Promise.resolve(this.start());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(abortError(signal));
          this.pump();
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
      this.pump();
    });
  }

  private prune(now: number): void {
    const cutoff = now - this.rule.windowMs;
    while (this.head < this.finished.length && (this.finished[this.head] as number) <= cutoff) this.head++;
    if (this.head > 1024 && this.head * 2 > this.finished.length) {
      this.finished = this.finished.slice(this.head);
      this.head = 0;
    }
  }

  private used(): number {
    return this.inFlight + this.finished.length - this.head;
  }

  private canStart(): boolean {
    this.prune(this.clock.now());
    const underCap = this.rule.concurrent === undefined || this.inFlight < this.rule.concurrent;
    return underCap && this.used() < this.rule.requests;
  }

  private start(): () => void {
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      this.finished.push(this.clock.now());
      this.pump();
    };
  }

  private pump(): void {
    while (this.queue.length > 0 && this.canStart()) {
      const waiter = this.queue.shift() as Waiter;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.resolve(this.start());
    }
    if (this.queue.length === 0) {
      this.cancelTimer();
      return;
    }
    // Blocked. If the window (not the in-flight cap) is what blocks, wake when its oldest entry leaves.
    const capped = this.rule.concurrent !== undefined && this.inFlight >= this.rule.concurrent;
    if (capped || this.head >= this.finished.length) {
      this.cancelTimer();
      return;
    }
    const wakeAt = (this.finished[this.head] as number) + this.rule.windowMs;
    if (wakeAt === this.timerAt) return;
    this.cancelTimer();
    this.timerAt = wakeAt;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, wakeAt - this.clock.now()) + 1,
    );
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}

function abortError(signal: AbortSignal): APIUserAbortError {
  return new APIUserAbortError("Request aborted while waiting for a rate-limit slot", {
    cause: signal.reason,
  });
}

/** The process-wide limiters by key; idle ones are swept once it reaches {@link SWEEP_AT}. */
const registry = new Map<string, RateLimiter>();

/** Registry size at which idle limiters are dropped (a process may talk to many endpoints). */
const SWEEP_AT = 256;

/** Drops limiters with nothing in flight, nobody waiting and an empty window: they hold no budget. */
function sweepIdle(): void {
  for (const [key, limiter] of registry) if (limiter.isIdle()) registry.delete(key);
}

/**
 * The process-wide limiter for one (base URL, endpoint, row, rule). The rule is part of the key so
 * clients configured with different tables do not share a budget they disagree on.
 */
export function sharedLimiter(
  baseUrl: string,
  endpointId: string,
  row: string,
  rule: RateLimitRule,
  clock?: LimiterClock,
): RateLimiter {
  const key = `${baseUrl}\u0000${endpointId}\u0000${row}\u0000${rule.requests}/${rule.windowMs}/${rule.concurrent ?? "-"}`;
  let limiter = registry.get(key);
  if (!limiter) {
    if (registry.size >= SWEEP_AT) sweepIdle();
    limiter = new RateLimiter(rule, clock);
    registry.set(key, limiter);
  }
  return limiter;
}

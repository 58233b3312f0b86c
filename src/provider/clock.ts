/**
 * The time the provider's waits read and schedule on: the rollout waits, the shared worker poll,
 * the log tail and the pod readiness wait take a {@link Clock} as an option (the real one by
 * default), so a test can replay a recorded sequence of the service's answers and move time by
 * hand, with no sleeps and no dependence on how fast the machine is.
 *
 * Only the waits' own timers go through it: a request's timeout inside the client and a network
 * probe's bound are the wire's time, not the wait's.
 */

/** Time and timers. All values are milliseconds. */
export interface Clock {
  /** The current time: only differences are meaningful (the real clock is monotonic). */
  now(): number;
  /**
   * Milliseconds since the epoch, to compare with timestamps the service writes (a log line's
   * `ts`). A clock without it counts `now()` as epoch time.
   */
  wallNow?(): number;
  /** Calls `fn` once after `ms` of this clock's time; the handle is for {@link Clock.clearTimeout}. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer made by `setTimeout`; a fired or unknown handle is ignored. */
  clearTimeout(handle: unknown): void;
}

/** `performance.now()`, `Date.now()` and Node's timers: a wait's pending timer keeps the process alive, as before. */
export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Epoch milliseconds on `clock` (its `wallNow`, else its `now`). */
export function wallNow(clock: Clock): number {
  return clock.wallNow?.() ?? clock.now();
}

/**
 * Resolves after `ms` of `clock`'s time; rejects with `signal`'s reason when it aborts first
 * (the timer cleared).
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts after `ms` of `clock`'s time with the reason `AbortSignal.timeout` gives
 * (a `TimeoutError`); `clear()` drops the timer once the signal is no longer needed.
 */
export function timeoutSignal(clock: Clock, ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const handle = clock.setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  return { signal: controller.signal, clear: () => clock.clearTimeout(handle) };
}

/**
 * The reason `RunpodSettings.signal` aborts with when the engine cancels the deployment: a wait
 * that sees it ends as at its timeout, with {@link CANCELLED} as the why.
 */
export class DeploymentCancelledError extends Error {
  override name = "DeploymentCancelledError";
  constructor() {
    super(CANCELLED);
  }
}

/** How a wait ended by a cancellation says so, as a clause: "the deployment was cancelled (Ctrl-C)". */
export const CANCELLED = "the deployment was cancelled (Ctrl-C)";

/**
 * True when `error` is `signal`'s abort: the wait that threw it was cancelled, not failed. A
 * client call given the signal throws its own abort error with the reason as its `cause`.
 */
export function isCancellation(error: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted !== true) return false;
  return error === signal.reason || (error as { cause?: unknown } | undefined)?.cause === signal.reason;
}

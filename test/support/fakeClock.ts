/**
 * A clock for the provider's waits (`src/provider/clock.ts`) that moves only when a test
 * moves it. Injected where a wait takes `clock` (or through `new WorkerPolls(clock)`), it leaves
 * every other timer real: a test may drive a wait on it while undici and fastify keep their own
 * time, which `vi.useFakeTimers` (global) would freeze as well.
 */
import type { Clock } from "../../src/provider/clock";

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets every promise continuation queued so far run (and those they queue), without moving time. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A clock whose timers fire only in {@link FakeClock.advance}; `now()` starts at 0. */
export class FakeClock implements Clock {
  #now = 0;
  #nextId = 1;
  #timers: Timer[] = [];

  /** @param epochMs  what `wallNow()` answers at time 0. */
  constructor(private readonly epochMs = Date.parse("2026-11-25T00:00:00.000Z")) {}

  now(): number {
    return this.#now;
  }

  wallNow(): number {
    return this.epochMs + this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** Timers not fired yet. */
  pending(): number {
    return this.#timers.length;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due in time order (ties in the order
   * they were set), letting the promises it resolves run before the next one fires.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      let next: Timer | undefined;
      for (const t of this.#timers) if (t.at <= target && (next === undefined || t.at < next.at)) next = t;
      if (next === undefined) break;
      const fired = next;
      this.#timers = this.#timers.filter((t) => t !== fired);
      this.#now = fired.at;
      fired.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /**
   * Advances timer by timer until `promise` settles (at most `limitMs`), and returns when it did,
   * in this clock's time, with its outcome: how a test asserts the exact moment a wait returns or
   * gives up.
   */
  async runUntil<T>(
    promise: Promise<T>,
    limitMs = 24 * 3_600_000,
  ): Promise<{ at: number } & ({ ok: true; value: T } | { ok: false; error: unknown })> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    let at = 0;
    promise.then(
      (value) => {
        outcome = { ok: true, value };
        at = this.#now;
      },
      (error: unknown) => {
        outcome = { ok: false, error };
        at = this.#now;
      },
    );
    const end = this.#now + limitMs;
    await settle();
    while (outcome === undefined) {
      let next: Timer | undefined;
      for (const t of this.#timers) if (t.at <= end && (next === undefined || t.at < next.at)) next = t;
      if (next === undefined)
        throw new Error(`the promise did not settle within ${limitMs} ms of the fake clock`);
      await this.advance(next.at - this.#now);
    }
    return { at, ...outcome };
  }
}

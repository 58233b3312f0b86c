/**
 * Time source of the emulator. Every timer of the job engine (sleeps of the built-in worker,
 * executionTimeout, ttl, result retention, runsync waits, webhook retry delays) goes through a
 * `Clock`, so tests can inject `ManualClock` and drive hours of service time in milliseconds.
 * Network latency injected by faults uses real time: it simulates the wire, not the service.
 */

/** Opaque handle returned by `Clock.setTimeout`. */
export type TimerHandle = unknown;

/** The clock the emulator reads and schedules on. All values are milliseconds. */
export interface Clock {
  /** Current time in ms since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds of this clock's time. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer made by `setTimeout`; unknown or fired handles are ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** Wall-clock time with Node's timers (unref'd, so a pending job timer never keeps a process alive). */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface ManualTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` fires due timers in time order and lets
 * pending promise continuations and I/O callbacks run between them, so work scheduled by a timer
 * (a worker taking the next job, a new timeout) happens before the next timer fires.
 */
export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: ManualTimer[] = [];

  /** @param start  initial time in ms since the epoch. @default 1_700_000_000_000 */
  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Lets promise continuations and ready I/O callbacks run, without moving time. */
  async settle(rounds = 3): Promise<void> {
    for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await this.settle();
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.#timers) if (t.at <= target && (!next || t.at < next.at)) next = t;
      if (!next) break;
      const fired = next;
      this.#timers = this.#timers.filter((t) => t !== fired);
      this.#now = Math.max(this.#now, fired.at);
      fired.fn();
      await this.settle();
    }
    this.#now = target;
    await this.settle();
  }
}

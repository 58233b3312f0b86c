/**
 * The deadline of one HTTP attempt: the whole attempt, headers and body, ends within its
 * `timeoutMs`, at the lowest cost per request the precision asks for.
 *
 * Timeouts from {@link COARSE_TIMEOUT_MIN_MS} up run on undici's own `headersTimeout` /
 * `bodyTimeout`, which cost nothing per request but are coarse: undici runs them on its "fast
 * timers" (`undici/lib/util/timers.js`: one native timer ticks every 499 ms and advances a coarse
 * clock, and a timer is checked on ticks only, from the tick before it was registered), so they
 * fire up to ~0.5 s early and ~1 s late. That is within the promised 10% + 50 ms only from about
 * 9.5 s. Those bound the headers and each pause in the body; the body as a whole is bounded by
 * one shared sweep (below). Shorter timeouts get a native timer of their own (an AbortController
 * and a `setTimeout` per attempt: the per-request cost the fast timers avoid, paid only where
 * precision needs it; the default of 60 s stays on the fast path).
 */

/** Timeouts from this length up run on undici's coarse timers; shorter ones on a native timer. */
export const COARSE_TIMEOUT_MIN_MS = 10_000;

/** Which timer bounds an attempt of `timeoutMs`, and the timeouts passed to undici for it. */
export interface AttemptTimers {
  /** True: a native timer of the attempt's own; undici's timers are off (0). */
  precise: boolean;
  headersTimeout: number;
  bodyTimeout: number;
}

const PRECISE: AttemptTimers = Object.freeze({ precise: true, headersTimeout: 0, bodyTimeout: 0 });

/** The timers of an attempt: undici's for long timeouts, a native one below {@link COARSE_TIMEOUT_MIN_MS}. */
export function attemptTimers(timeoutMs: number): AttemptTimers {
  if (timeoutMs >= COARSE_TIMEOUT_MIN_MS) {
    return { precise: false, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  }
  return PRECISE;
}

/** Step of the coarse path's body deadline sweep, in ms (undici's fast timers tick at 499 ms). */
export const BODY_DEADLINE_SWEEP_MS = 500;

/** What a body past its attempt's deadline is destroyed with (the attempt maps it to a timeout). */
const BODY_DEADLINE_PASSED = new Error("the attempt's deadline passed while its body was read");

/** A response body as far as the deadline needs it. */
interface Destroyable {
  destroy(error?: Error): unknown;
}

/** A body being read on the coarse path; `body` is cleared when its attempt ends. */
interface WatchedBody {
  body: Destroyable | undefined;
  /** Epoch ms the attempt must end by. */
  due: number;
}

/**
 * Bodies being read on the coarse path. One shared timer sweeps them every
 * {@link BODY_DEADLINE_SWEEP_MS}, destroying a body past its deadline, so a long timeout bounds
 * the whole answer at no per-request timer cost (within the sweep's step, as coarse as undici's
 * own timers). An attempt that ends only clears its entry (no map to hash a body into); the sweep
 * drops cleared entries, and stops itself when nothing is left.
 */
const watched: WatchedBody[] = [];
let sweep: NodeJS.Timeout | undefined;

function watchBody(body: Destroyable, due: number): WatchedBody {
  const entry: WatchedBody = { body, due };
  watched.push(entry);
  if (sweep === undefined) {
    sweep = setInterval(sweepBodies, BODY_DEADLINE_SWEEP_MS);
    sweep.unref();
  }
  return entry;
}

function sweepBodies(): void {
  const now = Date.now();
  let kept = 0;
  for (const entry of watched) {
    const body = entry.body;
    if (body === undefined) continue;
    if (entry.due <= now) {
      entry.body = undefined;
      body.destroy(BODY_DEADLINE_PASSED);
    } else {
      watched[kept++] = entry;
    }
  }
  watched.length = kept;
  if (kept === 0) {
    clearInterval(sweep);
    sweep = undefined;
  }
}

/**
 * One attempt's deadline: the signal and undici timeouts to send with, the bound on reading the
 * body, and whether it was the deadline that ended the attempt. Call {@link end} when the attempt
 * is over, however it ended.
 */
export class AttemptDeadline {
  /** The signal to send with: the caller's, joined with the native timer's on the precise path. */
  readonly signal: AbortSignal | undefined;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
  readonly #due: number;
  #timer: NodeJS.Timeout | undefined;
  #watch: WatchedBody | undefined;
  #passed = false;

  constructor(timeoutMs: number, userSignal: AbortSignal | undefined) {
    const timers = attemptTimers(timeoutMs);
    this.headersTimeout = timers.headersTimeout;
    this.bodyTimeout = timers.bodyTimeout;
    this.#due = Date.now() + timeoutMs;
    if (!timers.precise) {
      this.signal = userSignal;
      return;
    }
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      this.#passed = true;
      controller.abort();
    }, timeoutMs);
    this.signal = userSignal ? AbortSignal.any([userSignal, controller.signal]) : controller.signal;
  }

  /** Reads `body` to the end as text within the deadline; a failed read destroys the body. */
  async readText(body: Destroyable & { text(): Promise<string> }): Promise<string> {
    if (this.#timer === undefined) this.#watch = watchBody(body, this.#due);
    try {
      return await body.text();
    } catch (error) {
      body.destroy();
      if (error === BODY_DEADLINE_PASSED) this.#passed = true;
      throw error;
    } finally {
      this.end();
    }
  }

  /** True when the attempt's own deadline (its timer or the body sweep) ended it. */
  get passed(): boolean {
    return this.#passed;
  }

  /** Stops the timer and the body's watch; safe to call more than once. */
  end(): void {
    clearTimeout(this.#timer);
    if (this.#watch !== undefined) {
      this.#watch.body = undefined;
      this.#watch = undefined;
    }
  }
}

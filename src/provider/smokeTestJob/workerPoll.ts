/**
 * One read loop per endpoint for every rollout wait in a provider host (one poll per
 * endpoint). JobRun's rollout wait and ServerlessEndpoint's create/update wait read
 * `GET /v2/serverless/{id}/workers` once a second until the rollout is over; N of them on one
 * endpoint used to read N times a second (64 exceed the service's management quota). Waiters on
 * the same endpoint through the same client settings now share ONE loop: at most one read per
 * poll interval (1 s) per endpoint, each waiter judging the shared answers by its own rules and
 * its own deadline.
 *
 * Rules of a loop (one per key: `restUrl`, a digest of the API key, the endpoint id):
 * - A waiter's first answer comes from a read that STARTED after it joined, so a wait that begins
 *   right after a PATCH never judges an answer read before it.
 * - Reads start at most once per interval (the smallest interval its waiters ask for), and only
 *   for a waiter that wants one: one waiting in `next`, or one that joined and has had no answer
 *   yet. No read runs ahead of a waiter busy with the last answer (it would be read for nobody
 *   when that waiter then leaves). A loop starts with a read at once: a wait alone on its
 *   endpoint answers as soon as it did before the loops were shared.
 * - A waiter that asks for the next answer gets the newest answer it has not seen yet (answers it
 *   was too busy to take are skipped, never queued).
 * - A failed read reaches every current waiter as the error of its next answer.
 * - A waiter that aborts (its own signal) or leaves takes nothing from the others; when no waiter
 *   is left the loop stops (its timer cleared, a read in flight aborted).
 *
 * The state is module-level on purpose: this module is loaded by the operations side in the host
 * process (`require` of the package's `operations.js`), never captured in the serialized provider
 * (DESIGN fact 1 forbids state in the serialized closure only). The check AFTER a job (JobRun's
 * release check) does not come through here: it is a fresh read of its own.
 */
import { createHash } from "node:crypto";
import { type Clock, systemClock } from "../clock";

/** Reads the workers once; `signal` aborts when no waiter is left. */
export type SharedRead<T> = (signal: AbortSignal) => Promise<T>;

/** Time and timers of the loops ({@link Clock}); replaceable in tests. */
export type PollClock = Clock;

/** The real clock, its timers unref'd: a pending poll never keeps the host alive on its own (a read in flight does). */
const pollClock: Clock = {
  ...systemClock,
  setTimeout: (fn, ms) => {
    const handle = systemClock.setTimeout(fn, ms) as ReturnType<typeof setTimeout>;
    handle.unref?.();
    return handle;
  },
};

/** One waiter's place in a loop. */
export interface PollSubscription<T> {
  /**
   * The newest answer this waiter has not seen, from a read started after it joined; waits for
   * the next read when there is none. Rejects with a failed read's error, or with `signal`'s
   * reason when it aborts first (the waiter stays joined until {@link leave}).
   */
  next(signal?: AbortSignal): Promise<T>;
  /** Leaves the loop (idempotent); the last waiter to leave stops it. */
  leave(): void;
}

type Answer<T> = { seq: number; ok: true; value: T } | { seq: number; ok: false; error: unknown };

interface Waiter<T> {
  pollMs: number;
  /** Answers with a lower sequence number are not for this waiter. */
  seen: number;
  /** True until it takes its first answer: a read is owed to it though it has not asked yet. */
  fresh: boolean;
  pending?: { resolve: (answer: Answer<T>) => void };
}

interface Loop<T> {
  read: SharedRead<T>;
  waiters: Set<Waiter<T>>;
  /** Reads started so far; the next read's sequence number is `started + 1`. */
  started: number;
  /** When the last read started (clock time), -Infinity before the first. */
  lastStart: number;
  latest?: Answer<T>;
  inFlight?: AbortController;
  timer?: unknown;
}

/** Counters of a loop, for tests and the bench. */
export interface PollStats {
  /** Reads started by all loops since this registry was made. */
  reads: number;
  /** Loops running now (with at least one waiter). */
  active: number;
}

/** The registry of loops, by key. One per host process ({@link workerPolls}); tests make their own. */
export class WorkerPolls<T = unknown> {
  private readonly loops = new Map<string, Loop<T>>();
  private reads = 0;

  /** @param clock  the loops' time and timers; the rollout waits joining them default to it too. */
  constructor(readonly clock: Clock = pollClock) {}

  /** Joins the loop of `key` (starting it with `read` when none runs), polling every `pollMs` at least. */
  join(key: string, read: SharedRead<T>, pollMs: number): PollSubscription<T> {
    let loop = this.loops.get(key);
    if (loop === undefined) {
      loop = { read, waiters: new Set(), started: 0, lastStart: Number.NEGATIVE_INFINITY };
      this.loops.set(key, loop);
    }
    const waiter: Waiter<T> = { pollMs, seen: loop.started + 1, fresh: true };
    loop.waiters.add(waiter);
    // A later reader is as good as the first (same settings); the newest is the one still in use.
    loop.read = read;
    if (loop.inFlight === undefined) this.schedule(loop);
    const self = this;
    const l = loop;
    return {
      next(signal?: AbortSignal): Promise<T> {
        if (!l.waiters.has(waiter)) return Promise.reject(new Error("the waiter left the worker poll"));
        if (signal?.aborted) return Promise.reject(signal.reason);
        const latest = l.latest;
        if (latest !== undefined && latest.seq >= waiter.seen) return take(waiter, latest);
        return new Promise<T>((resolve, reject) => {
          const onAbort = () => {
            waiter.pending = undefined;
            reject(signal?.reason);
          };
          signal?.addEventListener("abort", onAbort, { once: true });
          waiter.pending = {
            resolve: (answer) => {
              signal?.removeEventListener("abort", onAbort);
              waiter.pending = undefined;
              take(waiter, answer).then(resolve, reject);
            },
          };
          // Someone wants the next answer: read now, or once the interval since the last read passed.
          self.schedule(l);
        });
      },
      leave(): void {
        if (!l.waiters.delete(waiter)) return;
        waiter.pending = undefined;
        if (l.waiters.size === 0) self.stop(key, l);
      },
    };
  }

  /** Reads started and loops running. */
  stats(): PollStats {
    let active = 0;
    for (const loop of this.loops.values()) if (loop.waiters.size > 0) active += 1;
    return { reads: this.reads, active };
  }

  /** Starts the next read now, or arms the timer for when the interval since the last one has passed. */
  private schedule(loop: Loop<T>): void {
    if (loop.timer !== undefined || loop.inFlight !== undefined || !wantsRead(loop)) return;
    const pollMs = Math.min(...[...loop.waiters].map((w) => w.pollMs));
    const wait = loop.lastStart + pollMs - this.clock.now();
    if (wait <= 0) {
      this.startRead(loop);
      return;
    }
    loop.timer = this.clock.setTimeout(() => {
      loop.timer = undefined;
      this.schedule(loop);
    }, wait);
  }

  private startRead(loop: Loop<T>): void {
    const controller = new AbortController();
    loop.inFlight = controller;
    loop.started += 1;
    loop.lastStart = this.clock.now();
    this.reads += 1;
    const seq = loop.started;
    const settle = (answer: Answer<T>) => {
      if (loop.inFlight !== controller) return; // stopped meanwhile: nobody waits for it
      loop.inFlight = undefined;
      loop.latest = answer;
      for (const waiter of loop.waiters) {
        if (waiter.pending !== undefined && seq >= waiter.seen) waiter.pending.resolve(answer);
      }
      this.schedule(loop);
    };
    let reading: Promise<T>;
    try {
      reading = loop.read(controller.signal);
    } catch (error) {
      reading = Promise.reject(error);
    }
    reading.then(
      (value) => settle({ seq, ok: true, value }),
      (error: unknown) => settle({ seq, ok: false, error }),
    );
  }

  private stop(key: string, loop: Loop<T>): void {
    if (this.loops.get(key) === loop) this.loops.delete(key);
    if (loop.timer !== undefined) this.clock.clearTimeout(loop.timer);
    loop.timer = undefined;
    loop.inFlight?.abort(new Error("no waiter is left on this endpoint's worker poll"));
    loop.inFlight = undefined;
    loop.latest = undefined;
  }
}

/** True when a waiter of the loop asks for an answer or is owed its first one. */
function wantsRead<T>(loop: Loop<T>): boolean {
  for (const waiter of loop.waiters) if (waiter.pending !== undefined || waiter.fresh) return true;
  return false;
}

function take<T>(waiter: Waiter<T>, answer: Answer<T>): Promise<T> {
  waiter.seen = answer.seq + 1;
  waiter.fresh = false;
  return answer.ok ? Promise.resolve(answer.value) : Promise.reject(answer.error);
}

/** The loops of this host process. */
export const workerPolls = new WorkerPolls<unknown>();

const pollsByClock = new WeakMap<Clock, WorkerPolls<unknown>>();

/**
 * The loops that run on `clock`: the host's ({@link workerPolls}) for the real clock or none,
 * else one set per clock, so every wait of the operations given that clock shares its loops.
 */
export function workerPollsOn<T>(clock: Clock | undefined): WorkerPolls<T> {
  if (clock === undefined || clock === systemClock) return workerPolls as WorkerPolls<T>;
  let polls = pollsByClock.get(clock);
  if (polls === undefined) {
    polls = new WorkerPolls<unknown>(clock);
    pollsByClock.set(clock, polls);
  }
  return polls as WorkerPolls<T>;
}

/**
 * The part of a loop's key that names the client: `restUrl` and a digest of the API key (never
 * the key itself). Two providers with different keys or URLs never share answers.
 */
export function clientPollKey(settings: { restUrl?: string; apiKey?: string } | undefined): string {
  const digest = createHash("sha256")
    .update(settings?.apiKey ?? "")
    .digest("hex")
    .slice(0, 32);
  return `${settings?.restUrl ?? "(default restUrl)"}\u0000${digest}`;
}

const readerIds = new WeakMap<object, number>();
let nextReaderId = 0;

/** A key for a reader given without settings (tests, hand-made contexts): its own loop per reader. */
export function readerPollKey(read: object): string {
  let id = readerIds.get(read);
  if (id === undefined) {
    nextReaderId += 1;
    id = nextReaderId;
    readerIds.set(read, id);
  }
  return `(reader ${id})`;
}

/**
 * Joins the host's loop for `endpointId`: keyed by `clientKey` ({@link clientPollKey}) when the
 * caller knows its settings, else by the reader itself.
 */
export function joinWorkerPoll<T>(
  clientKey: string | undefined,
  endpointId: string,
  read: SharedRead<T>,
  pollMs: number,
  reader: object,
  polls: WorkerPolls<T> = workerPolls as WorkerPolls<T>,
): PollSubscription<T> {
  const key = `${clientKey ?? readerPollKey(reader)}\u0000${endpointId}`;
  return polls.join(key, read, pollMs);
}

/**
 * Worker logs: what each worker wrote, kept per worker (bounded) and readable after the worker
 * is gone, with subscriptions for live readers (`/v2/serverless/{id}/workers/{workerId}/logs`).
 *
 * Sources, as the REST v2 document names them: `system` is the platform speaking about the worker
 * (started, marked stale, stopped), `container` is the worker's own output (job started and
 * ended, errors, and every line a handler passes to `log`).
 *
 * Every line has a sequence number unique in the emulator, and an event id
 * `<ts>/<seq, 12 digits>` like the document's example (`2026-06-01T12:05:04Z/000000000042`), so a
 * reader resuming with `Last-Event-ID` gets exactly the lines after the last one it saw, also when
 * several share a timestamp.
 */

/** Where a line comes from. */
export type LogSource = "container" | "system";

/** One log line as stored. */
export interface LogLine {
  seq: number;
  /** Clock time, ms since the epoch. */
  at: number;
  source: LogSource;
  line: string;
}

/** Lines kept per worker; older ones are dropped (the document's `tail` maximum). */
export const WORKER_LOG_MAX_LINES = 5000;
/** Workers gone (replaced, removed) whose logs stay readable; older ones are forgotten. */
export const GONE_WORKER_LOGS_KEPT = 200;
/** Longest line kept, in characters; longer lines are cut with a marker. */
export const LOG_LINE_MAX_CHARS = 16_384;

/** The SSE event id of a line. */
export function eventId(line: LogLine): string {
  return `${new Date(line.at).toISOString()}/${String(line.seq).padStart(12, "0")}`;
}

/**
 * Where to resume from a `Last-Event-ID` or `since` value: after the sequence number when the
 * value is one of our event ids, else after the time it names. Undefined when it is neither.
 */
export function parseCursor(value: string): { afterSeq: number } | { fromAt: number } | undefined {
  const m = /^(.+)\/(\d{1,15})$/.exec(value);
  if (m) return { afterSeq: Number(m[2]) };
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : { fromAt: at };
}

interface WorkerLog {
  endpointId: string;
  lines: LogLine[];
  listeners: Set<(line: LogLine) => void>;
  /** Set when the worker is gone: no more lines will come. */
  closed: boolean;
  closeListeners: Set<() => void>;
}

/** The logs of every worker of every endpoint. */
export class WorkerLogs {
  readonly #logs = new Map<string, WorkerLog>();
  #gone: string[] = [];
  #seq = 0;

  /** Starts the log of a new worker. */
  open(endpointId: string, workerId: string): void {
    if (!this.#logs.has(workerId)) {
      this.#logs.set(workerId, {
        endpointId,
        lines: [],
        listeners: new Set(),
        closed: false,
        closeListeners: new Set(),
      });
    }
  }

  /** Appends a line to a worker's log and hands it to live readers. */
  write(workerId: string, at: number, source: LogSource, text: string): void {
    const log = this.#logs.get(workerId);
    if (!log || log.closed) return;
    const cut =
      text.length > LOG_LINE_MAX_CHARS ? `${text.slice(0, LOG_LINE_MAX_CHARS)}... [line cut]` : text;
    // One event per line: a handler's multi-line text becomes several lines, as a terminal shows it.
    for (const part of cut.split(/\r?\n/)) {
      const line: LogLine = { seq: ++this.#seq, at, source, line: part };
      log.lines.push(line);
      if (log.lines.length > WORKER_LOG_MAX_LINES) log.lines.shift();
      for (const listener of log.listeners) listener(line);
    }
  }

  /** Marks a worker gone: its log stays readable (up to {@link GONE_WORKER_LOGS_KEPT} workers). */
  close(workerId: string): void {
    const log = this.#logs.get(workerId);
    if (!log || log.closed) return;
    log.closed = true;
    for (const listener of log.closeListeners) listener();
    log.listeners.clear();
    log.closeListeners.clear();
    this.#gone.push(workerId);
    while (this.#gone.length > GONE_WORKER_LOGS_KEPT) this.#logs.delete(this.#gone.shift() as string);
  }

  /** Closes every log (the emulator is stopping): live readers are ended. */
  closeAll(): void {
    for (const id of [...this.#logs.keys()]) this.close(id);
  }

  /** Forgets every log of an endpoint (deleted). */
  forgetEndpoint(endpointId: string): void {
    const forgotten = new Set<string>();
    for (const [id, log] of this.#logs) {
      if (log.endpointId !== endpointId) continue;
      this.close(id);
      this.#logs.delete(id);
      forgotten.add(id);
    }
    // Not counted among the kept logs any more: a later worker of the same id is not dropped early.
    this.#gone = this.#gone.filter((id) => !forgotten.has(id));
  }

  /** True when `workerId` of `endpointId` has a log (running, or gone and still kept). */
  has(endpointId: string, workerId: string): boolean {
    return this.#logs.get(workerId)?.endpointId === endpointId;
  }

  /** Lines kept for a worker (a copy), oldest first. */
  lines(workerId: string): LogLine[] {
    return [...(this.#logs.get(workerId)?.lines ?? [])];
  }

  /**
   * Subscribes to a worker's new lines. `onEnd` runs once when the worker is gone (at once when it
   * already is). Returns the function that unsubscribes.
   */
  subscribe(workerId: string, onLine: (line: LogLine) => void, onEnd: () => void): () => void {
    const log = this.#logs.get(workerId);
    if (!log || log.closed) {
      onEnd();
      return () => {};
    }
    log.listeners.add(onLine);
    log.closeListeners.add(onEnd);
    return () => {
      log.listeners.delete(onLine);
      log.closeListeners.delete(onEnd);
    };
  }
}

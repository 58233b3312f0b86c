/**
 * The last lines of the log of the worker that ran a failed job (`GET /v2/serverless/{id}/workers/
 * {workerId}/logs`, REST v2 only), for the failure message and the `workerLogTail` output.
 *
 * A live worker's log stream never ends, so the read is bounded three ways: it stops at the first
 * line written more than `CLOCK_SKEW_MS` (30 s of clock skew) after the read began (the backfill
 * is over), after `LOG_TAIL_IDLE_MS` without a line once some arrived (the backfill came as one
 * burst), and at its deadline (at most
 * `LOG_TAIL_TIMEOUT_MS`, and never past the JobRun's own `timeoutMs`). What it keeps is bounded
 * too: the newest `MAX_LOG_TAIL_LINES` lines within `MAX_LOG_TAIL_BYTES`, each redacted of the
 * run's secrets before it is measured. A log that cannot be read never hides the job's failure:
 * the caller gets a short reason instead.
 */

import { secretForms, type WorkerLogEvent } from "../../client";
import { type Clock, systemClock, wallNow } from "../clock";
import { redact } from "../common/redaction";
import { boundEntry, describeError, printable } from "../common/wording";

/** Most log lines kept: the newest 50. */
export const MAX_LOG_TAIL_LINES = 50;
/** Most bytes (UTF-8, lines joined by newlines) of log kept: 8 KB (8,192 bytes), the newest. */
export const MAX_LOG_TAIL_BYTES = 8 * 1024;
/** Most characters of one log line kept (the tail as a whole is bounded by `MAX_LOG_TAIL_BYTES`). */
export const MAX_LOG_LINE_CHARS = 4096;
/** Longest a log read may take, in ms (less when the JobRun's `timeoutMs` ends sooner). */
export const LOG_TAIL_TIMEOUT_MS = 5_000;
/** Silence after the last line received that ends the read, in ms. */
export const LOG_TAIL_IDLE_MS = 300;

/**
 * How far the service's clock may run ahead of ours before a line counts as live, in ms. Generous:
 * the backfill's end is mostly told by its size ({@link MAX_LOG_TAIL_LINES} lines asked for) and by
 * silence; this only ends early a short backfill followed by a chatty worker. (At 2 s, a service
 * clock 2 s ahead emptied the tail of a worker that had just failed.)
 */
const CLOCK_SKEW_MS = 30_000;

/** Opens a worker's log stream: `client.serverless.workerLogs`, bound to a REST v2 client. */
export type WorkerLogReader = (
  endpointId: string,
  workerId: string,
  options: { tail: number; signal: AbortSignal },
) => AsyncIterable<WorkerLogEvent>;

/** What the read found: the lines (`"<ts> <source> <line>"`, oldest first), or why there are none. */
export type LogTail = { lines: string[] } | { unavailable: string };

/** `lines` cut to the newest `MAX_LOG_TAIL_LINES` lines and `MAX_LOG_TAIL_BYTES` bytes. */
export function boundLogTail(lines: readonly string[]): string[] {
  const kept = lines.slice(-MAX_LOG_TAIL_LINES);
  let bytes = kept.reduce((sum, l) => sum + Buffer.byteLength(l, "utf8"), 0) + Math.max(0, kept.length - 1);
  while (kept.length > 1 && bytes > MAX_LOG_TAIL_BYTES) {
    bytes -= Buffer.byteLength(kept.shift() ?? "", "utf8") + 1;
  }
  if (kept.length === 1 && bytes > MAX_LOG_TAIL_BYTES) {
    // One line alone over the bound: keep its end (where a stack trace says what failed).
    const buffer = Buffer.from(kept[0] ?? "", "utf8");
    const marker = "... ";
    let tail = buffer.subarray(buffer.length - (MAX_LOG_TAIL_BYTES - marker.length)).toString("utf8");
    tail = tail.replace(/^\uFFFD+/, ""); // a character cut in the middle
    kept[0] = marker + tail;
  }
  return kept;
}

/** A short reason for a failed read, for "worker log unavailable: <reason>". */
function shortReason(error: unknown): string {
  const e = error as { name?: string; status?: unknown; path?: unknown };
  if (e?.name === "ValidationError" && Array.isArray(e.path) && e.path[0] === "restUrl") {
    return "it needs the REST v2 interface and restUrl is REST v1";
  }
  if (e?.status === 404) return "the service has no log for this worker (404)";
  const text = describeError(error).split("\n")[0] ?? "";
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * Reads the newest lines of a worker's log, redacted of `secrets` and bounded, within
 * `deadlineMs` (capped at `LOG_TAIL_TIMEOUT_MS`) of `clock`'s time. Never throws.
 */
export async function readLogTail(
  read: WorkerLogReader,
  endpointId: string,
  workerId: string,
  secrets: readonly string[],
  deadlineMs: number,
  clock: Clock = systemClock,
): Promise<LogTail> {
  const budget = Math.min(LOG_TAIL_TIMEOUT_MS, Math.floor(deadlineMs));
  if (budget <= 0) return { unavailable: "the JobRun's timeoutMs left no time to read it" };
  const startedAt = wallNow(clock);
  const stop = new AbortController();
  let why: "deadline" | "idle" | undefined;
  const deadline = clock.setTimeout(() => {
    why = "deadline";
    stop.abort(new Error(`no end of the backfill within ${budget} ms`));
  }, budget);
  let idle: unknown;
  const events: WorkerLogEvent[] = [];
  try {
    for await (const event of read(endpointId, workerId, { tail: MAX_LOG_TAIL_LINES, signal: stop.signal })) {
      // A line written after the read began (allowing for clock skew): the backfill is over.
      const ts = Date.parse(event.ts);
      if (Number.isFinite(ts) && ts > startedAt + CLOCK_SKEW_MS) break;
      events.push(event);
      // The whole backfill asked for has come: what follows is live.
      if (events.length >= MAX_LOG_TAIL_LINES) break;
      if (idle !== undefined) clock.clearTimeout(idle);
      idle = clock.setTimeout(() => {
        why = "idle";
        stop.abort(new Error("backfill ended"));
      }, LOG_TAIL_IDLE_MS);
    }
  } catch (error) {
    // A stream that broke off (a malformed event, a reset) keeps the lines read before it.
    if (events.length === 0) {
      return { unavailable: why === "deadline" ? `no answer within ${budget} ms` : shortReason(error) };
    }
  } finally {
    clock.clearTimeout(deadline);
    if (idle !== undefined) clock.clearTimeout(idle);
  }
  return { lines: boundLogTail(tailLines(events, secrets)) };
}

/** ANSI escape sequences (CSI `ESC [ ... final`, and two-character `ESC x`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the sequences this removes
const ANSI_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b[@-Z\\-_]/g;

/**
 * The tail's lines (`"<ts> <source> <line>"`): colour codes removed (a secret printed in colour
 * is still found), every form of each secret redacted, also one split across two consecutive
 * lines (a worker that wraps or flushes mid-value), then one printable line each (control
 * characters escaped, so a `\n` or a leftover escape cannot forge lines of the message).
 */
export function tailLines(events: readonly WorkerLogEvent[], secrets: readonly string[]): string[] {
  const texts = events.map((e) => e.line.replace(ANSI_SEQUENCE, ""));
  const forms = secretForms(secrets);
  const SPLIT = "\u0000split\u0000";
  for (let i = 0; i + 1 < texts.length; i++) {
    for (const form of forms) {
      for (let cut = 1; cut < form.length; cut++) {
        const head = form.slice(0, cut);
        const rest = form.slice(cut);
        if ((texts[i] as string).endsWith(head) && (texts[i + 1] as string).startsWith(rest)) {
          texts[i] = `${(texts[i] as string).slice(0, -head.length)}${SPLIT}`;
          texts[i + 1] = `${SPLIT}${(texts[i + 1] as string).slice(rest.length)}`;
        }
      }
    }
  }
  return events.map((e, i) => {
    const line = redact(`${e.ts} ${e.source} ${texts[i]}`, secrets).replaceAll(SPLIT, "[redacted]");
    return printable(line, MAX_LOG_LINE_CHARS);
  });
}

/** The failure message's section about the worker's log. */
export function logTailSection(id: string, tail: LogTail): string {
  const workerId = boundEntry(id);
  if ("unavailable" in tail) return `worker log unavailable: ${tail.unavailable} (worker ${workerId}).`;
  if (tail.lines.length === 0) return `Worker log (last 0 lines of ${workerId}): empty.`;
  return [
    `Worker log (last ${tail.lines.length} lines of ${workerId}):`,
    ...tail.lines.map((l) => `  ${l}`),
  ].join("\n");
}

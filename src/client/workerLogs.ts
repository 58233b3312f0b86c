/**
 * A log stream of the REST v2 document (a serverless worker's
 * `GET /v2/serverless/{id}/workers/{workerId}/logs`, a pod's `GET /v2/pods/{id}/logs`; Server-Sent
 * Events) as an async iterator of `{ source, line, ts }`.
 *
 * The SSE framing is parsed by `eventsource-parser` fed from undici's response body; this module
 * only decides what to do with connections:
 *
 * - A connection that drops mid-stream (reset, socket error, an `idleTimeoutMs` silence) is
 *   opened again with `Last-Event-ID` set to the id of the last event yielded (the v2 document
 *   makes each event's id its `ts`, and that header takes precedence over `tail` and `since`),
 *   so the service resumes after it: no line is yielded twice, none is skipped.
 * - 408, 429 and 5xx answers and connection failures are retried the same way (GET policy),
 *   honouring `Retry-After`; other answers raise the typed `APIError` subclass.
 * - Reconnects are bounded: after `maxReconnects` attempts in a row that yield no event, the last
 *   failure is thrown. Any event received resets the count. The pause before each attempt is the
 *   server's `Retry-After`, else the stream's `retry:` field, else the client's backoff.
 * - A clean end of the response body ENDS the iterator ("no more logs"), as does a 204 answer.
 *   This departs from browser `EventSource`, which reconnects after any close: here a
 *   server that closes cleanly has finished (the worker stopped, or the service ended the
 *   stream), and reconnecting would either replay nothing forever or spin against a worker that
 *   is gone. Callers that want to keep following call again with `since`.
 * - `signal` aborts at once, also between attempts: `APIUserAbortError`.
 * - Events whose `event:` type is neither absent, `message` nor `log` are skipped; an event
 *   whose data is not `{ source, line, ts }` raises `ResponseValidationError`.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { type Dispatcher, request } from "undici";
import {
  type LogSource,
  type WorkerLogEvent,
  WorkerLogEventSchema,
  WorkerLogsQueryInputSchema,
} from "../wire/workerLogs";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  ResponseValidationError,
  RunpodError,
  redactHeaders,
  redactSecrets,
  ValidationError,
} from "./errors";
import { MB } from "./limits";
import { backoffMs, isRetryableStatus, MAX_RETRY_AFTER_MS, serverDelayMs } from "./retry";
import { errorCodes, NOT_SENT_CODES, sharedAgent, TIMEOUT_CODES, type Transport } from "./transport";
import { parseInput, parseResponse } from "./validate";

/** Options of `client.serverless.workerLogs(id, workerId, options)`. */
export interface WorkerLogsOptions {
  /**
   * Historical lines to send before live ones, 0..5000 (0: live only). Ignored by the service
   * when `since` is given, and on a resume. @default the service's, 100
   */
  tail?: number;
  /** Start from this time instead (a `Date` or an RFC 3339 timestamp); `tail` is then ignored. */
  since?: Date | string;
  /** Only `container` (stdout/stderr) or `system` (host lifecycle) lines. @default both */
  source?: LogSource;
  /** Ends the iteration with `APIUserAbortError`, also while it waits to reconnect. */
  signal?: AbortSignal;
  /**
   * Attempts in a row, without an event received in between, to reopen a dropped or refused
   * stream before giving up with the last error. @default the client's `maxRetries` (5)
   */
  maxReconnects?: number;
  /**
   * Longest silence on an open stream, in ms, before it is treated as dropped and resumed.
   * A quiet worker may log nothing for minutes, so there is none by default: stop with `signal`.
   */
  idleTimeoutMs?: number;
}

/**
 * Opens SSE responses with the client's key, which it holds in a closure (never on an
 * enumerable field), and redacts that key from what an error answer echoes.
 */
export interface SseOpener {
  open(
    url: string,
    init: {
      headers: Record<string, string>;
      signal?: AbortSignal;
      headersTimeout: number;
      bodyTimeout: number;
    },
  ): Promise<Dispatcher.ResponseData>;
  redact<T>(value: T): T;
}

/** The opener the client uses: undici `request` on the shared keep-alive agent, bearer auth. */
export function sseOpener(apiKey: string): SseOpener {
  return {
    open: (url, init) =>
      request(url, {
        method: "GET",
        headers: { ...init.headers, authorization: `Bearer ${apiKey}` },
        signal: init.signal,
        headersTimeout: init.headersTimeout,
        bodyTimeout: init.bodyTimeout,
        dispatcher: sharedAgent(),
      }),
    redact: (value) => redactSecrets(value, [apiKey]),
  };
}

/** What one stream needs from the client. */
export interface WorkerLogStreamTarget {
  transport: Transport;
  open: SseOpener;
  /** Absolute URL of the log stream, without query. */
  url: string;
  /** Its path (`/v2/serverless/{id}/workers/{workerId}/logs`), for messages and errors. */
  path: string;
  query: { tail?: number; since?: string; source?: LogSource };
  options: WorkerLogsOptions;
}

/** Rejects a number option that is not a whole number >= min, naming it. */
function checkCount(value: number | undefined, option: string, min: number): void {
  if (value === undefined || (Number.isInteger(value) && value >= min)) return;
  throw new ValidationError(`${option} must be an integer >= ${min}, got ${value}`, [option]);
}

/**
 * Checks `options` (the query strictly, the counts), then opens the log stream at `logsPath`
 * below `restUrl`. Everything is checked here, when called, before any request; `what` names
 * the call in messages (`workerLogs options`).
 */
export function openLogStream(
  target: { transport: Transport; restUrl: string },
  open: SseOpener,
  logsPath: string,
  options: WorkerLogsOptions,
  what: string,
): AsyncGenerator<WorkerLogEvent, void, undefined> {
  const { signal, maxReconnects, idleTimeoutMs, ...query } = options;
  const parsed = parseInput(WorkerLogsQueryInputSchema, query, what);
  checkCount(maxReconnects, "maxReconnects", 0);
  checkCount(idleTimeoutMs, "idleTimeoutMs", 1);
  return streamWorkerLogs({
    transport: target.transport,
    open,
    url: target.restUrl + logsPath,
    path: new URL(target.restUrl).pathname.replace(/\/+$/, "") + logsPath,
    query: {
      tail: parsed.tail,
      since: parsed.since instanceof Date ? parsed.since.toISOString() : parsed.since,
      source: parsed.source,
    },
    options,
  });
}

/** Event types that carry log lines; others (keep-alives, notices) are skipped. */
const LOG_EVENT_TYPES = new Set([undefined, "", "message", "log"]);

/** Maps a failure of the socket (opening, or mid-body) to this package's connection errors. */
function connectionError(error: unknown, where: string, stage: "open" | "read"): APIConnectionError {
  const codes = errorCodes(error);
  const code = codes[0] ?? (error instanceof Error ? error.name : "unknown");
  if (codes.some((c) => TIMEOUT_CODES.has(c))) {
    return new APITimeoutError(
      stage === "open"
        ? `${where} timed out waiting for the answer (${code})`
        : `${where}: stream silent too long (${code})`,
      { cause: error },
    );
  }
  const notSent = stage === "open" && codes.some((c) => NOT_SENT_CODES.has(c));
  return new APIConnectionError(
    `${where} ${stage === "open" ? "could not open the stream" : "stream dropped"} (${code})`,
    { cause: error, notSent },
  );
}

function userAbort(signal: AbortSignal, where: string): APIUserAbortError {
  return new APIUserAbortError(`${where} aborted by the caller's signal`, {
    cause: signal.reason,
    sent: true,
  });
}

/** The most of an error answer's body read, in bytes: the rest is dropped with the connection. */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;

/**
 * Reads an error answer's body, parsed as JSON when it is JSON: at most
 * {@link ERROR_BODY_MAX_BYTES} and at most `timeoutMs` (a 503 whose body never ends must not hold
 * the stream, nor grow in memory); what was read by then is what the error carries.
 */
async function errorBody(body: Dispatcher.ResponseData["body"], timeoutMs: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  const timer = setTimeout(() => body.destroy(), timeoutMs);
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= ERROR_BODY_MAX_BYTES) break;
    }
  } catch {
    // Cut off (the time bound) or reset: keep what arrived.
  } finally {
    clearTimeout(timer);
    if (!body.destroyed) body.destroy();
  }
  const text = Buffer.concat(chunks).subarray(0, ERROR_BODY_MAX_BYTES).toString("utf8");
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text.length > 4096 ? `${text.slice(0, 4096)}...` : text;
  }
}

/** Where a stream stands across its connections. */
interface StreamCursor {
  /** Id of the last event yielded (the SSE "last event ID"), sent as `Last-Event-ID` on a reconnect. */
  lastEventId: string | undefined;
  /** The stream's own `retry:` field, capped at {@link MAX_RETRY_AFTER_MS}. */
  serverRetryMs: number | undefined;
  /** Reconnect attempts in a row with no event received. */
  failures: number;
}

/** How a connection ended when the stream goes on: the failure, and the server's `Retry-After`. */
interface Dropped {
  failure: RunpodError;
  hinted?: number;
}

/** The stream itself; see the module comment for the rules. */
export async function* streamWorkerLogs(
  target: WorkerLogStreamTarget,
): AsyncGenerator<WorkerLogEvent, void, undefined> {
  const { signal } = target.options;
  const url = logStreamUrl(target);
  const cursor: StreamCursor = { lastEventId: undefined, serverRetryMs: undefined, failures: 0 };
  for (;;) {
    if (signal?.aborted) throw userAbort(signal, `GET ${target.path}`);
    const dropped = yield* followConnection(target, url, cursor);
    if (dropped === undefined) return;
    await pauseBeforeReconnect(target, dropped, cursor);
  }
}

/** The stream's URL: the target's, with its query values that are set. */
function logStreamUrl(target: WorkerLogStreamTarget): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(target.query))
    if (value !== undefined) search.set(key, String(value));
  return search.size > 0 ? `${target.url}?${search}` : target.url;
}

/** Request headers of one connection; a resume names the last event seen. */
function streamHeaders(userAgent: string, lastEventId: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "cache-control": "no-cache",
    "user-agent": userAgent,
  };
  // An empty id resets the cursor (SSE): then no header is sent, as EventSource does.
  if (lastEventId) headers["last-event-id"] = lastEventId;
  return headers;
}

/**
 * One connection: open it, judge the answer, yield its events. Returns `undefined` when the
 * stream is over (a clean end, a 204), or how it dropped when it should be reopened; throws what
 * must not be retried.
 */
async function* followConnection(
  target: WorkerLogStreamTarget,
  url: string,
  cursor: StreamCursor,
): AsyncGenerator<WorkerLogEvent, Dropped | undefined, undefined> {
  const { transport, options } = target;
  const where = `GET ${target.path}`;
  let res: Dispatcher.ResponseData;
  try {
    res = await target.open.open(url, {
      headers: streamHeaders(transport.config.userAgent, cursor.lastEventId),
      signal: options.signal,
      headersTimeout: transport.config.timeoutMs,
      bodyTimeout: options.idleTimeoutMs ?? 0,
    });
  } catch (error) {
    if (options.signal?.aborted) throw userAbort(options.signal, where);
    return { failure: connectionError(error, where, "open") };
  }
  if (res.statusCode === 204) {
    await res.body.dump();
    return undefined;
  }
  if (res.statusCode !== 200) return await refusal(target, res);
  await expectEventStream(res, where);
  return yield* readEvents(target, res.body, cursor);
}

/** A non-200 answer as the typed `APIError`: thrown unless the GET policy retries its status. */
async function refusal(target: WorkerLogStreamTarget, res: Dispatcher.ResponseData): Promise<Dropped> {
  const status = res.statusCode;
  const body = target.open.redact(await errorBody(res.body, target.transport.config.timeoutMs));
  const failure = APIError.from({
    status,
    body,
    headers: redactHeaders(res.headers),
    method: "GET",
    path: target.path,
  });
  if (!isRetryableStatus("GET", status)) throw failure;
  return { failure, hinted: serverDelayMs(res.headers) };
}

/** Throws `ResponseValidationError` (after dropping the body) when a 200 is not an event stream. */
async function expectEventStream(res: Dispatcher.ResponseData, where: string): Promise<void> {
  const contentType = String(res.headers["content-type"] ?? "");
  if (/^text\/event-stream/i.test(contentType)) return;
  await res.body.dump().catch(() => {});
  throw new ResponseValidationError(
    `${where} answered 200 with content-type ${JSON.stringify(contentType)}, not text/event-stream`,
  );
}

/**
 * Yields the log events of an open stream as they arrive. Returns `undefined` at a clean end of
 * the body, or the drop when the connection fails; a malformed event is thrown. The body is
 * destroyed however this ends, also when the caller stops iterating.
 */
async function* readEvents(
  target: WorkerLogStreamTarget,
  body: Dispatcher.ResponseData["body"],
  cursor: StreamCursor,
): AsyncGenerator<WorkerLogEvent, Dropped | undefined, undefined> {
  const where = `GET ${target.path}`;
  const events = logEventDecoder(target.path, cursor);
  body.setEncoding("utf8");
  try {
    for await (const chunk of body) {
      events.feed(chunk as string);
      for (const { id, event } of events.ready.splice(0)) {
        // The SSE "last event ID" persists across events that carry none.
        if (id !== undefined) cursor.lastEventId = id;
        cursor.failures = 0;
        yield event;
      }
      if (events.bad) throw events.bad;
    }
    return undefined; // a clean end: the service has no more lines for us
  } catch (error) {
    if (error instanceof RunpodError) throw error;
    const { signal } = target.options;
    if (signal?.aborted) throw userAbort(signal, where);
    return { failure: connectionError(error, where, "read") };
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

/** SSE text in, log events out: decoded events wait in `ready`; the first bad one sets `bad`. */
interface LogEventDecoder {
  feed(chunk: string): void;
  readonly ready: { id: string | undefined; event: WorkerLogEvent }[];
  readonly bad: RunpodError | undefined;
}

/** A decoder of one connection's events; the stream's `retry:` field lands in `cursor`. */
function logEventDecoder(path: string, cursor: StreamCursor): LogEventDecoder {
  const where = `GET ${path}`;
  const ready: LogEventDecoder["ready"] = [];
  let bad: RunpodError | undefined;
  const parser = createParser({
    maxBufferSize: MB,
    onEvent(message: EventSourceMessage) {
      if (bad || !LOG_EVENT_TYPES.has(message.event)) return;
      try {
        ready.push({ id: message.id, event: decodeLogEvent(message.data, path) });
      } catch (error) {
        bad = error as RunpodError;
      }
    },
    onRetry(ms: number) {
      cursor.serverRetryMs = Math.min(ms, MAX_RETRY_AFTER_MS);
    },
    onError(error) {
      if (error.type === "max-buffer-size-exceeded") {
        bad ??= new ResponseValidationError(`${where} sent an event larger than ${MB} characters`);
      }
      // Unknown fields and a malformed `retry:` are ignored, as the SSE standard says.
    },
  });
  return {
    feed: (chunk) => parser.feed(chunk),
    ready,
    get bad() {
      return bad;
    },
  };
}

/** One event's data as `{ source, line, ts }`, or `ResponseValidationError`. */
function decodeLogEvent(data: string, path: string): WorkerLogEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ResponseValidationError(`GET ${path} sent an event whose data is not JSON`, {
      body: data.slice(0, 4096),
    });
  }
  return parseResponse(WorkerLogEventSchema, value, { method: "GET", path });
}

/**
 * Waits before reopening a dropped stream: the server's `Retry-After`, else the stream's `retry:`,
 * else the client's backoff. After `maxReconnects` attempts in a row with no event, throws the
 * drop's failure instead, saying so.
 */
async function pauseBeforeReconnect(
  target: WorkerLogStreamTarget,
  { failure, hinted }: Dropped,
  cursor: StreamCursor,
): Promise<void> {
  const { transport, options } = target;
  const where = `GET ${target.path}`;
  const maxReconnects = options.maxReconnects ?? transport.config.maxRetries;
  const { failures } = cursor;
  if (failures >= maxReconnects) {
    failure.message += ` (gave up after ${failures} reconnect attempt${failures === 1 ? "" : "s"} with no event received)`;
    throw failure;
  }
  const delay = hinted ?? cursor.serverRetryMs ?? backoffMs(failures);
  cursor.failures++;
  transport.config.logger?.debug?.(
    `runpod: ${where} ${failure instanceof APIError ? `answered ${failure.status}` : failure.code}; ` +
      `reconnecting in ${Math.round(delay)} ms (attempt ${cursor.failures} of ${maxReconnects}` +
      `${cursor.lastEventId ? ", resuming after the last event" : ""})`,
  );
  try {
    await transport.config.sleep(delay, options.signal);
  } catch (error) {
    if (options.signal?.aborted) throw userAbort(options.signal, where);
    throw error;
  }
}

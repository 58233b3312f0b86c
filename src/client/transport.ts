/**
 * The transport core every client call goes through: one process-wide keep-alive undici Agent,
 * bearer auth, JSON bodies, per-attempt timeout, abort signals, the retry policy, the client-side
 * rate limiter, error mapping and loose response parsing.
 *
 * Response bodies are always read to the end (or the socket destroyed), on success, on errors and
 * before every retry, so keep-alive sockets return to the pool.
 */
import { createHash } from "node:crypto";
import { Agent, request } from "undici";
import type { z } from "zod";
import { AttemptDeadline } from "./attemptDeadline";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  ResponseValidationError,
  type RunpodError,
  ValidationError,
} from "./errors";
import type { RateLimiter } from "./rateLimiter";
import { redactEnvMaps, redactHeaders, redactValue, type Secret } from "./redact";
import {
  exhaustedWindowMs,
  isRetryableBilledCreate,
  isRetryableError,
  isRetryableStatus,
  retryDelayMs,
} from "./retry";
import { parseResponse } from "./validate";

export {
  type AttemptTimers,
  attemptTimers,
  BODY_DEADLINE_SWEEP_MS,
  COARSE_TIMEOUT_MIN_MS,
} from "./attemptDeadline";

/** Per-call options every client method accepts. */
export interface RequestOptions {
  /** Aborts the call (also while it waits for a rate-limit slot or a retry): `APIUserAbortError`. */
  signal?: AbortSignal;
  /**
   * Per-attempt timeout in ms (`APITimeoutError`): each attempt, headers and whole body, ends
   * within it (a server that trickles its answer cannot hold a call longer). @default the
   * client's `timeoutMs` (60000)
   */
  timeoutMs?: number;
  /**
   * Retries after the first attempt, under the retry policy. `Infinity` retries until `signal` or
   * `waitSignal` aborts (a caller that must keep resending, such as a deploy step with a deadline,
   * uses that instead of a loop of its own, so it never resends faster than the policy's pauses).
   * @default the client's `maxRetries` (5)
   */
  maxRetries?: number;
  /**
   * Aborts the call only while it waits before sending: for a rate-limit slot, a quota pause or a
   * retry pause (`APIUserAbortError` with `sent: false`). A request already on the wire runs to its
   * answer or its `timeoutMs`: for a POST whose answer carries the only copy of an id (runsync),
   * a deadline must not cut it.
   */
  waitSignal?: AbortSignal;
}

/** Where log lines go. Lines name the request (method and path), never a credential. */
export interface RunpodLogger {
  debug?(message: string): void;
  warn?(message: string): void;
}

/** Waits `ms`, rejecting with `APIUserAbortError` when `signal` aborts. */
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Settings shared by all calls of one client. */
export interface TransportConfig {
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  userAgent: string;
  logger?: RunpodLogger;
  sleep: SleepFn;
}

/** One request as the resources describe it. */
export interface TransportRequest<S extends z.ZodType | undefined> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Absolute base URL without a trailing slash, e.g. `https://api.runpod.ai`. */
  baseUrl: string;
  /** Path built with the `path` tag, starting with "/". */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** A JSON value, or an already serialized JSON string (`serialized: true`). */
  body?: unknown;
  serialized?: boolean;
  /** Schema of a 2xx body; without one the body is read and discarded. */
  schema?: S;
  limiter?: RateLimiter;
  options?: RequestOptions;
  /**
   * Secrets sent in this request (a registry login, s3 credentials). An error answer (body and
   * headers) that echoes one in any form `redact.ts` knows has it replaced by `[redacted]` before
   * the error is built, as is the API key.
   */
  secrets?: readonly Secret[];
  /**
   * The read consumes state on the service (`GET /stream` drains buffered chunks): retried only
   * when the service provably did nothing, as a POST is.
   */
  drains?: boolean;
  /**
   * The request creates something that bills (a pod, a network volume, an endpoint): retried only
   * when it was never sent (`isRetryableBilledCreate`); a 429 or 503 answer is thrown for the
   * caller to list before sending it again.
   */
  bills?: boolean;
  /** Lower bound of the per-attempt timeout (long polls: `wait` plus a margin), in ms. */
  minTimeoutMs?: number;
}

export interface TransportResponse<T> {
  status: number;
  /** The answer's headers as undici gives them (lower-case names). */
  headers: Record<string, string>;
  data: T;
}

let agent: Agent | undefined;

/**
 * Base URLs (per API key) whose last answer said (`RateLimit: ...;r=0;t=N`) that a quota window is used up,
 * with the time (ms since epoch) it resets. Shared by every client in the process.
 */
const pausedUntil = new Map<string, number>();

/** The process-wide keep-alive Agent, created on first use (never at module load). */
export function sharedAgent(): Agent {
  agent ??= new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  return agent;
}

/** Default `sleep`: a timer that an abort signal cancels. */
export const defaultSleep: SleepFn = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(userAbort(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(userAbort(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function userAbort(signal: AbortSignal, what = "Request", sent = false): APIUserAbortError {
  return new APIUserAbortError(`${what} aborted by the caller's signal`, { cause: signal.reason, sent });
}

/** Socket error codes meaning the request never left this machine (safe to resend any method). */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "EHOSTUNREACH",
]);

const basePaths = new Map<string, string>();

/** The path part of a base URL (`https://api.runpod.ai/v2/ep` -> `/v2/ep`), cached per base. */
function basePathOf(baseUrl: string): string {
  let base = basePaths.get(baseUrl);
  if (base === undefined) {
    base = new URL(baseUrl).pathname.replace(/\/+$/, "");
    if (basePaths.size > 1000) basePaths.clear();
    basePaths.set(baseUrl, base);
  }
  return base;
}

/** undici's codes for a response whose headers, or a pause in whose body, outlasted `timeoutMs`. */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** Collects `code`s from an error, its cause and an AggregateError's members. */
export function errorCodes(error: unknown, depth = 0): string[] {
  if (!error || typeof error !== "object" || depth > 3) return [];
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  const codes = typeof e.code === "string" ? [e.code] : [];
  codes.push(...errorCodes(e.cause, depth + 1));
  if (Array.isArray(e.errors)) for (const inner of e.errors) codes.push(...errorCodes(inner, depth + 1));
  return codes;
}

/** Rejects per-call numbers that would make no sense, naming the option. */
function checkRequestOptions(options: RequestOptions | undefined): void {
  const timeoutMs = options?.timeoutMs;
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === "number" && timeoutMs > 0 && Number.isFinite(timeoutMs))
  ) {
    throw new ValidationError(`timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`, [
      "timeoutMs",
    ]);
  }
  const maxRetries = options?.maxRetries;
  if (
    maxRetries !== undefined &&
    !((Number.isInteger(maxRetries) && maxRetries >= 0) || maxRetries === Number.POSITIVE_INFINITY)
  ) {
    throw new ValidationError(`maxRetries must be an integer >= 0 or Infinity, got ${maxRetries}`, [
      "maxRetries",
    ]);
  }
}

/** An answer as read off the wire, before it is mapped. */
interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** The most of a text answer kept in a value or an error, in characters. */
const TEXT_KEPT_CHARS = 4096;

function cut(text: string): string {
  return text.length > TEXT_KEPT_CHARS ? `${text.slice(0, TEXT_KEPT_CHARS)}...` : text;
}

/**
 * The URL of a request, built as a string (no URL object per request): the base was validated at
 * construction and `path` comes from the encoding `path` tag. Query values left undefined are
 * omitted; with none defined there is no `?`.
 */
function requestUrl(baseUrl: string, path: string, query: TransportRequest<undefined>["query"]): string {
  const url = baseUrl + path;
  if (!query) return url;
  let search: URLSearchParams | undefined;
  for (const key in query) {
    const value = query[key];
    if (value === undefined) continue;
    search ??= new URLSearchParams();
    search.set(key, String(value));
  }
  return search === undefined ? url : `${url}?${search}`;
}

/** `GET /v2/ep/status/abc`: the request as messages and errors name it (never the query). */
function describeRequest(req: TransportRequest<z.ZodType | undefined>): { method: string; path: string } {
  return { method: req.method, path: basePathOf(req.baseUrl) + req.path };
}

/**
 * The body of an answer as a value: JSON when it says so or looks like it, else the text (cut to
 * 4 KB); `parseFailed` when a body labelled JSON is not.
 */
function decodeBody(text: string, contentType: unknown): { parsed: unknown; parseFailed: boolean } {
  if (text === "") return { parsed: undefined, parseFailed: false };
  const isJson = /json/i.test(String(contentType ?? ""));
  if (!isJson && !/^\s*[[{]/.test(text)) return { parsed: cut(text), parseFailed: false };
  try {
    return { parsed: JSON.parse(text), parseFailed: false };
  } catch {
    return { parsed: cut(text), parseFailed: isJson };
  }
}

/**
 * Maps a failed exchange to this package's errors: the attempt's deadline (or undici's timeouts)
 * to `APITimeoutError`, the caller's signal to `APIUserAbortError`, the rest to
 * `APIConnectionError` (with `notSent` when the request never left this machine).
 */
function exchangeFailure(
  error: unknown,
  req: TransportRequest<z.ZodType | undefined>,
  timeoutMs: number,
  deadlinePassed: boolean,
): RunpodError {
  const where = describeRequest(req);
  const codes = errorCodes(error);
  if (deadlinePassed || codes.some((c) => TIMEOUT_CODES.has(c))) {
    return new APITimeoutError(
      `${where.method} ${where.path} timed out after ${timeoutMs} ms ` +
        "(raise timeoutMs for slow calls; a timed-out POST may still have been acted on)",
    );
  }
  const userSignal = req.options?.signal;
  if (userSignal?.aborted) return userAbort(userSignal, `${where.method} ${where.path}`, true);
  const notSent = codes.some((c) => NOT_SENT_CODES.has(c));
  const origin = new URL(req.baseUrl).origin;
  const code = codes[0] ?? (error instanceof Error ? error.name : "unknown");
  return new APIConnectionError(
    `${where.method} ${where.path} failed: ${
      notSent ? `could not connect to ${origin}` : `connection to ${origin} failed mid-request`
    } (${code})`,
    { cause: error, notSent },
  );
}

/** The core: holds the key privately (never enumerable, never in an error). */
export class Transport {
  readonly #apiKey: string;
  /** A digest of the key, so quota pauses are per account without keeping the key as a map key. */
  readonly #account: string;
  /** Request headers without and with a JSON body: built once, read (never changed) by undici. */
  readonly #headers: Readonly<Record<string, string>>;
  readonly #jsonHeaders: Readonly<Record<string, string>>;
  readonly config: Omit<TransportConfig, "apiKey">;

  constructor(config: TransportConfig) {
    const { apiKey, ...rest } = config;
    this.#apiKey = apiKey;
    this.#account = createHash("sha256").update(apiKey).digest("base64url").slice(0, 16);
    this.#headers = Object.freeze({
      authorization: `Bearer ${apiKey}`,
      accept: "application/json",
      "user-agent": rest.userAgent,
    });
    this.#jsonHeaders = Object.freeze({ ...this.#headers, "content-type": "application/json" });
    this.config = rest;
  }

  /** Sends a request with retries; resolves to the parsed 2xx answer. */
  async request<S extends z.ZodType | undefined = undefined>(
    req: TransportRequest<S>,
  ): Promise<TransportResponse<S extends z.ZodType ? z.output<S> : undefined>> {
    const maxRetries = req.options?.maxRetries ?? this.config.maxRetries;
    checkRequestOptions(req.options);
    const signal = req.options?.signal;
    const waitSignal = req.options?.waitSignal;
    // What may stop the waits before each send: the caller's signal and the wait-only signal.
    const beforeSend = signal && waitSignal ? AbortSignal.any([signal, waitSignal]) : (signal ?? waitSignal);
    if (pausedUntil.size > 0) await this.waitForQuotaReset(req.baseUrl, beforeSend);
    for (let attempt = 0; ; attempt++) {
      if (beforeSend?.aborted) throw userAbort(beforeSend);
      const release = req.limiter ? await req.limiter.acquire(beforeSend) : undefined;
      let error: unknown;
      try {
        const response = await this.attempt(req);
        this.noteQuota(req.baseUrl, response.headers);
        return response;
      } catch (e) {
        error = e;
      } finally {
        release?.();
      }
      if (!isRetryable(req, error) || attempt >= maxRetries) throw error;
      await this.pauseBeforeRetry(req, error, attempt, maxRetries, beforeSend);
    }
  }

  #quotaKey(baseUrl: string): string {
    return `${this.#account} ${baseUrl}`;
  }

  /** Waits out a quota window an earlier answer of this account and base said is used up. */
  private async waitForQuotaReset(baseUrl: string, beforeSend: AbortSignal | undefined): Promise<void> {
    const quota = this.#quotaKey(baseUrl);
    const resumeAt = pausedUntil.get(quota);
    if (resumeAt === undefined) return;
    const wait = resumeAt - Date.now();
    if (wait > 0) {
      this.config.logger?.debug?.(`runpod: ${baseUrl} quota used up; waiting ${wait} ms for its reset`);
      await this.config.sleep(wait, beforeSend);
    }
    if (pausedUntil.get(quota) === resumeAt) pausedUntil.delete(quota);
  }

  /** Records the pause a success answer's `RateLimit` header asks for (a used-up window). */
  private noteQuota(baseUrl: string, headers: Record<string, string>): void {
    if (headers.ratelimit === undefined) return;
    const pause = exhaustedWindowMs(headers);
    if (pause !== undefined && pause > 0) pausedUntil.set(this.#quotaKey(baseUrl), Date.now() + pause);
  }

  /** The pause before retry `attempt + 1`, logged; an abort in it says what it was waiting after. */
  private async pauseBeforeRetry(
    req: TransportRequest<z.ZodType | undefined>,
    error: unknown,
    attempt: number,
    maxRetries: number,
    beforeSend: AbortSignal | undefined,
  ): Promise<void> {
    const delay = retryDelayMs(error, attempt);
    const why = error instanceof APIError ? String(error.status) : (error as RunpodError).code;
    this.config.logger?.debug?.(
      `runpod: retrying ${req.method} ${req.path} after ${why} in ${Math.round(delay)} ms ` +
        `(retry ${attempt + 1} of ${maxRetries})`,
    );
    try {
      await this.config.sleep(delay, beforeSend);
    } catch (abort) {
      if (!beforeSend?.aborted) throw abort;
      // Aborted in the pause: nothing was sent since the last refusal, which is the cause.
      throw new APIUserAbortError(
        `${req.method} ${req.path} aborted by the caller's signal while waiting to retry after ${why}`,
        { cause: error, sent: false },
      );
    }
  }

  /** One HTTP exchange: send, read the whole body, map the answer. */
  private async attempt<S extends z.ZodType | undefined>(
    req: TransportRequest<S>,
  ): Promise<TransportResponse<S extends z.ZodType ? z.output<S> : undefined>> {
    const answer = await this.exchange(req);
    const { parsed, parseFailed } = decodeBody(answer.text, answer.headers["content-type"]);
    if (answer.status < 200 || answer.status >= 300) throw this.errorAnswer(req, answer, parsed);
    // Success answers keep undici's header object as is: redaction matters only for what
    // errors carry, and copying the headers of every answer costs throughput.
    const headers = answer.headers as Record<string, string>;
    const status = answer.status;
    if (!req.schema) return { status, headers, data: undefined as never };
    const where = describeRequest(req);
    if (parseFailed) {
      // The text is not kept: it cannot be parsed, so the env values in it cannot be redacted.
      const length = typeof parsed === "string" ? parsed.length : 0;
      throw new ResponseValidationError(
        `${where.method} ${where.path} answered ${status} with malformed JSON (${length} characters)`,
      );
    }
    return { status, headers, data: parseResponse(req.schema, parsed, where) as never };
  }

  /**
   * Sends the request and reads its whole body within the attempt's deadline (see
   * `attemptDeadline.ts`); a failure on the way becomes a timeout, abort or connection error.
   */
  private async exchange(req: TransportRequest<z.ZodType | undefined>): Promise<RawAnswer> {
    const timeoutMs = Math.max(req.options?.timeoutMs ?? this.config.timeoutMs, req.minTimeoutMs ?? 0);
    const deadline = new AttemptDeadline(timeoutMs, req.options?.signal);
    const hasBody = req.body !== undefined;
    try {
      const res = await request(requestUrl(req.baseUrl, req.path, req.query), {
        method: req.method,
        headers: hasBody ? this.#jsonHeaders : this.#headers,
        body: hasBody ? (req.serialized ? (req.body as string) : JSON.stringify(req.body)) : undefined,
        signal: deadline.signal,
        headersTimeout: deadline.headersTimeout,
        bodyTimeout: deadline.bodyTimeout,
        dispatcher: sharedAgent(),
      });
      return { status: res.statusCode, headers: res.headers, text: await deadline.readText(res.body) };
    } catch (error) {
      throw exchangeFailure(error, req, timeoutMs, deadline.passed);
    } finally {
      deadline.end();
    }
  }

  /**
   * The typed `APIError` of a non-2xx answer, with the API key and the request's secrets redacted
   * from its body and headers.
   */
  private errorAnswer(
    req: TransportRequest<z.ZodType | undefined>,
    answer: RawAnswer,
    parsed: unknown,
  ): APIError {
    const secrets = [this.#apiKey, ...(req.secrets ?? [])];
    // A text body is redacted whole, then cut: cutting first could split a secret at 4 KB.
    const whole = typeof parsed === "string" ? answer.text : parsed;
    let body = redactEnvMaps(redactValue(whole, secrets));
    if (typeof body === "string") body = cut(body);
    return APIError.from({
      status: answer.status,
      body,
      headers: redactHeaders(answer.headers, secrets),
      ...describeRequest(req),
    });
  }
}

/**
 * Whether the retry policy resends after `error`; a draining read follows a POST's rules, a create
 * that bills its own.
 */
function isRetryable(req: TransportRequest<z.ZodType | undefined>, error: unknown): boolean {
  if (req.bills) return isRetryableBilledCreate(error);
  const policyMethod = req.drains ? "POST" : req.method;
  return error instanceof APIError
    ? isRetryableStatus(policyMethod, error.status)
    : isRetryableError(policyMethod, error);
}

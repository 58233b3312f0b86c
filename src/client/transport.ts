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
import { exhaustedWindowMs, isRetryableError, isRetryableStatus, retryDelayMs } from "./retry";
import { parseResponse } from "./validate";

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

/**
 * Timeouts from this length up run on undici's own `headersTimeout` / `bodyTimeout`, which cost
 * nothing per request but are coarse: undici runs them on its "fast timers"
 * (`undici/lib/util/timers.js`: one native timer ticks every 499 ms and advances a coarse clock,
 * and a timer is checked on ticks only, from the tick before it was registered), so they fire up
 * to ~0.5 s early and ~1 s late. That is within the promised 10% + 50 ms only from about 9.5 s.
 * Shorter timeouts get a native timer of their own (an AbortController and a `setTimeout` per
 * attempt: the per-request cost the fast timers avoid, paid only where precision needs it; the
 * default of 60 s stays on the fast path).
 */
export const COARSE_TIMEOUT_MIN_MS = 10_000;

/** Which timer bounds an attempt of `timeoutMs`, and the timeouts passed to undici for it. */
export interface AttemptTimers {
  /** True: a native timer of the attempt's own; undici's timers are off (0). */
  precise: boolean;
  headersTimeout: number;
  bodyTimeout: number;
}

/** The timers of an attempt: undici's for long timeouts, a native one below {@link COARSE_TIMEOUT_MIN_MS}. */
export function attemptTimers(timeoutMs: number): AttemptTimers {
  if (timeoutMs >= COARSE_TIMEOUT_MIN_MS) {
    return { precise: false, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
  }
  return { precise: true, headersTimeout: 0, bodyTimeout: 0 };
}

/** What a body past its attempt's deadline is destroyed with (the attempt maps it to a timeout). */
const BODY_DEADLINE_PASSED = new Error("the attempt's deadline passed while its body was read");

/**
 * Bodies being read on the coarse path, with the time their attempt must end by (epoch ms). One
 * shared timer sweeps them every {@link BODY_DEADLINE_SWEEP_MS}, destroying a body past its
 * deadline, so a long timeout bounds the whole answer at no per-request timer cost (within the
 * sweep's step, as coarse as undici's own timers). The timer stops itself when nothing is left.
 */
const bodyDeadlines = new (class extends Map<{ destroy(error?: Error): unknown }, number> {
  #sweep: NodeJS.Timeout | undefined;
  override set(body: { destroy(error?: Error): unknown }, deadline: number): this {
    super.set(body, deadline);
    if (this.#sweep === undefined) {
      this.#sweep = setInterval(() => {
        const now = Date.now();
        for (const [pending, due] of this) {
          if (due <= now) {
            this.delete(pending);
            pending.destroy(BODY_DEADLINE_PASSED);
          }
        }
        if (this.size === 0) {
          clearInterval(this.#sweep);
          this.#sweep = undefined;
        }
      }, BODY_DEADLINE_SWEEP_MS);
      this.#sweep.unref();
    }
    return this;
  }
})();

/** Step of the coarse path's body deadline sweep, in ms (undici's fast timers tick at 499 ms). */
export const BODY_DEADLINE_SWEEP_MS = 500;

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

/** The core: holds the key privately (never enumerable, never in an error). */
export class Transport {
  readonly #apiKey: string;
  /** A digest of the key, so quota pauses are per account without keeping the key as a map key. */
  readonly #account: string;
  readonly config: Omit<TransportConfig, "apiKey">;

  constructor(config: TransportConfig) {
    const { apiKey, ...rest } = config;
    this.#apiKey = apiKey;
    this.#account = createHash("sha256").update(apiKey).digest("base64url").slice(0, 16);
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
    const quota = `${this.#account} ${req.baseUrl}`;
    const resumeAt = pausedUntil.get(quota);
    if (resumeAt !== undefined) {
      const wait = resumeAt - Date.now();
      if (wait > 0) {
        this.config.logger?.debug?.(`runpod: ${req.baseUrl} quota used up; waiting ${wait} ms for its reset`);
        await this.config.sleep(wait, beforeSend);
      }
      if (pausedUntil.get(quota) === resumeAt) pausedUntil.delete(quota);
    }
    for (let attempt = 0; ; attempt++) {
      if (beforeSend?.aborted) throw userAbort(beforeSend);
      const release = req.limiter ? await req.limiter.acquire(beforeSend) : undefined;
      let error: unknown;
      try {
        const response = await this.attempt(req);
        const pause = exhaustedWindowMs(response.headers);
        if (pause !== undefined && pause > 0) pausedUntil.set(quota, Date.now() + pause);
        return response;
      } catch (e) {
        error = e;
      } finally {
        release?.();
      }
      // A draining read is retried under the rules of a non-idempotent request.
      const policyMethod = req.drains ? "POST" : req.method;
      const retryable =
        error instanceof APIError
          ? isRetryableStatus(policyMethod, error.status)
          : isRetryableError(policyMethod, error);
      if (!retryable || attempt >= maxRetries) throw error;
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
  }

  /** One HTTP exchange: send, read the whole body, map the answer. */
  private async attempt<S extends z.ZodType | undefined>(
    req: TransportRequest<S>,
  ): Promise<TransportResponse<S extends z.ZodType ? z.output<S> : undefined>> {
    // Built as a string (no URL object per request): the base was validated at construction
    // and `req.path` comes from the encoding `path` tag.
    let url = req.baseUrl + req.path;
    if (req.query) {
      const query = new URLSearchParams();
      for (const [key, value] of Object.entries(req.query)) {
        if (value !== undefined) query.set(key, String(value));
      }
      const search = query.toString();
      if (search !== "") url += `?${search}`;
    }
    const where = { method: req.method, path: basePathOf(req.baseUrl) + req.path };
    const timeoutMs = Math.max(req.options?.timeoutMs ?? this.config.timeoutMs, req.minTimeoutMs ?? 0);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: "application/json",
      "user-agent": this.config.userAgent,
    };
    let body: string | undefined;
    if (req.body !== undefined) {
      body = req.serialized ? (req.body as string) : JSON.stringify(req.body);
      headers["content-type"] = "application/json";
    }

    const userSignal = req.options?.signal;
    const timers = attemptTimers(timeoutMs);
    // A short timeout gets its own native timer (see `attemptTimers`) for the whole attempt; a
    // long one runs on undici's timers for the headers and each pause, and on the shared
    // deadline sweep (`bodyDeadlines`) for the body as a whole.
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let signal = userSignal;
    if (timers.precise) {
      const controller = new AbortController();
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      signal = userSignal ? AbortSignal.any([userSignal, controller.signal]) : controller.signal;
    }

    let status: number;
    let rawHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await request(url, {
        method: req.method,
        headers,
        body,
        signal,
        headersTimeout: timers.headersTimeout,
        bodyTimeout: timers.bodyTimeout,
        dispatcher: sharedAgent(),
      });
      status = res.statusCode;
      rawHeaders = res.headers;
      if (!timer) bodyDeadlines.set(res.body, deadline);
      try {
        text = await res.body.text();
      } catch (error) {
        res.body.destroy();
        if (error === BODY_DEADLINE_PASSED) timedOut = true;
        throw error;
      } finally {
        clearTimeout(timer);
        bodyDeadlines.delete(res.body);
      }
    } catch (error) {
      clearTimeout(timer);
      const codes = errorCodes(error);
      if (timedOut || codes.some((c) => TIMEOUT_CODES.has(c))) {
        throw new APITimeoutError(
          `${where.method} ${where.path} timed out after ${timeoutMs} ms ` +
            "(raise timeoutMs for slow calls; a timed-out POST may still have been acted on)",
        );
      }
      if (userSignal?.aborted) throw userAbort(userSignal, `${where.method} ${where.path}`, true);
      const notSent = codes.some((c) => NOT_SENT_CODES.has(c));
      const origin = new URL(req.baseUrl).origin;
      const code = codes[0] ?? (error instanceof Error ? error.name : "unknown");
      throw new APIConnectionError(
        `${where.method} ${where.path} failed: ${
          notSent ? `could not connect to ${origin}` : `connection to ${origin} failed mid-request`
        } (${code})`,
        { cause: error, notSent },
      );
    }

    const contentType = String(rawHeaders["content-type"] ?? "");
    const isJson = /json/i.test(contentType);
    let parsed: unknown = text;
    let parseFailed = false;
    if (text === "") parsed = undefined;
    else if (isJson || /^\s*[[{]/.test(text)) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parseFailed = isJson;
        parsed = text.length > 4096 ? `${text.slice(0, 4096)}...` : text;
      }
    } else if (text.length > 4096) parsed = `${text.slice(0, 4096)}...`;

    if (status < 200 || status >= 300) {
      const secrets = [this.#apiKey, ...(req.secrets ?? [])];
      // A text body is redacted whole, then cut: cutting first could split a secret at 4 KB.
      const whole = typeof parsed === "string" && text.length > 4096 ? text : parsed;
      let body = redactEnvMaps(redactValue(whole, secrets));
      if (typeof body === "string" && body.length > 4096) body = `${body.slice(0, 4096)}...`;
      throw APIError.from({ status, body, headers: redactHeaders(rawHeaders, secrets), ...where });
    }
    // Success answers keep undici's header object as is: redaction matters only for what
    // errors carry, and copying the headers of every answer costs throughput.
    const responseHeaders = rawHeaders as Record<string, string>;
    if (!req.schema) return { status, headers: responseHeaders, data: undefined as never };
    if (parseFailed) {
      throw new ResponseValidationError(
        `${where.method} ${where.path} answered ${status} with malformed JSON`,
        {
          body: parsed,
        },
      );
    }
    const data = parseResponse(req.schema, parsed, where);
    return { status, headers: responseHeaders, data: data as never };
  }
}

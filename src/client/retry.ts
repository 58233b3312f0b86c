/**
 * The client's one retry policy (DESIGN.md, "Contract details"):
 *
 * - GET and DELETE (idempotent): retry 408, 429, 5xx and connection errors.
 * - POST and PATCH (may create or change something): retry only when the service provably did
 *   not act: a 429 or 503 answer, or a connection that was refused / never opened. A 500, a
 *   timeout or a reset after sending is NOT retried: the service may have acted on it.
 * - Delay: `Retry-After` (seconds or an HTTP date), else a zero-remaining `RateLimit` window's
 *   reset time, capped at 60 s; else 0.5 s x 2^n (max 8 s) with full jitter over the upper half.
 *
 * undici's `RetryHandler` retries by method list, status list and error-code list; it cannot say
 * "POST only on 429/503 and refused connections" without a custom callback, and it would retry
 * inside the dispatcher, under the rate limiter's single slot and the per-attempt timeout. This
 * small module keeps the policy in one readable place instead.
 */
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError, ValidationError } from "./errors";

/** Longest delay taken from a server hint (Retry-After / RateLimit), in ms. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** First backoff step, in ms. */
export const INITIAL_BACKOFF_MS = 500;
/** Longest backoff step, in ms. */
export const MAX_BACKOFF_MS = 8_000;

/** True for methods the service treats as idempotent. */
export function isIdempotent(method: string): boolean {
  return method === "GET" || method === "DELETE" || method === "HEAD";
}

/** Whether an HTTP answer with this status may be retried for this method. */
export function isRetryableStatus(method: string, status: number): boolean {
  if (isIdempotent(method)) return status === 408 || status === 429 || status >= 500;
  return status === 429 || status === 503;
}

/** Whether a transport failure may be retried for this method. */
export function isRetryableError(method: string, error: unknown): boolean {
  if (!(error instanceof APIConnectionError)) return false;
  if (isIdempotent(method)) return true;
  // A timed-out or reset POST may have been acted on; only a request never sent is safe.
  return error.notSent && !(error instanceof APITimeoutError);
}

/**
 * Whether the service may have acted on a request that ended in `error`: the question every
 * caller of a non-idempotent POST must answer before sending it again (a duplicate job costs
 * money). False only when the service provably did nothing:
 *
 * - the request was refused before sending (`ValidationError`), or aborted before it was sent;
 * - the service answered 4xx other than 408 (it refused), or 503 (it said it did nothing);
 * - the connection was never opened (`APIConnectionError.notSent`).
 *
 * A 500 (and other 5xx, and 408), a timeout, a reset mid-request, an abort while the request
 * was on the wire, a malformed 2xx answer or an unknown error: true.
 */
export function mayHaveActed(error: unknown): boolean {
  if (error instanceof ValidationError) return false;
  if (error instanceof APIUserAbortError) return error.sent;
  if (error instanceof APIError) return error.status === 408 || (error.status >= 500 && error.status !== 503);
  if (error instanceof APITimeoutError) return true;
  if (error instanceof APIConnectionError) return !error.notSent;
  return true; // ResponseValidationError (a 2xx came back), or an error of unknown origin
}

/** A header's value as one string (undici gives an array for a repeated header). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * Delay the server asked for, in ms, or `undefined` without a usable hint.
 * Reads `Retry-After` (delta seconds or HTTP date), then the IETF `RateLimit` header
 * (`"minute";r=0;t=12`): the longest reset among windows with no requests remaining.
 * Capped at `MAX_RETRY_AFTER_MS`.
 */
export function serverDelayMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | undefined {
  const retryAfter = headerText(headers["retry-after"]);
  if (retryAfter !== undefined && retryAfter.trim() !== "") {
    const text = retryAfter.trim();
    let ms: number | undefined;
    if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
    else {
      const date = Date.parse(text);
      if (!Number.isNaN(date)) ms = Math.max(0, date - now);
    }
    if (ms !== undefined) return Math.min(ms, MAX_RETRY_AFTER_MS);
  }
  return exhaustedWindowMs(headers);
}

/**
 * Pause a `RateLimit` header asks for on any answer (not only a 429), in ms: the longest reset
 * among windows with zero requests remaining, capped at `MAX_RETRY_AFTER_MS`; else `undefined`.
 */
export function exhaustedWindowMs(
  headers: Record<string, string | string[] | undefined>,
): number | undefined {
  const rateLimit = headerText(headers.ratelimit);
  if (!rateLimit) return undefined;
  let longest: number | undefined;
  for (const member of rateLimit.split(",")) {
    const r = /;\s*r=(\d+)/.exec(member);
    const t = /;\s*t=(\d+)/.exec(member);
    if (r && t && Number(r[1]) === 0) longest = Math.max(longest ?? 0, Number(t[1]) * 1000);
  }
  return longest === undefined ? undefined : Math.min(longest, MAX_RETRY_AFTER_MS);
}

/**
 * Exponential backoff for retry number `attempt` (0-based): 0.5 s x 2^n, max 8 s, with jitter
 * drawn uniformly from the upper half of the step so retries of many clients spread out.
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(INITIAL_BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
  return step / 2 + random() * (step / 2);
}

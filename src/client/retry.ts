/**
 * The client's one retry policy (DESIGN.md, "Contract details"):
 *
 * - GET, DELETE and PUT (idempotent; PUT replaces a whole set): retry 408, 429, 5xx and connection errors.
 * - POST and PATCH (may create or change something): retry only when the service provably did
 *   not act: a 429 or 503 answer, or a connection that was refused / never opened. A 500, a
 *   timeout or a reset after sending is NOT retried: the service may have acted on it.
 * - A create that bills (`pods.create`, `clusters.create`, `networkVolumes.create`, `serverless.create`): retried
 *   only after a connection that never opened. A 429 or 503 answer is thrown: the service has
 *   been seen to create the object and still answer so, and a blind resend makes a second one.
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

/**
 * True for methods the service treats as idempotent. PUT replaces a whole resource
 * (`PUT /v2/account/ssh-keys` sets the whole key set), so sending it twice is the same as once.
 */
export function isIdempotent(method: string): boolean {
  return method === "GET" || method === "DELETE" || method === "HEAD" || method === "PUT";
}

/** Whether an HTTP answer with this status may be retried for this method. */
export function isRetryableStatus(method: string, status: number): boolean {
  if (isIdempotent(method)) return status === 408 || status === 429 || status >= 500;
  return status === 429 || status === 503;
}

/**
 * Whether a create that bills may be resent after `error`: only when it was never sent (a
 * refused connection). Any answer, 429 and 503 included, may come from a service that acted.
 */
export function isRetryableBilledCreate(error: unknown): boolean {
  return !(error instanceof APIError) && isRetryableError("POST", error);
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

/**
 * Whether `error` is an answer by which the service says it did nothing: a 429 or a 503. The
 * client resends a POST after one, except a create that bills (a pod, a network volume, a
 * serverless endpoint): the service has been seen to create the object and still answer 429 or
 * 503, so such a create is sent again only after a list shows it was not made (the provider's
 * `createReconciled` does this).
 */
export function saidNotActed(error: unknown): boolean {
  return error instanceof APIError && (error.status === 429 || error.status === 503);
}

/** A header's value as one string (undici gives an array for a repeated header). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
/** RFC 9110 section 5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT` (the form senders must use). */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** Obsolete RFC 850 form: `Sunday, 06-Nov-94 08:49:37 GMT`. */
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
/** Obsolete asctime form: `Sun Nov  6 08:49:37 1994` (day padded with a space). */
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);
/** A list element that is only a weekday: the first half of a date split at its comma. */
const WEEKDAY_ONLY = new RegExp(`^(?:${DAY}|${LONG_DAY})$`);

/** Ms since the epoch of a calendar time, or `undefined` when a field is out of range. */
function utcTime(
  year: number,
  month: number,
  day: number,
  h: number,
  m: number,
  s: number,
): number | undefined {
  // RFC 9110 allows a leap second (60).
  if (h > 23 || m > 59 || s > 60) return undefined;
  const midnight = new Date(Date.UTC(year, month, day));
  // Date.UTC rolls "31 Feb" over into March: such a date is malformed, not a later one.
  if (midnight.getUTCMonth() !== month || midnight.getUTCDate() !== day) return undefined;
  return midnight.getTime() + ((h * 60 + m) * 60 + s) * 1000;
}

/** An HTTP-date (RFC 9110 section 5.6.7, all three forms) in ms since the epoch, else `undefined`. */
export function parseHttpDate(text: string, now: number = Date.now()): number | undefined {
  // The fields as the three forms give them: the month by name, the rest as digits.
  const at = (year: number, month: string | undefined, day?: string, h?: string, m?: string, s?: string) =>
    utcTime(year, MONTHS.indexOf(month as string), Number(day), Number(h), Number(m), Number(s));
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, day, month, year, h, m, s] = match;
    return at(Number(year), month, day, h, m, s);
  }
  match = RFC850_DATE.exec(text);
  if (match) {
    const [, day, month, yy, h, m, s] = match;
    // RFC 9110: a two-digit year more than 50 years in the future is the most recent past year
    // with those last two digits.
    const thisYear = new Date(now).getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(yy);
    if (year > thisYear + 50) year -= 100;
    return at(year, month, day, h, m, s);
  }
  match = ASCTIME_DATE.exec(text);
  if (match) {
    const [, month, day, h, m, s, year] = match;
    return at(Number(year), month, day, h, m, s);
  }
  return undefined;
}

/**
 * The comma-separated elements of a header that may have been repeated: undici gives an array,
 * and a proxy or undici itself may have joined the copies with ", ". An HTTP-date carries a comma
 * of its own (`Sun, 06 Nov ...`), which {@link parseRetryAfter} puts back.
 */
function headerElements(value: string | string[]): string[] {
  const copies = Array.isArray(value) ? value : [value];
  return copies.flatMap((copy) => copy.split(",").map((part) => part.trim()));
}

/**
 * The wait a `Retry-After` value asks for, in ms, as RFC 9110 section 10.2.3 defines it:
 * delta-seconds (`1*DIGIT`, so no sign, fraction or exponent) or an HTTP-date (a date in the past
 * asks for 0). A repeated header counts by its first valid element. `undefined` when no element
 * is valid. Not capped.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === undefined) return undefined;
  const elements = headerElements(value);
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] as string;
    if (/^\d+$/.test(element)) return Number(element) * 1000;
    // A lone weekday is the first half of a date split at its comma: join it to the next element.
    const date = WEEKDAY_ONLY.test(element)
      ? i + 1 < elements.length
        ? parseHttpDate(`${element}, ${elements[i + 1]}`, now)
        : undefined
      : parseHttpDate(element, now);
    if (date !== undefined) return Math.max(0, date - now);
  }
  return undefined;
}

/**
 * Delay the server asked for, in ms, or `undefined` without a usable hint: `Retry-After`
 * ({@link parseRetryAfter}), else the IETF `RateLimit` header (`"minute";r=0;t=12`): the longest
 * reset among windows with no requests remaining. Capped at `MAX_RETRY_AFTER_MS`. A hint of 0
 * (`Retry-After: 0`, a date already past) is no hint: the caller backs off as without one, so a
 * server cannot make a client resend at once.
 */
export function serverDelayMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | undefined {
  const retryAfter = parseRetryAfter(headers["retry-after"], now);
  const ms = retryAfter !== undefined && retryAfter > 0 ? retryAfter : exhaustedWindowMs(headers);
  return ms !== undefined && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
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

/**
 * The pause before retry number `attempt` (0-based) after `error`: the server's hint
 * ({@link serverDelayMs}) when the error is an answer carrying one, else {@link backoffMs}. The
 * client's own retries use it; a caller that resends by itself (JobRun's submission) should
 * instead pass `maxRetries: Infinity` and a `waitSignal` and let the client retry.
 */
export function retryDelayMs(error: unknown, attempt: number, random: () => number = Math.random): number {
  const hinted = error instanceof APIError ? serverDelayMs(error.headers) : undefined;
  return hinted ?? backoffMs(attempt, random);
}

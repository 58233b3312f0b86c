/**
 * The service's published limits, shared by the client, the providers and the emulator (which
 * enforces them). Every size limit uses MB = 1,000,000 bytes. Facts only the emulator needs (result
 * retention, webhook retries, the queue-full rule) live in `emulator/serviceFacts.ts`.
 */

/** One megabyte, as the service counts it: 1,000,000 bytes. */
export const MB = 1_000_000;

/** Largest request body accepted by `POST /run`: 10 MB. */
export const RUN_PAYLOAD_LIMIT_BYTES = 10 * MB;
/** Largest request body accepted by `POST /runsync`: 20 MB. */
export const RUNSYNC_PAYLOAD_LIMIT_BYTES = 20 * MB;
/** Largest single stream chunk: 1 MB; larger output is split. */
export const STREAM_CHUNK_LIMIT_BYTES = 1 * MB;

/** `policy.executionTimeout` must be greater than this many ms. Default 600000 (10 minutes). */
export const EXECUTION_TIMEOUT_MIN_EXCLUSIVE_MS = 5000;
export const EXECUTION_TIMEOUT_DEFAULT_MS = 600_000;
/** `policy.ttl` bounds in ms: 10 s .. 1 week, default 24 h. */
export const TTL_MIN_MS = 10_000;
export const TTL_MAX_MS = 7 * 24 * 60 * 60 * 1000;
export const TTL_DEFAULT_MS = 24 * 60 * 60 * 1000;
/** `wait` of `/runsync` and `/status-sync` in ms: 1000..300000, default 90000. */
export const SYNC_WAIT_MIN_MS = 1000;
export const SYNC_WAIT_MAX_MS = 300_000;
export const SYNC_WAIT_DEFAULT_MS = 90_000;
/** Job-interface operations that have a row in the limits table. */
export type LimitedOperation =
  | "run"
  | "runsync"
  | "status"
  | "cancel"
  | "purge-queue"
  | "openai"
  | "requests";

/** One row of the rate-limit table: `requests` per `windowMs` (sliding), and an in-flight cap. */
export interface RateLimitRule {
  /** Requests allowed in any sliding window of `windowMs`. */
  requests: number;
  /** Window length in ms. @default 10000 */
  windowMs: number;
  /** Requests allowed in flight at once; `undefined` means no cap. */
  concurrent?: number;
}

/** A rate-limit table: rules per operation, applied per endpoint. Missing rows are unlimited. */
export type RateLimitTable = Partial<Record<LimitedOperation | (string & {}), RateLimitRule>>;

/**
 * The service's table, per endpoint and operation. `/status`, `/status-sync` and `/stream`
 * share the `status` row; `/health` and `/retry` have no published limit.
 */
export const SERVICE_RATE_LIMITS: Readonly<Record<LimitedOperation, RateLimitRule>> = Object.freeze({
  run: { requests: 1000, windowMs: 10_000, concurrent: 200 },
  runsync: { requests: 2000, windowMs: 10_000, concurrent: 400 },
  status: { requests: 2000, windowMs: 10_000, concurrent: 400 },
  cancel: { requests: 100, windowMs: 10_000, concurrent: 20 },
  "purge-queue": { requests: 2, windowMs: 10_000 },
  openai: { requests: 2000, windowMs: 10_000, concurrent: 400 },
  requests: { requests: 10, windowMs: 10_000, concurrent: 2 },
});

/**
 * Maps a job-interface path operation (the segment after the endpoint id) to its table row:
 * `status`, `status-sync` and `stream` share the `status` row; every other segment has a row of its
 * own name (`run`, `health`, `retry`, ...). A row missing from the table means unlimited, so
 * `health` and `retry` are limited only by a table that has such a row.
 */
export function limitedOperationFor(segment: string): LimitedOperation | (string & {}) {
  switch (segment) {
    case "status":
    case "status-sync":
    case "stream":
      return "status";
    default:
      return segment;
  }
}

/**
 * Deepest nesting the emulator accepts in a job's `input` (objects and arrays, the root counting
 * 1). Not a published limit of the service: a bound the emulator sets so that one request nested
 * 10,000 deep (20 KB) cannot overflow its stack (the worker's copy of the input, `structuredClone`,
 * overflows from about 2,000 levels); real payloads nest a few levels.
 */
export const MAX_JOB_INPUT_NESTING = 512;
/** Deepest nesting of a handler's `output` the emulator keeps and answers (JSON serialization's bound). */
export const MAX_JOB_OUTPUT_NESTING = 4096;

/**
 * How deep `value` nests (a scalar 0, `{}` 1, `{ a: [] }` 2), counted without recursion. With
 * `stopPast`, counting stops once the depth passes it (the result is then `stopPast + 1`), which
 * also ends the walk of a value that contains itself.
 */
export function nestingDepth(value: unknown, stopPast = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== "object") continue;
    if (depth > deepest) deepest = depth;
    if (deepest > stopPast) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

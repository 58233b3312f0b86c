/**
 * Service facts only the emulator needs: how long results stay readable, how webhooks are
 * retried, and when the queue counts as full. The limits a client also needs are in
 * `wire/limits.ts`.
 */

/** How long results stay readable after completion, in ms. */
export const RUN_RESULT_RETENTION_MS = 30 * 60 * 1000;
export const RUNSYNC_RESULT_RETENTION_MS = 60 * 1000;
/** Webhook delivery: 1 attempt plus this many retries, this far apart by default. */
export const WEBHOOK_RETRIES = 2;
export const WEBHOOK_RETRY_DELAY_MS = 10_000;
/** The queue is full (429) when it holds more than 50 jobs AND more than workersMax x 500. */
export const QUEUE_FULL_MIN_JOBS = 50;
export const QUEUE_FULL_JOBS_PER_WORKER = 500;

/**
 * Job-completion webhooks: POST the job's status body (the same JSON `/status` answers) to the
 * URL given at submission. A 2xx answer acknowledges it; anything else (another status, a
 * refused connection, a timeout) is retried up to `WEBHOOK_RETRIES` (2) more times, each after
 * `retryDelayMs` of the emulator's clock.
 */
import { request } from "undici";
import type { Clock } from "./clock";
import { WEBHOOK_RETRIES } from "./serviceFacts";

/** One delivery attempt, as recorded for introspection. */
export interface WebhookAttempt {
  jobId: string;
  url: string;
  attempt: number;
  /** HTTP status of the answer, or undefined when the request failed. */
  status?: number;
  /** Short reason of a failed attempt (never includes the body). */
  error?: string;
  ok: boolean;
}

/** Delivers webhooks and remembers each attempt. */
export class WebhookSender {
  readonly #clock: Clock;
  readonly #retryDelayMs: number;
  readonly #timeoutMs: number;
  readonly #timers = new Set<unknown>();
  #closed = false;
  /** Every attempt made so far, in order. */
  readonly attempts: WebhookAttempt[] = [];

  /**
   * @param retryDelayMs  delay between attempts, ms of `clock`. @default 10000
   * @param timeoutMs  real-time limit of one attempt, ms. @default 10000
   */
  constructor(clock: Clock, retryDelayMs = 10_000, timeoutMs = 10_000) {
    this.#clock = clock;
    this.#retryDelayMs = retryDelayMs;
    this.#timeoutMs = timeoutMs;
  }

  /** Starts delivery of `body` to `url` in the background. */
  send(jobId: string, url: string, body: unknown): void {
    void this.#attempt(jobId, url, JSON.stringify(body), 1);
  }

  async #attempt(jobId: string, url: string, payload: string, attempt: number): Promise<void> {
    if (this.#closed) return;
    const record: WebhookAttempt = { jobId, url, attempt, ok: false };
    try {
      const res = await request(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "runpod-emulator-webhook" },
        body: payload,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      await res.body.dump();
      record.status = res.statusCode;
      record.ok = res.statusCode >= 200 && res.statusCode < 300;
    } catch (err) {
      record.error = (err as Error).message;
    }
    this.attempts.push(record);
    if (record.ok || attempt > WEBHOOK_RETRIES || this.#closed) return;
    const timer = this.#clock.setTimeout(() => {
      this.#timers.delete(timer);
      void this.#attempt(jobId, url, payload, attempt + 1);
    }, this.#retryDelayMs);
    this.#timers.add(timer);
  }

  /** Stops pending retries. */
  close(): void {
    this.#closed = true;
    for (const t of this.#timers) this.#clock.clearTimeout(t);
    this.#timers.clear();
  }
}

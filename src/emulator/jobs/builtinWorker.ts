/**
 * The built-in worker every endpoint runs when no user handler is configured. It is driven by
 * the job input:
 * 1. `sleepMs` (number, ms): wait first; abortable by cancel and executionTimeout.
 * 2. `stream` (array): yield each item as one stream chunk's `output`.
 * 3. `fail` (string): end FAILED with that error.
 * 4. Else COMPLETED with `output` if given, else the `stream` items as an array if given, else
 *    the whole input echoed.
 *
 * A job from the OpenAI-compatible route (`/v2/{id}/openai/v1/...`) has the input
 * `{ openai_route, openai_input }`, as RunPod's workers receive it: the built-in worker answers it
 * as the load balancer's built-in model server answers that route (`builtinServer.ts`, `MODEL_NAME`
 * from the release's env). A streamed answer is yielded one event per chunk (and returned as their
 * array); a request the server refuses (4xx) completes with `{ error: <message> }`.
 */
import type { Clock } from "../clock";
import { builtinServerAnswer } from "./builtinServer";
import type { HandlerContext, HandlerJob } from "./handlers";

/** The one OpenAI route read with GET; the others are POSTs. */
export const OPENAI_MODELS_ROUTE = "/v1/models";

/** Waits `ms` of `clock` time; rejects with the signal's reason when aborted first. */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Builds the built-in worker on `clock`: an async generator as a user handler would be. */
export function builtinWorker(clock: Clock) {
  return async function* builtin(
    job: HandlerJob,
    { signal, worker }: HandlerContext,
  ): AsyncGenerator<unknown, unknown> {
    const input = job.input;
    if (typeof input.openai_route === "string") {
      const path = input.openai_route;
      const answer = builtinServerAnswer(
        {
          method: path === OPENAI_MODELS_ROUTE ? "GET" : "POST",
          path,
          query: {},
          headers: {},
          body: input.openai_input ?? null,
        },
        worker.env,
        clock.now(),
      );
      if (answer.status >= 400) {
        const error = (answer.body as { error?: unknown } | null)?.error;
        return { error: typeof error === "string" ? error : `${path} answered ${answer.status}` };
      }
      if (answer.events) {
        for (const event of answer.events) yield event;
        return answer.events;
      }
      return answer.body;
    }
    const sleepMs = input.sleepMs;
    if (sleepMs !== undefined) {
      if (typeof sleepMs !== "number" || !Number.isFinite(sleepMs) || sleepMs < 0) {
        throw new Error("input.sleepMs must be a non-negative number of milliseconds");
      }
      await sleep(clock, sleepMs, signal);
    }
    const stream = input.stream;
    if (stream !== undefined && !Array.isArray(stream)) throw new Error("input.stream must be an array");
    if (stream) for (const item of stream) yield item;
    if (input.fail !== undefined) {
      throw new Error(typeof input.fail === "string" ? input.fail : JSON.stringify(input.fail));
    }
    if ("output" in input) return input.output;
    if (stream) return stream;
    return input;
  };
}

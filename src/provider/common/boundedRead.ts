/**
 * One bound, in all, for the reads a provider makes where nothing is worth a long wait: `check`'s
 * catalog lists and the lists a registry credential's `delete` reads. Timed on the settings' clock
 * (the real one by default), so a test moves it by hand instead of waiting 10 real seconds.
 */
import { type Clock, systemClock, timeoutSignal } from "../clock";

/** How long one bounded read may take, every try and pause included: 10 s. */
export const READ_BOUND_MS = 10_000;

/** A bounded read that did not finish within its bound; the message names the read and the bound. */
export class ReadTimeoutError extends Error {
  constructor(what: string, boundMs: number) {
    super(`${what} did not answer within ${boundMs / 1000} s`);
    this.name = "ReadTimeoutError";
  }
}

/**
 * Runs `read` under `boundMs` of `clock`'s time: the signal it gets aborts at the bound, and the
 * read then fails with {@link ReadTimeoutError} naming `what` (e.g. `GET /v2/catalog/gpus`).
 */
export async function boundedRead<T>(
  clock: Clock | undefined,
  what: string,
  read: (signal: AbortSignal) => Promise<T>,
  boundMs = READ_BOUND_MS,
): Promise<T> {
  const bound = timeoutSignal(clock ?? systemClock, boundMs);
  try {
    return await read(bound.signal);
  } catch (error) {
    if (bound.signal.aborted) throw new ReadTimeoutError(what, boundMs);
    throw error;
  } finally {
    bound.clear();
  }
}

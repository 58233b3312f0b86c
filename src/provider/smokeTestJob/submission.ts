/**
 * Submission of a JobRun's job, through the client's one retry policy (`src/client/retry.ts`): a
 * job request the service provably did not act on (429, 503, a connection never opened) is sent
 * again at most the client's `maxRetries` times (default 5), each after the service's Retry-After
 * or the client's backoff; one it may have acted on (a 500, a reset or timeout after sending, an
 * unreadable answer) is never sent again: the service has no idempotency key and no job listing,
 * and a second GPU job costs money. The deadline stops only the waits before a send; an abort
 * there is `APIUserAbortError` with `sent: false`, so a job never accepted is never reported as
 * possibly submitted. A runsync request already on the wire at the deadline gets
 * `RUNSYNC_ANSWER_GRACE_MS` more to bring the job id, then is cut.
 */
import type { Endpoint, Job, JobRequest } from "../../client";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  mayHaveActed,
  RateLimitError,
  SYNC_WAIT_MAX_MS,
  SYNC_WAIT_MIN_MS,
} from "../../client";
import { JobRunSubmitError } from "../../client/errors";
import { CANCELLED } from "../clock";
import { describeError } from "../common/wording";
import { RUNSYNC_ANSWER_GRACE_MS, RUNSYNC_MARGIN_MS } from "./bounds";
import type { ResolvedJobRunArgs } from "./jobArgs";

/** The execution's deadline as submission sees it. */
export interface Deadline {
  endpoint: Pick<Endpoint, "id" | "run" | "runSync">;
  /** Aborts when `timeoutMs` has passed (or the deployment is cancelled, when `deadline` is given). */
  signal: AbortSignal;
  /**
   * Aborts when `timeoutMs` has passed, only: a cancellation stops the waits before a send, never a
   * POST already on its way, whose answer carries the only copy of the job id (so the job can be
   * cancelled). @default `signal`
   */
  deadline?: AbortSignal;
  /** True when `signal` aborted because the deployment was cancelled. @default never */
  cancelled?: () => boolean;
  /** Milliseconds left until the deadline. */
  remaining: () => number;
}

/** Thrown when no job exists to record: it was never submitted, or its submission is in doubt. */
export { JobRunSubmitError };

/**
 * True when a failed submission was a passing refusal the client's retry policy resends (and
 * gave up on after its `maxRetries`): the service provably did not act on it (`mayHaveActed`
 * says no) and it answered 429 or 503, or the connection never opened. Used only to word the
 * failure; the resending itself is the client's.
 */
export function resendable(error: unknown): boolean {
  if (mayHaveActed(error)) return false;
  if (error instanceof RateLimitError) return true;
  if (error instanceof APIError) return error.status === 503;
  return error instanceof APIConnectionError && !(error instanceof APITimeoutError);
}

/**
 * Submits the job (`POST /run`, or `POST /runsync` with a wait ending before the deadline) through
 * the client's retry policy. Rejects with `JobRunSubmitError`, saying whether a job may exist.
 */
export async function submitJob(args: ResolvedJobRunArgs, deadline: Deadline): Promise<Job> {
  const { endpoint, signal, remaining } = deadline;
  // `check` requires `input` unless `http` is given, and a probe never submits a job.
  const body: JobRequest = { input: args.input ?? {} };
  if (args.webhook !== undefined) body.webhook = args.webhook;
  if (args.policy !== undefined) body.policy = args.policy;
  if (args.s3Config !== undefined) body.s3Config = args.s3Config;
  try {
    if (args.mode !== "runsync") {
      return await endpoint.run(body, { signal: deadline.deadline ?? signal, waitSignal: signal });
    }
    // Leave a margin so the service answers `{id, status}` before our deadline: the job can
    // then still be cancelled by id.
    const wait = Math.floor(
      Math.min(SYNC_WAIT_MAX_MS, Math.max(SYNC_WAIT_MIN_MS, remaining() - RUNSYNC_MARGIN_MS)),
    );
    // The deadline stops the waits before sending (`waitSignal`). Once the body is on its way
    // the answer carries the only copy of the job id, so the request gets the grace beyond the
    // deadline to bring it; a server holding it longer is cut there (the submission is then in
    // doubt), never left to the client's per-attempt timeout (wait + 15 s, at least 60 s).
    const cut = new AbortController();
    const cutTimer = setTimeout(
      () => cut.abort(new Error(`POST /runsync outlasted timeoutMs by ${RUNSYNC_ANSWER_GRACE_MS} ms`)),
      Math.max(0, remaining()) + RUNSYNC_ANSWER_GRACE_MS,
    );
    try {
      return await endpoint.runSync(body, { waitSignal: signal, signal: cut.signal, wait });
    } finally {
      clearTimeout(cutTimer);
    }
  } catch (error) {
    throw submitError(args, deadline, error);
  }
}

function submitError(args: ResolvedJobRunArgs, deadline: Deadline, error: unknown): JobRunSubmitError {
  const { endpoint, signal } = deadline;
  const mode = args.mode === "runsync" ? "POST /runsync" : "POST /run";
  const cancelled = deadline.cancelled?.() === true;
  if (mayHaveActed(error)) {
    const why = cancelled
      ? `${CANCELLED} while ${mode} was in flight`
      : signal.aborted || error instanceof APIUserAbortError
        ? `timeoutMs (${args.timeoutMs} ms) expired while ${mode} was in flight`
        : `${mode} failed after it was sent (${describeError(error)})`;
    return new JobRunSubmitError(
      `JobRun cannot tell whether a job was submitted to endpoint ${endpoint.id}: ${why}. ` +
        "The submission may or may not have happened. The service has no idempotency key and no job listing, " +
        "so JobRun did not send a second job. " +
        "Hint: check the endpoint's queue (getEndpointHealth or the RunPod console) for a stray job, then run " +
        "`pulumi up` again to submit a new one.",
      true,
      error,
    );
  }
  if (cancelled) {
    return new JobRunSubmitError(
      `JobRun did not submit a job to endpoint ${endpoint.id}: ${CANCELLED} before ${mode} was sent. ` +
        "No job was created. Hint: run `pulumi up` again to submit one.",
      false,
      error,
    );
  }
  if (resendable(error)) {
    return new JobRunSubmitError(
      `JobRun could not submit a job to endpoint ${endpoint.id} within timeoutMs (${args.timeoutMs} ms): ` +
        `the service kept refusing it (${describeError(error)}). No job was created. ` +
        "Hint: the endpoint's queue or the account's rate limits are full; try again later, raise timeoutMs, " +
        "or check the endpoint with getEndpointHealth.",
      false,
      error,
    );
  }
  if (signal.aborted) {
    return new JobRunSubmitError(
      `JobRun could not submit a job to endpoint ${endpoint.id} within timeoutMs (${args.timeoutMs} ms): ` +
        `the deadline passed while ${mode} waited to be sent (a pause after the service refused it with ` +
        "429 or 503, or a slot of the account's rate limit). No job was created. " +
        "Hint: the endpoint's queue or the account's rate limits are full; try again later, raise timeoutMs, " +
        "or check the endpoint with getEndpointHealth.",
      false,
      error,
    );
  }
  return new JobRunSubmitError(
    `JobRun could not submit a job to endpoint ${endpoint.id}: ${describeError(error)}. No job was created. ` +
      "Hint: check the endpoint id, the API key (runpod:apiKey or RUNPOD_API_KEY) and the job input.",
    false,
    error,
  );
}

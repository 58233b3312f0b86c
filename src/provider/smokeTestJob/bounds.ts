/**
 * The bounds of one JobRun execution: what it keeps of a stream, how long a cancel or a drain may
 * take, and the runsync timing margins. Argument checking (`jobArgs.ts`, `jobArgsCheck.ts`) and the execution
 * (`run.ts`) both read them, so they live apart from both (no import cycle).
 */
import { MB, SYNC_WAIT_MIN_MS } from "../../client";

/** Most stream chunks kept in the `stream` output. */
export const MAX_STREAM_CHUNKS = 1000;
/** Most bytes of stream chunk JSON kept in the `stream` output: 1 MB (1,000,000 bytes). */
export const MAX_STREAM_BYTES = 1 * MB;
/** How long a cancel on timeout (or a status check around a retry) may take in all, in ms. */
export const CANCEL_TIMEOUT_MS = 10_000;
/** Time kept free at the end of `timeoutMs` so a runsync wait answers before the deadline, in ms. */
export const RUNSYNC_MARGIN_MS = 1_000;
/**
 * Smallest `timeoutMs` of mode "runsync": the shortest runsync wait (1 s), the margin, and 1 s
 * for the request itself, so the service answers with the job id before the deadline.
 */
export const MIN_RUNSYNC_TIMEOUT_MS = SYNC_WAIT_MIN_MS + RUNSYNC_MARGIN_MS + 1_000;
/**
 * How long a runsync request already sent may outlive `timeoutMs` to bring its answer (the job
 * id, so the job can be cancelled), in ms; then it is cut and the submission is in doubt.
 */
export const RUNSYNC_ANSWER_GRACE_MS = 2_000;
/** Timeline entry recorded when a cancel got no confirmation from the service. */
export const CANCEL_NOT_CONFIRMED = "CANCEL_NOT_CONFIRMED";
/** Status recorded when JobRun cannot tell whether the job is queued again (an ambiguous retry). */
export const STATUS_UNKNOWN = "UNKNOWN";
/** How long to wait for the last stream chunks once the job is terminal, at most, in ms. */
export const STREAM_DRAIN_MS = 5_000;

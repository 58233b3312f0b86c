/**
 * Which release a JobRun tests (`rollout: "wait"`, REST v2). RunPod rolls an endpoint's update out
 * worker by worker: until the last worker of the old configuration is replaced, a job may land on
 * either release. So, before submitting, the JobRun waits until no worker of the endpoint is
 * stale ({@link waitForRollout}); after the job, it checks that the worker that ran it runs the
 * endpoint's current version ({@link releaseOfJob}), and the execution submits once more when it
 * did not (a release rolled out during the test).
 *
 * Both read `GET /v2/serverless/{id}/workers` (each worker's `version` and `isStale`, and the
 * endpoint's `endpointVersion`): one request per poll, a poll every {@link ROLLOUT_POLL_MS}, so
 * the end of a rollout is noticed within a second at one request a second. The wait's reads are
 * shared: every waiter on the same endpoint in the host (other JobRuns, ServerlessEndpoint waits)
 * judges the answers of ONE read loop (`./workerPoll.ts`); the release check after the job is a
 * fresh read of its own.
 */
import type { ServerlessWorker, ServerlessWorkerList } from "../../client";
import { type RolloutProgress, RolloutTimeoutError } from "../../client/errors";
import { boundEntry } from "../common/wording";
import { joinWorkerPoll, type WorkerPolls } from "./workerPoll";

/** Reads an endpoint's workers: `client.serverless.workers`, bound to a REST v2 client. */
export type WorkerListReader = (
  endpointId: string,
  options: { signal: AbortSignal },
) => Promise<ServerlessWorkerList>;

/** Time between two reads of the workers while a rollout is under way, in ms. */
export const ROLLOUT_POLL_MS = 1_000;

/** How long the check after the job may take in all (retries included), in ms. */
export const RELEASE_CHECK_TIMEOUT_MS = 10_000;

/** Timeline entry recorded when the JobRun starts waiting for a rollout to end. */
export const ROLLOUT_WAIT = "ROLLOUT_WAIT";
/** Timeline entry recorded when no worker of an older version is left. */
export const ROLLED_OUT = "ROLLED_OUT";
/** Timeline entry recorded when the job ran on a worker of an older release (it is submitted again). */
export const STALE_WORKER = "STALE_WORKER";

/**
 * True when `worker` runs another configuration than the endpoint's `endpointVersion`: an older
 * one, or a newer one than the endpoint now reports (its versions went backwards). The v2
 * document: "a worker whose `version` differs is running stale config".
 */
export function isStaleWorker(worker: ServerlessWorker, endpointVersion: number | null | undefined): boolean {
  if (worker.isStale) return true;
  return (
    typeof worker.version === "number" &&
    typeof endpointVersion === "number" &&
    worker.version !== endpointVersion
  );
}

/** The endpoint's state of rollout, from one read of its workers (the shape its timeout error carries). */
export type RolloutState = RolloutProgress;

/** One read of the workers, as a rollout state. */
export function rolloutState(list: ServerlessWorkerList): RolloutState {
  const version = typeof list.endpointVersion === "number" ? list.endpointVersion : undefined;
  const stale = list.workers.filter((w) => isStaleWorker(w, version)).length;
  return { version, stale, total: list.workers.length };
}

/** How a rollout wait reports progress and stops. */
export interface RolloutWaitOptions {
  /** Aborts the wait (the JobRun's deadline). */
  signal: AbortSignal;
  /** Called once, when the first read finds stale workers (the wait begins). */
  onWaiting?: (state: RolloutState) => void;
  /** Called once, when a wait that began ends (no stale worker left). */
  onRolledOut?: (state: RolloutState) => void;
  /** Time between reads, in ms. @default ROLLOUT_POLL_MS */
  pollMs?: number;
  /**
   * The client's part of the shared loop's key (`clientPollKey(settings)`): waits with the same
   * key on the same endpoint share one read loop. Without it, waits share only with waits
   * through the same reader.
   */
  pollKey?: string;
  /** The loops to join. @default the host's (`workerPolls`) */
  polls?: WorkerPolls<ServerlessWorkerList>;
}

/** What a rollout wait found: the endpoint's state once no worker was stale, and the reads made. */
export interface RolloutWaitResult extends RolloutState {
  /** Reads of the workers made (1 when nothing was rolling out). */
  reads: number;
  /** True when the first read found stale workers. */
  waited: boolean;
}

/**
 * Reads the endpoint's workers until none is stale (no worker runs an older version than the
 * endpoint's), a read every `pollMs`, shared with the other waiters on the endpoint (the first
 * answer comes from a read started after the wait began). Resolves at the first answer when
 * nothing is rolling out (one read).
 * Rejects with the error of a failed read (after the client's retries), or with the signal's
 * reason when it aborts; `RolloutTimeoutError` carries the last state seen.
 */
export async function waitForRollout(
  read: WorkerListReader,
  endpointId: string,
  options: RolloutWaitOptions,
): Promise<RolloutWaitResult> {
  const { signal, pollMs = ROLLOUT_POLL_MS } = options;
  let reads = 0;
  let waited = false;
  let last: RolloutState | undefined;
  const poll = joinWorkerPoll(
    options.pollKey,
    endpointId,
    (loopSignal) => read(endpointId, { signal: loopSignal }),
    pollMs,
    read,
    options.polls,
  );
  try {
    for (;;) {
      const state = rolloutState(await poll.next(signal));
      reads += 1;
      last = state;
      if (state.stale === 0) {
        if (waited) options.onRolledOut?.(state);
        return { ...state, reads, waited };
      }
      if (!waited) {
        waited = true;
        options.onWaiting?.(state);
      }
    }
  } catch (error) {
    if (signal.aborted) throw new RolloutTimeoutError(endpointId, last, reads, signal.reason ?? error);
    throw error;
  } finally {
    poll.leave();
  }
}

/** The rollout wait was stopped (the JobRun's deadline) before the last stale worker was replaced. */
export { RolloutTimeoutError };

/** Which release ran the job, as read from the workers after it ended. */
export type ReleaseCheck =
  /** The job ran the endpoint's current version (`version`; undefined when the service gives none). */
  | { kind: "current"; version: number | undefined; how: string }
  /** The job ran an older version than the endpoint's current one. */
  | { kind: "stale"; version: number | undefined; workerVersion: number | undefined; how: string }
  /** It cannot be told: the worker is gone and the endpoint changed version since the job was submitted. */
  | { kind: "unknown"; version: number | undefined; how: string };

/**
 * Tells from the workers which release ran a finished job: the worker `workerId` as listed (its
 * `version` and `isStale`), or, when it is no longer listed or the job status named no worker,
 * the endpoint's version against `versionAtSubmit`: when it has not changed since the rollout
 * wait found no stale worker, every worker that could take the job ran that version. A service
 * that reports no versions at all is taken at its `isStale` word.
 */
export function releaseOfJob(
  list: ServerlessWorkerList,
  workerId: string | undefined,
  versionAtSubmit: number | undefined,
): ReleaseCheck {
  const version = typeof list.endpointVersion === "number" ? list.endpointVersion : undefined;
  const worker = workerId === undefined ? undefined : list.workers.find((w) => w.id === workerId);
  const workerVersion = typeof worker?.version === "number" ? worker.version : undefined;
  if (worker !== undefined) {
    const at = `worker ${boundEntry(worker.id)} runs version ${workerVersion ?? "(unknown)"}`;
    if (isStaleWorker(worker, version)) {
      return {
        kind: "stale",
        version,
        workerVersion,
        how: `${at}, the endpoint is at version ${version ?? "(unknown)"}`,
      };
    }
    // The endpoint's own version when it reports one (the worker's matches it, see isStaleWorker).
    return { kind: "current", version: version ?? workerVersion, how: at };
  }
  const who =
    workerId === undefined ? "the job status named no worker" : `worker ${workerId} is no longer listed`;
  if (version === undefined && versionAtSubmit === undefined && !list.workers.some((w) => w.isStale)) {
    // A service that reports no versions: no worker is stale now or was at submission.
    return {
      kind: "current",
      version,
      how: `${who}; the service reports no versions and no worker is stale`,
    };
  }
  if (version !== undefined && version === versionAtSubmit) {
    return {
      kind: "current",
      version,
      how: `${who}; the endpoint is still at version ${version}, on which every worker ran when the job was submitted`,
    };
  }
  return {
    kind: "unknown",
    version,
    how:
      `${who}, and the endpoint moved from version ${versionAtSubmit ?? "(unknown)"} to ` +
      `${version ?? "(unknown)"} while the job ran`,
  };
}

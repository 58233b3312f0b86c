/**
 * The rollout wait of a `ServerlessEndpoint` (`rollout: "wait"`): after a create or a PATCH, read
 * the endpoint's workers (`GET /v2/serverless/{id}/workers`) once a second until no worker is
 * stale (none runs an older version than the endpoint's) and none of the current version is
 * UNHEALTHY, bounded by `rolloutTimeoutMs`. The staleness rule is JobRun's
 * (`smokeTestJob/staleWorkers.ts`: {@link rolloutState}, {@link isStaleWorker}), and so is the poll.
 *
 * A stall is called early when the service's state makes it certain: a worker of the current
 * version found UNHEALTHY (failing its health checks: an image that cannot be pulled, a container
 * that crashes at start) on two reads in a row, a poll apart. Otherwise the wait runs to
 * `rolloutTimeoutMs`. Either way the error says which release, the workers by status and version,
 * the log tail of one failing worker, and what to do; the caller makes it a partial failure.
 *
 * The reads are shared: every wait on the same endpoint in the host (other endpoints' waits,
 * JobRuns) judges the answers of ONE read loop (`../smokeTestJob/workerPoll.ts`), a read a second at most.
 *
 * The deployment's cancellation (`signal`) ends the wait at once, as its timeout would, with the
 * workers as last read and no log read: the user asked to stop.
 */
import type { ServerlessWorker, ServerlessWorkerList, WorkerLogEvent } from "../../client";
import { EndpointRolloutError } from "../../client/errors";
import { CANCELLED, type Clock, isCancellation, systemClock, timeoutSignal } from "../clock";
import { boundEntry, describeError, LISTED_AT_MOST, listSome } from "../common/wording";
import { logTailSection, readLogTail } from "../smokeTestJob/logTail";
import { isStaleWorker, ROLLOUT_POLL_MS, rolloutState } from "../smokeTestJob/staleWorkers";
import { joinWorkerPoll, type WorkerPolls } from "../smokeTestJob/workerPoll";

/** How the wait reads the service: the endpoint's workers and one worker's log. */
export interface RolloutReaders {
  workers: (endpointId: string, options: { signal?: AbortSignal }) => Promise<ServerlessWorkerList>;
  workerLogs: (
    endpointId: string,
    workerId: string,
    options: { tail: number; signal: AbortSignal },
  ) => AsyncIterable<WorkerLogEvent>;
}

/** What the wait needs besides the readers. */
export interface EndpointRolloutOptions {
  /** The longest wait, in ms (`rolloutTimeoutMs`). */
  timeoutMs: number;
  /** Values redacted from the log tail (env values, the API key). */
  secrets: readonly string[];
  /** Time between reads, in ms. @default ROLLOUT_POLL_MS (1 s) */
  pollMs?: number;
  /** Called once when the first read finds the rollout under way. */
  onWaiting?: (version: number | undefined, stale: number, total: number) => void;
  /**
   * The client's part of the shared loop's key (`clientPollKey(settings)`): waits with the same
   * key on the same endpoint share one read loop. Without it, waits share only with waits
   * through the same `readers.workers`.
   */
  pollKey?: string;
  /** The loops to join. @default the host's (`workerPolls`) */
  polls?: WorkerPolls<ServerlessWorkerList>;
  /** Time and timers of the deadline and the log tail. @default the clock of `polls`, else the real one */
  clock?: Clock;
  /**
   * The deployment's cancellation (`RunpodSettings.signal`): when it aborts the wait ends at once
   * with an {@link EndpointRolloutError} of kind `"cancelled"`. @default never
   */
  signal?: AbortSignal;
}

/** The endpoint's state once the rollout is over: its version and the reads made. */
export interface EndpointRolloutDone {
  version: number | undefined;
  reads: number;
  workers: number;
}

/** The rollout stalled or timed out; `message` is what the engine prints. */
export { EndpointRolloutError };

/** "2 UNHEALTHY on version 3, 1 RUNNING on version 2": the workers by status and version. */
export function workersByStatus(list: ServerlessWorkerList): string {
  if (list.workers.length === 0) return "no active workers";
  const counts = new Map<string, { status: string; version: number | null | undefined; n: number }>();
  for (const w of list.workers) {
    const key = `${w.status}\u0000${w.version ?? "?"}`;
    const entry = counts.get(key) ?? { status: w.status, version: w.version, n: 0 };
    entry.n += 1;
    counts.set(key, entry);
  }
  const groups = [...counts.values()]
    .sort((a, b) => (b.version ?? -1) - (a.version ?? -1) || b.n - a.n || a.status.localeCompare(b.status))
    .map((e) => `${e.n} ${e.status} on version ${e.version ?? "(unknown)"}`);
  // A service with thousands of versions or statuses must not make the message unbounded.
  return listSome(groups, LISTED_AT_MOST).replace(/ and (\d+) more$/, " and $1 more groups");
}

/** Workers of the current version that fail their health checks. */
function unhealthyCurrent(list: ServerlessWorkerList, version: number | undefined): ServerlessWorker[] {
  return list.workers.filter((w) => w.status === "UNHEALTHY" && !isStaleWorker(w, version));
}

/**
 * Waits until no worker is stale and none of the current version is unhealthy. Rejects with an
 * {@link EndpointRolloutError} on a stall or at `timeoutMs`, with a read's error otherwise.
 * `label` names the endpoint in messages (`"echo" (id abc)`).
 */
export async function waitForEndpointRollout(
  readers: RolloutReaders,
  endpointId: string,
  label: string,
  options: EndpointRolloutOptions,
): Promise<EndpointRolloutDone> {
  const pollMs = options.pollMs ?? ROLLOUT_POLL_MS;
  const clock = options.clock ?? options.polls?.clock ?? systemClock;
  const deadline = clock.now() + options.timeoutMs;
  const seenUnhealthy = new Set<string>();
  let reads = 0;
  let last: ServerlessWorkerList | undefined;
  const poll = joinWorkerPoll(
    options.pollKey,
    endpointId,
    (signal) => readers.workers(endpointId, { signal }),
    pollMs,
    readers.workers,
    options.polls,
  );
  try {
    for (;;) {
      const left = deadline - clock.now();
      // A read that hangs past the deadline (plus the client's own bound) ends the wait.
      const bound = timeoutSignal(clock, Math.max(left, 1) + 10_000);
      const until =
        options.signal === undefined ? bound.signal : AbortSignal.any([bound.signal, options.signal]);
      let list: ServerlessWorkerList;
      try {
        list = await poll.next(until).finally(bound.clear);
      } catch (error) {
        if (!isCancellation(error, options.signal)) throw error;
        throw cancelledError(label, last);
      }
      last = list;
      reads += 1;
      const state = rolloutState(list);
      const unhealthy = unhealthyCurrent(list, state.version);
      if (state.stale === 0 && unhealthy.length === 0) {
        return { version: state.version, reads, workers: state.total };
      }
      if (reads === 1) options.onWaiting?.(state.version, state.stale, state.total);
      const stalled = unhealthy.find((w) => seenUnhealthy.has(w.id));
      if (stalled !== undefined) {
        poll.leave();
        throw await rolloutError(readers, endpointId, label, list, stalled, options, "stalled", clock);
      }
      seenUnhealthy.clear();
      for (const w of unhealthy) seenUnhealthy.add(w.id);
      if (deadline - clock.now() <= 0) {
        poll.leave();
        const failing = unhealthy[0] ?? initializingCurrent(list, state.version);
        throw await rolloutError(readers, endpointId, label, list, failing, options, "timeout", clock);
      }
      // The next answer comes from the loop's next read, at most `pollMs` after this one started.
    }
  } finally {
    poll.leave();
  }
}

/**
 * The wait ended by the deployment's cancellation: the release as last read (unknown before the
 * first read), and what the next `pulumi up` does.
 */
function cancelledError(label: string, list: ServerlessWorkerList | undefined): EndpointRolloutError {
  const state = list === undefined ? undefined : rolloutState(list);
  const release = `version ${state?.version ?? "(unknown)"}`;
  const standing =
    list === undefined || state === undefined
      ? "its workers were not read yet."
      : `${state.stale} of ${state.total} workers still run an older version. Workers: ${workersByStatus(list)}.`;
  return new EndpointRolloutError(
    `ServerlessEndpoint ${label}: the rollout of ${release} was not complete when ${CANCELLED}; ${standing}\n` +
      "The endpoint was changed and is recorded in the state; run pulumi up again: it waits for the rollout again.",
    state?.version,
    "cancelled",
  );
}

/** A worker of the current version still starting: the one to show when the wait timed out. */
function initializingCurrent(
  list: ServerlessWorkerList,
  version: number | undefined,
): ServerlessWorker | undefined {
  return list.workers.find(
    (w) => !isStaleWorker(w, version) && w.status !== "IDLE" && w.status !== "RUNNING",
  );
}

async function rolloutError(
  readers: RolloutReaders,
  endpointId: string,
  label: string,
  list: ServerlessWorkerList,
  failing: ServerlessWorker | undefined,
  options: EndpointRolloutOptions,
  kind: "stalled" | "timeout",
  clock: Clock,
): Promise<EndpointRolloutError> {
  const state = rolloutState(list);
  const version = state.version;
  const release = `version ${version ?? "(unknown)"}`;
  const head =
    kind === "stalled"
      ? `ServerlessEndpoint ${label}: the rollout of ${release} stalled: worker ${boundEntry(failing?.id ?? "(unknown)")} of ${release} is ` +
        "UNHEALTHY (it fails its health checks: an image that cannot be pulled, or a container that exits at start)."
      : `ServerlessEndpoint ${label}: the rollout of ${release} did not complete within rolloutTimeoutMs ` +
        `(${options.timeoutMs} ms): ${state.stale} of ${state.total} workers still run an older version` +
        (failing === undefined
          ? "."
          : `, and worker ${boundEntry(failing.id)} of ${release} is ${boundEntry(failing.status)}.`);
  const lines = [head, `Workers: ${workersByStatus(list)}.`];
  if (failing !== undefined) {
    const tail = await readLogTail(
      (id, workerId, o) => readers.workerLogs(id, workerId, o),
      endpointId,
      failing.id,
      options.secrets,
      5_000,
      clock,
    ).catch((error: unknown) => ({ unavailable: describeError(error) }));
    lines.push(logTailSection(failing.id, tail));
  }
  lines.push(
    `The endpoint was changed: it is at ${release}` +
      (state.stale > 0 ? ", and its stale workers keep serving the previous release. " : ". ") +
      "Fix the release (the image, its registry credential, env or start command) and run pulumi up again; " +
      (kind === "timeout" ? "if the rollout only needs longer, raise rolloutTimeoutMs; " : "") +
      'to deploy without waiting for the rollout, set rollout: "ignore".',
  );
  return new EndpointRolloutError(lines.join("\n"), version, kind);
}

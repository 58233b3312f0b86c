/**
 * Waiting for a cluster's member pods to be usable, as `waitFor` asks (`running` or `ssh`, the
 * judgement of a `Pod`'s wait: `../pod/wait.ts`), with one read of the members
 * (`GET /v2/clusters/{id}/pods`) a second at most, bounded by `waitTimeoutMs` of the wait's clock.
 * A member that goes to ERROR, EXITED or TERMINATED ends the wait at once (it will not start by
 * itself); the failure names every member not usable, with its last status. A members read
 * answering 404 is read again for up to `NOT_FOUND_GRACE_MS` (the service may not find a new
 * cluster's members yet), then thrown. A cancelled deployment (`signal`) ends either pause, or a
 * read in flight, at once, as a failure naming the members not usable as last read.
 *
 * After the wait, {@link readClusterBack} reads the cluster itself once more, with the same 404
 * grace and the same cancellation.
 */
import { type Cluster, NotFoundError, type Pod, type RunpodClient, RunpodError } from "../../client";
import { CANCELLED, type Clock, isCancellation, sleep, systemClock } from "../clock";
import { boundEntry } from "../common/wording";
import { describeWait, NOT_FOUND_GRACE_MS, POLL_INTERVAL_MS, probeUsable } from "../pod/wait";
import type { ClusterWaitFor } from "./args";

/** Longest one SSH probe may take, in ms (as a pod's). */
const PROBE_TIMEOUT_MS = 5000;
/** Members named one by one in a failure at most (a cluster holds up to 250). */
const NAMED_AT_MOST = 10;

/** A member that is not usable, and why (its last status, and what the probe found). */
export interface MemberShortfall {
  id: string;
  status: string;
  note?: string;
}

export type MembersWait =
  | { kind: "ready"; members: Pod[] }
  | { kind: "failure"; members: Pod[]; notUsable: MemberShortfall[]; why: string };

export interface MembersWaitOptions {
  client: RunpodClient;
  clusterId: string;
  /** Members the cluster has (`compute.podCount`): fewer listed are not all usable yet. */
  podCount: number;
  waitFor: ClusterWaitFor;
  timeoutMs: number;
  /** Time and timers of the pauses between reads and of the deadline. @default the real clock */
  clock?: Clock;
  /**
   * Ends the wait at once when it aborts (the deployment cancelled), in a pause or a read, as a
   * failure that says so. @default never
   */
  signal?: AbortSignal;
}

// Final: ERROR is "unrecoverable" (PodStatus) and a member cannot be started or replaced alone.
const STOPPED = new Set(["ERROR", "EXITED", "TERMINATED"]);

/** Reads the members until every one is usable per `waitFor`, or says which are not. */
export async function waitForMembers(options: MembersWaitOptions): Promise<MembersWait> {
  const { client, clusterId, podCount, waitFor, timeoutMs, signal } = options;
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  const usable = new Set<string>();
  const notes = new Map<string, string>();
  let missingSince: number | undefined;
  /** The members and those not usable as last read (none before the first read answers). */
  let members: Pod[] = [];
  let notUsable: MemberShortfall[] = [];
  /** How many members were not usable (`within`: the clause that ends the wait), as its failure. */
  const shortOf = (within: string): MembersWait => {
    const missing = podCount - members.length;
    const why =
      `${notUsable.length + Math.max(0, missing)} of its ${podCount} member pods were not ` +
      `${describeWait(waitFor)} ${within}` +
      (missing > 0 ? `; ${missing} were not listed at all` : "");
    return { kind: "failure", members, notUsable, why };
  };
  /** The pause between reads: false when the deployment was cancelled during it. */
  const paused = async (ms: number): Promise<boolean> => {
    try {
      await sleep(clock, ms, signal);
      return true;
    } catch (error) {
      if (!isCancellation(error, signal)) throw error;
      return false;
    }
  };
  for (;;) {
    try {
      members = await client.clusters.pods(clusterId, { signal });
      missingSince = undefined;
    } catch (error) {
      if (isCancellation(error, signal)) return shortOf(`when ${CANCELLED}`);
      // Right after a create the service may not find the new cluster's members yet.
      if (!(error instanceof NotFoundError)) throw error;
      missingSince ??= clock.now();
      const waited = clock.now() - missingSince;
      if (waited >= NOT_FOUND_GRACE_MS || clock.now() - started >= timeoutMs) throw error;
      if (!(await paused(POLL_INTERVAL_MS))) return shortOf(`when ${CANCELLED}`);
      continue;
    }
    if (waitFor === "none") return { kind: "ready", members };
    const left = () => timeoutMs - (clock.now() - started);
    await Promise.all(
      members
        .filter((m) => m.status === "RUNNING" && !usable.has(m.id))
        .map(async (m) => {
          const probe = await probeUsable(m, waitFor, Math.min(PROBE_TIMEOUT_MS, left()));
          if (probe === true) usable.add(m.id);
          else notes.set(m.id, probe);
        }),
    );
    for (const m of members) if (m.status !== "RUNNING") usable.delete(m.id);
    const shortfall = (m: Pod): MemberShortfall => ({
      id: m.id,
      status: boundEntry(m.status),
      ...(m.status === "RUNNING" && notes.has(m.id) ? { note: notes.get(m.id) as string } : {}),
    });
    notUsable = members.filter((m) => !usable.has(m.id)).map(shortfall);
    const stopped = members.filter((m) => STOPPED.has(m.status));
    if (stopped.length > 0) {
      const statuses = [...new Set(stopped.map((m) => boundEntry(m.status)))].join(" or ");
      const why = `${stopped.length} of its ${members.length} member pods went to ${statuses} instead of RUNNING`;
      return { kind: "failure", members, notUsable, why };
    }
    if (notUsable.length === 0 && members.length >= podCount) return { kind: "ready", members };
    if (left() <= 0) return shortOf(`within waitTimeoutMs (${timeoutMs} ms)`);
    if (!(await paused(Math.min(POLL_INTERVAL_MS, left())))) return shortOf(`when ${CANCELLED}`);
  }
}

/** `pod abc: ERROR; pod def: RUNNING (no SSH banner ...)`, the first {@link NAMED_AT_MOST}, then how many more. */
export function describeShortfall(notUsable: readonly MemberShortfall[]): string {
  const shown = notUsable
    .slice(0, NAMED_AT_MOST)
    .map((m) => `pod ${boundEntry(m.id)}: ${m.status}${m.note ? ` (${m.note})` : ""}`);
  const more = notUsable.length - shown.length;
  return shown.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

export interface ReadBackOptions {
  /** Time and timers of the pauses between reads. @default the real clock */
  clock?: Clock;
  /** Ends a pause or the read in flight at once (the deployment cancelled). @default never */
  signal?: AbortSignal;
}

/**
 * The cluster read once more (`GET /v2/clusters/{id}`) after its members wait. A 404 is read again
 * a second later of `clock`, for up to `NOT_FOUND_GRACE_MS` from the first 404 (right after a
 * create the service may not find the new cluster yet, as with its members), then thrown as an
 * error saying how long. A cancelled deployment (`signal`) throws its abort at once (see
 * `isCancellation`).
 */
export async function readClusterBack(
  client: RunpodClient,
  clusterId: string,
  options: ReadBackOptions = {},
): Promise<Cluster> {
  const clock = options.clock ?? systemClock;
  let missingSince: number | undefined;
  for (;;) {
    try {
      return await client.clusters.get(clusterId, { signal: options.signal });
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      missingSince ??= clock.now();
      const waited = clock.now() - missingSince;
      if (waited >= NOT_FOUND_GRACE_MS) {
        throw new RunpodError(
          `reading it back (GET /clusters/${boundEntry(clusterId)}) answered 404 for ${Math.round(waited / 1000)} s, ` +
            "though its members were listed",
        );
      }
      await sleep(clock, POLL_INTERVAL_MS, options.signal);
    }
  }
}

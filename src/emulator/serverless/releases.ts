/**
 * Release bookkeeping of serverless endpoints: which fields make a release, the dotted diff a
 * release records, and the `/releases` and `/workers` answers worked out from the engine's workers.
 */
import {
  ENDPOINT_RELEASE_FIELDS,
  type ReleaseDiffEntry,
  type ServerlessReleaseList,
  type ServerlessWorkerList,
} from "../../wire/serverless";
import { placedGpuType } from "../catalog";
import type { WorkerView } from "../jobs/model";
import { MAX_RELEASES_PER_ENDPOINT } from "../serviceFacts";
import { randomId } from "../store";
import type { Release, StoredEndpoint } from "./records";

/** Fields whose change makes a new release (the service's rule, shared with the provider). */
export const RELEASE_FIELDS = ENDPOINT_RELEASE_FIELDS;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Dotted diff of two values: objects field by field, everything else as a whole. */
export function diffValues(field: string, old: unknown, next: unknown, out: ReleaseDiffEntry[] = []) {
  if (isPlainObject(old) && isPlainObject(next)) {
    for (const key of new Set([...Object.keys(old), ...Object.keys(next)])) {
      diffValues(field === "" ? key : `${field}.${key}`, old[key], next[key], out);
    }
  } else if (JSON.stringify(old) !== JSON.stringify(next)) {
    out.push({ field, old: old ?? null, new: next ?? null });
  }
  return out;
}

/** The dotted diff of the release fields between two records: empty when no release is due. */
export function releaseDiff(current: StoredEndpoint["record"], next: StoredEndpoint["record"]) {
  const diff: ReleaseDiffEntry[] = [];
  for (const field of RELEASE_FIELDS) diffValues(field, current[field], next[field], diff);
  return diff;
}

/** A new release record made at `createdAt`. */
export function releaseRecord(version: number, diff: ReleaseDiffEntry[], createdAt: string): Release {
  return {
    id: randomId(8),
    version,
    source: "MANUAL",
    buildId: null,
    createdByUserId: null,
    workerCount: 0,
    createdAt,
    diff,
  };
}

/** Adds a release to the endpoint's history, keeping the newest {@link MAX_RELEASES_PER_ENDPOINT}. */
export function recordRelease(stored: StoredEndpoint, release: Release): void {
  stored.releases.push(release);
  if (stored.releases.length > MAX_RELEASES_PER_ENDPOINT) {
    stored.releases.splice(0, stored.releases.length - MAX_RELEASES_PER_ENDPOINT);
  }
}

/** `/releases`: newest first, each with its worker count, and the rollout summary. */
export function releaseList(
  stored: StoredEndpoint,
  workers: readonly WorkerView[],
  latest: number,
): ServerlessReleaseList {
  const onLatest = workers.filter((w) => !w.isStale).length;
  const total = workers.length;
  return {
    endpointVersion: latest,
    rollout: {
      inProgress: onLatest < total,
      workersOnLatest: onLatest,
      workersTotal: total,
      percentOnLatest: total === 0 ? 100 : Math.floor((onLatest * 100) / total),
    },
    releases: [...stored.releases].reverse().map((r) => ({
      ...r,
      workerCount: workers.filter((w) => w.version === r.version).length,
    })),
  };
}

/** `/workers`: each running worker with its version and staleness, and counts by status. */
export function workerList(
  stored: StoredEndpoint,
  engineWorkers: readonly WorkerView[],
  latest: number,
  now: number,
): ServerlessWorkerList {
  const gpu = stored.record.gpu;
  const workers = engineWorkers.map((w) => ({
    id: w.id,
    status: w.status,
    isStale: w.isStale,
    version: w.version,
    gpuCount: gpu ? gpu.count : 0,
    image: w.image,
    uptimeSeconds: Math.max(0, Math.floor((now - w.startedAt) / 1000)),
    // Placed on its pool's first GPU type (billing meters at its price); the EMULATOR pool has none.
    gpuTypeId: placedGpuType(gpu)?.id ?? null,
    dataCenterId: stored.record.dataCenterIds[0] ?? null,
    startedAt: new Date(w.startedAt).toISOString(),
  }));
  const count = (status: string) => workers.filter((w) => w.status === status).length;
  return {
    endpointVersion: latest,
    summary: {
      running: count("RUNNING"),
      idle: count("IDLE"),
      initializing: count("INITIALIZING"),
      throttled: 0,
      unhealthy: count("UNHEALTHY"),
      total: workers.length,
    },
    workers,
  };
}

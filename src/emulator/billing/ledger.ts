/**
 * The emulator's billing answers: the meter's spans (`meter.ts`) cut into the buckets of the
 * resolved window and priced per second of use (rate per hour x seconds / 3600, to the
 * millisecond of the clock), in the shapes of the v2 document's `List*BillingResponse`.
 *
 * Windows follow the document: `startTime` (default 30 days ago) snapped down to the start of its
 * bucket, `endTime` (exclusive, default now) snapped up to the end of its bucket unless on a
 * boundary; `lastN` is the last N buckets ending with the current (in-progress) one. Buckets are
 * UTC; a week starts on Monday.
 *
 * Records: `/v2/billing` and `/v2/billing/endpoints` answer one record per bucket of the window
 * (zeros included: a time series); the per-resource routes answer one record per resource per
 * bucket in which it ran. Cluster members bill to their cluster (`/clusters`, `clusterGpuAmount`),
 * not as pods. What the emulator does not run is never billed: no disk, platform fee, public
 * endpoint or inter-node networking amounts (always 0). Network volumes:
 * the document gives no storage rate, so the emulator bills none (`/network-volumes` has no
 * records and its totals are 0) rather than invent one.
 */
import {
  BillingAmountsSchema,
  type BillingBucketSize,
  ClusterBillingAmountsSchema,
  EndpointBillingAmountsSchema,
  NetworkVolumeBillingAmountsSchema,
  PodBillingAmountsSchema,
  ServerlessBillingAmountsSchema,
} from "../../wire/billing";
import type { UsageSpan } from "./meter";

/** Most buckets one answer may span (the emulator's own bound: a window past it is a 400). */
export const MAX_BILLING_BUCKETS = 10_000;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Start of the bucket holding `t` (UTC). */
export function bucketStart(t: number, size: BillingBucketSize): number {
  const d = new Date(t);
  switch (size) {
    case "hour":
      return Math.floor(t / HOUR_MS) * HOUR_MS;
    case "day":
      return Math.floor(t / DAY_MS) * DAY_MS;
    case "week": {
      const day = Math.floor(t / DAY_MS) * DAY_MS;
      const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
      return day - weekday * DAY_MS;
    }
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case "year":
      return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

/** Start of the bucket after the one starting at `start`. */
export function nextBucket(start: number, size: BillingBucketSize): number {
  const d = new Date(start);
  switch (size) {
    case "hour":
      return start + HOUR_MS;
    case "day":
      return start + DAY_MS;
    case "week":
      return start + 7 * DAY_MS;
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    case "year":
      return Date.UTC(d.getUTCFullYear() + 1, 0, 1);
  }
}

/** Start of the bucket before the one starting at `start`. */
function previousBucket(start: number, size: BillingBucketSize): number {
  return bucketStart(start - 1, size);
}

/** A resolved window: its bounds (ms) and its buckets `[start, end)`. */
export interface BillingWindow {
  start: number;
  end: number;
  bucketSize: BillingBucketSize;
  buckets: [number, number][];
}

/** Thrown when a window spans more than {@link MAX_BILLING_BUCKETS} (the route answers 400). */
export class WindowTooLargeError extends Error {}

/** Resolves a parsed query's window at `now`, as the document describes. */
export function resolveWindow(
  query: { startTime?: string; endTime?: string; bucketSize?: BillingBucketSize; lastN?: number },
  now: number,
): BillingWindow {
  const bucketSize = query.bucketSize ?? "day";
  let start: number;
  let end: number;
  if (query.lastN !== undefined) {
    if (query.lastN > MAX_BILLING_BUCKETS) throw tooLarge(query.lastN);
    const current = bucketStart(now, bucketSize);
    end = nextBucket(current, bucketSize);
    start = current;
    for (let i = 1; i < query.lastN; i++) start = previousBucket(start, bucketSize);
  } else {
    start = bucketStart(
      query.startTime !== undefined ? Date.parse(query.startTime) : now - 30 * DAY_MS,
      bucketSize,
    );
    const rawEnd = query.endTime !== undefined ? Date.parse(query.endTime) : now;
    const snapped = bucketStart(rawEnd, bucketSize);
    end = snapped === rawEnd ? rawEnd : nextBucket(snapped, bucketSize);
    if (end <= start) end = nextBucket(start, bucketSize);
  }
  const buckets: [number, number][] = [];
  for (let s = start; s < end; s = nextBucket(s, bucketSize)) {
    if (buckets.length >= MAX_BILLING_BUCKETS) throw tooLarge(undefined);
    buckets.push([s, nextBucket(s, bucketSize)]);
  }
  return { start, end, bucketSize, buckets };
}

function tooLarge(lastN: number | undefined): WindowTooLargeError {
  return new WindowTooLargeError(
    `${lastN !== undefined ? `lastN ${lastN}` : "the window"} spans more than ${MAX_BILLING_BUCKETS} buckets, more than the emulator answers; use a larger bucketSize or a shorter range`,
  );
}

/** USD for `span` within `[from, to)`. */
function spanAmount(span: UsageSpan, from: number, to: number): number {
  const ms = Math.min(span.end ?? to, to) - Math.max(span.start, from);
  return ms > 0 ? (span.ratePerHour * ms) / HOUR_MS : 0;
}

/** Rounds to a millionth of a dollar, so sums print cleanly. */
export function money(usd: number): number {
  return Math.round(usd * 1_000_000) / 1_000_000;
}

const iso = (t: number) => new Date(t).toISOString().replace(/\.000Z$/, "Z");

/** `{gpu, cpu}` amounts of `spans` within one bucket. */
function split(spans: UsageSpan[], from: number, to: number): { gpu: number; cpu: number } {
  let gpu = 0;
  let cpu = 0;
  for (const span of spans) {
    const amount = spanAmount(span, from, to);
    if (span.component === "gpu") gpu += amount;
    else cpu += amount;
  }
  return { gpu, cpu };
}

/** Spans that ran within `[from, to)` (one of zero length counts in the bucket holding it). */
function overlapping(spans: UsageSpan[], from: number, to: number): UsageSpan[] {
  return spans.filter((s) => {
    const end = s.end ?? to;
    return end === s.start ? s.start >= from && s.start < to : s.start < to && end > from;
  });
}

function queryEcho(window: BillingWindow, filter?: [string, string | undefined]) {
  return {
    startTime: iso(window.start),
    endTime: iso(window.end),
    bucketSize: window.bucketSize,
    ...(filter ? { [filter[0]]: filter[1] ?? null } : {}),
  };
}

/** Sums each numeric field of `records` into one amounts object with `keys`. */
function totals<K extends string>(records: Record<string, unknown>[], keys: readonly K[]): Record<K, number> {
  const out = zeros(keys);
  for (const r of records) for (const k of keys) out[k] += r[k] as number;
  for (const k of keys) out[k] = money(out[k]);
  return out;
}

/** The amount keys of each kind of record, read from the wire's schemas (`totalAmount` first). */
const AMOUNT_KEYS = {
  all: BillingAmountsSchema.keyof().options,
  pod: PodBillingAmountsSchema.keyof().options,
  serverless: ServerlessBillingAmountsSchema.keyof().options,
  endpoint: EndpointBillingAmountsSchema.keyof().options,
  networkVolume: NetworkVolumeBillingAmountsSchema.keyof().options,
  cluster: ClusterBillingAmountsSchema.keyof().options,
};

/** Every amount of `keys` at 0: what the emulator never bills. */
function zeros<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Records per resource per bucket of one kind (`pod` or `serverless`). */
function perResource(spans: UsageSpan[], kind: UsageSpan["kind"], window: BillingWindow, id?: string) {
  const mine = spans.filter((s) => s.kind === kind && (id === undefined || s.resourceId === id));
  const ids = [...new Set(mine.map((s) => s.resourceId))].sort();
  const rows: { start: number; end: number; resourceId: string; gpu: number; cpu: number }[] = [];
  for (const [from, to] of window.buckets) {
    for (const resourceId of ids) {
      const used = overlapping(
        mine.filter((s) => s.resourceId === resourceId),
        from,
        to,
      );
      if (used.length === 0) continue;
      rows.push({ start: from, end: to, resourceId, ...split(used, from, to) });
    }
  }
  return rows;
}

/**
 * `ListPodBillingResponse` (`kind` pod) or `ListServerlessBillingResponse`: GPU and CPU time per
 * resource per bucket, no disk charge or platform fee.
 */
function perResourceBilling<N extends "pod" | "serverless">(
  spans: UsageSpan[],
  window: BillingWindow,
  kind: N,
  id: string | undefined,
) {
  const keys = AMOUNT_KEYS[kind];
  const idKey = `${kind}Id` as const;
  const countKey = kind === "pod" ? "uniquePodCount" : "uniqueServerlessCount";
  const rows = perResource(spans, kind, window, id);
  const records = rows.map((r) => ({
    startTime: iso(r.start),
    endTime: iso(r.end),
    [idKey]: r.resourceId,
    ...zeros(keys),
    totalAmount: money(r.gpu + r.cpu),
    gpuAmount: money(r.gpu),
    cpuAmount: money(r.cpu),
  }));
  return {
    records,
    metadata: {
      query: queryEcho(window, [idKey, id]),
      recordCount: records.length,
      [countKey]: new Set(rows.map((r) => r.resourceId)).size,
      totals: totals(records, keys),
    },
  };
}

/** `ListPodBillingResponse`. */
export function podBilling(spans: UsageSpan[], window: BillingWindow, podId?: string) {
  return perResourceBilling(spans, window, "pod", podId);
}

/** `ListServerlessBillingResponse`. */
export function serverlessBilling(spans: UsageSpan[], window: BillingWindow, serverlessId?: string) {
  return perResourceBilling(spans, window, "serverless", serverlessId);
}

/** `ListBillingResponse`: every bucket of the window, each component apart. */
export function aggregateBilling(spans: UsageSpan[], window: BillingWindow) {
  const records = window.buckets.map(([from, to]) => {
    const pod = split(
      spans.filter((s) => s.kind === "pod"),
      from,
      to,
    );
    const sls = split(
      spans.filter((s) => s.kind === "serverless"),
      from,
      to,
    );
    const cluster = split(
      spans.filter((s) => s.kind === "cluster"),
      from,
      to,
    );
    const amounts = {
      ...zeros(AMOUNT_KEYS.all),
      totalAmount: money(pod.gpu + pod.cpu + sls.gpu + sls.cpu + cluster.gpu),
      podGpuAmount: money(pod.gpu),
      podCpuAmount: money(pod.cpu),
      serverlessGpuAmount: money(sls.gpu),
      serverlessCpuAmount: money(sls.cpu),
      clusterGpuAmount: money(cluster.gpu),
    };
    return { startTime: iso(from), endTime: iso(to), ...amounts };
  });
  return totalsAnswer(window, records, AMOUNT_KEYS.all);
}

/** `ListEndpointBillingResponse`: the emulator runs no public endpoints, so every bucket is 0. */
export function endpointBilling(window: BillingWindow) {
  const records = window.buckets.map(([from, to]) => ({
    startTime: iso(from),
    endTime: iso(to),
    totalAmount: 0,
  }));
  return totalsAnswer(window, records, AMOUNT_KEYS.endpoint);
}

/** `ListNetworkVolumeBillingResponse`: no storage rate in the document, so nothing is billed. */
export function networkVolumeBilling(window: BillingWindow, networkVolumeId?: string) {
  return nothingBilled(window, "networkVolume", networkVolumeId);
}

/**
 * `ListClusterBillingResponse`: GPU time of each cluster's member pods per bucket in which one ran
 * (no disk or inter-node networking charge).
 */
export function clusterBilling(spans: UsageSpan[], window: BillingWindow, clusterId?: string) {
  const rows = perResource(spans, "cluster", window, clusterId);
  const records = rows.map((r) => ({
    startTime: iso(r.start),
    endTime: iso(r.end),
    clusterId: r.resourceId,
    ...zeros(AMOUNT_KEYS.cluster),
    totalAmount: money(r.gpu),
    gpuAmount: money(r.gpu),
  }));
  return {
    records,
    metadata: {
      query: queryEcho(window, ["clusterId", clusterId]),
      recordCount: records.length,
      uniqueClusterCount: new Set(rows.map((r) => r.resourceId)).size,
      totals: totals(records, AMOUNT_KEYS.cluster),
    },
  };
}

/** A `List*BillingResponse` of totals: one record per bucket, and the window, count and sums. */
function totalsAnswer<K extends string>(
  window: BillingWindow,
  records: Record<K | "startTime" | "endTime", unknown>[],
  keys: readonly K[],
) {
  return {
    records,
    metadata: { query: queryEcho(window), recordCount: records.length, totals: totals(records, keys) },
  };
}

/** A per-resource `List*BillingResponse` of a kind the emulator never runs: no records, zeros. */
function nothingBilled(window: BillingWindow, kind: "networkVolume", id: string | undefined) {
  const countKey = "uniqueNetworkVolumeCount";
  return {
    records: [],
    metadata: {
      query: queryEcho(window, [`${kind}Id`, id]),
      recordCount: 0,
      [countKey]: 0,
      totals: zeros(AMOUNT_KEYS[kind]),
    },
  };
}

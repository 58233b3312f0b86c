/**
 * `getBilling`: what was spent, from the service's billing history (REST v2 `/v2/billing/...`):
 * a serverless endpoint's (`serverlessId`), a pod's (`podId`), an Instant Cluster's (`clusterId`) or,
 * with none of them, the account's
 * spend over a range, in total and per bucket. These are the service's billed amounts, not list
 * prices (the preview's `hourlyCost` is the list price).
 *
 * A lookup, not a resource: it runs in the program process on every `pulumi preview` and
 * `pulumi up` (one read). Settings come from the stack (`runpod:apiKey`, `runpod:restUrl`, with
 * their environment fallbacks) unless `opts` carries a client or settings. Bad arguments fail
 * naming the argument before any network call. REST v2 only: on a v1 `restUrl` it fails saying so.
 *
 * An answer that does not add up is returned as the service gave it, with `warnings` saying what
 * is wrong (see {@link GetBillingResult.warnings}): negative amounts, or a total that is not the
 * sum of the records. Not refused: a negative amount may be a credit or refund the service books
 * that way, and refusing would fail the whole program's preview over the service's accounting,
 * hiding every figure; a program that must not go on with such figures checks `warnings`.
 *
 * ```ts
 * const spent = runpod.getBillingOutput({ serverlessId: endpoint.id, lastN: 7, bucketSize: "day" });
 * export const lastWeekUsd = spent.totalUsd;
 * ```
 */
import type * as pulumi from "@pulumi/pulumi";
import type * as ClientIndex from "../../client";
import type { RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import type { BillingBucketSize } from "../../wire/billing";
import { pulumiSdk } from "../common/sdk";
import { listSome, printable } from "../common/wording";
import { lookupClient, type RunpodSettings } from "../config";

/**
 * Most the sum of the records may differ from the service's `totals.totalAmount` before
 * `warnings` says so, in USD: one cent (amounts are floats, each record possibly rounded).
 */
export const BILLING_SUM_TOLERANCE_USD = 0.01;

/**
 * The query schemas and their checker, loaded on first use (the package root loads this module,
 * and a program that only declares resources should not load zod). From the sources (tests),
 * the built copy is loaded by the package's own name, as `config.ts` does.
 */
const checks = (): Pick<
  typeof ClientIndex,
  | "parseInput"
  | "BillingQueryInputSchema"
  | "PodBillingQueryInputSchema"
  | "ClusterBillingQueryInputSchema"
  | "ServerlessBillingQueryInputSchema"
> =>
  require(
    __filename.endsWith(".ts") ? "pulumi-runpod-dynamic/dist/client/index.js" : "../../client/index.js",
  );

/** Arguments of `getBilling`: whose spend (at most one id) and the range. */
export interface GetBillingArgs {
  /** A serverless endpoint's spend (the service's `serverlessId`). Not with `podId` or `clusterId`. */
  serverlessId?: string;
  /** A pod's spend. Not with `serverlessId` or `clusterId`. */
  podId?: string;
  /** An Instant Cluster's spend (every member pod), e.g. a `Cluster`'s id. Not with `serverlessId` or `podId`. */
  clusterId?: string;
  /**
   * Start of the range (RFC 3339), snapped down to the start of its bucket by the service.
   * @default 30 days ago
   */
  startTime?: string;
  /** End of the range (RFC 3339, exclusive), snapped up to the end of its bucket. @default now */
  endTime?: string;
  /** Length of each bucket: `hour`, `day`, `week`, `month` or `year`. @default "day" */
  bucketSize?: BillingBucketSize;
  /** The last N buckets, ending with the current one; not with `startTime`/`endTime`. */
  lastN?: number;
}

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetBillingOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** One bucket's spend. */
export interface BillingBucket {
  /** Start of the bucket, RFC 3339. */
  startTime: string;
  /** End of the bucket (exclusive), RFC 3339. */
  endTime: string;
  /** USD billed in the bucket. */
  totalUsd: number;
}

/** What `getBilling` returns. */
export interface GetBillingResult {
  /** Whose spend: the account's, a serverless endpoint's or a pod's. */
  scope: "account" | "serverless" | "pod" | "cluster";
  /** The endpoint or pod id; null for the account. */
  id: string | null;
  /** Start of the window the service resolved (bucket-aligned), RFC 3339. */
  startTime: string;
  /** End of the window the service resolved (bucket-aligned, exclusive), RFC 3339. */
  endTime: string;
  /** Length of each bucket: `hour`, `day`, `week`, `month` or `year`. */
  bucketSize: string;
  /** USD billed over the whole window. */
  totalUsd: number;
  /** The service's totals by component (`gpuAmount`, `cpuAmount`, ... or, for the account, `podGpuAmount`, ...). */
  amounts: Record<string, number>;
  /** Spend per bucket, oldest first; buckets with no record are left out for an endpoint or a pod. */
  buckets: BillingBucket[];
  /**
   * What does not add up in the service's answer, one sentence each; empty when it is consistent.
   * Said when a record or a total has a negative amount (a credit, a refund or a service error:
   * the figures above include it as given), and when `totalUsd` differs from the sum of the
   * records by more than one cent (`BILLING_SUM_TOLERANCE_USD`; `totalUsd` stays the service's).
   * A program that must not act on such figures checks `warnings.length === 0`.
   */
  warnings: string[];
}

function checkArgs(args: GetBillingArgs | undefined): GetBillingArgs {
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    throw new ValidationError("getBilling: the arguments must be an object", []);
  }
  const given = args ?? {};
  const ids = (["serverlessId", "podId", "clusterId"] as const).filter((k) => given[k] !== undefined);
  if (ids.length > 1) {
    throw new ValidationError(
      "getBilling: give at most one of serverlessId, podId or clusterId (none reads the account's spend)",
      [ids[1] as string],
    );
  }
  return given;
}

/**
 * Reads billed spend: `{ scope, id, startTime, endTime, bucketSize, totalUsd, amounts, buckets }`.
 * A bad argument (an unknown one, a time that is not RFC 3339, `lastN` with a range) is rejected
 * naming it before any network call.
 */
export async function getBilling(
  args: GetBillingArgs = {},
  opts: GetBillingOptions = {},
): Promise<GetBillingResult> {
  const { serverlessId, podId, clusterId, ...window } = checkArgs(args);
  // Checked here too, so a bad argument fails before a client (and its API key) is needed.
  const {
    parseInput,
    BillingQueryInputSchema,
    PodBillingQueryInputSchema,
    ClusterBillingQueryInputSchema,
    ServerlessBillingQueryInputSchema,
  } = checks();
  if (serverlessId !== undefined)
    parseInput(ServerlessBillingQueryInputSchema, { ...window, serverlessId }, "getBilling");
  else if (podId !== undefined) parseInput(PodBillingQueryInputSchema, { ...window, podId }, "getBilling");
  else if (clusterId !== undefined)
    parseInput(ClusterBillingQueryInputSchema, { ...window, clusterId }, "getBilling");
  else parseInput(BillingQueryInputSchema, window, "getBilling");
  const client = lookupClient(opts);
  const request = { signal: opts.signal };
  if (serverlessId !== undefined || podId !== undefined || clusterId !== undefined) {
    const answer =
      serverlessId !== undefined
        ? await client.billing.serverless({ ...window, serverlessId }, request)
        : clusterId !== undefined
          ? await client.billing.clusters({ ...window, clusterId }, request)
          : await client.billing.pods({ ...window, podId: podId as string }, request);
    const byBucket = new Map<string, BillingBucket>();
    for (const record of answer.records) {
      const key = `${record.startTime}|${record.endTime}`;
      const bucket = byBucket.get(key) ?? {
        startTime: record.startTime,
        endTime: record.endTime,
        totalUsd: 0,
      };
      bucket.totalUsd += record.totalAmount;
      byBucket.set(key, bucket);
    }
    return {
      scope: serverlessId !== undefined ? "serverless" : clusterId !== undefined ? "cluster" : "pod",
      id: (serverlessId ?? clusterId ?? podId) as string,
      ...windowOf(answer.metadata.query),
      totalUsd: answer.metadata.totals.totalAmount,
      amounts: numbers(answer.metadata.totals),
      buckets: [...byBucket.values()].sort((a, b) => Date.parse(a.startTime) - Date.parse(b.startTime)),
      warnings: billingWarnings(answer.records, answer.metadata.totals),
    };
  }
  const answer = await client.billing.list(window, request);
  return {
    scope: "account",
    id: null,
    ...windowOf(answer.metadata.query),
    totalUsd: answer.metadata.totals.totalAmount,
    amounts: numbers(answer.metadata.totals),
    buckets: answer.records
      .map((r) => ({ startTime: r.startTime, endTime: r.endTime, totalUsd: r.totalAmount }))
      .sort((a, b) => Date.parse(a.startTime) - Date.parse(b.startTime)),
    warnings: billingWarnings(answer.records, answer.metadata.totals),
  };
}

/** `1.5`, `-0.25`: a USD figure for a warning, to the cent's hundredth. */
const figure = (usd: number) => String(Math.round(usd * 10_000) / 10_000);

/** The amounts of `values` below zero, as `gpuAmount -1.5`. */
function negatives(values: Record<string, unknown>): string[] {
  return Object.entries(numbers(values))
    .filter(([, amount]) => amount < 0)
    .map(([key, amount]) => `${printable(key, 40)} ${figure(amount)}`);
}

/** What does not add up in a billing answer ({@link GetBillingResult.warnings}). */
export function billingWarnings(
  records: readonly ({ startTime: string; totalAmount: number } & Record<string, unknown>)[],
  totals: { totalAmount: number } & Record<string, unknown>,
): string[] {
  const warnings: string[] = [];
  const negativeRecords = records
    .map((record) => ({ record, below: negatives(record) }))
    .filter(({ below }) => below.length > 0)
    .map(({ record, below }) => `${printable(record.startTime, 40)} (${below.join(", ")})`);
  if (negativeRecords.length > 0) {
    warnings.push(
      `${negativeRecords.length} billing record${negativeRecords.length === 1 ? " has" : "s have"} negative ` +
        `amounts: ${listSome(negativeRecords, 5, "; ")}. A credit, a refund or a service error: ` +
        "the figures include them as the service gave them.",
    );
  }
  const belowTotals = negatives(totals);
  if (belowTotals.length > 0) {
    warnings.push(`The service's totals have negative amounts (${belowTotals.join(", ")}).`);
  }
  const sum = records.reduce((total, record) => total + record.totalAmount, 0);
  if (Math.abs(sum - totals.totalAmount) > BILLING_SUM_TOLERANCE_USD) {
    warnings.push(
      `The service's total (${figure(totals.totalAmount)} USD, totalUsd) is not the sum of its ` +
        `${records.length} record${records.length === 1 ? "" : "s"} (${figure(sum)} USD): the buckets ` +
        `and the total disagree by ${figure(Math.abs(sum - totals.totalAmount))} USD.`,
    );
  }
  return warnings;
}

function windowOf(query: { startTime: string; endTime: string; bucketSize: string }) {
  return { startTime: query.startTime, endTime: query.endTime, bucketSize: query.bucketSize };
}

/** The numeric fields of a totals object (unknown extra fields of the answer included). */
function numbers(totals: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(totals)) if (typeof value === "number") out[key] = value;
  return out;
}

/** {@link getBilling} for `Input` arguments: resolves once they are known, as an `Output`. */
export function getBillingOutput(
  args: pulumi.Input<{ [K in keyof GetBillingArgs]: pulumi.Input<GetBillingArgs[K]> }> = {},
  opts: GetBillingOptions = {},
): pulumi.Output<GetBillingResult> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getBilling(resolved as GetBillingArgs, opts));
}

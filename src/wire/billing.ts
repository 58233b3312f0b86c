/**
 * REST v2 wire schemas of billing (`GET /v2/billing`, `/v2/billing/pods`, `/serverless`,
 * `/endpoints`, `/network-volumes`, `/clusters`), derived from `rest-v2.openapi.json`
 * (`BillingStartTime`, `BillingEndTime`, `BillingBucketSize`, `BillingLastN`, the `*BillingRecord`,
 * `*BillingMetadata` and `List*BillingResponse` schemas). One source for the client and the
 * emulator.
 *
 * Queries are parsed strictly: an unknown parameter, a time that is not RFC 3339, a bucket size
 * outside `hour`..`year`, a `lastN` below 1 is an error naming the parameter; `lastN` with
 * `startTime`/`endTime` (mutually exclusive in the document) and a window that ends before it
 * starts carry {@link BAD_REQUEST_RULE} (the service's 400). Answers are parsed loosely: fields the
 * document may add later pass through.
 *
 * Windows (the document's rules): `startTime` defaults to 30 days ago and is snapped down to the
 * start of its bucket; `endTime` (exclusive) defaults to now and is snapped up to the end of its
 * bucket unless on a boundary; `lastN` is the last N buckets ending with the current one. Buckets
 * are UTC (a week starts on Monday).
 */
import { z } from "zod";
import { BAD_REQUEST_RULE } from "./serverless";

/** Lengths of a billing bucket (`BillingBucketSize`); the service's default is `day`. */
export const BILLING_BUCKET_SIZES = ["hour", "day", "week", "month", "year"] as const;
export type BillingBucketSize = (typeof BILLING_BUCKET_SIZES)[number];

/** RFC 3339 date-time with a zone (`Z` or `+hh:mm`), e.g. `2026-06-01T00:00:00Z`. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

const dateTime = (field: string) =>
  z
    .string({ error: `${field} must be an RFC 3339 date-time string, e.g. "2026-06-01T00:00:00Z"` })
    .refine((v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v)), {
      error: (issue) =>
        `${field} must be an RFC 3339 date-time with a time zone, e.g. "2026-06-01T00:00:00Z", got ${JSON.stringify(issue.input)}`,
    });

const filterId = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .min(1, { error: `${field} must not be empty` })
    .max(256, { error: `${field} must be at most 256 characters` });

/** The parameters every billing route takes. */
const windowShape = {
  /** Start of the range (RFC 3339), snapped down to its bucket. @default 30 days ago */
  startTime: dateTime("startTime").optional(),
  /** End of the range (RFC 3339), exclusive, snapped up to its bucket's end. @default now */
  endTime: dateTime("endTime").optional(),
  /** Length of each bucket. @default "day" */
  bucketSize: z
    .enum(BILLING_BUCKET_SIZES, { error: `bucketSize must be one of ${BILLING_BUCKET_SIZES.join(", ")}` })
    .optional(),
  /** The last N buckets, ending with the current one; not with `startTime`/`endTime`. */
  lastN: z
    .int({ error: "lastN must be an integer" })
    .min(1, { error: "lastN must be at least 1" })
    .max(100_000, { error: "lastN must be at most 100000" })
    .optional(),
};

function windowRules(
  query: { startTime?: string; endTime?: string; lastN?: number },
  ctx: z.core.$RefinementCtx,
) {
  if (query.lastN !== undefined && (query.startTime !== undefined || query.endTime !== undefined)) {
    ctx.addIssue({
      code: "custom",
      path: ["lastN"],
      params: BAD_REQUEST_RULE,
      message: "lastN is mutually exclusive with startTime/endTime; give one or the other",
    });
  }
  if (
    query.startTime !== undefined &&
    query.endTime !== undefined &&
    Date.parse(query.endTime) <= Date.parse(query.startTime)
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["endTime"],
      params: BAD_REQUEST_RULE,
      message: `endTime must be after startTime (got startTime ${query.startTime}, endTime ${query.endTime})`,
    });
  }
}

/** Query of `GET /v2/billing` and `/v2/billing/endpoints`. */
export const BillingQueryInputSchema = z.strictObject(windowShape).superRefine(windowRules);
export type BillingQuery = z.input<typeof BillingQueryInputSchema>;

/** Query of `GET /v2/billing/pods`: the window and an optional `podId`. */
export const PodBillingQueryInputSchema = z
  .strictObject({ ...windowShape, podId: filterId("podId").optional() })
  .superRefine(windowRules);
export type PodBillingQuery = z.input<typeof PodBillingQueryInputSchema>;

/** Query of `GET /v2/billing/serverless`: the window and an optional `serverlessId`. */
export const ServerlessBillingQueryInputSchema = z
  .strictObject({ ...windowShape, serverlessId: filterId("serverlessId").optional() })
  .superRefine(windowRules);
export type ServerlessBillingQuery = z.input<typeof ServerlessBillingQueryInputSchema>;

/** Query of `GET /v2/billing/network-volumes`: the window and an optional `networkVolumeId`. */
export const NetworkVolumeBillingQueryInputSchema = z
  .strictObject({ ...windowShape, networkVolumeId: filterId("networkVolumeId").optional() })
  .superRefine(windowRules);
export type NetworkVolumeBillingQuery = z.input<typeof NetworkVolumeBillingQueryInputSchema>;

/** Query of `GET /v2/billing/clusters`: the window and an optional `clusterId`. */
export const ClusterBillingQueryInputSchema = z
  .strictObject({ ...windowShape, clusterId: filterId("clusterId").optional() })
  .superRefine(windowRules);
export type ClusterBillingQuery = z.input<typeof ClusterBillingQueryInputSchema>;

/** A parsed billing query as query-string values. */
export function billingQueryToWire(query: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(query)) if (value !== undefined) out[key] = String(value);
  return out;
}

/**
 * A query string's values (fastify's `request.query`) in the shape the query schemas parse:
 * `lastN` as a number when it is a well-formed integer (else it stays text, so the schema names
 * it); a repeated parameter stays an array, which the schema refuses naming it.
 */
export function billingQueryFromWire(
  raw: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[key] = key === "lastN" && typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

const usd = z.number();
const timeRange = { startTime: z.string(), endTime: z.string() };

/** Amounts of `GET /v2/billing` (`BillingAmounts`): every cost component, prefixed by resource. */
export const BillingAmountsSchema = z.looseObject({
  totalAmount: usd,
  podGpuAmount: usd,
  podCpuAmount: usd,
  podDiskAmount: usd,
  serverlessGpuAmount: usd,
  serverlessCpuAmount: usd,
  serverlessDiskAmount: usd,
  serverlessFeeAmount: usd,
  storageStandardAmount: usd,
  storageHighPerformanceAmount: usd,
  endpointAmount: usd,
  clusterGpuAmount: usd,
  clusterDiskAmount: usd,
  clusterNetworkingAmount: usd,
});
export type BillingAmounts = z.infer<typeof BillingAmountsSchema>;

/** `PodBillingAmounts`. */
export const PodBillingAmountsSchema = z.looseObject({
  totalAmount: usd,
  gpuAmount: usd,
  cpuAmount: usd,
  diskAmount: usd,
});
export type PodBillingAmounts = z.infer<typeof PodBillingAmountsSchema>;

/** `ServerlessBillingAmounts`. */
export const ServerlessBillingAmountsSchema = z.looseObject({
  totalAmount: usd,
  gpuAmount: usd,
  cpuAmount: usd,
  diskAmount: usd,
  feeAmount: usd,
});
export type ServerlessBillingAmounts = z.infer<typeof ServerlessBillingAmountsSchema>;

/** `EndpointBillingAmounts` (Runpod public endpoints). */
export const EndpointBillingAmountsSchema = z.looseObject({ totalAmount: usd });
export type EndpointBillingAmounts = z.infer<typeof EndpointBillingAmountsSchema>;

/** `NetworkVolumeBillingAmounts`. */
export const NetworkVolumeBillingAmountsSchema = z.looseObject({
  totalAmount: usd,
  standardAmount: usd,
  highPerformanceAmount: usd,
});
export type NetworkVolumeBillingAmounts = z.infer<typeof NetworkVolumeBillingAmountsSchema>;

/** `ClusterBillingAmounts` (GPU only). */
export const ClusterBillingAmountsSchema = z.looseObject({
  totalAmount: usd,
  gpuAmount: usd,
  diskAmount: usd,
  networkingAmount: usd,
});
export type ClusterBillingAmounts = z.infer<typeof ClusterBillingAmountsSchema>;

/** The resolved window echoed in `metadata.query` (`BillingQuery`). */
export const BillingQueryEchoSchema = z.looseObject({
  ...timeRange,
  bucketSize: z.string(),
});
export type BillingQueryEcho = z.infer<typeof BillingQueryEchoSchema>;

/** `ListBillingResponse` (`GET /v2/billing`). */
export const BillingListSchema = z.looseObject({
  records: z.array(BillingAmountsSchema.extend(timeRange)),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema,
    recordCount: z.int(),
    totals: BillingAmountsSchema,
  }),
});
export type BillingList = z.infer<typeof BillingListSchema>;
export type BillingRecord = BillingList["records"][number];

/** `ListPodBillingResponse` (`GET /v2/billing/pods`): records per pod per bucket. */
export const PodBillingListSchema = z.looseObject({
  records: z.array(z.looseObject({ ...timeRange, ...PodBillingAmountsSchema.shape, podId: z.string() })),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema.extend({ podId: z.string().nullable().optional() }),
    recordCount: z.int(),
    uniquePodCount: z.int(),
    totals: PodBillingAmountsSchema,
  }),
});
export type PodBillingList = z.infer<typeof PodBillingListSchema>;

/** `ListServerlessBillingResponse` (`GET /v2/billing/serverless`): records per endpoint per bucket. */
export const ServerlessBillingListSchema = z.looseObject({
  records: z.array(
    z.looseObject({ ...timeRange, ...ServerlessBillingAmountsSchema.shape, serverlessId: z.string() }),
  ),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema.extend({ serverlessId: z.string().nullable().optional() }),
    recordCount: z.int(),
    uniqueServerlessCount: z.int(),
    totals: ServerlessBillingAmountsSchema,
  }),
});
export type ServerlessBillingList = z.infer<typeof ServerlessBillingListSchema>;

/** `ListEndpointBillingResponse` (`GET /v2/billing/endpoints`, Runpod public endpoints). */
export const EndpointBillingListSchema = z.looseObject({
  records: z.array(EndpointBillingAmountsSchema.extend(timeRange)),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema,
    recordCount: z.int(),
    totals: EndpointBillingAmountsSchema,
  }),
});
export type EndpointBillingList = z.infer<typeof EndpointBillingListSchema>;

/** `ListNetworkVolumeBillingResponse` (`GET /v2/billing/network-volumes`): records per volume per bucket. */
export const NetworkVolumeBillingListSchema = z.looseObject({
  records: z.array(
    z.looseObject({ ...timeRange, ...NetworkVolumeBillingAmountsSchema.shape, networkVolumeId: z.string() }),
  ),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema.extend({ networkVolumeId: z.string().nullable().optional() }),
    recordCount: z.int(),
    uniqueNetworkVolumeCount: z.int(),
    totals: NetworkVolumeBillingAmountsSchema,
  }),
});
export type NetworkVolumeBillingList = z.infer<typeof NetworkVolumeBillingListSchema>;

/** `ListClusterBillingResponse` (`GET /v2/billing/clusters`): records per cluster per bucket. */
export const ClusterBillingListSchema = z.looseObject({
  records: z.array(
    z.looseObject({ ...timeRange, ...ClusterBillingAmountsSchema.shape, clusterId: z.string() }),
  ),
  metadata: z.looseObject({
    query: BillingQueryEchoSchema.extend({ clusterId: z.string().nullable().optional() }),
    recordCount: z.int(),
    uniqueClusterCount: z.int(),
    totals: ClusterBillingAmountsSchema,
  }),
});
export type ClusterBillingList = z.infer<typeof ClusterBillingListSchema>;

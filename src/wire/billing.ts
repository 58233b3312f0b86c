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
import { badRequest, queryFromWire } from "./fields";

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

type Window = { startTime?: string; endTime?: string; lastN?: number };

function windowRules(query: Window, ctx: z.core.$RefinementCtx) {
  if (query.lastN !== undefined && (query.startTime !== undefined || query.endTime !== undefined)) {
    badRequest(ctx, "lastN", "lastN is mutually exclusive with startTime/endTime; give one or the other");
  }
  if (
    query.startTime !== undefined &&
    query.endTime !== undefined &&
    Date.parse(query.endTime) <= Date.parse(query.startTime)
  ) {
    badRequest(
      ctx,
      "endTime",
      `endTime must be after startTime (got startTime ${query.startTime}, endTime ${query.endTime})`,
    );
  }
}

/** Query of `GET /v2/billing` and `/v2/billing/endpoints`. */
export const BillingQueryInputSchema = z.strictObject(windowShape).superRefine(windowRules);
export type BillingQuery = z.input<typeof BillingQueryInputSchema>;

/** A route's query: the window and an optional filter by one resource's id. */
function filteredQuery<K extends string>(filter: K) {
  const shape = { [filter]: filterId(filter).optional() } as Record<
    K,
    z.ZodOptional<ReturnType<typeof filterId>>
  >;
  return z
    .strictObject({ ...windowShape, ...shape })
    .superRefine((query, ctx) => windowRules(query as Window, ctx));
}

/** Query of `GET /v2/billing/pods`: the window and an optional `podId`. */
export const PodBillingQueryInputSchema = filteredQuery("podId");
export type PodBillingQuery = z.input<typeof PodBillingQueryInputSchema>;

/** Query of `GET /v2/billing/serverless`: the window and an optional `serverlessId`. */
export const ServerlessBillingQueryInputSchema = filteredQuery("serverlessId");
export type ServerlessBillingQuery = z.input<typeof ServerlessBillingQueryInputSchema>;

/** Query of `GET /v2/billing/network-volumes`: the window and an optional `networkVolumeId`. */
export const NetworkVolumeBillingQueryInputSchema = filteredQuery("networkVolumeId");
export type NetworkVolumeBillingQuery = z.input<typeof NetworkVolumeBillingQueryInputSchema>;

/** Query of `GET /v2/billing/clusters`: the window and an optional `clusterId`. */
export const ClusterBillingQueryInputSchema = filteredQuery("clusterId");
export type ClusterBillingQuery = z.input<typeof ClusterBillingQueryInputSchema>;

/**
 * A query string's values (fastify's `request.query`) in the shape the query schemas parse:
 * `lastN` as a number when it is a well-formed integer (else it stays text, so the schema names
 * it); a repeated parameter stays an array, which the schema refuses naming it.
 */
export function billingQueryFromWire(
  raw: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  return queryFromWire(raw, (key, value) =>
    key === "lastN" && typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value,
  );
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

const usd = z.number();
const timeRange = { startTime: z.string(), endTime: z.string() };

/** A loose object of USD amounts: `totalAmount` and the named components. */
function amounts<K extends string>(...components: K[]) {
  const shape = Object.fromEntries(["totalAmount", ...components].map((key) => [key, usd]));
  return z.looseObject(shape as Record<"totalAmount" | K, typeof usd>);
}

/** Amounts of `GET /v2/billing` (`BillingAmounts`): every cost component, prefixed by resource. */
export const BillingAmountsSchema = amounts(
  "podGpuAmount",
  "podCpuAmount",
  "podDiskAmount",
  "serverlessGpuAmount",
  "serverlessCpuAmount",
  "serverlessDiskAmount",
  "serverlessFeeAmount",
  "storageStandardAmount",
  "storageHighPerformanceAmount",
  "endpointAmount",
  "clusterGpuAmount",
  "clusterDiskAmount",
  "clusterNetworkingAmount",
);
export type BillingAmounts = z.infer<typeof BillingAmountsSchema>;

/** `PodBillingAmounts`. */
export const PodBillingAmountsSchema = amounts("gpuAmount", "cpuAmount", "diskAmount");
export type PodBillingAmounts = z.infer<typeof PodBillingAmountsSchema>;

/** `ServerlessBillingAmounts`. */
export const ServerlessBillingAmountsSchema = amounts("gpuAmount", "cpuAmount", "diskAmount", "feeAmount");
export type ServerlessBillingAmounts = z.infer<typeof ServerlessBillingAmountsSchema>;

/** `EndpointBillingAmounts` (Runpod public endpoints). */
export const EndpointBillingAmountsSchema = z.looseObject({ totalAmount: usd });
export type EndpointBillingAmounts = z.infer<typeof EndpointBillingAmountsSchema>;

/** `NetworkVolumeBillingAmounts`. */
export const NetworkVolumeBillingAmountsSchema = amounts("standardAmount", "highPerformanceAmount");
export type NetworkVolumeBillingAmounts = z.infer<typeof NetworkVolumeBillingAmountsSchema>;

/** `ClusterBillingAmounts` (GPU only). */
export const ClusterBillingAmountsSchema = amounts("gpuAmount", "diskAmount", "networkingAmount");
export type ClusterBillingAmounts = z.infer<typeof ClusterBillingAmountsSchema>;

/** The resolved window echoed in `metadata.query` (`BillingQuery`). */
export const BillingQueryEchoSchema = z.looseObject({
  ...timeRange,
  bucketSize: z.string(),
});
export type BillingQueryEcho = z.infer<typeof BillingQueryEchoSchema>;

/** A `List*BillingResponse` of totals: one record per bucket with its amounts and time range. */
function totalsList<A extends z.core.$ZodLooseShape>(amounts: z.ZodObject<A, z.core.$loose>) {
  return z.looseObject({
    records: z.array(amounts.extend(timeRange)),
    metadata: z.looseObject({ query: BillingQueryEchoSchema, recordCount: z.int(), totals: amounts }),
  });
}

/**
 * A `List*BillingResponse` per resource: each record also names its resource (`<name>Id`), the
 * echoed query may carry that filter, and the metadata counts the distinct resources
 * (`unique<Name>Count`), as the document names them.
 */
function perResourceList<A extends z.core.$ZodLooseShape, N extends string>(
  amounts: z.ZodObject<A, z.core.$loose>,
  name: N,
) {
  const idKey = `${name}Id` as const;
  const countKey = `unique${name[0]!.toUpperCase()}${name.slice(1)}Count` as `unique${Capitalize<N>}Count`;
  const id = { [idKey]: z.string() } as Record<typeof idKey, z.ZodString>;
  const filter = { [idKey]: z.string().nullable().optional() } as Record<
    typeof idKey,
    z.ZodOptional<z.ZodNullable<z.ZodString>>
  >;
  const count = { [countKey]: z.int() } as Record<typeof countKey, z.ZodInt>;
  return z.looseObject({
    records: z.array(z.looseObject({ ...timeRange, ...amounts.shape, ...id })),
    metadata: z.looseObject({
      query: BillingQueryEchoSchema.extend(filter),
      recordCount: z.int(),
      ...count,
      totals: amounts,
    }),
  });
}

/** `ListBillingResponse` (`GET /v2/billing`). */
export const BillingListSchema = totalsList(BillingAmountsSchema);
export type BillingList = z.infer<typeof BillingListSchema>;
export type BillingRecord = BillingList["records"][number];

/** `ListPodBillingResponse` (`GET /v2/billing/pods`): records per pod per bucket. */
export const PodBillingListSchema = perResourceList(PodBillingAmountsSchema, "pod");
export type PodBillingList = z.infer<typeof PodBillingListSchema>;

/** `ListServerlessBillingResponse` (`GET /v2/billing/serverless`): records per endpoint per bucket. */
export const ServerlessBillingListSchema = perResourceList(ServerlessBillingAmountsSchema, "serverless");
export type ServerlessBillingList = z.infer<typeof ServerlessBillingListSchema>;

/** `ListEndpointBillingResponse` (`GET /v2/billing/endpoints`, Runpod public endpoints). */
export const EndpointBillingListSchema = totalsList(EndpointBillingAmountsSchema);
export type EndpointBillingList = z.infer<typeof EndpointBillingListSchema>;

/** `ListNetworkVolumeBillingResponse` (`GET /v2/billing/network-volumes`): records per volume per bucket. */
export const NetworkVolumeBillingListSchema = perResourceList(
  NetworkVolumeBillingAmountsSchema,
  "networkVolume",
);
export type NetworkVolumeBillingList = z.infer<typeof NetworkVolumeBillingListSchema>;

/** `ListClusterBillingResponse` (`GET /v2/billing/clusters`): records per cluster per bucket. */
export const ClusterBillingListSchema = perResourceList(ClusterBillingAmountsSchema, "cluster");
export type ClusterBillingList = z.infer<typeof ClusterBillingListSchema>;

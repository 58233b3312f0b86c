/**
 * REST v2 wire schemas of the catalog (`/v2/catalog/gpus`, `/cpus`, `/datacenters`,
 * `/templates`), derived from `rest-v2.openapi.json` (`GpuType`, `CpuType`, `DataCenter`, their
 * list answers, `CatalogResourceAvailability`, `DataCenterAvailability`, and each operation's
 * query parameters).
 *
 * Queries are parsed strictly: an unknown parameter, a value outside the document's enums or a
 * malformed entry is a `ValidationError` naming it (the service's 422), and the pairing rules the
 * document answers with 400 carry {@link BAD_REQUEST_RULE}: `include=AVAILABILITY` needs `product`
 * and `product` needs `include=AVAILABILITY`; `count`, `cloud`, `countryCodes`, `cudaVersions`,
 * `minCudaVersion` and `vcpuCount` are valid only with `include=AVAILABILITY`; `cudaVersions` and
 * `minCudaVersion` exclude each other. Answers are parsed loosely: unknown fields pass, and only
 * what this package relies on is required (`id`, `name`, and a GPU type's `pool`).
 *
 * On the wire a query's lists are comma-separated (`style: form, explode: false`):
 * `queryToWire` (`fields.ts`) writes them, {@link catalogQueryFromWire} reads them (the emulator),
 * so both sides parse the same schema.
 */
import { z } from "zod";
import { badRequest, queryFromWire } from "./fields";

const str = (field: string) => z.string({ error: `${field} must be a string` });

/** Stock levels of the catalog (`AvailabilityLevel`), lowest first. */
export const AVAILABILITY_LEVELS = ["NONE", "LOW", "MEDIUM", "HIGH"] as const;
export type AvailabilityLevel = (typeof AVAILABILITY_LEVELS)[number];
/** GPU availability contexts (`Product`). */
export const GPU_PRODUCTS = ["POD", "CLUSTER", "SERVERLESS"] as const;
export type GpuProduct = (typeof GPU_PRODUCTS)[number];
/** CPU availability contexts (`CpuProduct`). */
export const CPU_PRODUCTS = ["POD", "SERVERLESS"] as const;
export type CpuProduct = (typeof CPU_PRODUCTS)[number];
/** Continental regions of data centres (`DataCenterRegion`). */
export const DATA_CENTER_REGIONS = [
  "NORTH_AMERICA",
  "SOUTH_AMERICA",
  "EUROPE",
  "ASIA",
  "MIDDLE_EAST",
  "AFRICA",
  "OCEANIA",
  "ANTARCTICA",
  "UNKNOWN",
] as const;
export type DataCenterRegion = (typeof DATA_CENTER_REGIONS)[number];
/** Network volume tiers (`VolumeType`). */
export const VOLUME_TYPES = ["STANDARD", "HIGH_PERFORMANCE"] as const;
/** Compliance certifications (`Compliance`). */
export const COMPLIANCES = [
  "GDPR",
  "ISO_IEC_27001",
  "ISO_14001",
  "PCI_DSS",
  "HITRUST",
  "SOC_1_TYPE_2",
  "SOC_2_TYPE_2",
  "SOC_3_TYPE_2",
  "ITAR",
  "FISMA_HIGH",
  "HIPAA",
  "RENEWABLE",
] as const;
/** Slices of the public template catalog; `official` is the service's default. */
export const TEMPLATE_SOURCES = ["official", "verified", "community"] as const;

const list = <T extends readonly [string, ...string[]]>(field: string, values: T) =>
  z
    .array(
      z.enum(values, {
        error: (issue) => `must be one of ${values.join(", ")}, got ${JSON.stringify(issue.input)}`,
      }),
      {
        error: `${field} must be an array of ${values.join(", ")}`,
      },
    )
    .min(1, { error: `${field} must list at least one value` });

/** `product` with `include=AVAILABILITY`, both or neither; the other availability-only parameters. */
function availabilityRules(
  query: Record<string, unknown>,
  ctx: z.core.$RefinementCtx,
  products: readonly string[],
  onlyWithAvailability: readonly string[],
): void {
  const wanted = Array.isArray(query.include) && query.include.includes("AVAILABILITY");
  if (wanted && query.product === undefined) {
    badRequest(
      ctx,
      "product",
      `product is required with include=AVAILABILITY (${products.join(", ")}): stock differs by product`,
    );
  }
  if (!wanted) {
    for (const key of ["product", ...onlyWithAvailability]) {
      if (query[key] !== undefined) badRequest(ctx, key, `${key} is valid only with include=AVAILABILITY`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

/** `include` of the GPU and CPU type queries (the document's one `CatalogIncludeParam`). */
const catalogInclude = list("include", ["AVAILABILITY"])
  .max(1, { error: "include takes one value" })
  .optional();

/** Query of `GET /v2/catalog/gpus` and `/gpus/{id}`. */
export const GpuTypesQueryInputSchema = z
  .strictObject({
    /** `["AVAILABILITY"]` adds `availability`, `dataCenters` and `cudaVersions`; needs `product`. */
    include: catalogInclude,
    /** Availability contexts: `POD`, `CLUSTER`, `SERVERLESS`. Required with, valid only with, include. */
    product: list("product", GPU_PRODUCTS).optional(),
    /** GPUs per pod or worker for the availability figures. @default 1 */
    count: z
      .int({ error: "count must be an integer" })
      .min(1, { error: "count must be at least 1" })
      .optional(),
    /** Cloud of the availability figures. @default "SECURE" */
    cloud: z.enum(["SECURE", "COMMUNITY"], { error: "cloud must be SECURE or COMMUNITY" }).optional(),
    /** ISO 3166-1 alpha-2 codes (uppercase): availability only in data centres of these countries. */
    countryCodes: z
      .array(
        str("countryCodes").regex(/^[A-Z]{2}$/, {
          error: (issue) =>
            `must be an uppercase ISO 3166-1 alpha-2 code, e.g. "FR", got ${JSON.stringify(issue.input)}`,
        }),
        { error: "countryCodes must be an array of country codes" },
      )
      .min(1, { error: "countryCodes must list at least one code" })
      .optional(),
    /** Exact CUDA versions (`major.minor`) to scope availability to. */
    cudaVersions: z
      .array(
        str("cudaVersions").regex(/^\d+\.\d+$/, {
          error: (issue) =>
            `must be a CUDA version as major.minor, e.g. "12.8", got ${JSON.stringify(issue.input)}`,
        }),
        { error: "cudaVersions must be an array of CUDA versions" },
      )
      .min(1, { error: "cudaVersions must list at least one version" })
      .optional(),
    /** Lowest CUDA version (`12` or `12.1`) to scope availability to. */
    minCudaVersion: str("minCudaVersion")
      .regex(/^\d+(\.\d+)?$/, { error: 'minCudaVersion must be a major or major.minor version, e.g. "12.1"' })
      .optional(),
  })
  .superRefine((query, ctx) => {
    availabilityRules(query, ctx, GPU_PRODUCTS, [
      "count",
      "cloud",
      "countryCodes",
      "cudaVersions",
      "minCudaVersion",
    ]);
    if (query.cudaVersions !== undefined && query.minCudaVersion !== undefined) {
      badRequest(
        ctx,
        "minCudaVersion",
        "cudaVersions and minCudaVersion are mutually exclusive; give one of them",
      );
    }
  });
export type GpuTypesQuery = z.input<typeof GpuTypesQueryInputSchema>;

/** Query of `GET /v2/catalog/cpus` and `/cpus/{id}`. */
export const CpuTypesQueryInputSchema = z
  .strictObject({
    /** `["AVAILABILITY"]` adds `availability` and `dataCenters`; needs `product`. */
    include: catalogInclude,
    /** Availability contexts: `POD`, `SERVERLESS`. Required with, valid only with, include. */
    product: list("product", CPU_PRODUCTS).optional(),
    /** vCPUs for the availability figures: a power of two, at least 2. */
    vcpuCount: z
      .int({ error: "vcpuCount must be an integer" })
      .min(2, { error: "vcpuCount must be at least 2" })
      .refine((n) => (n & (n - 1)) === 0, { error: "vcpuCount must be a power of two" })
      .optional(),
  })
  .superRefine((query, ctx) => availabilityRules(query, ctx, CPU_PRODUCTS, ["vcpuCount"]));
export type CpuTypesQuery = z.input<typeof CpuTypesQueryInputSchema>;

/** Query of `GET /v2/catalog/datacenters` (the filters combine with AND). */
export const DataCentersQueryInputSchema = z.strictObject({
  /** `GPU_AVAILABILITY` and/or `CPU_AVAILABILITY`: add `gpuAvailability` / `cpuAvailability`. */
  include: list("include", ["GPU_AVAILABILITY", "CPU_AVAILABILITY"]).optional(),
  /** Only data centres in one of these regions. */
  regions: list("regions", DATA_CENTER_REGIONS).optional(),
  /** Only data centres offering every one of these volume tiers. */
  networkVolumeTypes: list("networkVolumeTypes", VOLUME_TYPES).optional(),
  /** Only data centres holding every one of these certifications. */
  compliance: list("compliance", COMPLIANCES).optional(),
  /** Only data centres with (true) or without (false) global networking. */
  globalNetwork: z.boolean({ error: "globalNetwork must be true or false" }).optional(),
});
export type DataCentersQuery = z.input<typeof DataCentersQueryInputSchema>;

/** Query of `GET /v2/catalog/datacenters/{id}`. */
export const DataCenterQueryInputSchema = DataCentersQueryInputSchema.pick({ include: true });
export type DataCenterQuery = z.input<typeof DataCenterQueryInputSchema>;

/** Query of `GET /v2/catalog/templates`. */
export const PublicTemplatesQueryInputSchema = z.strictObject({
  /** `official` (Runpod-curated, the default), `verified` or `community`. */
  source: z.enum(TEMPLATE_SOURCES, { error: "source must be official, verified or community" }).optional(),
});
export type PublicTemplatesQuery = z.input<typeof PublicTemplatesQueryInputSchema>;

/** Query keys whose values are numbers or booleans on the parsed side. */
const NUMBER_KEYS = new Set(["count", "vcpuCount"]);
const BOOLEAN_KEYS = new Set(["globalNetwork"]);
const LIST_KEYS = new Set([
  "include",
  "product",
  "countryCodes",
  "cudaVersions",
  "regions",
  "networkVolumeTypes",
  "compliance",
]);

/**
 * A query string's values (fastify's `request.query`) in the shape the query schemas parse: lists
 * split at commas, `count`/`vcpuCount` as numbers and `globalNetwork` as a boolean when they are
 * well formed (a malformed one stays text, so the schema names it). A repeated parameter counts
 * as its values joined, as `style: form` lists are sometimes written.
 */
export function catalogQueryFromWire(
  raw: Record<string, string | string[] | undefined>,
): Record<string, unknown> {
  return queryFromWire(raw, (key, value) => {
    const text = Array.isArray(value) ? value.join(",") : value;
    if (LIST_KEYS.has(key)) return text === "" ? [] : text.split(",").map((s) => s.trim());
    if (NUMBER_KEYS.has(key)) return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    if (BOOLEAN_KEYS.has(key)) return text === "true" ? true : text === "false" ? false : text;
    return text;
  });
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/** What the document's two availability entries share: `{ id, name, availability }`. */
const availabilityEntry = z.looseObject({
  /** The data centre's (or the GPU or CPU type's) id. */
  id: z.string(),
  /** Its display name. */
  name: z.string().optional(),
  /** `NONE`, `LOW`, `MEDIUM` or `HIGH` (other strings are accepted). */
  availability: z.string(),
});

/** Availability of one data centre for a resource (`DataCenterAvailability`). */
export const DataCenterAvailabilitySchema = availabilityEntry;
export type DataCenterAvailability = z.infer<typeof DataCenterAvailabilitySchema>;

/** Availability of one resource in a data centre (`CatalogResourceAvailability`). */
export const CatalogResourceAvailabilitySchema = availabilityEntry;
export type CatalogResourceAvailability = z.infer<typeof CatalogResourceAvailabilitySchema>;

/** One CUDA version offered for a GPU type, and whether a machine on it has free capacity now. */
export const CudaVersionAvailabilitySchema = z.looseObject({
  /** CUDA version, `major.minor`. */
  version: z.string(),
  /** True when a machine on this version has free capacity now. */
  available: z.boolean(),
});
export type CudaVersionAvailability = z.infer<typeof CudaVersionAvailabilitySchema>;

/** Stock fields of a GPU or CPU type, present only with `include=AVAILABILITY`. */
const stockShape = {
  /** Overall stock for the requested products (only with `include=AVAILABILITY`). */
  availability: z.string().optional(),
  /** Stock per data centre (only with `include=AVAILABILITY`; absent when unavailable everywhere). */
  dataCenters: z.array(DataCenterAvailabilitySchema).optional(),
};

/** A GPU type (`GpuType`). */
export const GpuTypeSchema = z.looseObject({
  /** GPU type id, e.g. `NVIDIA GeForce RTX 4090` (pods' `gpu.id`, endpoints' `gpu.excludedTypes`). */
  id: z.string().min(1),
  /** Display name, e.g. `RTX 4090`. */
  name: z.string(),
  /** Serverless pool id (endpoints' `gpu.pools`), e.g. `ADA_24`; null when not in a serverless pool. */
  pool: z.string().nullable(),
  /** `NVIDIA`, `AMD` or `UNKNOWN`. */
  manufacturer: z.string().optional(),
  /** VRAM, GB. */
  memory: z.number().optional(),
  /** Offered on the secure cloud. */
  secure: z.boolean().optional(),
  /** Offered on the community cloud. */
  community: z.boolean().optional(),
  /** List price per GPU per hour, USD: `secure`, `community`, and `serverless` (its pool's rate). */
  price: z
    .looseObject({
      /** On the secure cloud. */
      secure: z.number().optional(),
      /** On the community cloud. */
      community: z.number().optional(),
      /** In its serverless pool. */
      serverless: z.number().optional(),
    })
    .optional(),
  /** Most GPUs of this type on one pod, per cloud. */
  maxCount: z
    .looseObject({
      /** On the secure cloud. */
      secure: z.number().optional(),
      /** On the community cloud. */
      community: z.number().optional(),
    })
    .optional(),
  ...stockShape,
  /** CUDA versions offered (only with `include=AVAILABILITY`; absent for a type with none, e.g. AMD). */
  cudaVersions: z.array(CudaVersionAvailabilitySchema).optional(),
});
export type GpuType = z.infer<typeof GpuTypeSchema>;

/** `GET /v2/catalog/gpus`: `{ gpus: [...] }`. */
export const GpuTypeListSchema = z.looseObject({ gpus: z.array(GpuTypeSchema) });

/** A CPU flavour (`CpuType`). */
export const CpuTypeSchema = z.looseObject({
  /** Flavour id, e.g. `cpu5c` (endpoints' `cpu[].id`). */
  id: z.string().min(1),
  /** Display name. */
  name: z.string(),
  /** Generation group, e.g. `Gen 5`. */
  group: z.string().optional(),
  /** vCPU counts one instance may have. */
  vcpu: z
    .looseObject({
      /** Fewest vCPUs. */
      min: z.number().optional(),
      /** Most vCPUs. */
      max: z.number().optional(),
    })
    .optional(),
  /** RAM per vCPU, GB. */
  ramGbPerVcpu: z.number().optional(),
  /** Price per vCPU per hour, USD. */
  price: z
    .looseObject({
      /** On a pod on the secure cloud. */
      securePerVcpu: z.number().optional(),
      /** On a serverless worker. */
      serverlessPerVcpu: z.number().optional(),
    })
    .optional(),
  ...stockShape,
});
export type CpuType = z.infer<typeof CpuTypeSchema>;

/** `GET /v2/catalog/cpus`: `{ cpus: [...] }`. */
export const CpuTypeListSchema = z.looseObject({ cpus: z.array(CpuTypeSchema) });

/** A data centre (`DataCenter`). */
export const DataCenterSchema = z.looseObject({
  /** Data centre id, e.g. `EU-RO-1` (volumes' `dataCenterId`, endpoints' `dataCenterIds`). */
  id: z.string().min(1),
  /** Display name. */
  name: z.string(),
  /** `NORTH_AMERICA`, `EUROPE`, ... */
  region: z.string().optional(),
  /** True when pods here can have global networking. */
  globalNetwork: z.boolean().optional(),
  /** Network volume tiers offered here; empty = none. */
  networkVolumeTypes: z.array(z.string()).optional(),
  /** Compliance certifications it holds, e.g. `GDPR`, `SOC_2_TYPE_2`. */
  compliance: z.array(z.string()).optional(),
  /** With `include=GPU_AVAILABILITY`. */
  gpuAvailability: z.array(CatalogResourceAvailabilitySchema).optional(),
  /** With `include=CPU_AVAILABILITY`. */
  cpuAvailability: z.array(CatalogResourceAvailabilitySchema).optional(),
});
export type DataCenter = z.infer<typeof DataCenterSchema>;

/** `GET /v2/catalog/datacenters`: `{ dataCenters: [...] }`. */
export const DataCenterListSchema = z.looseObject({ dataCenters: z.array(DataCenterSchema) });

/**
 * Catalog lookups for Pulumi programs: `getGpuTypes`, `getCpuTypes`, `getDataCenters` and their
 * `...Output` forms, so a stack picks `gpu.pools`, `cpu[].id` and data centres from the service's
 * catalog instead of pasting ids by hand.
 *
 * Lookups, not resources: they run in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, one `GET /v2/catalog/...` each. Settings
 * come from the stack (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless
 * `opts` carries a client or settings. REST v2 only: on a v1 `restUrl` they fail saying so.
 *
 * ```ts
 * const pools = getGpuTypesOutput({ serverless: true, availability: true }).apply((gpus) =>
 *   [...new Set(gpus.filter((g) => g.memory >= 48 && g.availability !== "NONE").map((g) => g.pool))]);
 * ```
 */
import type * as pulumi from "@pulumi/pulumi";
import type { CpuType, DataCenter, GpuType, RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import { pulumiSdk } from "../common/sdk";
import { lookupClient, type RunpodSettings } from "../config";

export type { CpuType, DataCenter, GpuType };

/** Where a catalog lookup gets its client. Both optional; by default settings come from the stack. */
export interface CatalogLookupOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** Arguments of {@link getGpuTypes}; each one given narrows or enriches the result. */
export interface GetGpuTypesArgs {
  /**
   * Only the GPU types of this serverless pool (e.g. `ADA_24`). A pool no type belongs to fails
   * the lookup, listing the pools there are (a typo would otherwise give an empty list).
   */
  pool?: string;
  /**
   * `true`: only the types in a serverless pool (`pool` not null), the ones an endpoint's
   * `gpu.pools` can use. Omitted or `false`: every type, pods-only ones (`pool: null`) included.
   */
  serverless?: boolean;
  /**
   * `true`: asks for the serverless stock (`include=AVAILABILITY&product=SERVERLESS`), so each
   * type carries `availability` (`NONE`..`HIGH`), `dataCenters` (stock per data centre, absent
   * when there is none anywhere) and `cudaVersions`. Types without stock are kept: filter on
   * `availability` yourself. The figures change from one run to the next; a program that turns
   * them into resource inputs changes its plan when the stock does.
   */
  availability?: boolean;
}

/** Arguments of {@link getCpuTypes}. */
export interface GetCpuTypesArgs {
  /** `true`: each flavour carries its serverless stock (`include=AVAILABILITY&product=SERVERLESS`). */
  availability?: boolean;
}

/** Arguments of {@link getDataCenters}. */
export interface GetDataCentersArgs {
  /** `true`: each data centre carries `gpuAvailability` and `cpuAvailability` (what it offers, and how much). */
  availability?: boolean;
}

type Inputs<T> = { [K in keyof T]?: pulumi.Input<T[K]> };

/** Checks that `args` is an object whose given fields have the allowed types; names the offender. */
function checkArgs<T extends object>(
  lookup: string,
  args: T | undefined,
  fields: Readonly<Record<string, "boolean" | "string">>,
): Partial<T> {
  if (args === undefined || args === null) return {};
  if (typeof args !== "object" || Array.isArray(args)) {
    throw new ValidationError(`${lookup}: the arguments must be an object, got ${JSON.stringify(args)}`, []);
  }
  for (const [key, value] of Object.entries(args)) {
    const kind = fields[key];
    if (kind === undefined) {
      throw new ValidationError(
        `${lookup}: unknown argument ${key}; it takes ${Object.keys(fields).join(", ") || "none"}`,
        [key],
      );
    }
    if (value === undefined) continue;
    if (kind === "boolean" && typeof value !== "boolean") {
      throw new ValidationError(`${lookup}: ${key} must be true or false, got ${JSON.stringify(value)}`, [
        key,
      ]);
    }
    if (kind === "string" && (typeof value !== "string" || value.trim() === "")) {
      throw new ValidationError(
        `${lookup}: ${key} must be a non-empty string, got ${JSON.stringify(value)}`,
        [key],
      );
    }
  }
  return args;
}

function clientOf(opts: CatalogLookupOptions): RunpodClient {
  return lookupClient(opts);
}

const SERVERLESS_STOCK = { include: ["AVAILABILITY" as const], product: ["SERVERLESS" as const] };

/**
 * The service's GPU types: `{ id, name, pool, manufacturer, memory, secure, community, price,
 * maxCount }` each, plus `availability`, `dataCenters` and `cudaVersions` with `availability:
 * true`. `pool` is what an endpoint's `gpu.pools` takes; `id` what `gpu.excludedTypes` takes.
 */
export async function getGpuTypes(
  args?: GetGpuTypesArgs,
  opts: CatalogLookupOptions = {},
): Promise<GpuType[]> {
  const { pool, serverless, availability } = checkArgs("getGpuTypes", args, {
    pool: "string",
    serverless: "boolean",
    availability: "boolean",
  });
  const all = await clientOf(opts).catalog.gpus(availability ? SERVERLESS_STOCK : {}, {
    signal: opts.signal,
  });
  let gpus = serverless ? all.filter((g) => g.pool !== null) : all;
  if (pool !== undefined) {
    gpus = gpus.filter((g) => g.pool === pool);
    if (gpus.length === 0) {
      const pools = [...new Set(all.flatMap((g) => (g.pool === null ? [] : [g.pool])))];
      throw new ValidationError(
        `getGpuTypes: no GPU type is in pool ${JSON.stringify(pool)}; the catalog's pools are ${pools.join(", ") || "none"}`,
        ["pool"],
      );
    }
  }
  return gpus;
}

/** The service's CPU flavours: `{ id, name, group, vcpu, ramGbPerVcpu, price }` each (`id` for an endpoint's `cpu[].id`). */
export async function getCpuTypes(
  args?: GetCpuTypesArgs,
  opts: CatalogLookupOptions = {},
): Promise<CpuType[]> {
  const { availability } = checkArgs("getCpuTypes", args, { availability: "boolean" });
  return clientOf(opts).catalog.cpus(availability ? SERVERLESS_STOCK : {}, { signal: opts.signal });
}

/**
 * The service's data centres: `{ id, name, region, globalNetwork, networkVolumeTypes, compliance }`
 * each (`id` for a volume's `dataCenterId` or an endpoint's `dataCenterIds`).
 */
export async function getDataCenters(
  args?: GetDataCentersArgs,
  opts: CatalogLookupOptions = {},
): Promise<DataCenter[]> {
  const { availability } = checkArgs("getDataCenters", args, { availability: "boolean" });
  const include = availability ? { include: ["GPU_AVAILABILITY" as const, "CPU_AVAILABILITY" as const] } : {};
  return clientOf(opts).catalog.dataCenters(include, { signal: opts.signal });
}

/** {@link getGpuTypes} for `Input` arguments, as an `Output`: `getGpuTypesOutput({ serverless: true }).apply((t) => t[0].pool)`. */
export function getGpuTypesOutput(
  args?: pulumi.Input<Inputs<GetGpuTypesArgs>>,
  opts: CatalogLookupOptions = {},
): pulumi.Output<GpuType[]> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getGpuTypes(resolved as GetGpuTypesArgs | undefined, opts));
}

/** {@link getCpuTypes} for `Input` arguments, as an `Output`. */
export function getCpuTypesOutput(
  args?: pulumi.Input<Inputs<GetCpuTypesArgs>>,
  opts: CatalogLookupOptions = {},
): pulumi.Output<CpuType[]> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getCpuTypes(resolved as GetCpuTypesArgs | undefined, opts));
}

/** {@link getDataCenters} for `Input` arguments, as an `Output`. */
export function getDataCentersOutput(
  args?: pulumi.Input<Inputs<GetDataCentersArgs>>,
  opts: CatalogLookupOptions = {},
): pulumi.Output<DataCenter[]> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getDataCenters(resolved as GetDataCentersArgs | undefined, opts));
}

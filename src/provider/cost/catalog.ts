/**
 * The catalog's prices and data centres, read at most once per provider host and per account (REST
 * URL and key): `check` prices a change in the preview and judges the data centres a program names,
 * and Pulumi's guidance is to keep check cheap (no writes, no reads beyond the catalog).
 *
 * Each list is read under one bound, {@link CATALOG_READ_BOUND_MS} in all (every try and pause
 * included), timed on the settings' clock, and its outcome is kept for the host, a failure
 * included: a catalog that never answers costs the first check that needs it 10 s, and every later
 * check none. Outputs (`hourlyCost` after a create) share the same reads.
 */
import { createHash } from "node:crypto";
import type { RunpodClient } from "../../client";
import { boundedRead, READ_BOUND_MS } from "../common/boundedRead";
import { clientFromSettings, type RunpodSettings } from "../config";
import type { CpuPrice, GpuPrice } from "./prices";

/** How long one catalog list may take, every try included, before the read counts as failed: 10 s. */
export const CATALOG_READ_BOUND_MS = READ_BOUND_MS;
/**
 * Retries of a price read within its bound (a refused connection, a 429 or 5xx): two, after pauses
 * of about 0.5 s and 1 s, so a budget is not failed by one bad answer and a failing service is
 * given up on in seconds. The data centres (a courtesy) are read with one try.
 */
export const CATALOG_READ_RETRIES = 2;

/** Where a catalog read goes and what times it: the account's settings (and their clock). */
export type CatalogSettings = Pick<
  RunpodSettings,
  "apiKey" | "restUrl" | "serverlessUrl" | "clock" | "sources"
>;

const gpuReads = new Map<string, Promise<GpuPrice[]>>();
const cpuReads = new Map<string, Promise<CpuPrice[]>>();
const dataCenterReads = new Map<string, Promise<string[] | undefined>>();

/** Which account and service a catalog read is for; the key only as a digest. */
function accountKey(settings: CatalogSettings | undefined): string {
  return `${settings?.restUrl ?? ""}\u0000${createHash("sha256")
    .update(settings?.apiKey ?? "")
    .digest("hex")}`;
}

/**
 * One read per host and account of one catalog list, under the bound; the outcome (a failure
 * included) is kept. `client` is the caller's; without one, a client from `settings` with
 * `retries` retries.
 */
function once<T>(
  cache: Map<string, Promise<T>>,
  settings: CatalogSettings | undefined,
  client: RunpodClient | undefined,
  retries: number,
  what: string,
  read: (client: RunpodClient, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const key = accountKey(settings);
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = boundedRead(settings?.clock, what, (signal) =>
      read(
        client ??
          clientFromSettings(settings ?? {}, {
            maxRetries: retries,
            timeoutMs: CATALOG_READ_BOUND_MS,
          }),
        signal,
      ),
    );
    cache.set(key, pending);
    // Kept as it is, a rejection included; this only marks it handled until a caller awaits it.
    pending.catch(() => {});
  }
  return pending;
}

/** GPU types with their prices (one `GET /v2/catalog/gpus` per host and account, bounded). */
export function catalogGpus(
  settings: CatalogSettings | undefined,
  client?: RunpodClient,
): Promise<GpuPrice[]> {
  return once(gpuReads, settings, client, CATALOG_READ_RETRIES, "GET /v2/catalog/gpus", (c, signal) =>
    c.catalog.gpus({}, { signal }),
  );
}

/** CPU flavours with their prices (one `GET /v2/catalog/cpus` per host and account, bounded). */
export function catalogCpus(
  settings: CatalogSettings | undefined,
  client?: RunpodClient,
): Promise<CpuPrice[]> {
  return once(cpuReads, settings, client, CATALOG_READ_RETRIES, "GET /v2/catalog/cpus", (c, signal) =>
    c.catalog.cpus({}, { signal }),
  );
}

/**
 * The ids of the catalog's data centres (one `GET /v2/catalog/datacenters` per host and account,
 * bounded), or undefined when that read failed. The judgement it serves is a courtesy (the service
 * decides anyway), so a failed read is "unknown" for the host's life.
 */
export function catalogDataCenterIds(
  settings: CatalogSettings | undefined,
  client?: RunpodClient,
): Promise<string[] | undefined> {
  return once(dataCenterReads, settings, client, 0, "GET /v2/catalog/datacenters", (c, signal) =>
    c.catalog.dataCenters({}, { signal }).then((centres) => centres.map((centre) => centre.id)),
  ).catch(() => undefined);
}

/** Forgets every read (tests). */
export function resetCatalogCache(): void {
  gpuReads.clear();
  cpuReads.clear();
  dataCenterReads.clear();
}

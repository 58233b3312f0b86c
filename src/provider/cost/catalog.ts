/**
 * The catalog's prices and data centres, read at most once per provider host and per account (REST
 * URL and key): `check` prices a change in the preview and judges the data centres a program names,
 * and Pulumi's guidance is to keep check cheap (no writes, no reads beyond the catalog). A failed
 * price read is not kept: the next check tries again. A failed data-centre read is kept (see
 * {@link catalogDataCenterIds}).
 */
import { createHash } from "node:crypto";
import type { RunpodClient } from "../../client";
import type { CpuPrice, GpuPrice } from "./prices";

const gpuReads = new Map<string, Promise<GpuPrice[]>>();
const cpuReads = new Map<string, Promise<CpuPrice[]>>();
const dataCenterReads = new Map<string, Promise<string[] | undefined>>();

/** Which account and service a catalog read is for; the key only as a digest. */
function accountKey(restUrl: string | undefined, apiKey: string | undefined): string {
  return `${restUrl ?? ""}\u0000${createHash("sha256")
    .update(apiKey ?? "")
    .digest("hex")}`;
}

function once<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  let pending = cache.get(key);
  if (pending === undefined) {
    pending = read();
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
  }
  return pending;
}

/** GPU types with their prices (one `GET /v2/catalog/gpus` per host and account). */
export function catalogGpus(client: RunpodClient, restUrl?: string, apiKey?: string): Promise<GpuPrice[]> {
  return once(gpuReads, accountKey(restUrl, apiKey), () => client.catalog.gpus());
}

/** CPU flavours with their prices (one `GET /v2/catalog/cpus` per host and account). */
export function catalogCpus(client: RunpodClient, restUrl?: string, apiKey?: string): Promise<CpuPrice[]> {
  return once(cpuReads, accountKey(restUrl, apiKey), () => client.catalog.cpus());
}

/**
 * The ids of the catalog's data centres (one `GET /v2/catalog/datacenters` per host and account),
 * or undefined when that read failed. The judgement it serves is a courtesy (the service decides
 * anyway), so a failed read is kept as "unknown" for the host's life: one bounded read (the
 * caller's client says how long and how many tries), never one per check.
 */
export function catalogDataCenterIds(
  client: RunpodClient,
  restUrl?: string,
  apiKey?: string,
): Promise<string[] | undefined> {
  return once(dataCenterReads, accountKey(restUrl, apiKey), () =>
    client.catalog.dataCenters().then(
      (centres) => centres.map((centre) => centre.id),
      () => undefined,
    ),
  );
}

/** Forgets every read (tests). */
export function resetCatalogCache(): void {
  gpuReads.clear();
  cpuReads.clear();
  dataCenterReads.clear();
}

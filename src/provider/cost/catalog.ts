/**
 * The catalog's prices, read at most once per provider host and per account (REST URL and key):
 * `check` prices a change in the preview, and Pulumi's guidance is to keep check cheap (no writes,
 * no reads beyond the catalog). A failed read is not kept: the next check tries again.
 */
import { createHash } from "node:crypto";
import type { RunpodClient } from "../../client";
import type { CpuPrice, GpuPrice } from "./prices";

const gpuReads = new Map<string, Promise<GpuPrice[]>>();
const cpuReads = new Map<string, Promise<CpuPrice[]>>();

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

/** Forgets every read (tests). */
export function resetCatalogCache(): void {
  gpuReads.clear();
  cpuReads.clear();
}

/** Serverless pools: the ones an endpoint's `gpu.pools` may name. */
import type { GpuType } from "../../wire/catalog";
import { GPU_TYPES } from "./data";

/** The pool of the endpoints given with `--endpoint`; accepted in `gpu.pools`, listed by no GPU type. */
export const EMULATOR_POOL = "EMULATOR";

/** Every serverless pool id of the catalog, in catalog order, then {@link EMULATOR_POOL}. */
export const KNOWN_POOLS: readonly string[] = [
  ...new Set(GPU_TYPES.flatMap((g) => (g.record.pool ? [g.record.pool] : []))),
  EMULATOR_POOL,
];

/**
 * Refuses `gpu.pools` naming a pool the catalog does not have (the service's 400), naming the
 * unknown ones and the known ones; nothing to check when `pools` is undefined. `Refusal` is the
 * caller's error class (the serverless store's 400), so this module needs nothing of the store.
 */
export function requireKnownPools(
  pools: readonly string[] | undefined,
  Refusal: new (message: string) => Error,
): void {
  const unknown = (pools ?? []).filter((p) => !KNOWN_POOLS.includes(p));
  if (unknown.length === 0) return;
  throw new Refusal(
    `gpu.pools: ${unknown.map((p) => JSON.stringify(p)).join(", ")} ${unknown.length > 1 ? "are not serverless pools" : "is not a serverless pool"}; ` +
      `known pools: ${KNOWN_POOLS.join(", ")} (GET /v2/catalog/gpus lists each GPU type's pool)`,
  );
}

/**
 * The GPU type a serverless worker of an endpoint is placed on: the first type of its first pool,
 * in catalog order, that `excludedTypes` does not exclude; undefined for the `EMULATOR` pool (no
 * type) or a CPU endpoint. Worker lists report it as `gpuTypeId` and billing meters at its price.
 */
export function placedGpuType(
  gpu: { pools: readonly string[]; excludedTypes?: readonly string[] | null } | null | undefined,
): GpuType | undefined {
  const pool = gpu?.pools[0];
  if (pool === undefined) return undefined;
  const excluded = new Set(gpu?.excludedTypes ?? []);
  return GPU_TYPES.find((g) => g.record.pool === pool && !excluded.has(g.record.id))?.record;
}

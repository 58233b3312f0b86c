/** The serverless rules the request schemas cannot see: the emulator's caps and the account's bounds. */
import { MAX_ENV_BYTES, MAX_WORKERS_PER_ENDPOINT } from "../serviceFacts";
import { ServerlessConflictError } from "./errors";

/** Refuses an env larger than {@link MAX_ENV_BYTES} in all (400): every endpoint keeps it in memory. */
export function requireEnvWithinCap(env: Record<string, string> | undefined): void {
  if (env === undefined) return;
  let bytes = 0;
  for (const [key, value] of Object.entries(env))
    bytes += Buffer.byteLength(key, "utf8") + Buffer.byteLength(String(value), "utf8");
  if (bytes > MAX_ENV_BYTES) {
    throw new ServerlessConflictError(
      `env: at most ${MAX_ENV_BYTES} bytes of names and values in all, got ${bytes}`,
    );
  }
}

/** Refuses one more object past the account's bound (400), naming what to delete. */
export function requireRoom(kind: "endpoints" | "templates", held: number, max: number): void {
  if (held >= max) {
    throw new ServerlessConflictError(
      `the account holds ${held} ${kind}, the most it may hold (${max}); delete one before creating another`,
    );
  }
}

/**
 * Refuses a `workers.max` past {@link MAX_WORKERS_PER_ENDPOINT} (400): the document sets no upper
 * bound, but the emulator runs each worker in memory (`workers.max: 1e7` ran it out of memory).
 */
export function requireWorkersWithinCap(max: number | undefined): void {
  if (max !== undefined && max > MAX_WORKERS_PER_ENDPOINT) {
    throw new ServerlessConflictError(
      `workers.max: the emulator runs at most ${MAX_WORKERS_PER_ENDPOINT} workers per endpoint, got ${max}`,
    );
  }
}

/** The CUDA rule on a merged GPU config (the schema sees only the patch). */
export function requireOneCudaConstraint(
  gpu: { allowedCudaVersions?: string[]; minCudaVersion?: string } | undefined,
): void {
  if (gpu && (gpu.allowedCudaVersions?.length ?? 0) > 0 && gpu.minCudaVersion) {
    throw new ServerlessConflictError(
      "gpu: allowedCudaVersions (a non-empty set) and minCudaVersion are mutually exclusive",
    );
  }
}

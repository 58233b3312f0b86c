/**
 * What an update of a pod does: which fields replace it, the PATCH of the fields that change in
 * place (`UpdatePodRequest`; `env` sent whole with what the service injected kept), the changes of
 * the provider's own arguments that make no call, and the stop or start `desiredStatus` asks for.
 */
import { isDeepStrictEqual } from "node:util";
import { containsUnknown } from "../common/unknown";
import { EXTRA_NAMES, type PodInputs } from "./args";

/** Fields a PATCH changes in place (`UpdatePodRequest`), compared one by one. */
const IN_PLACE = ["name", "image", "args", "disk", "ports", "registry", "locked"] as const;
/** Create-only flags: never read back, so compared with their echo in the outputs; a change replaces. */
export const CREATE_ONLY = ["startSsh", "startJupyter"] as const;

export interface Plan {
  replaces: string[];
  patch: Record<string, unknown>;
  patchKeys: string[];
  /** Changes that need no service call (the provider's own arguments). */
  other: string[];
  action?: "start" | "stop";
}

/** What an update of `olds` (outputs) to `news` (inputs) does. */
export function plannedChanges(olds: Record<string, unknown>, news: PodInputs): Plan {
  const replaces: string[] = [];
  const patch: Record<string, unknown> = {};
  const other: string[] = [];
  const unknown = (key: string) => news[key] !== undefined && containsUnknown(news[key]);
  const oldGpu = olds.gpu as { id?: string; count?: number } | undefined;
  const oldCpu = olds.cpu as { id?: string; vcpuCount?: number } | undefined;
  const requested = olds.requestedGpu as PodInputs["gpu"] | undefined;
  // Compute: a GPU pod stays when gpu.id is what it asked for or the type it landed on.
  if (unknown("gpu") || unknown("cpu")) replaces.push(unknown("gpu") ? "gpu" : "cpu");
  else if (news.gpu) {
    if (!oldGpu) replaces.push("gpu");
    else {
      const sameType = news.gpu.id === oldGpu.id || news.gpu.id === requested?.id;
      const sameCount = (news.gpu.count ?? 1) === (oldGpu.count ?? 1);
      const cudaOk = cudaAccepts(news.gpu, olds.cudaVersion);
      if (!sameType || !sameCount || !cudaOk) replaces.push("gpu");
      else if (!isDeepStrictEqual(requested, news.gpu)) other.push("gpu");
    }
  } else if (news.cpu) {
    if (!oldCpu || oldCpu.id !== news.cpu.id || oldCpu.vcpuCount !== news.cpu.vcpuCount) replaces.push("cpu");
  }
  if (unknown("cloud") || (news.cloud ?? "SECURE") !== ((olds.cloud as string | undefined) ?? "SECURE")) {
    replaces.push("cloud");
  }
  // Mounts: the kind (and a network volume) is fixed; a persistent mount's size and path change in place.
  const oldMounts = (olds.mounts ?? {}) as PodInputs["mounts"] & object;
  const newMounts = (news.mounts ?? {}) as PodInputs["mounts"] & object;
  if (unknown("mounts")) replaces.push("mounts");
  else if (mountKind(oldMounts) !== mountKind(newMounts)) replaces.push("mounts");
  else if (newMounts.network && !isDeepStrictEqual(volumesOf(oldMounts), volumesOf(newMounts)))
    replaces.push("mounts");
  else if (
    newMounts.persistent &&
    !isDeepStrictEqual(pick(oldMounts.persistent), pick(newMounts.persistent))
  ) {
    patch.mounts = { persistent: newMounts.persistent };
  }
  for (const key of CREATE_ONLY) {
    if (unknown(key) || (news[key] ?? false) !== (olds[key] ?? false)) replaces.push(key);
  }
  if (unknown("templateId") || (news.templateId ?? null) !== (olds.templateId ?? null))
    replaces.push("templateId");
  // Placement: the pod stays while its data center is still one of those asked for.
  if (!isDeepStrictEqual(news.dataCenterIds ?? [], olds.dataCenterIds ?? [])) {
    const where = olds.dataCenterId as string | undefined;
    const list = news.dataCenterIds ?? [];
    // Data centre ids compare in any letter case, as the service and check take them.
    const asked = list.map((id) => id.toUpperCase());
    if (
      unknown("dataCenterIds") ||
      (list.length > 0 && where !== undefined && !asked.includes(where.toUpperCase()))
    ) {
      replaces.push("dataCenterIds");
    } else other.push("dataCenterIds");
  }
  // In place: what the program gives; an omitted field keeps the pod's value (env: none of the program's).
  for (const key of IN_PLACE) {
    const given = news[key];
    if (given === undefined) continue;
    if (containsUnknown(given) || !isDeepStrictEqual(olds[key] ?? null, given)) patch[key] = given;
  }
  if (news.globalNetworking !== undefined) {
    const had = (olds.globalNetworking as { enabled?: boolean } | undefined)?.enabled ?? false;
    if (containsUnknown(news.globalNetworking) || had !== news.globalNetworking)
      patch.globalNetworking = news.globalNetworking;
  }
  const oldEnv = (olds.env ?? {}) as Record<string, string>;
  const env = unknown("env") ? news.env : { ...injectedEnv(oldEnv, olds, news), ...(news.env ?? {}) };
  if (!isDeepStrictEqual(oldEnv, env)) patch.env = env;
  // The provider's own arguments: no call.
  for (const key of EXTRA_NAMES) {
    if (key === "desiredStatus") continue;
    if (!isDeepStrictEqual(news[key], olds[key])) other.push(key);
  }
  if (containsUnknown(news.desiredStatus)) other.push("desiredStatus");
  const wanted = wantedOf(news);
  const had = olds.desiredStatus ?? "RUNNING";
  const action = wanted !== had ? (wanted === "EXITED" ? "stop" : "start") : undefined;
  return { replaces: [...new Set(replaces)], patch, patchKeys: Object.keys(patch), other, action };
}

/** True when the pod's CUDA version satisfies the new GPU constraint (or nothing is known of it). */
function cudaAccepts(gpu: NonNullable<PodInputs["gpu"]>, cudaVersion: unknown): boolean {
  if (typeof cudaVersion !== "string") return true;
  if (gpu.allowedCudaVersions && gpu.allowedCudaVersions.length > 0)
    return gpu.allowedCudaVersions.includes(cudaVersion);
  if (gpu.minCudaVersion) {
    const [a, b] = cudaVersion.split(".").map(Number);
    const [x, y] = gpu.minCudaVersion.split(".").map(Number);
    return (a ?? 0) > (x ?? 0) || ((a ?? 0) === (x ?? 0) && (b ?? 0) >= (y ?? 0));
  }
  return true;
}

export function mountKind(mounts: NonNullable<PodInputs["mounts"]>): string {
  if (mounts.persistent) return "persistent";
  if (mounts.network && mounts.network.length > 0) return "network";
  return "none";
}

function volumesOf(mounts: NonNullable<PodInputs["mounts"]>): unknown {
  return (mounts.network ?? []).map((m) => ({ volumeId: m.volumeId, path: m.path }));
}

function pick(persistent: { size?: unknown; path?: unknown } | undefined): unknown {
  return persistent ? { size: persistent.size, path: persistent.path } : undefined;
}

/**
 * The variables the service put in the pod's env that the program does not set: `PUBLIC_KEY` (with
 * `startSsh`) and `JUPYTER_PASSWORD` (with `startJupyter`). Kept on every PATCH of env: a partial
 * env would drop them, and SSH with them.
 */
function injectedEnv(
  oldEnv: Record<string, string>,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  const ssh = olds.startSsh ?? news.startSsh;
  const jupyter = olds.startJupyter ?? news.startJupyter;
  if (ssh && oldEnv.PUBLIC_KEY !== undefined) kept.PUBLIC_KEY = oldEnv.PUBLIC_KEY;
  if (jupyter && oldEnv.JUPYTER_PASSWORD !== undefined) kept.JUPYTER_PASSWORD = oldEnv.JUPYTER_PASSWORD;
  return kept;
}

/** The pod's env without what the service injected: the program's part, for refresh's inputs. */
export function userEnv(env: Record<string, string>, olds: Record<string, unknown>): Record<string, string> {
  const injected = injectedEnv(env, olds, {});
  return Object.fromEntries(
    Object.entries(env).filter(
      ([k]) => !(k in injected) || (olds.env as Record<string, string>)?.[k] !== env[k],
    ),
  );
}

/** The status the program asks for: `"EXITED"`, else `"RUNNING"`. */
export function wantedOf(inputs: Record<string, unknown>): "RUNNING" | "EXITED" {
  return inputs.desiredStatus === "EXITED" ? "EXITED" : "RUNNING";
}

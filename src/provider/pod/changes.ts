/**
 * What an update of a pod does: which fields replace it, the PATCH of the fields that change in
 * place (`UpdatePodRequest`; `env` sent whole with what the service injected kept), the changes of
 * the provider's own arguments that make no call, and the stop or start `desiredStatus` asks for.
 *
 * A replacement terminates the pod with its disks, so the fields that force one compare the pod
 * as read back in the service's equivalences, never a spelling: enum values (`cloud`) and GPU or
 * CPU ids in any letter case; a field the read-back leaves out (`cloud`, `mounts`, `gpu.count`,
 * all seen missing from answers) is not a change: an omitted `gpu.count` is the count asked for,
 * not the document's default 1; a `cudaVersion` that is not `major.minor` ("N/A", or the
 * document's null: "unknown") meets any CUDA constraint; `templateId` `""` is no template.
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
  // Compute: a GPU pod stays when gpu.id is what it asked for or the type it landed on. A
  // read-back naming neither gpu nor cpu says nothing of it; one naming the other kind is a change.
  if (unknown("gpu") || unknown("cpu")) replaces.push(unknown("gpu") ? "gpu" : "cpu");
  else if (news.gpu) {
    if (!oldGpu) {
      if (oldCpu) replaces.push("gpu");
    } else {
      const sameType =
        oldGpu.id === undefined ||
        sameText(news.gpu.id, oldGpu.id) ||
        (requested !== undefined && sameText(news.gpu.id, requested.id));
      // The count asked for is the count landed on (no fallback changes it): it stands in for an omitted one.
      const count = oldGpu.count ?? (requested ? (requested.count ?? 1) : undefined);
      const sameCount = count === undefined || (news.gpu.count ?? 1) === count;
      const cudaOk = cudaAccepts(news.gpu, olds.cudaVersion);
      if (!sameType || !sameCount || !cudaOk) replaces.push("gpu");
      else if (!isDeepStrictEqual(requested, news.gpu)) other.push("gpu");
    }
  } else if (news.cpu) {
    if (!oldCpu) {
      if (oldGpu) replaces.push("cpu");
    } else if (
      (oldCpu.id !== undefined && !sameText(news.cpu.id, oldCpu.id)) ||
      (oldCpu.vcpuCount !== undefined && oldCpu.vcpuCount !== news.cpu.vcpuCount)
    ) {
      replaces.push("cpu");
    }
  }
  // Cloud: SECURE when the program leaves it out (the create default); a read-back without it is no change.
  if (unknown("cloud") || (typeof olds.cloud === "string" && !sameText(news.cloud ?? "SECURE", olds.cloud))) {
    replaces.push("cloud");
  }
  // Mounts: the kind (and a network volume) is fixed; a persistent mount's size and path and a
  // network mount's path change in place. A read-back without `mounts` says nothing of them.
  const oldMounts = (olds.mounts ?? {}) as PodInputs["mounts"] & object;
  const newMounts = (news.mounts ?? {}) as PodInputs["mounts"] & object;
  if (unknown("mounts")) replaces.push("mounts");
  else if (olds.mounts === undefined || olds.mounts === null) {
    // Not read back: no change judged.
  } else if (mountKind(oldMounts) !== mountKind(newMounts)) replaces.push("mounts");
  else if (newMounts.network && !sameNetwork(oldMounts, newMounts, ["volumeId"])) replaces.push("mounts");
  else if (newMounts.network && !sameNetwork(oldMounts, newMounts, ["path"])) {
    patch.mounts = { network: newMounts.network };
  } else if (
    newMounts.persistent &&
    !sameWhereRead(oldMounts.persistent, newMounts.persistent, ["size", "path"])
  ) {
    patch.mounts = { persistent: newMounts.persistent };
  }
  for (const key of CREATE_ONLY) {
    if (unknown(key) || (news[key] ?? false) !== (olds[key] ?? false)) replaces.push(key);
  }
  if (unknown("templateId") || templateOf(news.templateId) !== templateOf(olds.templateId))
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

/** Two ids or enum values the service may spell in another letter case. */
function sameText(a: unknown, b: unknown): boolean {
  return typeof a === "string" && typeof b === "string" && a.toUpperCase() === b.toUpperCase();
}

/** A template id, `""` (or anything but a non-empty string) as none. */
function templateOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * True when the pod's CUDA version satisfies the new GPU constraint, or nothing is known of it:
 * only a `major.minor` version is judged (the document's null is "unknown"; "N/A" and the like too).
 */
function cudaAccepts(gpu: NonNullable<PodInputs["gpu"]>, cudaVersion: unknown): boolean {
  if (typeof cudaVersion !== "string" || !/^\d+\.\d+$/.test(cudaVersion.trim())) return true;
  const version = cudaVersion.trim();
  if (gpu.allowedCudaVersions && gpu.allowedCudaVersions.length > 0)
    return gpu.allowedCudaVersions.includes(version);
  if (gpu.minCudaVersion) {
    const [a, b] = version.split(".").map(Number);
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

/** The same number of network mounts, each with the same `keys`, a field the read-back leaves out aside. */
function sameNetwork(
  olds: NonNullable<PodInputs["mounts"]>,
  news: NonNullable<PodInputs["mounts"]>,
  keys: readonly ("volumeId" | "path")[],
): boolean {
  const was = olds.network ?? [];
  const now = news.network ?? [];
  return was.length === now.length && was.every((m, i) => sameWhereRead(m, now[i], keys));
}

/** True when `keys` of `read` equal those of `given`, a key the read-back leaves out (or null) aside. */
function sameWhereRead(
  read: object | undefined,
  given: object | undefined,
  keys: readonly string[],
): boolean {
  if (read === undefined || given === undefined) return read === given;
  const r = read as Record<string, unknown>;
  const g = given as Record<string, unknown>;
  return keys.every((key) => r[key] === undefined || r[key] === null || isDeepStrictEqual(r[key], g[key]));
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

/**
 * The line a diff that plans a replacement writes (the host's stderr, which the CLI prints under
 * the stack in the preview): what terminating the pod deletes, from its last outputs. A network
 * volume is its own resource and outlives the pod. Undefined when nothing is replaced.
 */
export function replacementWarning(
  label: string,
  replaces: readonly string[],
  olds: Record<string, unknown>,
): string | undefined {
  if (replaces.length === 0) return undefined;
  const mounts = (olds.mounts ?? {}) as PodInputs["mounts"] & object;
  const lost: string[] = [];
  const persistent = mounts.persistent;
  if (persistent && typeof persistent.size === "number")
    lost.push(`its ${persistent.size} GB persistent disk${persistent.path ? ` at ${persistent.path}` : ""}`);
  if (typeof olds.disk === "number" && olds.disk > 0) lost.push(`its ${olds.disk} GB container disk`);
  const kept = (mounts.network ?? []).map((m) => m.volumeId).filter((v) => typeof v === "string");
  const what = lost.length > 0 ? lost.join(" and ") : "its disks";
  return (
    `warning: replacing Pod ${label} (${replaces.join(", ")} ${replaces.length === 1 ? "changes" : "change"}) terminates it and deletes ${what} ` +
    `with their data; the new pod starts empty. To keep the data, copy it off first or undo the change.` +
    (kept.length > 0 ? ` Network volume ${kept.join(", ")} is kept.` : "")
  );
}

/** The status the program asks for: `"EXITED"`, else `"RUNNING"`. */
export function wantedOf(inputs: Record<string, unknown>): "RUNNING" | "EXITED" {
  return inputs.desiredStatus === "EXITED" ? "EXITED" : "RUNNING";
}

/**
 * A pod's outputs: the pod as read back (every field, secrets redacted outside `env` but for the
 * fields the service fills in from its own vocabulary), the echo of
 * the provider's own and create-only arguments for the next diff, `desiredStatus`, and
 * `hourlyCost` from the catalog; and the values never to return or throw outside `env`.
 */
import type { RunpodClient } from "../../client";
import { envSecretsOf, redactedOutsideEnv } from "../common/redaction";
import type { RunpodSettings } from "../config";
import { podCostOutput } from "../cost/pod";
import { EXTRA_NAMES } from "./args";
import { CREATE_ONLY } from "./changes";

/** What the pod's status says of `desiredStatus`: stopped (or failed) is EXITED, on its way or running is RUNNING. */
export function observedDesired(status: string, old: unknown): string {
  if (status === "EXITED" || status === "ERROR") return "EXITED";
  if (status === "RUNNING" || status === "STARTING" || status === "PROVISIONING") return "RUNNING";
  return typeof old === "string" ? old : "RUNNING";
}

/** The keys the outputs take from the inputs' echo, never from the service's answer. */
const ECHOED = [...EXTRA_NAMES, ...CREATE_ONLY, "dataCenterIds", "templateId", "requestedGpu"];

/**
 * Fields of the answer the service fills in from its own vocabulary (`SECURE`, a data centre id, a
 * CUDA version, a GPU type, a default mount path such as `/workspace`), which the next diff judges
 * a replacement by: kept as answered, never redacted. They cannot carry an env value the program
 * wrote unless one equals them by chance (an env value `SECURE`), and hiding them then made the
 * next preview replace the pod, deleting its disk.
 */
const SERVICE_CHOSEN = ["cloud", "dataCenterId", "cudaVersion", "gpu", "cpu", "mounts", "status"];

/** The provider's own arguments and the create-only ones, echoed into the outputs for the next diff. */
export function echoOf(inputs: Record<string, unknown>): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const key of [...EXTRA_NAMES, ...CREATE_ONLY, "dataCenterIds", "templateId"]) {
    if (inputs[key] !== undefined) echo[key] = inputs[key];
  }
  // The GPU asked for (the pod's `gpu` output is the type it landed on).
  const requested = inputs.requestedGpu ?? inputs.gpu;
  if (requested !== undefined && inputs.cpu === undefined) echo.requestedGpu = requested;
  return echo;
}

/**
 * The pod as read back (every field, secrets redacted outside `env`), plus the echo of the inputs.
 * The echoed keys come from the inputs alone: the document returns none of them (a `templateId`,
 * `startSsh` or `""` in an answer would otherwise stand for what the program asked and replace the pod).
 */
export function outputsOf(
  pod: Record<string, unknown>,
  inputs: Record<string, unknown>,
  secrets: readonly string[],
): Record<string, unknown> {
  const read = Object.fromEntries(Object.entries(pod).filter(([key]) => !ECHOED.includes(key)));
  const outs = redactedOutsideEnv({ ...read, ...echoOf(inputs) }, secrets, SERVICE_CHOSEN);
  outs.desiredStatus = inputs.desiredStatus ?? "RUNNING";
  return outs;
}

/** Values never to return or throw outside `env`: every env value (given or injected) and the API key. */
export function podSecrets(
  sets: readonly Record<string, unknown>[],
  settings: RunpodSettings | undefined,
): string[] {
  return envSecretsOf(sets, settings);
}

/** The outputs with `hourlyCost` from the catalog (left out when the catalog cannot be read). */
export async function withHourlyCost(
  settings: RunpodSettings | undefined,
  outs: Record<string, unknown>,
  inputs: Record<string, unknown>,
  client?: RunpodClient,
): Promise<Record<string, unknown>> {
  const shape = {
    gpu: inputs.requestedGpu ?? inputs.gpu,
    cpu: inputs.cpu,
    cloud: inputs.cloud,
    fallbackGpuIds: inputs.fallbackGpuIds,
    desiredStatus: outs.desiredStatus,
  };
  const hourlyCost = await podCostOutput(settings, shape as never, client);
  return hourlyCost === undefined ? outs : { ...outs, hourlyCost };
}

/**
 * The read-back with what it left out of the fields that decide a replacement taken from the last
 * outputs (`old`): `cloud`, `mounts`, `dataCenterId`, the compute (`gpu` or `cpu`) and its count
 * and id. A pod keeps these while it exists (mounts change only by our PATCH), so the last value
 * is the best known; a field the service omits is not a change. `cloud` is read in any letter
 * case and kept as the document spells it (`SECURE`, `COMMUNITY`).
 */
export function withOmittedKept<T extends Record<string, unknown>>(live: T, old: Record<string, unknown>): T {
  const pod: Record<string, unknown> = { ...live };
  for (const key of ["cloud", "mounts", "dataCenterId"]) {
    if ((pod[key] === undefined || pod[key] === null) && old[key] !== undefined && old[key] !== null)
      pod[key] = old[key];
  }
  if (typeof pod.cloud === "string") pod.cloud = pod.cloud.toUpperCase();
  const kind = pod.gpu ? "gpu" : pod.cpu ? "cpu" : undefined;
  if (kind === undefined) {
    if (isObject(old.gpu)) pod.gpu = old.gpu;
    else if (isObject(old.cpu)) pod.cpu = old.cpu;
  } else if (isObject(pod[kind]) && isObject(old[kind])) {
    const was = old[kind] as Record<string, unknown>;
    const now: Record<string, unknown> = { ...(pod[kind] as Record<string, unknown>) };
    const count = kind === "gpu" ? "count" : "vcpuCount";
    for (const key of ["id", count]) if (now[key] === undefined || now[key] === null) now[key] = was[key];
    if (now.id === undefined) delete now.id;
    if (now[count] === undefined) delete now[count];
    pod[kind] = now;
  }
  return pod as T;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

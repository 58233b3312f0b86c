/**
 * A pod's outputs: the pod as read back (every field, secrets redacted outside `env`), the echo of
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

/** The pod as read back (every field, secrets redacted outside `env`), plus the echo of the inputs. */
export function outputsOf(
  pod: Record<string, unknown>,
  inputs: Record<string, unknown>,
  secrets: readonly string[],
): Record<string, unknown> {
  const outs = redactedOutsideEnv({ ...pod, ...echoOf(inputs) }, secrets);
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

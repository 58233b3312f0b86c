/**
 * Bringing a pod to what the program asks: the stop or start action `desiredStatus` calls for
 * (a locked pod refuses a stop; a stopped pod starts again only where its data center has free
 * compute), then the wait per `waitFor`. A pod that does not become usable is a partial failure:
 * it stays in the state with its id, and the error carries its log tail. So is every other failure
 * once the pod exists ({@link keepingPod}): a pod that bills is never left out of the state.
 *
 * A partial failure's `properties` are what the engine stores as the outputs and passes, exactly,
 * to the next read, update and delete (`CreateStep.Apply`/`UpdateStep.Apply`, step.go); the
 * dynamic-provider host loads the provider for a read or delete from `__provider` in them
 * (`getProvider(props)` in `read` and `delete` of @pulumi/pulumi cmd/dynamic-provider), and adds it
 * only to a success's outputs (`resultIncludingProvider`). So they carry `__provider` as the host
 * received it, and `env` (the secret output: the engine re-marks it secret from the inputs,
 * `annotateSecrets` in `provider.Create`/`Update`, provider_plugin.go), which the next update's
 * PATCH of env keeps the injected `PUBLIC_KEY` from.
 */
import {
  BadRequestError,
  ConflictError,
  describeBody,
  type Pod,
  type RunpodClient,
  RunpodError,
} from "../../client";
import type { Clock } from "../clock";
import { labelOf } from "../common/host";
import { describeError } from "../common/wording";
import type { WaitSettings } from "../config";
import { readLogTail } from "../smokeTestJob/logTail";
import { DEFAULT_WAIT_TIMEOUT_MS, type PodInputs } from "./args";
import { wantedOf } from "./changes";
import { observedDesired, outputsOf } from "./outputs";
import { type WaitFailure, waitForPod } from "./wait";

/**
 * Stops or starts the pod `pod` (as last read) when its status is not what `wanted` says; the
 * service's refusal of a locked pod, or of a start without free compute, says what to do.
 */
export async function powerTo(
  client: RunpodClient,
  pod: Pod,
  wanted: "RUNNING" | "EXITED",
  label: string,
): Promise<Pod> {
  try {
    if (wanted === "EXITED" && pod.status !== "EXITED" && pod.status !== "ERROR") {
      return (await client.pods.action(pod.id, "stop")) ?? pod;
    }
    if (wanted === "RUNNING" && (pod.status === "EXITED" || pod.status === "ERROR")) {
      return (await client.pods.action(pod.id, "start")) ?? pod;
    }
    return pod;
  } catch (error) {
    if (error instanceof ConflictError && pod.locked) {
      throw new RunpodError(
        `RunPod refused to ${wanted === "EXITED" ? "stop" : "start"} pod ${label}: it is locked. ` +
          "Set locked: false on the Pod (an update in place), run pulumi up, then change desiredStatus.",
      );
    }
    if (error instanceof BadRequestError) {
      throw new RunpodError(
        `RunPod could not start pod ${label}: ${describeBody(error.body) || error.message}. A stopped pod ` +
          `starts again only on its own data center (${pod.dataCenterId ?? "unknown"}), which has no free ` +
          `${pod.gpu?.id ?? "compute"} now; try again later, or replace the pod.`,
      );
    }
    throw error;
  }
}

/**
 * Waits per the inputs, on the settings' clock (the real one when absent) until the deployment is
 * cancelled; a pod that does not become usable is a partial failure with its log tail.
 */
export async function waitOrFail(
  client: RunpodClient,
  pod: Pod,
  inputs: PodInputs,
  secrets: readonly string[],
  waits?: WaitSettings,
  provider?: unknown,
): Promise<Pod> {
  const clock = waits?.clock;
  const result = await waitForPod({
    client,
    pod,
    wanted: wantedOf(inputs),
    waitFor: inputs.waitFor ?? "running",
    timeoutMs: inputs.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
    clock,
    signal: waits?.signal,
  });
  if (result.kind === "ready") return result.pod;
  throw await waitFailed(client, result, inputs, secrets, clock, provider);
}

/** The partial failure of a pod that did not become usable: why, its status history and its log tail. */
async function waitFailed(
  client: RunpodClient,
  failure: WaitFailure,
  inputs: PodInputs,
  secrets: readonly string[],
  clock: Clock | undefined,
  provider: unknown,
): Promise<Error> {
  const { pod, history, why } = failure;
  const tail = await readLogTail(
    (_unused, podId, options) => client.pods.logs(podId, options),
    "",
    pod.id,
    secrets,
    3000,
    clock,
  );
  const log =
    "lines" in tail
      ? tail.lines.length > 0
        ? `Last lines of the pod's log:\n${tail.lines
            .slice(-20)
            .map((l) => `  ${l}`)
            .join("\n")}`
        : "The pod's log is empty."
      : `The pod's log is unavailable: ${tail.unavailable}.`;
  return keptPodError(
    `Pod ${labelOf(inputs.name, pod.id)} is not usable: ${why}. Status history: ${history.join(" -> ")}. ${log}\n` +
      KEPT_HINT,
    pod,
    inputs,
    secrets,
    provider,
  );
}

/** What to do about a pod kept in the stack after a failure. */
const KEPT_HINT =
  "The pod is kept in the stack (it may still cost money while it holds compute): fix the cause and run " +
  "pulumi up again (it checks the pod again), or remove the Pod from the program to terminate it.";

/** Where a pod stands while a create or update works on it: the pod as last read, and the work done. */
export interface PodProgress {
  pod: Pod;
}

/**
 * Runs `steps` on a pod that exists (after the create's POST answered, or the update's first
 * call): any failure that is not already a partial failure becomes one, keeping the pod as last
 * read (`progress.pod`) in the state with its id, whatever failed (a stop or lock refused, a read
 * of the pod answering 500, the network). `done` says what happened to it first: `was created`.
 */
export async function keepingPod<T>(
  progress: PodProgress,
  done: "was created" | "was changed" | "was read again",
  inputs: PodInputs,
  secretsOf: (pod: Pod) => readonly string[],
  provider: unknown,
  steps: () => Promise<T>,
): Promise<T> {
  try {
    return await steps();
  } catch (error) {
    if ((error as { id?: unknown }).id !== undefined) throw error;
    const { pod } = progress;
    throw keptPodError(
      `Pod ${labelOf(inputs.name, pod.id)} ${done}, but a later step failed: ${describeError(error)}\n${KEPT_HINT}`,
      pod,
      inputs,
      secretsOf(pod),
      provider,
    );
  }
}

/**
 * A partial failure keeping `pod` in the state: its id, and as properties the outputs of the pod
 * as last read (`env` whole, `desiredStatus` as its status says) with `__provider` (see the module
 * comment).
 */
function keptPodError(
  message: string,
  pod: Pod,
  inputs: PodInputs,
  secrets: readonly string[],
  provider: unknown,
): Error {
  const properties = outputsOf(pod, inputs, secrets);
  properties.desiredStatus = observedDesired(pod.status, inputs.desiredStatus);
  if (provider !== undefined) properties.__provider = provider;
  return Object.assign(new RunpodError(message), { id: pod.id, properties });
}

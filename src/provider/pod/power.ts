/**
 * Bringing a pod to what the program asks: the stop or start action `desiredStatus` calls for
 * (a locked pod refuses a stop; a stopped pod starts again only where its data center has free
 * compute), then the wait per `waitFor`. A pod that does not become usable is a partial failure:
 * it stays in the state with its id, and the error carries its log tail.
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
import { readLogTail } from "../release/logTail";
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
 * Waits per the inputs, on `clock` (the settings' clock; the real one when absent); a pod that
 * does not become usable is a partial failure with its log tail.
 */
export async function waitOrFail(
  client: RunpodClient,
  pod: Pod,
  inputs: PodInputs,
  secrets: readonly string[],
  clock?: Clock,
): Promise<Pod> {
  const result = await waitForPod({
    client,
    pod,
    wanted: wantedOf(inputs),
    waitFor: inputs.waitFor ?? "running",
    timeoutMs: inputs.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
    clock,
  });
  if (result.kind === "ready") return result.pod;
  throw await waitFailed(client, result, inputs, secrets, clock);
}

/** The partial failure of a pod that did not become usable: why, its status history and its log tail. */
async function waitFailed(
  client: RunpodClient,
  failure: WaitFailure,
  inputs: PodInputs,
  secrets: readonly string[],
  clock?: Clock,
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
  const error = new RunpodError(
    `Pod ${labelOf(inputs.name, pod.id)} is not usable: ${why}. Status history: ${history.join(" -> ")}. ${log}\n` +
      "The pod is kept in the stack (it may still cost money while it holds compute): fix the cause and run " +
      "pulumi up again, or remove the Pod from the program to terminate it.",
  ) as RunpodError & { id?: string; properties?: Record<string, unknown> };
  const { env: _env, ...properties } = outputsOf(pod, inputs, secrets);
  properties.desiredStatus = observedDesired(pod.status, inputs.desiredStatus);
  error.id = pod.id;
  error.properties = properties;
  return error;
}

/**
 * What the Pod host tests share: the emulator (REST v2, pods starting in 50 ms of its clock), a
 * pass-through FaultProxy in front of it, a client for looking at what the service holds, a GPU
 * type in stock, `__provider` serialized from the INSTALLED package, and Pulumi's real provider
 * host configured against the proxy. The host reads a starting pod every {@link POD_POLL_MS} instead
 * of every second (`pollMs`: the emulator's pods start in {@link POD_START_MS}) and its client backs
 * off from 5 ms instead of 0.5 s (`retryBackoffMs`); bounds, deadlines and `Retry-After` keep their time.
 */
import type { RunpodClient } from "../../src/client";
import { type ResourceHostRig, startResourceHostRig } from "./resourceHostKit";

/** How long the emulator's pods take to start, ms of its (real) clock. */
export const POD_START_MS = 50;
/** How often the host reads a pod it waits for, ms (the provider's own: 1 s). */
export const POD_POLL_MS = 20;

export interface PodHostRig extends ResourceHostRig {
  /** The service's GPU types for pods, with their availability. */
  gpus: Awaited<ReturnType<RunpodClient["catalog"]["gpus"]>>;
  /** The id of a GPU type the emulator has in stock (HIGH); "" when none is. */
  stocked: string;
}

/** Starts the emulator accepting `apiKey`, the proxy, and the host configured with `apiKey`. */
export async function startPodHostRig(apiKey: string): Promise<PodHostRig> {
  const rig = await startResourceHostRig({
    apiKey,
    className: "Pod",
    folder: "pod",
    emulator: { podStartMs: POD_START_MS },
    // After a create answered 429 or 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
    host: { pollMs: POD_POLL_MS, retryBackoffMs: 5, createPauseMs: 10 },
  });
  const gpus = await rig.client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
  const stocked = gpus.find((g) => g.availability === "HIGH")?.id ?? "";
  return { ...rig, gpus, stocked };
}

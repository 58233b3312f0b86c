/**
 * What the Pod host tests share: the emulator (REST v2, pods starting in 50 ms of its clock), a
 * pass-through FaultProxy in front of it, a client for looking at what the service holds, a GPU
 * type in stock, `__provider` serialized from the INSTALLED package, and Pulumi's real provider
 * host configured against the proxy. The host reads a starting pod every {@link POD_POLL_MS} instead
 * of every second (`pollMs`: the emulator's pods start in {@link POD_START_MS}) and its client backs
 * off from 5 ms instead of 0.5 s (`retryBackoffMs`); bounds, deadlines and `Retry-After` keep their time.
 */
import { inject } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import { type ProviderHost, startProviderHost } from "../support/providerHost.mts";
import { serializeProviderFrom } from "../support/serializedProvider.mts";

/** How long the emulator's pods take to start, ms of its (real) clock. */
export const POD_START_MS = 50;
/** How often the host reads a pod it waits for, ms (the provider's own: 1 s). */
export const POD_POLL_MS = 20;

export interface PodHostRig {
  emu: RunningEmulator;
  proxy: FaultProxy;
  host: ProviderHost;
  client: RunpodClient;
  /** The service's GPU types for pods, with their availability. */
  gpus: Awaited<ReturnType<RunpodClient["catalog"]["gpus"]>>;
  /** The id of a GPU type the emulator has in stock (HIGH); "" when none is. */
  stocked: string;
  /** The Pod resource's serialized provider, as a program's `__provider` input carries it. */
  __provider: string;
  /** Closes the host, the proxy and the emulator; resolves with the host's stderr. */
  close(): Promise<string>;
}

/** Starts the emulator accepting `apiKey`, the proxy, and the host configured with `apiKey`. */
export async function startPodHostRig(apiKey: string): Promise<PodHostRig> {
  const projectDir = inject("installedProjectDir");
  const emu = await startEmulator({ apiKeys: [apiKey], rateLimits: false, podStartMs: POD_START_MS });
  const proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
  const client = new RunpodClient({ apiKey, restUrl: emu.restUrlV2, maxRetries: 0 });
  const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
  const stocked = gpus.find((g) => g.availability === "HIGH")?.id ?? "";
  const __provider = (
    await serializeProviderFrom(projectDir, "pulumi-runpod-dynamic/dist/provider/pod/resource.js", "Pod")
  ).text;
  const host = await startProviderHost({
    projectDir,
    pollMs: POD_POLL_MS,
    retryBackoffMs: 5,
    // After a create answered 429 or 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
    createPauseMs: 10,
  });
  await host.configure({ "runpod:apiKey": apiKey, "runpod:restUrl": `${proxy.url}/v2` });
  return {
    emu,
    proxy,
    host,
    client,
    gpus,
    stocked,
    __provider,
    close: async () => {
      const stderr = host.stderr();
      await host.close();
      await proxy.close();
      await emu.close();
      return stderr;
    },
  };
}

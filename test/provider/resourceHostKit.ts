/**
 * What a resource's provider-host test file sets up before its tests: the emulator (REST v2), a
 * pass-through FaultProxy in front of it, a client for looking at what the service holds,
 * `__provider` serialized from the INSTALLED package for one resource class, and Pulumi's real
 * provider host configured with the key against the proxy. The Pod kit (`podHostKit.ts`) builds on it.
 */
import { inject } from "vitest";
import { RunpodClient } from "../../src/client";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import { type ProviderHost, startProviderHost } from "../support/providerHost.mts";
import { serializeProviderFrom } from "../support/serializedProvider.mts";

export interface ResourceHostRig {
  emu: RunningEmulator;
  proxy: FaultProxy;
  host: ProviderHost;
  /** A client of the emulator itself (not through the proxy), no retries. */
  client: RunpodClient;
  /** The class's serialized provider, as a program's `__provider` input carries it. */
  __provider: string;
  /** Closes the host, the proxy and the emulator; resolves with the host's stderr. */
  close(): Promise<string>;
}

export interface ResourceHostRigOptions {
  apiKey: string;
  /** The resource class (`Template`) and its folder under `dist/provider/` (`template`). */
  className: string;
  folder: string;
  /** Emulator options besides the key and `rateLimits: false`. */
  emulator?: EmulatorOptions;
  /** Host options besides the project (`env`, `pollMs`, `retryBackoffMs`, `createPauseMs`). */
  host?: Omit<Parameters<typeof startProviderHost>[0], "projectDir">;
}

/** Starts the emulator accepting `apiKey`, the proxy, and the host configured with `apiKey` against the proxy. */
export async function startResourceHostRig(options: ResourceHostRigOptions): Promise<ResourceHostRig> {
  const { apiKey } = options;
  const projectDir = inject("installedProjectDir");
  const emu = await startEmulator({ ...options.emulator, apiKeys: [apiKey], rateLimits: false });
  const proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
  const client = new RunpodClient({ apiKey, restUrl: emu.restUrlV2, maxRetries: 0 });
  const __provider = (
    await serializeProviderFrom(
      projectDir,
      `pulumi-runpod-dynamic/dist/provider/${options.folder}/resource.js`,
      options.className,
    )
  ).text;
  const host = await startProviderHost({ ...options.host, projectDir });
  await host.configure({ "runpod:apiKey": apiKey, "runpod:restUrl": `${proxy.url}/v2` });
  return {
    emu,
    proxy,
    host,
    client,
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

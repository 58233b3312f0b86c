/**
 * What the `Cancel` tests share: a rig configured against its emulator with a client of that
 * emulator, waits for the moment a test cancels in (an object made, a job running, a log line), and
 * the `Cancel` call itself (the engine's first Ctrl-C, `SignalCancellation`, pkg/host/host.go).
 * One rig per test: a cancellation is for the plugin process's life.
 */
import { afterEach, expect, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import type { EmulatorOptions } from "../../src/emulator";
import { Empty, type EngineLog, type PluginRig, secret, startPluginRig } from "./pluginKit";

/** Far longer than a test's own timeout: a wait that is not cancelled fails the test. */
export const HOUR_MS = 3_600_000;
export const ENDPOINT = "runpod-native:index:ServerlessEndpoint";
/** A job the emulator's built-in worker runs for an hour (`sleepMs`), unless it is cancelled. */
export const LONG_JOB = { input: { sleepMs: HOUR_MS }, timeoutMs: HOUR_MS };
/** A smoke test the emulator's built-in worker passes at once (it echoes its input). */
export const QUICK_SMOKE = { input: { ping: 1 }, expect: { output: { ping: 1 } }, timeoutMs: 60_000 };

/** A QUEUE endpoint's arguments on one 24 GB worker at most; `extra` adds or replaces fields. */
export const endpointArgs = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "QUEUE",
  image: "acme/api:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 1 },
  ...extra,
});

/** A TRAINING cluster's arguments: two member pods of one H100 each; `extra` adds or replaces fields. */
export const clusterArgs = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "TRAINING",
  compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
  image: "acme/train:1",
  ...extra,
});

/** A pod's `gpu` argument: a GPU type the service's catalog lists with HIGH availability for pods. */
export async function availableGpu(service: RunpodClient): Promise<{ id: string }> {
  const gpus = await service.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
  return { id: gpus.find((g) => g.availability === "HIGH")?.id ?? "" };
}

/** How a Cancel test's rig starts. */
export interface CancelRigOptions {
  /** The one key the emulator accepts; the plugin is configured with it as a secret. */
  apiKey: string;
  /** More emulator options (`podStartMs`, `rolloutMs`, ...). Rate limits are always off. */
  emulator?: Omit<EmulatorOptions, "apiKeys" | "rateLimits">;
  /** Where the plugin sends management calls (a scripted service, a proxy). @default the emulator's */
  restUrl?: string;
  /** Send `Configure` now; `false` leaves it to {@link CancelRig.configure}. @default true */
  configure?: boolean;
}

/** A started Cancel rig. */
export interface CancelRig {
  rig: PluginRig;
  /** A client of the rig's emulator (no retries, no rate limits): what the service holds. */
  service: RunpodClient;
  /** The `Configure` arguments, as plain JavaScript (the API key secret-wrapped). */
  config: Record<string, unknown>;
  /** Sends {@link config} as the engine does. */
  configure(): Promise<unknown>;
  /** Stops the rig (once; a second call answers the same); fails when the plugin's stderr shows the API key. */
  close(): Promise<{ stderr: string; logs: EngineLog[] }>;
}

/** Starts the emulator, a stub engine and the plugin, configured (unless told not) against the emulator. */
export async function startCancelRig(options: CancelRigOptions): Promise<CancelRig> {
  const { apiKey } = options;
  const rig = await startPluginRig({ ...options.emulator, apiKeys: [apiKey], rateLimits: false });
  const { restUrl, serverlessUrl } = rig.emu;
  const config = { apiKey: secret(apiKey), restUrl: options.restUrl ?? restUrl, serverlessUrl };
  let closed: Promise<{ stderr: string; logs: EngineLog[] }> | undefined;
  const started: CancelRig = {
    rig,
    service: new RunpodClient({ apiKey, restUrl, serverlessUrl, maxRetries: 0, rateLimits: false }),
    config,
    configure: () => rig.configure(config),
    close: () => {
      closed ??= rig.close().then((out) => {
        expect(out.stderr).not.toContain(apiKey);
        return out;
      });
      return closed;
    },
  };
  if (options.configure !== false) await started.configure();
  return started;
}

/**
 * Something a test opens (a proxy, a scripted service, a second plugin), closed after that test of
 * the enclosing `describe`: the returned function keeps its argument and returns it. Hooks run in
 * reverse order of registration (vitest's default), so what is registered later closes first.
 */
export function closedAfterEach<T extends { close(): unknown }>(): (opened: T) => T {
  let current: T | undefined;
  afterEach(async () => {
    const open = current;
    current = undefined;
    await open?.close();
  });
  return (opened) => {
    current = opened;
    return opened;
  };
}

/**
 * A rig per test of the enclosing `describe`, with `apiKey`: `start` starts the test's rig, and it
 * is closed after the test, checked by {@link CancelRig.close}.
 */
export function cancelRigPerTest(apiKey: string) {
  const keep = closedAfterEach<CancelRig>();
  return {
    start: async (options: Omit<CancelRigOptions, "apiKey"> = {}) =>
      keep(await startCancelRig({ ...options, apiKey })),
  };
}

/** Sends `Cancel` as the engine does on the first Ctrl-C. */
export const cancel = (rig: PluginRig) => rig.rpc.call("cancel", new Empty());

/**
 * Polls `probe` every 50 ms until it returns something other than `undefined` or `false`, and
 * resolves with that; fails after 30 s naming `what` was awaited.
 */
export function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>) {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined || value === false) throw new Error(`not yet: ${what}`);
      return value;
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** Resolves with `list`'s answer once it holds at least one object (e.g. the Create's POST landed). */
export const untilExists = <T>(list: () => Promise<T[]>) =>
  until("an object at the service", async () => {
    const items = await list();
    return items.length > 0 && items;
  });

/** Resolves once the plugin has written `text` to its stderr (a wait it logs is under way). */
export const untilLogged = (rig: PluginRig, text: string) =>
  until(`"${text}" in the plugin's log`, () => rig.plugin.stderr().includes(text));

/** Resolves with endpoint `id` once it has a job in progress at the service (a job wait is under way). */
export const untilJobInProgress = (service: RunpodClient, id: () => Promise<string | undefined>) =>
  until("a job in progress", async () => {
    const endpointId = await id();
    if (endpointId === undefined) return undefined;
    return (await service.endpoint(endpointId).health()).jobs.inProgress === 1 && endpointId;
  });

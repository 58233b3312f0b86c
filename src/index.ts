/**
 * pulumi-runpod-dynamic: a typed RunPod API client, Pulumi dynamic providers built on it, and a
 * local emulator of the service.
 *
 * The root exports the public, stable surface. Internals (the transport, retry policy, rate
 * limiter, validation helpers) stay reachable under `pulumi-runpod-dynamic/dist/...` for tests
 * and tools, without a stability promise.
 */
import type { EmulatorOptions, RunningEmulator } from "./emulator";

export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_REST_URL,
  DEFAULT_SERVERLESS_URL,
  DEFAULT_TIMEOUT_MS,
  Endpoint,
  type RequestOptions,
  type RestDialect,
  RunpodClient,
  type RunpodClientOptions,
  type RunpodLogger,
  ServerlessEndpoints,
  type StatusOptions,
  type StreamOptions,
  type SyncOptions,
  Templates,
  type WaitForJobOptions,
  type WorkerLogsOptions,
} from "./client";
export * from "./client/errors";
export * from "./client/limits";
export * from "./client/schemas";
export type { EmulatorOptions, RunningEmulator } from "./emulator";
export {
  type EndpointHealth,
  type GetEndpointHealthArgs,
  getEndpointHealth,
  getEndpointHealthOutput,
} from "./provider/endpointHealth";
export { JobRun, type JobRunArgs, type JobRunTimelineEntry } from "./provider/jobRun";
export {
  type GetNetworkVolumeArgs,
  type GetNetworkVolumeResult,
  type GetNetworkVolumesArgs,
  getNetworkVolume,
  getNetworkVolumeOutput,
  getNetworkVolumes,
  getNetworkVolumesOutput,
  type LookupOptions,
} from "./provider/networkVolumes";
export { ContainerRegistryAuth, type ContainerRegistryAuthArgs } from "./provider/registryAuth";
export * from "./wire/serverless";

/**
 * Starts the local emulator of the service in this process (see `runpod-emulator --help` for
 * what each option does). Loaded on first call, so Pulumi programs that import this package do
 * not load the emulator's HTTP server.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator: typeof import("./emulator") = require("./emulator");
  return emulator.startEmulator(options);
}

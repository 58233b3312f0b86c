/**
 * pulumi-runpod-dynamic: a typed RunPod API client, Pulumi dynamic providers built on it, and a
 * local emulator of the service.
 */
export * from "./client";
export { type EmulatorOptions, type RunningEmulator, startEmulator } from "./emulator";
export {
  type GetEndpointHealthArgs,
  getEndpointHealth,
  getEndpointHealthOutput,
} from "./provider/endpointHealth";
export { JobRun, type JobRunArgs } from "./provider/jobRun";
export {
  type GetNetworkVolumeArgs,
  type GetNetworkVolumeResult,
  type GetNetworkVolumesArgs,
  type LookupOptions,
  getNetworkVolume,
  getNetworkVolumeOutput,
  getNetworkVolumes,
  getNetworkVolumesOutput,
} from "./provider/networkVolumes";
export { ContainerRegistryAuth, type ContainerRegistryAuthArgs } from "./provider/registryAuth";

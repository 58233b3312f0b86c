/**
 * pulumi-runpod-dynamic: a typed RunPod API client, Pulumi dynamic providers built on it, and a
 * local emulator of the service.
 *
 * The root exports the public, stable surface. Internals (the transport, retry policy, rate
 * limiter, validation helpers) stay reachable under `pulumi-runpod-dynamic/dist/...` for tests
 * and tools, without a stability promise.
 *
 * What loading the root costs: every `pulumi preview` and `up` runs the program, so the root
 * loads only what a resource declaration needs (the resource classes, the lookups' entry points,
 * the error classes and the service's limits). The client (`RunpodClient`, `Endpoint`, the
 * `DEFAULT_*` settings) and the zod wire schemas load on first use, through getters defined at
 * the end of this file: a program that only declares resources never loads zod or undici. The
 * names are declared with `export let` so that TypeScript types them and Node's CommonJS export
 * detection (`import { RunpodClient } from "pulumi-runpod-dynamic"` from an ES module) sees them.
 */
import type * as ClientModule from "./client/client";
import type * as EndpointModule from "./client/endpoint";
import type * as Schemas from "./client/schemas";
import type { EmulatorOptions, RunningEmulator } from "./emulator";

requireSupportedNode();

export type { Billing } from "./client/billing";
export type { Catalog } from "./client/catalog";
export type { RunpodClientOptions } from "./client/client";
export type { Clusters } from "./client/clusters";
export type { EcrDelegations, Registries } from "./client/ecrDelegations";
export type { StatusOptions, StreamOptions, SyncOptions, WaitForJobOptions } from "./client/endpoint";
export * from "./client/errors";
export * from "./client/limits";
export type {
  LoadBalancer,
  LoadBalancerMethod,
  LoadBalancerRequest,
  LoadBalancerRequestOptions,
  LoadBalancerResponse,
} from "./client/loadBalancer";
export type { RestDialect } from "./client/management";
export type * from "./client/schemas";
export type { ServerlessEndpoints } from "./client/serverless";
export type { Templates } from "./client/templates";
export type { RequestOptions, RunpodLogger } from "./client/transport";
export type { WorkerLogsOptions } from "./client/workerLogs";
export type { EmulatorOptions, RunningEmulator } from "./emulator";
export {
  type BillingBucket,
  type GetBillingArgs,
  type GetBillingOptions,
  type GetBillingResult,
  getBilling,
  getBillingOutput,
} from "./provider/billing/lookup";
export {
  type CatalogLookupOptions,
  type GetCpuTypesArgs,
  type GetDataCentersArgs,
  type GetGpuTypesArgs,
  getCpuTypes,
  getCpuTypesOutput,
  getDataCenters,
  getDataCentersOutput,
  getGpuTypes,
  getGpuTypesOutput,
} from "./provider/catalog/lookups";
export {
  type GetClusterArgs,
  type GetClusterOptions,
  type GetClusterResult,
  getCluster,
  getClusterOutput,
} from "./provider/cluster/lookup";
export {
  Cluster,
  type ClusterArgs,
  type ClusterMember,
  type ClusterNetwork,
  type ClusterPods,
  type ClusterPrimary,
} from "./provider/cluster/resource";
export {
  ContainerRegistryAuth,
  type ContainerRegistryAuthArgs,
} from "./provider/containerRegistryAuth/resource";
export type { HourlyCost } from "./provider/cost/prices";
export {
  type GetEcrDelegationsOptions,
  type GetEcrDelegationsResultDelegation,
  getEcrDelegations,
  getEcrDelegationsOutput,
} from "./provider/ecrDelegation/lookup";
export { EcrDelegation, type EcrDelegationArgs } from "./provider/ecrDelegation/resource";
export {
  type EndpointHealth,
  type GetEndpointHealthArgs,
  getEndpointHealth,
  getEndpointHealthOutput,
} from "./provider/endpointHealth";
export { JobRun, type JobRunArgs, type JobRunTimelineEntry } from "./provider/jobRun/resource";
export {
  type GetNetworkVolumeArgs,
  type GetNetworkVolumeResult,
  type GetNetworkVolumesArgs,
  getNetworkVolume,
  getNetworkVolumeOutput,
  getNetworkVolumes,
  getNetworkVolumesOutput,
  type LookupOptions,
} from "./provider/networkVolume/lookups";
export { NetworkVolume, type NetworkVolumeArgs } from "./provider/networkVolume/resource";
export {
  type GetPodArgs,
  type GetPodOptions,
  type GetPodResult,
  getPod,
  getPodOutput,
} from "./provider/pod/lookup";
export {
  Pod,
  type PodArgs,
  type PodCpu,
  type PodGlobalNetworking,
  type PodGpu,
  type PodMounts,
  type PodRuntime,
  type PodRuntimePort,
  type PodSsh,
  type PodSshEndpoint,
  type PodWaitFor,
} from "./provider/pod/resource";
export {
  type GetServerlessEndpointArgs,
  type GetServerlessEndpointOptions,
  type GetServerlessEndpointResult,
  getServerlessEndpoint,
  getServerlessEndpointOutput,
} from "./provider/serverlessEndpoint/lookup";
export {
  ServerlessEndpoint,
  type ServerlessEndpointArgs,
  type SmokeTestArgs,
} from "./provider/serverlessEndpoint/resource";
export {
  type GetSshKeysOptions,
  type GetSshKeysResultKey,
  getSshKeys,
  getSshKeysOutput,
} from "./provider/sshKey/lookup";
export { SshKey, type SshKeyArgs } from "./provider/sshKey/resource";
export { Template, type TemplateArgs, type TemplatePersistentMount } from "./provider/template/resource";
export type * from "./wire/billing";
export type * from "./wire/catalog";
export type {
  ClusterComputeInput,
  ClusterCreateInput,
  ClusterType,
  ClusterUpdateInput,
  PodClusterRole,
} from "./wire/clusters";
export type * from "./wire/containerConfig";
export type * from "./wire/ecrDelegations";
export type { BAD_REQUEST_RULE, isBadRequestRule } from "./wire/fields";
export type * from "./wire/serverless";
export type * from "./wire/templates";
export type * from "./wire/workerLogs";

/**
 * Starts the local emulator of the service in this process (see `runpod-emulator --help` for
 * what each option does). Loaded on first call, so Pulumi programs that import this package do
 * not load the emulator's HTTP server. The emulator needs `fastify` (an optional peer
 * dependency: `npm install fastify`).
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator: typeof import("./emulator") = require("./emulator");
  return emulator.startEmulator(options);
}

/**
 * Throws a clear error on a Node older than `engines.node` in package.json (the one place the
 * minimum is written), before a dependency fails to load with an obscure `TypeError`.
 */
function requireSupportedNode(): void {
  const engines: string = require("../package.json").engines.node;
  const wanted = /(\d+)\.(\d+)/.exec(engines);
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (!wanted) return;
  const [needMajor, needMinor] = [Number(wanted[1]), Number(wanted[2])];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return;
  throw new Error(
    `pulumi-runpod-dynamic needs Node ${needMajor}.${needMinor} or newer (package.json engines: "${engines}"), ` +
      `but this is Node ${process.versions.node}. Install Node 22 (22.19+) or 24, or run your program ` +
      "with it (for Pulumi: put that Node first on PATH); npm's EBADENGINE warning at install said the same.",
  );
}

// --- Loaded on first use (see the file comment) ---------------------------------------------
// Each value is declared here for TypeScript and for CommonJS export detection, then replaced by
// a getter below. Classes also need their instance type under the same name.

/* biome-ignore-start lint/style/useConst: assigned by the getters below, never here */
export let RunpodClient: typeof ClientModule.RunpodClient;
export type RunpodClient = ClientModule.RunpodClient;
export let Endpoint: typeof EndpointModule.Endpoint;
export type Endpoint = EndpointModule.Endpoint;
export let DEFAULT_MAX_RETRIES: typeof ClientModule.DEFAULT_MAX_RETRIES;
export let DEFAULT_REST_URL: typeof ClientModule.DEFAULT_REST_URL;
export let DEFAULT_SERVERLESS_URL: typeof ClientModule.DEFAULT_SERVERLESS_URL;
export let DEFAULT_TIMEOUT_MS: typeof ClientModule.DEFAULT_TIMEOUT_MS;
export let JobPolicySchema: typeof Schemas.JobPolicySchema;
export let S3ConfigSchema: typeof Schemas.S3ConfigSchema;
export let JobRequestSchema: typeof Schemas.JobRequestSchema;
export let SyncWaitSchema: typeof Schemas.SyncWaitSchema;
export let StatusTtlSchema: typeof Schemas.StatusTtlSchema;
export let TERMINAL_JOB_STATUSES: typeof Schemas.TERMINAL_JOB_STATUSES;
export let JOB_STATUSES: typeof Schemas.JOB_STATUSES;
export let JobStatusValueSchema: typeof Schemas.JobStatusValueSchema;
export let isTerminalStatus: typeof Schemas.isTerminalStatus;
export let JobSchema: typeof Schemas.JobSchema;
export let StreamChunkSchema: typeof Schemas.StreamChunkSchema;
export let StreamResponseSchema: typeof Schemas.StreamResponseSchema;
export let HealthSchema: typeof Schemas.HealthSchema;
export let PurgeQueueResultSchema: typeof Schemas.PurgeQueueResultSchema;
export let ContainerRegistryAuthCreateInputSchema: typeof Schemas.ContainerRegistryAuthCreateInputSchema;
export let ContainerRegistryAuthSchema: typeof Schemas.ContainerRegistryAuthSchema;
export let ContainerRegistryAuthListSchema: typeof Schemas.ContainerRegistryAuthListSchema;
export let NetworkVolumeSchema: typeof Schemas.NetworkVolumeSchema;
export let NetworkVolumeListSchema: typeof Schemas.NetworkVolumeListSchema;
export let V1_VOLUME_SIZE: typeof Schemas.V1_VOLUME_SIZE;
export let V2_VOLUME_SIZE: typeof Schemas.V2_VOLUME_SIZE;
export let NetworkVolumeCreateInputSchema: typeof Schemas.NetworkVolumeCreateInputSchema;
export let NetworkVolumeUpdateInputSchema: typeof Schemas.NetworkVolumeUpdateInputSchema;
export let V1ErrorBodySchema: typeof Schemas.V1ErrorBodySchema;
export let V2RegistryListSchema: typeof Schemas.V2RegistryListSchema;
export let V2NetworkVolumeSchema: typeof Schemas.V2NetworkVolumeSchema;
export let V2NetworkVolumeListSchema: typeof Schemas.V2NetworkVolumeListSchema;
export let V2NetworkVolumeCreateInputSchema: typeof Schemas.V2NetworkVolumeCreateInputSchema;
export let V2NetworkVolumeCreateRequestSchema: typeof Schemas.V2NetworkVolumeCreateRequestSchema;
export let V2NetworkVolumeUpdateInputSchema: typeof Schemas.V2NetworkVolumeUpdateInputSchema;
export let V2ProblemSchema: typeof Schemas.V2ProblemSchema;
/* biome-ignore-end lint/style/useConst: assigned by the getters below, never here */

/**
 * Where the lazily loaded modules are: next to this file once built; when the sources run
 * directly (tests), `require` cannot load `.ts` files written with `import` statements, so the
 * built copy is loaded by the package's own name, as the providers do.
 */
const dir = __filename.endsWith(".ts") ? "pulumi-runpod-dynamic/dist" : ".";

/**
 * Replaces each of `names` by a getter on the module's exports that calls `load` on first read.
 * The names are checked against the loaded module's type, and `test/package/root.test.ts` checks
 * that every runtime export of the client's public modules is reachable from the root.
 */
function lazy<M>(load: () => M, names: ReadonlyArray<keyof M & string>): void {
  for (const name of names) {
    Object.defineProperty(module.exports, name, {
      enumerable: true,
      configurable: true,
      get: () => load()[name],
    });
  }
}

lazy(
  (): typeof ClientModule => require(`${dir}/client/client.js`),
  ["RunpodClient", "DEFAULT_MAX_RETRIES", "DEFAULT_REST_URL", "DEFAULT_SERVERLESS_URL", "DEFAULT_TIMEOUT_MS"],
);
lazy((): typeof EndpointModule => require(`${dir}/client/endpoint.js`), ["Endpoint"]);
lazy(
  (): typeof Schemas => require(`${dir}/client/schemas.js`),
  [
    "JobPolicySchema",
    "S3ConfigSchema",
    "JobRequestSchema",
    "SyncWaitSchema",
    "StatusTtlSchema",
    "TERMINAL_JOB_STATUSES",
    "JOB_STATUSES",
    "JobStatusValueSchema",
    "isTerminalStatus",
    "JobSchema",
    "StreamChunkSchema",
    "StreamResponseSchema",
    "HealthSchema",
    "PurgeQueueResultSchema",
    "ContainerRegistryAuthCreateInputSchema",
    "ContainerRegistryAuthSchema",
    "ContainerRegistryAuthListSchema",
    "NetworkVolumeSchema",
    "NetworkVolumeListSchema",
    "V1_VOLUME_SIZE",
    "V2_VOLUME_SIZE",
    "NetworkVolumeCreateInputSchema",
    "NetworkVolumeUpdateInputSchema",
    "V1ErrorBodySchema",
    "V2RegistryListSchema",
    "V2NetworkVolumeSchema",
    "V2NetworkVolumeListSchema",
    "V2NetworkVolumeCreateInputSchema",
    "V2NetworkVolumeCreateRequestSchema",
    "V2NetworkVolumeUpdateInputSchema",
    "V2ProblemSchema",
  ],
);

/**
 * `Pod`: a RunPod pod (REST v2 `/v2/pods`) as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module
 * path: serialized into each resource's state (`__provider`), it loads that module in Pulumi's
 * dynamic-provider host and captures nothing else.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import type { HourlyCost } from "../cost/prices";
import { RESOURCES } from "../resources";
import type { PodArgs } from "./args.generated";

export type { PodArgs };

/** A GPU pod's compute (`CreateGpuConfig`). */
export interface PodGpu {
  /** GPU type id (`getGpuTypes`), e.g. `NVIDIA GeForce RTX 4090`, tried first. */
  id: string;
  /** GPUs. @default 1 */
  count?: number;
  /** Acceptable CUDA versions (`major.minor`); not with `minCudaVersion`. */
  allowedCudaVersions?: string[];
  /** Lowest acceptable CUDA version (`major.minor`); not with `allowedCudaVersions`. */
  minCudaVersion?: string;
}

/** A CPU pod's compute (`CreateCpuConfig`). */
export interface PodCpu {
  /** CPU flavour id (`getCpuTypes`). */
  id: string;
  /** vCPUs: a power of two, at least 2. */
  vcpuCount: number;
}

/** Storage: a persistent disk (GPU pods only) or one network volume, never both. */
export interface PodMounts {
  /** Host-local persistent disk: `size` in GB (at least 10) at `path`. */
  persistent?: { size: number; path: string };
  /** One network volume (`NetworkVolume`'s id) at `path`; the pod lands in its data center. */
  network?: { volumeId: string; path: string }[];
}

/** One way in over SSH (`PodSshEndpoint`). */
export interface PodSshEndpoint {
  /** Host name or IP address. */
  host: string;
  /** TCP port. @integer */
  port: number;
  /** User to log in as. */
  username: string;
  /** The whole command, e.g. `ssh root@1.2.3.4 -p 22000 -i ~/.ssh/id_ed25519`, when the service gives one. */
  command?: string;
}

/** A pod's SSH endpoints: through RunPod's proxy, and direct to its public IP (null when it has none). */
export interface PodSsh {
  /** Through RunPod's SSH proxy. */
  proxy?: PodSshEndpoint | null;
  /** Straight to the pod's public IP and mapped port 22. */
  direct?: PodSshEndpoint | null;
}

/** A running pod's live port mappings and uptime (`runtime`). */
export interface PodRuntime {
  /** Seconds since it started. @integer */
  uptime?: number;
  /** Each exposed port: `private` inside the pod, `public` on `ip`, `type` `http` or `tcp`. */
  ports?: PodRuntimePort[];
}

/** An exposed port of a running pod. */
export interface PodRuntimePort {
  /** The port inside the pod. @integer */
  private?: number;
  /** The port on `ip`. @integer */
  public?: number | null;
  /** `http` or `tcp`. */
  type?: string;
  /** The address it is reachable on. */
  ip?: string | null;
}

/** A pod's global networking, as the service reports it. */
export interface PodGlobalNetworking {
  /** True when the pod has global networking. */
  enabled: boolean;
}

/** What `up` waits for: `"none"`, `"running"`, `"ssh"` or an HTTP port answering. */
export type PodWaitFor =
  | "none"
  | "running"
  | "ssh"
  | {
      /** A port exposed as `<port>/http` in `ports`. */
      port: number;
      /** Path requested. @default "/" */
      path?: string;
      /** Status that counts as ready. @default 200 */
      expectStatus?: number;
    };

/**
 * A RunPod pod (`pulumi-nodejs:dynamic/runpod:Pod`), REST v2 only. It lands on the first GPU
 * type with capacity (`gpu.id`, then `fallbackGpuIds`), and `up` returns when it is usable
 * (`waitFor`). A pod that goes to ERROR, stops, or is not usable within `waitTimeoutMs` fails the
 * step but stays in the stack, with its status history and the last lines of its log in the
 * message. `desiredStatus: "EXITED"` stops it (billing stops; the disk is kept). A lost create
 * answer never leaves a second pod billing (it lists to reconcile).
 *
 * `Pod.get(name, id)` reads an existing pod into the program by its id, without managing it.
 */
export class Pod extends ServiceObjectResource<PodArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<PodArgs>({
    row: RESOURCES.Pod,
    // biome-ignore format: the names read best in groups: container, compute and placement, access, waits
    inputs: [
      "name", "image", "args", "disk", "env", "ports", "registry",
      "gpu", "cpu", "cloud", "dataCenterIds", "mounts", "globalNetworking", "locked",
      "startSsh", "startJupyter", "templateId",
      "fallbackGpuIds", "desiredStatus", "waitFor", "waitTimeoutMs", "maxHourlyUsd",
    ],
    urn: true,
    // biome-ignore format: as above
    outputs: [
      "hourlyCost", "status", "requestedGpu", "dataCenterId", "cudaVersion", "ssh", "cost", "runtime",
    ],
  });

  /** Name, as the service stores it. */
  declare readonly name: pulumi.Output<string>;
  /** `PROVISIONING`, `STARTING`, `RUNNING`, `EXITED`, `ERROR` or `TERMINATED`. */
  declare readonly status: pulumi.Output<string>;
  /** `RUNNING` or `EXITED`: as asked, or as found by a refresh (stopped outside: `EXITED`). */
  declare readonly desiredStatus: pulumi.Output<"RUNNING" | "EXITED">;
  /** The GPU type the pod landed on and its count (GPU pods). */
  declare readonly gpu: pulumi.Output<{ id: string; count?: number } | undefined>;
  /** The GPU asked for (`gpu` argument). */
  declare readonly requestedGpu: pulumi.Output<PodGpu | undefined>;
  /** CPU flavour, vCPUs and memory (CPU pods). */
  declare readonly cpu: pulumi.Output<{ id: string; vcpuCount?: number; memory?: number } | undefined>;
  /** Data center the pod runs in. */
  declare readonly dataCenterId: pulumi.Output<string | null>;
  /** CUDA version of its host. */
  declare readonly cudaVersion: pulumi.Output<string | null>;
  /** SSH endpoints (`proxy`, `direct`) while it runs with `startSsh`. */
  declare readonly ssh: pulumi.Output<PodSsh | undefined>;
  /** USD per hour now, as the service reports it (0 when stopped). */
  declare readonly cost: pulumi.Output<number>;
  /** Image, as the service stores it. */
  declare readonly image: pulumi.Output<string>;
  /** Exposed ports. */
  declare readonly ports: pulumi.Output<string[]>;
  /** Live port mappings and uptime. */
  declare readonly runtime: pulumi.Output<PodRuntime | null | undefined>;
  /** Environment variables, always secret (with `PUBLIC_KEY`, `JUPYTER_PASSWORD` when injected). */
  declare readonly env: pulumi.Output<Record<string, string>>;
  /** Cloud tier. */
  declare readonly cloud: pulumi.Output<string>;
  /**
   * Global networking, as the service reports it (`enabled`); the argument is a boolean.
   * @outputShape
   */
  declare readonly globalNetworking: pulumi.Output<PodGlobalNetworking | undefined>;
  /** Storage. */
  declare readonly mounts: pulumi.Output<PodMounts>;
  /** Locked against stop and terminate. */
  declare readonly locked: pulumi.Output<boolean>;
  /**
   * What the pod may cost an hour, in US dollars at the catalog's list prices (without negotiated
   * discounts): one machine, so `floorUsd` is the cheapest GPU type it may land on (`gpu.id`,
   * `fallbackGpuIds`) and `ceilingUsd` (and `ratePerWorkerUsd`) the dearest, at the pod price of
   * its `cloud` × GPUs (a CPU pod: vCPU price × vCPUs); `floorUsd` is 0 while `desiredStatus` is
   * `EXITED`. A price the catalog does not give: figures null and a `note`, never 0.
   */
  declare readonly hourlyCost: pulumi.Output<HourlyCost | undefined>;
  /** The pod's budget as given, in US dollars an hour (see the argument). */
  declare readonly maxHourlyUsd: pulumi.Output<number | undefined>;
}

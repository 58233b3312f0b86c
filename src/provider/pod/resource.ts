/**
 * `Pod`: a RunPod pod (REST v2 `/v2/pods`) as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module
 * path: serialized into each resource's state (`__provider`), it loads that module in Pulumi's
 * dynamic-provider host and captures nothing else.
 */
import * as pulumi from "@pulumi/pulumi";
import { providerFor, type RunpodProvider } from "../common/dynamicProvider";

/**
 * Module the serialized provider loads in the provider host (resolved from the program's
 * node_modules). Stored in every `__provider` text: see the compatibility contract in `operations.ts`.
 */
const OPERATIONS_MODULE = "pulumi-runpod-dynamic/dist/provider/pod/operations.js";

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
 * Arguments of a {@link Pod}: the fields of the REST v2 document's `CreatePodRequest` under its
 * names, plus `fallbackGpuIds`, `desiredStatus`, `waitFor` and `waitTimeoutMs`. What the program
 * omits, the service decides (an omitted field keeps the pod's value on an update).
 */
export interface PodArgs {
  /** Name of the pod. Changes in place. */
  name: pulumi.Input<string>;
  /** Docker image reference (required unless `templateId`). Changes in place (restarts the container). */
  image?: pulumi.Input<string>;
  /** Arguments passed to the container entrypoint. Changes in place. */
  args?: pulumi.Input<string>;
  /** Container disk in GB. Changes in place. */
  disk?: pulumi.Input<number>;
  /**
   * Environment variables. Stored as ONE secret (with what the service adds: `PUBLIC_KEY`, a
   * generated `JUPYTER_PASSWORD`); no value appears in any other output, error or log. Changes in
   * place, always sent whole.
   */
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Exposed ports as `<port>/http` or `<port>/tcp`. Changes in place. */
  ports?: pulumi.Input<pulumi.Input<string>[]>;
  /** Container registry credential id (a `ContainerRegistryAuth`'s id) for a private image. Changes in place. */
  registry?: pulumi.Input<string>;
  /** A GPU pod: exactly one of `gpu` or `cpu`. The type (unless it is the one the pod landed on) and the count replace the pod. */
  gpu?: pulumi.Input<PodGpu>;
  /** A CPU pod: exactly one of `gpu` or `cpu`. Any change replaces the pod. */
  cpu?: pulumi.Input<PodCpu>;
  /** `SECURE` or `COMMUNITY`. Replaces the pod. @default "SECURE" */
  cloud?: pulumi.Input<"SECURE" | "COMMUNITY">;
  /** Preferred data centers (empty: the scheduler chooses). Replaces the pod only when it is no longer in one of them. */
  dataCenterIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** Storage. The kind (and a network volume) replaces the pod; a persistent disk's size and path change in place. */
  mounts?: pulumi.Input<PodMounts>;
  /** Global networking. Changes in place. @default false */
  globalNetworking?: pulumi.Input<boolean>;
  /** Refuse stop and terminate while true (set it false before deleting). Changes in place. */
  locked?: pulumi.Input<boolean>;
  /** Inject the account's SSH keys as `PUBLIC_KEY`. Create-only: replaces the pod. @default false */
  startSsh?: pulumi.Input<boolean>;
  /** Start JupyterLab with a generated `JUPYTER_PASSWORD` (secret). Create-only: replaces the pod. @default false */
  startJupyter?: pulumi.Input<boolean>;
  /** A pod template's id whose settings the body overrides. Replaces the pod. */
  templateId?: pulumi.Input<string>;
  /**
   * GPU type ids tried in order after `gpu.id` when the service has no capacity for it (or no
   * access). A change makes no service call.
   */
  fallbackGpuIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** `RUNNING` or `EXITED` (stopped, disk kept). A change is a stop or start, not a replace. @default "RUNNING" */
  desiredStatus?: pulumi.Input<"RUNNING" | "EXITED">;
  /** What create, update and start wait for before returning. @default "running" */
  waitFor?: pulumi.Input<PodWaitFor>;
  /** Bound of that wait, in ms; past it the step fails and the pod stays in the stack. @default 600000 */
  waitTimeoutMs?: pulumi.Input<number>;
}

/**
 * A RunPod pod (`pulumi-nodejs:dynamic/runpod:Pod`), REST v2 only. It lands on the first GPU
 * type with capacity (`gpu.id`, then `fallbackGpuIds`), and `up` returns when it is usable
 * (`waitFor`). A pod that goes to ERROR, stops, or is not usable within `waitTimeoutMs` fails the
 * step but stays in the stack, with its status history and the last lines of its log in the
 * message. `desiredStatus: "EXITED"` stops it (billing stops; the disk is kept). A lost create
 * answer never leaves a second pod billing (it lists to reconcile).
 */
export class Pod extends pulumi.dynamic.Resource {
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
  declare readonly ssh: pulumi.Output<Record<string, unknown>>;
  /** USD per hour now, as the service reports it (0 when stopped). */
  declare readonly cost: pulumi.Output<number>;
  /** Image, as the service stores it. */
  declare readonly image: pulumi.Output<string>;
  /** Exposed ports. */
  declare readonly ports: pulumi.Output<string[]>;
  /** Live port mappings and uptime. */
  declare readonly runtime: pulumi.Output<Record<string, unknown> | null>;
  /** Environment variables, always secret (with `PUBLIC_KEY`, `JUPYTER_PASSWORD` when injected). */
  declare readonly env: pulumi.Output<Record<string, string>>;
  /** Cloud tier. */
  declare readonly cloud: pulumi.Output<string>;
  /** Storage. */
  declare readonly mounts: pulumi.Output<PodMounts>;
  /** Locked against stop and terminate. */
  declare readonly locked: pulumi.Output<boolean>;

  constructor(name: string, args: PodArgs, opts?: pulumi.CustomResourceOptions) {
    const props = {
      name: args.name,
      image: args.image,
      args: args.args,
      disk: args.disk,
      env: args.env === undefined ? undefined : pulumi.secret(args.env),
      ports: args.ports,
      registry: args.registry,
      gpu: args.gpu,
      cpu: args.cpu,
      cloud: args.cloud,
      dataCenterIds: args.dataCenterIds,
      mounts: args.mounts,
      globalNetworking: args.globalNetworking,
      locked: args.locked,
      startSsh: args.startSsh,
      startJupyter: args.startJupyter,
      templateId: args.templateId,
      fallbackGpuIds: args.fallbackGpuIds,
      desiredStatus: args.desiredStatus,
      waitFor: args.waitFor,
      waitTimeoutMs: args.waitTimeoutMs,
      status: undefined,
      requestedGpu: undefined,
      dataCenterId: undefined,
      cudaVersion: undefined,
      ssh: undefined,
      cost: undefined,
      runtime: undefined,
    };
    super(
      providerFor(OPERATIONS_MODULE),
      name,
      props,
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["env"] }),
      "runpod",
      "Pod",
    );
  }

  /** The provider object every instance shares (exposed for tests and benchmarks). */
  static get provider(): RunpodProvider {
    return providerFor(OPERATIONS_MODULE);
  }

  /** Reads an existing pod into the program by id, without managing it. */
  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): Pod {
    return new Pod(name, { name: undefined } as unknown as PodArgs, { ...opts, id });
  }
}

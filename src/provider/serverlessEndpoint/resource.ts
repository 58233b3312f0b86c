/**
 * `ServerlessEndpoint`: a RunPod serverless endpoint (REST v2) as a Pulumi dynamic resource, whose
 * create and update return once the endpoint's workers run what the program says.
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
import { secretWhenHeaders } from "../smokeTestJob/jobInputs";
import type { ServerlessEndpointArgs } from "./args.generated";
import type { SmokeTestRecord } from "./smokeTest";

export type { ServerlessEndpointArgs };

/**
 * A `ServerlessEndpoint`'s smoke test: the job arguments of a {@link JobRun} (without
 * `endpointId`, `triggers`, `rollout`, `collectStream`, `s3Config` and `redact`), plus how many jobs, how
 * many may fail, and what a failure does. The object form of the `smokeTest` argument.
 */
export type SmokeTestArgs = Exclude<
  NonNullable<ServerlessEndpointArgs["smokeTest"]>,
  Promise<unknown> | pulumi.OutputInstance<unknown>
>;

/**
 * A RunPod serverless endpoint (`pulumi-nodejs:dynamic/runpod:ServerlessEndpoint`), REST v2 only.
 *
 * Its id is the service's endpoint id. A change of the container (`image`, `env`, ...) makes a
 * release; with `rollout: "wait"` (the default) the update returns once every worker runs it, so
 * a smoke test that follows tests that release:
 *
 * ```ts
 * const ep = new ServerlessEndpoint("api", { name: "api", type: "QUEUE", image: "ghcr.io/acme/api:1.4.2",
 *   gpu: { pools: ["ADA_24"] }, scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, workers: { max: 2 } });
 * new JobRun("smoke", { endpointId: ep.id, input: { prompt: "ping" }, triggers: [ep.version] });
 * ```
 *
 * `type` and the compute family (`gpu` or `cpu`) replace the endpoint; everything else updates it
 * in place. Deleting it also deletes the template bound to it (the service's rule). Needs
 * `runpod:apiKey` (or `RUNPOD_API_KEY`); a REST v1 `runpod:restUrl` fails the preview.
 *
 * `ServerlessEndpoint.get(name, id)` reads an existing endpoint by its id, without managing it:
 * every output is read from the service; an id the account does not have fails with a clear error.
 */
export class ServerlessEndpoint extends ServiceObjectResource<ServerlessEndpointArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<ServerlessEndpointArgs>({
    row: RESOURCES.ServerlessEndpoint,
    // biome-ignore format: one line a group (container, compute, scaling, release, budget), not one a name
    inputs: [
      "name", "type", "scaling", "gpu", "cpu", "templateId",
      "image", "args", "disk", "env", "ports", "registry",
      "dataCenterIds", "flashboot", "networkVolumes", "timeout", "workers",
      "rollout", "rolloutTimeoutMs", "smokeTest", "maxHourlyUsd",
    ],
    urn: true,
    outputs: ["lastSmokeTest", "hourlyCost", "createdAt", "version", "latestReleaseId", "requestUrls"],
  });

  /** Name, as the service stores it (refresh shows a rename made elsewhere). */
  declare readonly name: pulumi.Output<string>;
  /** `QUEUE` or `LOAD_BALANCER`. */
  declare readonly type: pulumi.Output<string>;
  /**
   * Autoscaling signal as the service holds it: `QUEUE_DELAY` with `queueDelay` (s) or
   * `REQUEST_COUNT` with `requestCount`.
   */
  declare readonly scaling: pulumi.Output<{ type: string; queueDelay?: number; requestCount?: number }>;
  /** GPU workers' pools, excluded types, GPUs per worker and CUDA constraint (GPU endpoints). */
  declare readonly gpu: pulumi.Output<
    | {
        pools: string[];
        excludedTypes?: string[];
        count?: number;
        allowedCudaVersions?: string[];
        minCudaVersion?: string | null;
      }
    | undefined
  >;
  /** CPU workers' eligible configurations, with the memory the service gives each (CPU endpoints). */
  declare readonly cpu: pulumi.Output<{ id: string; vcpuCount: number; memory?: number }[] | undefined>;
  /** The template the endpoint took its container settings from, if any. */
  declare readonly templateId: pulumi.Output<string | undefined>;
  /** Docker image reference the endpoint runs. */
  declare readonly image: pulumi.Output<string | undefined>;
  /** Arguments passed to the container's entrypoint. */
  declare readonly args: pulumi.Output<string | undefined>;
  /** Container disk in GB. */
  declare readonly disk: pulumi.Output<number | undefined>;
  /** The environment, always secret. */
  declare readonly env: pulumi.Output<Record<string, string> | undefined>;
  /** Exposed ports as `port/protocol`. */
  declare readonly ports: pulumi.Output<string[] | undefined>;
  /** Registry credential id for a private image, or null. */
  declare readonly registry: pulumi.Output<string | null | undefined>;
  /** Data centres the workers may run in (as the service holds them). */
  declare readonly dataCenterIds: pulumi.Output<string[]>;
  /** FlashBoot mode: `OFF`, `FLASHBOOT` or `PRIORITY_FLASHBOOT`. */
  declare readonly flashboot: pulumi.Output<string>;
  /** Ids of the network volumes attached. */
  declare readonly networkVolumes: pulumi.Output<string[]>;
  /** Per-request execution timeout in ms. */
  declare readonly timeout: pulumi.Output<number>;
  /** Worker bounds: `min`, `max` and `idleTimeout` (seconds). */
  declare readonly workers: pulumi.Output<{ min: number; max: number; idleTimeout?: number }>;
  /** The rollout setting as given; left out, create and update act as `"wait"`. */
  declare readonly rollout: pulumi.Output<"wait" | "ignore" | undefined>;
  /** The rollout wait bound as given, in ms; left out, 600000 (10 minutes). */
  declare readonly rolloutTimeoutMs: pulumi.Output<number | undefined>;
  /** The smoke test as given; a secret when it has `http.headers`. */
  declare readonly smokeTest: pulumi.Output<
    pulumi.Unwrap<NonNullable<ServerlessEndpointArgs["smokeTest"]>> | undefined
  >;
  /**
   * What the last smoke test found: the release it tested (`version`), whether it `passed`, the
   * `jobIds` it ran, how many `failures`, one `timeline` line per job, and `costUsd`: an ESTIMATE
   * of what the jobs cost (each job's execution time × the hourly list price of the worker that ran
   * it, summed;
   * absent without a price). Kept until the next release is tested; absent before the first.
   */
  declare readonly lastSmokeTest: pulumi.Output<SmokeTestRecord | undefined>;
  /**
   * What the endpoint may cost an hour, in US dollars at the catalog's list prices (without
   * negotiated discounts): `ratePerWorkerUsd`, one worker at the dearest GPU type of its pools
   * (`price.serverless` × GPUs per worker) or CPU flavour (`price.serverlessPerVcpu` × vCPUs);
   * `floorUsd`, `workers.min` workers always on at the cheapest; `ceilingUsd`, `workers.max` at the
   * dearest. Worked out in the preview, so it shows what an edit does to them. When the catalog
   * gives no price for a candidate, the figures are null and `note` says which ("no list price
   * for ..."), never 0.
   */
  declare readonly hourlyCost: pulumi.Output<HourlyCost | undefined>;
  /** The endpoint's budget as given, in US dollars an hour (see the argument). */
  declare readonly maxHourlyUsd: pulumi.Output<number | undefined>;
  /** When the service created the endpoint (RFC 3339). */
  declare readonly createdAt: pulumi.Output<string>;
  /**
   * The release the endpoint runs: its configuration version (`endpointVersion`), raised by every
   * container change. Pass it to `JobRun`'s `triggers` to smoke-test each release.
   * @integer
   */
  declare readonly version: pulumi.Output<number | null>;
  /** Id of the endpoint's newest release; null when the service lists none. */
  declare readonly latestReleaseId: pulumi.Output<string | null>;
  /**
   * URLs of the endpoint: for `QUEUE`, `run`, `runSync`, `status`, `stream`, `cancel`, `retry`,
   * `purgeQueue`, `health`; for `LOAD_BALANCER`, `base` and `health`.
   */
  declare readonly requestUrls: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: ServerlessEndpointArgs, opts?: pulumi.CustomResourceOptions) {
    // Header values are credentials: with smokeTest.http.headers, smokeTest is a secret.
    const smokeTest = args.smokeTest === undefined ? undefined : secretWhenHeaders(args.smokeTest);
    super(name, { ...args, smokeTest } as ServerlessEndpointArgs, opts);
  }
}

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
import * as pulumi from "@pulumi/pulumi";
import type { EndpointScaling, ServerlessEndpointCreateInput } from "../../wire/serverless";
import { providerFor, type RunpodProvider } from "../common/dynamicProvider";
import type { InputOf } from "../inputsOf";
import { type JobRunArgs, secretWhenHeaders } from "../release/jobInputs";

/**
 * Module the serialized provider loads in the provider host (resolved from the program's
 * node_modules). Stored in every `__provider` text: see the compatibility contract in `operations.ts`.
 */
const OPERATIONS_MODULE = "pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js";

type Body = ServerlessEndpointCreateInput;

/**
 * Arguments of a {@link ServerlessEndpoint}: every field of the REST v2 document's
 * `CreateEndpointRequest`, by its own name, plus `rollout` and `rolloutTimeoutMs`. What the program
 * omits, the service decides (its defaults are the document's). Fields marked "replaces" cannot
 * change on the service: changing them creates a new endpoint, then deletes the old one.
 */
export interface ServerlessEndpointArgs {
  /** Name shown in the console (names need not be unique). Updates in place. */
  name: pulumi.Input<string>;
  /**
   * Request routing: `QUEUE` (the job API: `/run`, `/runsync`, ...) or `LOAD_BALANCER` (HTTP paths
   * the worker defines; scaling must be `REQUEST_COUNT`). Replaces the endpoint when changed.
   */
  type: pulumi.Input<"QUEUE" | "LOAD_BALANCER">;
  /**
   * Autoscaling signal: `{ type: "QUEUE_DELAY", queueDelay }` (seconds a request waits, at least
   * 0.5; queue endpoints only) or `{ type: "REQUEST_COUNT", requestCount }`. Updates in place, at once.
   */
  scaling: InputOf<EndpointScaling>;
  /**
   * GPU workers: `pools` (serverless pool ids from `getGpuTypes`, e.g. `["ADA_24"]`), optional
   * `excludedTypes`, `count` (GPUs per worker, default 1), `allowedCudaVersions` or
   * `minCudaVersion`. Exactly one of `gpu` or `cpu`. Changes update in place (placement takes
   * effect as workers are replaced); switching to `cpu` replaces the endpoint.
   */
  gpu?: InputOf<NonNullable<Body["gpu"]>>;
  /**
   * CPU workers: eligible configurations `[{ id, vcpuCount }]` (flavour ids from `getCpuTypes`,
   * vCPUs a power of two, at least 2). Exactly one of `gpu` or `cpu`. Switching to `gpu` replaces
   * the endpoint.
   */
  cpu?: InputOf<NonNullable<Body["cpu"]>>;
  /**
   * A serverless template whose container settings (`image`, `args`, `disk`, `ports`, `env`,
   * `registry`) the endpoint takes; fields given here override them (`env` merges per key). A
   * template is applied once, when the endpoint is created or when `templateId` changes: later
   * edits of the template do not reach the endpoint. Changing it updates in place (a release).
   */
  templateId?: pulumi.Input<string>;
  /** Docker image reference; required unless `templateId`. A change makes a release. */
  image?: pulumi.Input<string>;
  /** Arguments passed to the container's entrypoint. A change makes a release. */
  args?: pulumi.Input<string>;
  /** Container disk in GB (ephemeral). A change makes a release. */
  disk?: pulumi.Input<number>;
  /**
   * Environment variables. Always stored as ONE secret, even when given as plain strings: its
   * values never appear in another output, an error or a log line. A change makes a release;
   * removing `env` from the program sends `env: {}`.
   */
  env?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Exposed ports as `port/protocol`, e.g. `8000/http`. A change makes a release. */
  ports?: pulumi.Input<pulumi.Input<string>[]>;
  /** Container registry credential id (a `ContainerRegistryAuth`'s id) for a private image. A change makes a release. */
  registry?: pulumi.Input<string>;
  /** Preferred data centres (`getDataCenters`); omit to let the scheduler choose. Updates in place. */
  dataCenterIds?: pulumi.Input<pulumi.Input<string>[]>;
  /** FlashBoot mode: `OFF` (the service's default), `FLASHBOOT` or `PRIORITY_FLASHBOOT`. Updates in place. */
  flashboot?: pulumi.Input<"OFF" | "FLASHBOOT" | "PRIORITY_FLASHBOOT">;
  /** Network volume ids to attach (a `NetworkVolume`'s id). Updates in place. */
  networkVolumes?: pulumi.Input<pulumi.Input<string>[]>;
  /** Per-request execution timeout in ms (the service's default: 300000). Updates in place, at once. */
  timeout?: pulumi.Input<number>;
  /**
   * Worker bounds: `min` (default 0), `max` (default 3), `idleTimeout` (seconds, 1..3600, default
   * 10; not with `REQUEST_COUNT` scaling on a queue endpoint). Updates in place, at once.
   */
  workers?: InputOf<NonNullable<Body["workers"]>>;
  /**
   * `"wait"`: create and update return only once no worker of the endpoint runs an older version
   * (the release has rolled out) and none of the new version is UNHEALTHY, reading the workers
   * once a second, at most `rolloutTimeoutMs`. A rollout that stalls (a new worker stays
   * UNHEALTHY: an image that cannot be pulled, a container that crashes) or times out fails the
   * step; the endpoint keeps the change and the message names the release, the workers by status
   * and a failing worker's log tail. `"ignore"`: return as soon as the service accepted the change.
   * @default "wait"
   */
  rollout?: pulumi.Input<"wait" | "ignore">;
  /**
   * Longest rollout wait of a create or update, in milliseconds (30000 .. 86400000: a rollout
   * starts new workers, which takes more than a few seconds). A wait that ends unfinished fails
   * the step saying so; it is not a failed release: the release is neither judged nor rolled back,
   * and the next `pulumi up` tests it.
   * @default 600000 (10 minutes)
   */
  rolloutTimeoutMs?: pulumi.Input<number>;
  /**
   * Guards each release: after an update that makes a release (a change of `image`, `args`,
   * `disk`, `ports`, `env`, `registry`, `templateId`, `gpu`, `cpu`, `dataCenterIds` or
   * `networkVolumes`) has rolled out, and after the create, runs `runs` smoke-test jobs on the new
   * release, each as a {@link JobRun} would (same arguments, same `expect`, and the same release
   * check: the worker that ran a job must run the new version), and fails the step when more than
   * `maxFailures` of them fail. On an update, `onFailure: "rollback"` (the default) then PATCHes the
   * previous container settings back (a new release carrying the previous configuration), waits
   * for that rollout (at most `rolloutTimeoutMs`) and fails the step saying which release failed
   * and why, and which release serves now; the state records what runs, so the next `pulumi up`
   * tries the new release again. `"keep"` leaves the failed release serving. On a create there is
   * nothing to roll back to: the step fails and the endpoint stays in the state. Each job waits at
   * most `timeoutMs`. The result is in `lastSmokeTest`.
   *
   * On a `type: "LOAD_BALANCER"` endpoint the smoke test is an HTTP probe and needs `http` (`{
   * method, path, body, headers, expectStatus }`, see {@link JobRun}'s `http`): each run sends one
   * request to the endpoint's own path and judges status, answer and latency by the same `expect`;
   * a queue endpoint takes `input` and refuses `http`. With `http.headers`, `smokeTest` is stored as
   * a secret.
   */
  smokeTest?: pulumi.Input<SmokeTestArgs>;
  /**
   * Budget of this endpoint, in US dollars an hour: a change whose `hourlyCost.ceilingUsd`
   * (`workers.max` workers at the dearest list price it may land on) is over it fails the preview
   * (`check`), before anything is created or changed. Needs `workers.max`. The stack's
   * `runpod:maxHourlyUsd` bounds the sum of every endpoint's ceiling. List prices: negotiated
   * discounts are not counted.
   */
  maxHourlyUsd?: pulumi.Input<number>;
}

/**
 * A `ServerlessEndpoint`'s smoke test: the job arguments of a {@link JobRun} (without
 * `endpointId`, `triggers`, `rollout`, `collectStream`, `s3Config` and `redact`), plus how many jobs, how
 * many may fail, and what a failure does.
 */
export type SmokeTestArgs = Omit<
  JobRunArgs,
  "endpointId" | "triggers" | "rollout" | "collectStream" | "s3Config" | "redact"
> & {
  /** How many jobs to run on the new release (1 .. 100), at once. @default 1 */
  runs?: pulumi.Input<number>;
  /** How many of them may fail with the release still passing (less than `runs`). @default 0 */
  maxFailures?: pulumi.Input<number>;
  /**
   * What a failed smoke test does on an update: `"rollback"` restores the previous container
   * settings as a new release; `"keep"` leaves the failed release serving. Either way the step fails.
   * @default "rollback"
   */
  onFailure?: pulumi.Input<"rollback" | "keep">;
};

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
 */
export class ServerlessEndpoint extends pulumi.dynamic.Resource {
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
  declare readonly smokeTest: pulumi.Output<Record<string, unknown> | undefined>;
  /**
   * What the last smoke test found: the release it tested (`version`), whether it `passed`, the
   * `jobIds` it ran, how many `failures`, one `timeline` line per job, and `costUsd`: an ESTIMATE
   * of what the jobs cost (each job's execution time × the hourly list price of one worker, summed;
   * absent without a price). Kept until the next release is tested; absent before the first.
   */
  declare readonly lastSmokeTest: pulumi.Output<
    | {
        version: number | null;
        passed: boolean;
        jobIds: string[];
        failures: number;
        timeline: string[];
        costUsd?: number;
      }
    | undefined
  >;
  /**
   * What the endpoint may cost an hour, in US dollars at the catalog's list prices (without
   * negotiated discounts): `ratePerWorkerUsd`, one worker at the dearest GPU type of its pools
   * (`price.serverless` × GPUs per worker) or CPU flavour (`price.serverlessPerVcpu` × vCPUs);
   * `floorUsd`, `workers.min` workers always on at the cheapest; `ceilingUsd`, `workers.max` at the
   * dearest. Worked out in the preview, so it shows what an edit does to them. When the catalog
   * gives no price for a candidate, the figures are null and `note` says which ("no list price
   * for ..."), never 0.
   */
  declare readonly hourlyCost: pulumi.Output<
    | { floorUsd: number | null; ceilingUsd: number | null; ratePerWorkerUsd: number | null; note?: string }
    | undefined
  >;
  /** The endpoint's budget as given, in US dollars an hour (see the argument). */
  declare readonly maxHourlyUsd: pulumi.Output<number | undefined>;
  /** When the service created the endpoint (RFC 3339). */
  declare readonly createdAt: pulumi.Output<string>;
  /**
   * The release the endpoint runs: its configuration version (`endpointVersion`), raised by every
   * container change. Pass it to `JobRun`'s `triggers` to smoke-test each release.
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
    // Every output key is present (as undefined when not given), or its Output would not exist.
    const props = {
      name: args.name,
      type: args.type,
      scaling: args.scaling,
      gpu: args.gpu,
      cpu: args.cpu,
      templateId: args.templateId,
      image: args.image,
      args: args.args,
      disk: args.disk,
      env: args.env === undefined ? undefined : pulumi.secret(args.env),
      ports: args.ports,
      registry: args.registry,
      dataCenterIds: args.dataCenterIds,
      flashboot: args.flashboot,
      networkVolumes: args.networkVolumes,
      timeout: args.timeout,
      workers: args.workers,
      rollout: args.rollout,
      rolloutTimeoutMs: args.rolloutTimeoutMs,
      // Header values are credentials: with smokeTest.http.headers, smokeTest is a secret.
      smokeTest: args.smokeTest === undefined ? undefined : secretWhenHeaders(args.smokeTest),
      maxHourlyUsd: args.maxHourlyUsd,
      // The resource's URN, for the stack budget's sum in check (which counts each resource once).
      __urn: pulumi.createUrn(name, "pulumi-nodejs:dynamic/runpod:ServerlessEndpoint", opts?.parent),
      lastSmokeTest: undefined,
      hourlyCost: undefined,
      createdAt: undefined,
      version: undefined,
      latestReleaseId: undefined,
      requestUrls: undefined,
    };
    super(
      providerFor(OPERATIONS_MODULE),
      name,
      props,
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["env"] }),
      "runpod",
      "ServerlessEndpoint",
    );
  }

  /** The provider object every instance shares (exposed for tests and benchmarks). */
  static get provider(): RunpodProvider {
    return providerFor(OPERATIONS_MODULE);
  }

  /**
   * Reads an existing endpoint into the program by its id, without managing it: the stack
   * neither changes nor deletes it (`pulumi import` does not work for dynamic resources). Every
   * output is read from the service; an id the account does not have fails with a clear error.
   */
  static get(
    name: string,
    id: pulumi.Input<pulumi.ID>,
    opts?: pulumi.CustomResourceOptions,
  ): ServerlessEndpoint {
    return new ServerlessEndpoint(name, {} as ServerlessEndpointArgs, { ...opts, id });
  }
}

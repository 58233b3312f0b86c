/**
 * `NetworkVolume`: a RunPod network volume as a Pulumi dynamic resource, over REST v1 or v2.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only (no client, no zod, no undici).
 * The provider is the package's one provider class (`../common/dynamicProvider.ts`), given this
 * resource's operations module path: serialized into each resource's state (`__provider`), it
 * loads that module in Pulumi's dynamic-provider host and captures nothing else.
 */
import * as pulumi from "@pulumi/pulumi";
import { providerFor, type RunpodProvider } from "../common/dynamicProvider";
import type { NetworkVolumeArgs } from "./args.generated";

export type { NetworkVolumeArgs };

/**
 * Module the serialized provider loads in the provider host (resolved from the program's
 * node_modules). Stored in every `__provider` text: see the compatibility contract in `operations.ts`.
 */
const OPERATIONS_MODULE = "pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js";

/**
 * A RunPod network volume (`pulumi-nodejs:dynamic/runpod:NetworkVolume`): persistent storage that
 * serverless workers and pods mount. It costs money until deleted.
 *
 * Its id is the service's id; pass it in a `ServerlessEndpoint`'s `networkVolumes`. `name` and a
 * larger `size` update in place; `dataCenterId` and `type` replace the volume, only with
 * `allowReplaceDeletingData: true` (the preview says so); a smaller `size` is refused rather than replaced. Creation never leaves a duplicate after a
 * lost answer. Deleting a volume still attached to an endpoint fails, naming the endpoint. Needs
 * `runpod:apiKey` (or `RUNPOD_API_KEY`), and optionally `runpod:restUrl` to choose REST v1 or v2.
 */
export class NetworkVolume extends pulumi.dynamic.Resource {
  /** Name as the service holds it (refresh shows a rename made elsewhere). */
  declare readonly name: pulumi.Output<string>;
  /** Allocated storage in GB, as the service holds it. */
  declare readonly size: pulumi.Output<number>;
  /** Data centre of the volume. */
  declare readonly dataCenterId: pulumi.Output<string>;
  /** Storage tier (`STANDARD` or `HIGH_PERFORMANCE`); REST v2 only, undefined over v1. */
  declare readonly type: pulumi.Output<string | undefined>;
  /**
   * What the volume costs a month, in US dollars at list prices (without negotiated discounts):
   * `size` GB at $0.07 per GB-month for the first 1000 GB and $0.05 beyond (RunPod's published
   * storage prices: the API gives none), or at the flat rate of stack config
   * `runpod:volumePricePerGbMonth` (environment `RUNPOD_VOLUME_PRICE_PER_GB_MONTH`) when set.
   * Worked out in the preview. Null when there is no list price (a `HIGH_PERFORMANCE` volume
   * without the config key): `monthlyCostNote` says so.
   */
  declare readonly monthlyCostUsd: pulumi.Output<number | null | undefined>;
  /** Present only when `monthlyCostUsd` is null: which price is missing ("no list price for ..."). */
  declare readonly monthlyCostNote: pulumi.Output<string | undefined>;

  constructor(name: string, args: NetworkVolumeArgs, opts?: pulumi.CustomResourceOptions) {
    const props = {
      name: args.name,
      size: args.size,
      dataCenterId: args.dataCenterId,
      type: args.type,
      allowReplaceDeletingData: args.allowReplaceDeletingData,
      monthlyCostUsd: undefined,
      monthlyCostNote: undefined,
    };
    super(providerFor(OPERATIONS_MODULE), name, props, opts, "runpod", "NetworkVolume");
  }

  /** The provider object every instance shares (exposed for tests and benchmarks). */
  static get provider(): RunpodProvider {
    return providerFor(OPERATIONS_MODULE);
  }

  /**
   * Reads an existing volume into the program by its service id, without managing it: the stack
   * neither changes nor deletes it (`pulumi import` does not work for dynamic resources). Every
   * output is read from the service; an id that does not exist fails with an error naming it.
   */
  static get(name: string, id: pulumi.Input<pulumi.ID>, opts?: pulumi.CustomResourceOptions): NetworkVolume {
    const unknownArgs = { name: undefined, size: undefined, dataCenterId: undefined };
    return new NetworkVolume(name, unknownArgs as unknown as NetworkVolumeArgs, { ...opts, id });
  }
}

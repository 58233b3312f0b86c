/**
 * `NetworkVolume`: a RunPod network volume as a Pulumi dynamic resource, over REST v1 or v2.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only (no client, no zod, no undici).
 * The provider is the package's one provider class (`../common/dynamicProvider.ts`), given this
 * resource's operations module path: serialized into each resource's state (`__provider`), it
 * loads that module in Pulumi's dynamic-provider host and captures nothing else.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import { RESOURCES } from "../resources";
import type { NetworkVolumeArgs } from "./args.generated";

export type { NetworkVolumeArgs };

/**
 * A RunPod network volume (`pulumi-nodejs:dynamic/runpod:NetworkVolume`): persistent storage that
 * serverless workers and pods mount. It costs money until deleted.
 *
 * Its id is the service's id; pass it in a `ServerlessEndpoint`'s `networkVolumes`. `name` and a
 * larger `size` update in place; `dataCenterId` and `type` replace the volume, only with
 * `allowReplaceDeletingData: true` (the preview says so); a smaller `size` is refused rather than replaced. Creation never leaves a duplicate after a
 * lost answer. Deleting a volume still attached to an endpoint fails, naming the endpoint. Needs
 * `runpod:apiKey` (or `RUNPOD_API_KEY`), and optionally `runpod:restUrl` to choose REST v1 or v2.
 *
 * `NetworkVolume.get(name, id)` reads an existing volume by its service id, without managing it:
 * every output is read from the service; an id that does not exist fails with an error naming it.
 */
export class NetworkVolume extends ServiceObjectResource<NetworkVolumeArgs> {
  protected static override readonly spec = resourceSpec<NetworkVolumeArgs>({
    row: RESOURCES.NetworkVolume,
    inputs: ["name", "size", "dataCenterId", "type", "allowReplaceDeletingData"],
    outputs: ["monthlyCostUsd", "monthlyCostNote"],
  });

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
}

/**
 * `ContainerRegistryAuth`: a RunPod container registry credential as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only (no client, no zod, no undici).
 * The provider is the package's one provider class (`../common/dynamicProvider.ts`), given this
 * resource's operations module path: serialized into each resource's state (`__provider`), it
 * loads that module in Pulumi's dynamic-provider host and captures nothing else. The API key
 * comes from `configure(req)` (stack config `runpod:apiKey`, else `RUNPOD_API_KEY`) and lives
 * only in the host process's memory.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import { RESOURCES } from "../resources";
import type { ContainerRegistryAuthArgs } from "./args.generated";

export type { ContainerRegistryAuthArgs };

/**
 * A RunPod container registry credential (`pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth`).
 *
 * Its id is the service's id; pass it as `registry` to templates, endpoints and pods.
 * Any change of `name`, `username` or `password` replaces the credential (the service has no
 * update). Creation never duplicates a credential and never takes over one it did not make,
 * unless `adoptExisting` is set. Needs `runpod:apiKey` (or `RUNPOD_API_KEY`), and optionally
 * `runpod:restUrl` to choose the REST v1 or v2 interface.
 *
 * `ContainerRegistryAuth.get(name, id)` reads an existing credential by its service id, without
 * managing it: `name` is read from the service; `username` and `password` stay unknown, since the
 * service never returns them.
 */
export class ContainerRegistryAuth extends ServiceObjectResource<ContainerRegistryAuthArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<ContainerRegistryAuthArgs>({
    row: RESOURCES.ContainerRegistryAuth,
    inputs: ["name", "username", "password", "adoptExisting"],
    outputs: ["adoptedAfterAmbiguousCreate", "adoptionNote"],
  });

  /** Name of the credential as the service stores it (refresh shows a rename made elsewhere). */
  declare readonly name: pulumi.Output<string>;
  /** Registry username, as last given (the service never returns it). */
  declare readonly username: pulumi.Output<string>;
  /** Registry password, always secret. */
  declare readonly password: pulumi.Output<string>;
  /** Whether creation was allowed to adopt an existing credential of the same name. */
  declare readonly adoptExisting: pulumi.Output<boolean | undefined>;
  /**
   * True when the create's POST failed in a way the service may have acted on (a 500, a reset, a
   * timeout) and the credential recorded is the one found by name in the list right after. The
   * service has no idempotency key and its list shows only `id` and `name`, so that credential
   * is most likely this deploy's, but may be one another client created under the same name in
   * that moment: `adoptionNote` says what to check. Absent otherwise.
   */
  declare readonly adoptedAfterAmbiguousCreate: pulumi.Output<boolean | undefined>;
  /** What happened when `adoptedAfterAmbiguousCreate` is true, and what to check. */
  declare readonly adoptionNote: pulumi.Output<string | undefined>;
}

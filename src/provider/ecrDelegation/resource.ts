/**
 * `EcrDelegation`: a RunPod ECR delegation (REST v2 `/v2/registries/delegations`) as a Pulumi
 * dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module path.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import { RESOURCES } from "../resources";
import type { EcrDelegationArgs } from "./args.generated";

export type { EcrDelegationArgs };

/**
 * A RunPod ECR delegation (`pulumi-nodejs:dynamic/runpod:EcrDelegation`), REST v2 only: lets RunPod
 * pull an image of one Amazon ECR repository, named by its ARN, without a stored password. Its id
 * is the service's (`deleg_...`).
 *
 * The service cannot change a delegation: a change of `resource` or `name` replaces it (the new
 * one is created, then this one revoked), and the preview names the field that forces it. A
 * create never leaves a duplicate after a lost answer (it lists to reconcile). A refresh that
 * finds the delegation revoked outside Pulumi drops it from the state. Needs `runpod:apiKey` (or
 * `RUNPOD_API_KEY`); a REST v1 `runpod:restUrl` fails the preview.
 *
 * `EcrDelegation.get(name, id)` reads an existing delegation by its id, without managing it: every
 * output but `resource` (the service does not answer the ARN). An id not in the account fails
 * naming it.
 */
export class EcrDelegation extends ServiceObjectResource<EcrDelegationArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text. */
  protected static override readonly spec = resourceSpec<EcrDelegationArgs>({
    row: RESOURCES.EcrDelegation,
    inputs: ["resource", "name"],
    outputs: [
      "delegatorUserId",
      "awsUser",
      "repository",
      "tag",
      "awsRegion",
      "dockerRegistryUri",
      "createdAt",
    ],
  });

  /** The ECR repository ARN the delegation was made from (unset after `EcrDelegation.get`). */
  declare readonly resource: pulumi.Output<string>;
  /** Name of the delegation; undefined when it has none. */
  declare readonly name: pulumi.Output<string | undefined>;
  /** The RunPod user that made the delegation. */
  declare readonly delegatorUserId: pulumi.Output<string>;
  /** The AWS user (account) delegated, e.g. `418399314813`. */
  declare readonly awsUser: pulumi.Output<string>;
  /** The ECR repository name, e.g. `runpod/deployment`. */
  declare readonly repository: pulumi.Output<string>;
  /** The image tag delegated, e.g. `latest`. */
  declare readonly tag: pulumi.Output<string>;
  /** The AWS region of the repository, e.g. `us-east-2`. */
  declare readonly awsRegion: pulumi.Output<string>;
  /** The registry to `docker login` to, e.g. `418399314813.dkr.ecr.us-east-2.amazonaws.com`. */
  declare readonly dockerRegistryUri: pulumi.Output<string>;
  /** When the delegation was made (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;
}

/**
 * `client.registries.delegations`: ECR delegations (REST v2 `/v2/registries/delegations`), which
 * let RunPod pull images of an Amazon ECR repository without a stored password. A v1 `restUrl` gets
 * a `ValidationError` before any network call.
 *
 * ```ts
 * const d = await client.registries.delegations.create({
 *   resource: "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
 *   name: "deploy",
 * });
 * console.log(d.dockerRegistryUri); // 418399314813.dkr.ecr.us-east-2.amazonaws.com
 * ```
 */

import {
  type EcrDelegation,
  type EcrDelegationCreateInput,
  EcrDelegationCreateInputSchema,
  EcrDelegationListSchema,
  EcrDelegationSchema,
} from "../wire/ecrDelegations";
import type { RestTarget } from "./management";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/** The account's ECR delegations: list, create, revoke. The document has no read of one by id. */
export class EcrDelegations extends RestV2Resource {
  protected readonly label = "client.registries.delegations";

  /** Every delegation of the account (`listDelegations`). */
  async list(options?: RequestOptions): Promise<EcrDelegation[]> {
    return (await this.send("GET", "/registries/delegations", EcrDelegationListSchema, options)).delegations;
  }

  /**
   * Registers a delegation (`createDelegation`, `POST`, 201). `resource`, an ECR repository ARN, is
   * required and checked first (`ValidationError` naming the field). Resent only when the request
   * was never sent: after any answer (429 and 503 included, which the service has been seen to
   * give after acting on a create) list to learn whether it was created.
   */
  async create(input: EcrDelegationCreateInput, options?: RequestOptions): Promise<EcrDelegation> {
    this.requireV2();
    const body = parseInput(EcrDelegationCreateInputSchema, input, "ECR delegation");
    return this.send("POST", "/registries/delegations", EcrDelegationSchema, options, body, [], true);
  }

  /** Revokes a delegation (`revokeDelegation`, 204); `NotFoundError` when there is none. */
  async revoke(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", path`/registries/delegations/${id}`, undefined, options);
  }
}

/** `client.registries`: what the REST v2 document groups under `/v2/registries` beside credentials. */
export class Registries {
  /** ECR delegations (REST v2 only): list, create, revoke. */
  readonly delegations: EcrDelegations;

  constructor(target: RestTarget) {
    this.delegations = new EcrDelegations(target);
  }
}

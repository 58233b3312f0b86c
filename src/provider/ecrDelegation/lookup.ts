/**
 * `getEcrDelegations`: the account's ECR delegations (REST v2 `GET /v2/registries/delegations`),
 * each as the service answers it (`id`, `name`, `awsUser`, `repository`, `tag`, `awsRegion`,
 * `dockerRegistryUri`, `createdAt`, ...), so a program can find a delegation's id for
 * `EcrDelegation.get` or the registry to log in to.
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, and only reads. Settings come from the
 * stack (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless `opts` carries
 * a client or settings; with no API key anywhere it fails naming `runpod:apiKey` and
 * `RUNPOD_API_KEY`. REST v2 only. Nothing in a delegation is secret.
 */
import * as pulumi from "@pulumi/pulumi";
import type { EcrDelegation, RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import { lookupClient, type RunpodSettings } from "../config";

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetEcrDelegationsOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** One delegation, as `getEcrDelegations` returns it: the v2 document's `EcrDelegation`. */
export type GetEcrDelegationsResultDelegation = EcrDelegation;

/** Every ECR delegation of the account, in the service's order; an empty list is not an error. */
export async function getEcrDelegations(
  args: Record<string, never> = {},
  opts: GetEcrDelegationsOptions = {},
): Promise<GetEcrDelegationsResultDelegation[]> {
  const given = Object.keys(args ?? {}).filter((key) => (args as Record<string, unknown>)[key] !== undefined);
  if (given.length > 0) {
    throw new ValidationError(`getEcrDelegations takes no arguments; got ${given.join(", ")}`, [
      given[0] as string,
    ]);
  }
  const client = lookupClient(opts);
  return client.registries.delegations.list({ signal: opts.signal });
}

/** {@link getEcrDelegations} as an `Output`. */
export function getEcrDelegationsOutput(
  args: Record<string, never> = {},
  opts: GetEcrDelegationsOptions = {},
): pulumi.Output<GetEcrDelegationsResultDelegation[]> {
  return pulumi.output(args).apply((resolved) => getEcrDelegations(resolved as Record<string, never>, opts));
}

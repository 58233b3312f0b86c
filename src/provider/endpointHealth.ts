/**
 * `getEndpointHealth`: the job and worker counts of a serverless endpoint (`GET /health`), for
 * stacks that export an endpoint's health or gate other resources on it.
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, with credentials from the `runpod:*`
 * stack config (`runpod:apiKey`, else `RUNPOD_API_KEY`) unless `opts` carries a client or settings.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { Health, RunpodClient } from "../client";
import { checkEndpointId } from "../client/endpointId";
import { pulumiSdk } from "./common/sdk";
import { lookupClient, type RunpodSettings } from "./config";

/** Arguments of `getEndpointHealth`. */
export interface GetEndpointHealthArgs {
  /** Id of the serverless endpoint. */
  endpointId: string;
}

/** Options of `getEndpointHealth`. */
export interface GetEndpointHealthOptions {
  /** Client to use instead of one built from the stack's `runpod:*` config. Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** Job counts (`completed`, `failed`, `inProgress`, `inQueue`, `retried`) and worker counts (`idle`, `running`). */
export type EndpointHealth = Health;

function checkArgs(args: GetEndpointHealthArgs | undefined): string {
  return checkEndpointId((args as { endpointId?: unknown } | undefined)?.endpointId, "getEndpointHealth");
}

/**
 * Reads an endpoint's health: `{ jobs: { completed, failed, inProgress, inQueue, retried },
 * workers: { idle, running } }`. Bad arguments are rejected before any network call with an
 * error naming `endpointId`; a missing API key names `runpod:apiKey` and `RUNPOD_API_KEY`.
 */
export async function getEndpointHealth(
  args: GetEndpointHealthArgs,
  opts: GetEndpointHealthOptions = {},
): Promise<EndpointHealth> {
  const endpointId = checkArgs(args);
  const client = lookupClient(opts);
  return client.endpoint(endpointId).health({ signal: opts.signal });
}

/** `getEndpointHealth` for `Input` arguments: resolves when they do, as an `Output`. */
export function getEndpointHealthOutput(
  args: pulumi.Input<{ endpointId: pulumi.Input<string> }>,
  opts: GetEndpointHealthOptions = {},
): pulumi.Output<EndpointHealth> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getEndpointHealth(resolved, opts));
}

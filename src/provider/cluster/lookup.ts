/**
 * `getCluster`: one Instant Cluster as the service reads it back (REST v2 `GET /v2/clusters/{id}`):
 * its type, compute, data centre, members per status, overlay network and primary.
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, and only reads. Settings come from the
 * stack (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless `opts` carries
 * a client or settings; with no API key anywhere it fails naming `runpod:apiKey` and
 * `RUNPOD_API_KEY`. REST v2 only. The answer holds no env value.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Cluster, RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import { lookupClient, type RunpodSettings } from "../config";

/** Arguments of `getCluster`. */
export interface GetClusterArgs {
  /** Id of the cluster, as `Cluster.id` or the console shows it. */
  id: string;
}

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetClusterOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** What `getCluster` returns: the v2 document's `Cluster`, as read back. */
export type GetClusterResult = Cluster;

/**
 * Reads a cluster by id. A malformed `id` is rejected before any network call; an unknown one
 * fails with the service's 404 (`NotFoundError`).
 */
export async function getCluster(
  args: GetClusterArgs,
  opts: GetClusterOptions = {},
): Promise<GetClusterResult> {
  const id = (args as { id?: unknown } | undefined)?.id;
  if (typeof id !== "string" || !/^[^\s/]+$/.test(id) || id === "." || id === "..") {
    throw new ValidationError(
      `getCluster: id must be a non-empty cluster id without whitespace or slashes, got ${
        id === undefined ? "nothing" : JSON.stringify(id)
      }`,
      ["id"],
    );
  }
  return lookupClient(opts).clusters.get(id, { signal: opts.signal });
}

/** {@link getCluster} for `Input` arguments, as an `Output` that resolves once `id` is known. */
export function getClusterOutput(
  args: pulumi.Input<{ id: pulumi.Input<string> }>,
  opts: GetClusterOptions = {},
): pulumi.Output<GetClusterResult> {
  return pulumi
    .output(args)
    .apply((resolved) => getCluster(resolved, opts)) as pulumi.Output<GetClusterResult>;
}

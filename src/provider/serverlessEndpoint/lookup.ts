/**
 * `getServerlessEndpoint`: a serverless endpoint's configuration version, latest release and
 * workers (REST v2), so a stack can re-run a smoke test when the endpoint is redeployed
 * (`triggers: [ep.version]`) and see whether a rollout is still under way.
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`. It reads three things in parallel
 * (`GET /v2/serverless/{id}`, `/releases`, `/workers`); settings come from the stack
 * (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless `opts` carries a
 * client or settings. REST v2 only: on a v1 `restUrl` it fails saying so.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { RunpodClient } from "../../client";
import { ENDPOINT_ID_RULE, isEndpointId } from "../../client/endpointId";
import { ValidationError } from "../../client/errors";
import { pulumiSdk } from "../common/sdk";
import { lookupClient, type RunpodSettings } from "../config";

/** Arguments of `getServerlessEndpoint`. */
export interface GetServerlessEndpointArgs {
  /** Id of the serverless endpoint. */
  id: string;
}

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetServerlessEndpointOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** What `getServerlessEndpoint` returns. */
export interface GetServerlessEndpointResult {
  /** Id of the serverless endpoint. */
  id: string;
  /** The endpoint's name. */
  name: string;
  /** The endpoint's current configuration version (`endpointVersion`); null when the service gives none. */
  version: number | null;
  /** Id of the newest release; null when there is none. */
  latestReleaseId: string | null;
  /** Active workers by status as the service names it, e.g. `{ IDLE: 2, RUNNING: 1 }`. */
  workers: Record<string, number>;
  /** Workers still running an older configuration than `version`. */
  staleWorkers: number;
  /** True while the latest release is still rolling out (some worker is on an older version). */
  rolloutInProgress: boolean;
  /** The endpoint's container image, when the service reports it. */
  image: string | null;
  /** Minimum worker count, when the service reports it. */
  workersMin: number | null;
  /** Maximum worker count, when the service reports it. */
  workersMax: number | null;
}

function checkId(args: GetServerlessEndpointArgs | undefined): string {
  const id = (args as { id?: unknown } | undefined)?.id;
  // The other lookups' rule (`isEndpointId`): an id with a slash or a space never reaches the network.
  if (!isEndpointId(id)) {
    throw new ValidationError(
      `getServerlessEndpoint: id must be the serverless endpoint's id (${ENDPOINT_ID_RULE}), got ${
        id === undefined ? "nothing" : JSON.stringify(id)
      }`,
      ["id"],
    );
  }
  return id;
}

/**
 * Reads a serverless endpoint: `{ id, name, version, latestReleaseId, workers: { <status>: count },
 * staleWorkers, rolloutInProgress, image, workersMin, workersMax }`. A malformed `id` is rejected
 * before any network call; an unknown one fails with the service's 404.
 */
export async function getServerlessEndpoint(
  args: GetServerlessEndpointArgs,
  opts: GetServerlessEndpointOptions = {},
): Promise<GetServerlessEndpointResult> {
  const id = checkId(args);
  const client = lookupClient(opts);
  const request = { signal: opts.signal };
  const [endpoint, releases, workerList] = await Promise.all([
    client.serverless.get(id, request),
    client.serverless.releases(id, request),
    client.serverless.workers(id, request),
  ]);
  const workers: Record<string, number> = {};
  let staleWorkers = 0;
  for (const worker of workerList.workers) {
    workers[worker.status] = (workers[worker.status] ?? 0) + 1;
    if (worker.isStale) staleWorkers += 1;
  }
  return {
    id: endpoint.id,
    name: endpoint.name,
    version: releases.endpointVersion ?? workerList.endpointVersion ?? endpoint.version ?? null,
    latestReleaseId: releases.releases[0]?.id ?? null,
    workers,
    staleWorkers,
    rolloutInProgress: releases.rollout.inProgress || staleWorkers > 0,
    image: endpoint.image ?? null,
    workersMin: endpoint.workers?.min ?? null,
    workersMax: endpoint.workers?.max ?? null,
  };
}

/** {@link getServerlessEndpoint} for `Input` arguments: resolves once `id` is known, as an `Output`. */
export function getServerlessEndpointOutput(
  args: pulumi.Input<{ id: pulumi.Input<string> }>,
  opts: GetServerlessEndpointOptions = {},
): pulumi.Output<GetServerlessEndpointResult> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getServerlessEndpoint(resolved, opts));
}

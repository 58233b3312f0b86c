/**
 * `getPod`: one pod as the service reads it back (REST v2 `GET /v2/pods/{id}`): its status, the GPU
 * type it landed on, `cost` in USD per hour, `ssh` endpoints, `dataCenterId`, ports, ...
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, and only reads. Settings come from the
 * stack (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless `opts` carries
 * a client or settings; with no API key anywhere it fails naming `runpod:apiKey` and
 * `RUNPOD_API_KEY`. REST v2 only.
 *
 * Secrets: a pod's `env` holds secrets (tokens, `JUPYTER_PASSWORD`). `getPodOutput` marks its
 * result secret whenever the pod has env values, as Pulumi does for an invoke result with a secret
 * field, so no env value reaches a plain stack output or the console. `getPod` returns a plain
 * Promise whose `env` values are plaintext: wrap what you pass on with `pulumi.secret`.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { Pod, RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import { pulumiSdk } from "../common/sdk";
import { lookupClient, type RunpodSettings } from "../config";
import { LOOKUPS } from "../resources";

/** Arguments of `getPod`. */
export interface GetPodArgs {
  /** Id of the pod, as `Pod.id` or the console shows it. */
  id: string;
}

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetPodOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** What `getPod` returns: the v2 document's `Pod`, as read back (fields the service adds pass through). */
export type GetPodResult = Pod;

/** What a pod id may be, as messages say it. */
const POD_ID_RULE = 'a non-empty pod id without whitespace or slashes, other than "." and ".."';

function checkId(args: GetPodArgs | undefined, where: string): string {
  const id = (args as { id?: unknown } | undefined)?.id;
  if (typeof id === "string" && /^[^\s/]+$/.test(id) && id !== "." && id !== "..") return id;
  throw new ValidationError(
    `${where}: id must be ${POD_ID_RULE}, got ${id === undefined ? "nothing" : JSON.stringify(id)}`,
    ["id"],
  );
}

/**
 * Reads a pod by id, as the service reports it now: its status, the GPU type it landed on, `cost`
 * (USD per hour), `ssh` endpoints, ports and `env`. A malformed `id` is rejected before any network
 * call; an unknown one fails with the service's 404 (`NotFoundError`). `env` values are plaintext
 * in the result (see the module comment; {@link getPodOutput} marks them secret).
 */
export async function getPod(args: GetPodArgs, opts: GetPodOptions = {}): Promise<GetPodResult> {
  const id = checkId(args, "getPod");
  const client = lookupClient(opts);
  return client.pods.get(id, { signal: opts.signal });
}

/**
 * {@link getPod} for `Input` arguments, as an `Output` that resolves once `id` is known. The
 * result is secret whenever the pod has env values (Pulumi marks a whole result secret when a
 * field of it is): read non-secret fields with `pulumi.unsecret` where you need them plain.
 */
export function getPodOutput(
  args: pulumi.Input<{ id: pulumi.Input<string> }>,
  opts: GetPodOptions = {},
): pulumi.Output<GetPodResult> {
  const pod = pulumiSdk()
    .output(args)
    .apply((resolved) => getPod(resolved, opts));
  const marked = pod.apply((read) =>
    holdsSecrets(read) ? pulumiSdk().secret(read) : pulumiSdk().output(read),
  );
  return marked as unknown as pulumi.Output<GetPodResult>;
}

/** The result's fields that hold secrets (`env`): its row's `secretOutputs` in the lookup table, as the plugin marks them. */
const SECRET_FIELDS: readonly string[] =
  LOOKUPS.find((lookup) => lookup.fn === "getPod")?.secretOutputs ?? [];

/** True when a secret field of the pod has a value (an `env` with at least one variable). */
function holdsSecrets(pod: GetPodResult): boolean {
  return SECRET_FIELDS.some((field) => {
    const value = (pod as Record<string, unknown>)[field];
    return value !== null && typeof value === "object" ? Object.keys(value).length > 0 : value !== undefined;
  });
}

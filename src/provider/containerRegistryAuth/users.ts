/**
 * What still pulls with a registry credential, read before the provider deletes it.
 *
 * The v2 document's `deleteRegistry`: "Rejected if any pod currently uses this credential to pull
 * its image. Templates that reference it are not part of that check — they silently lose the
 * reference (`registry` becomes null) instead of blocking the delete." Endpoints are in neither
 * sentence: the service leaves them naming a credential that no longer exists. The provider refuses
 * the delete first while a pod uses the credential, naming the pods, as it names what holds a
 * network volume; templates and endpoints are named in a warning, because blocking on them would
 * also block a credential rotated in the same deploy (the old one is deleted before its users are
 * re-pointed to the new one).
 *
 * A pod the service lists as `TERMINATED` is gone (it can never start and pull again) and does not
 * count. The lists are read together under one bound, 10 s in all ({@link READ_BOUND_MS}, on the
 * caller's clock): a kind that does not answer by then is reported unanswered, as a kind the key
 * may not list is reported unchecked, and the delete goes on (the service still refuses to delete a
 * credential a pod pulls with).
 *
 * REST v2 only: v1 never had pods, templates or endpoints to list. There the service's own
 * refusal (pods) is all there is.
 */
import { PermissionDeniedError, type RequestOptions, type RunpodClient } from "../../client";
import { type Clock, systemClock, timeoutSignal } from "../clock";
import { READ_BOUND_MS } from "../common/boundedRead";

/** One resource that names the credential in its `registry`. */
export interface RegistryUser {
  kind: "pod" | "template" | "serverless endpoint";
  id: string;
  name: string;
}

/**
 * The users found; the kinds the API key may not list (403), which went unchecked; and the kinds
 * whose list did not answer within the bound, which went unchecked too.
 */
export interface RegistryUsers {
  users: RegistryUser[];
  unchecked: RegistryUser["kind"][];
  unanswered: RegistryUser["kind"][];
}

interface Named {
  id: string;
  name?: string | null | undefined;
  registry?: string | null | undefined;
  /** A pod's status: `TERMINATED` ones do not count. */
  status?: string | undefined;
}

/** True for a pod the service lists as terminated: it can never pull again. */
function terminated(item: Named): boolean {
  return typeof item.status === "string" && item.status.toUpperCase() === "TERMINATED";
}

/**
 * Lists pods, templates and serverless endpoints (in parallel, {@link READ_BOUND_MS} in all on
 * `clock`) and keeps those naming `registryId`, terminated pods left out.
 */
export async function registryUsers(
  client: RunpodClient,
  registryId: string,
  clock: Clock = systemClock,
): Promise<RegistryUsers> {
  const kinds: [RegistryUser["kind"], (options: RequestOptions) => Promise<Named[]>][] = [
    ["pod", (options) => client.pods.list(options)],
    ["template", (options) => client.templates.list(options)],
    ["serverless endpoint", (options) => client.serverless.list(options)],
  ];
  const users: RegistryUser[] = [];
  const unchecked: RegistryUser["kind"][] = [];
  const unanswered: RegistryUser["kind"][] = [];
  const bound = timeoutSignal(clock, READ_BOUND_MS);
  try {
    const lists = await Promise.all(
      kinds.map(async ([kind, list]) => {
        try {
          return { kind, items: await list({ signal: bound.signal }) };
        } catch (error) {
          // A key scoped away from one kind cannot see its users; the service still refuses for pods.
          if (error instanceof PermissionDeniedError) {
            unchecked.push(kind);
            return { kind, items: [] };
          }
          if (bound.signal.aborted) {
            unanswered.push(kind);
            return { kind, items: [] };
          }
          throw error;
        }
      }),
    );
    for (const { kind, items } of lists) {
      for (const item of items) {
        if (item.registry !== registryId || (kind === "pod" && terminated(item))) continue;
        users.push({ kind, id: item.id, name: item.name ?? "" });
      }
    }
  } finally {
    bound.clear();
  }
  return { users, unchecked, unanswered };
}

/** `pod abc ("trainer"), template t1 ("model") and serverless endpoint e1 ("api")`. */
export function describeUsers(users: readonly RegistryUser[]): string {
  const parts = users.map((u) => `${u.kind} ${u.id}${u.name ? ` ("${u.name}")` : ""}`);
  return parts.length <= 1 ? (parts[0] ?? "") : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
}

/** What the delete means for each kind present in `users`, one clause per kind. */
export function consequences(users: readonly RegistryUser[]): string {
  const has = (kind: RegistryUser["kind"]) => users.some((u) => u.kind === kind);
  const clauses: string[] = [];
  if (has("pod"))
    clauses.push(
      "RunPod refuses to delete a credential a pod pulls with (a stopped pod pulls again when it starts)",
    );
  if (has("template")) {
    clauses.push(
      "a template would silently lose it (registry becomes null), so pods and endpoints made from it later cannot pull a private image",
    );
  }
  if (has("serverless endpoint")) {
    clauses.push(
      "an endpoint would keep naming a credential that no longer exists, so its next worker cannot pull its image",
    );
  }
  return clauses.join("; ");
}

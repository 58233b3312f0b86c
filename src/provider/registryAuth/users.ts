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
 * REST v2 only: v1 never had pods, templates or endpoints to list. There the service's own
 * refusal (pods) is all there is.
 */
import { PermissionDeniedError, type RunpodClient } from "../../client";

/** One resource that names the credential in its `registry`. */
export interface RegistryUser {
  kind: "pod" | "template" | "serverless endpoint";
  id: string;
  name: string;
}

/** The users found, and the kinds the API key may not list (403), which went unchecked. */
export interface RegistryUsers {
  users: RegistryUser[];
  unchecked: RegistryUser["kind"][];
}

interface Named {
  id: string;
  name?: string | null | undefined;
  registry?: string | null | undefined;
}

/** Lists pods, templates and serverless endpoints (in parallel) and keeps those naming `registryId`. */
export async function registryUsers(client: RunpodClient, registryId: string): Promise<RegistryUsers> {
  const kinds: [RegistryUser["kind"], () => Promise<Named[]>][] = [
    ["pod", () => client.pods.list()],
    ["template", () => client.templates.list()],
    ["serverless endpoint", () => client.serverless.list()],
  ];
  const users: RegistryUser[] = [];
  const unchecked: RegistryUser["kind"][] = [];
  const lists = await Promise.all(
    kinds.map(async ([kind, list]) => {
      try {
        return { kind, items: await list() };
      } catch (error) {
        // A key scoped away from one kind cannot see its users; the service still refuses for pods.
        if (error instanceof PermissionDeniedError) {
          unchecked.push(kind);
          return { kind, items: [] };
        }
        throw error;
      }
    }),
  );
  for (const { kind, items } of lists) {
    for (const item of items) {
      if (item.registry === registryId) users.push({ kind, id: item.id, name: item.name ?? "" });
    }
  }
  return { users, unchecked };
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

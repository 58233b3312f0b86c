/**
 * `SshKey`: one SSH public key in the RunPod account's set (REST v2 `/v2/account/ssh-keys`) as a
 * Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module
 * path: serialized into each resource's state (`__provider`), it loads that module in Pulumi's
 * dynamic-provider host and captures nothing else.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import { RESOURCES } from "../resources";
import type { SshKeyArgs } from "./args.generated";

export type { SshKeyArgs };

/**
 * One SSH public key in the RunPod account's set (`pulumi-nodejs:dynamic/runpod:SshKey`), REST v2
 * only. Pods created with `startSsh` get the account's keys. Its id is the key's fingerprint
 * (`SHA256:...`, as `ssh-keygen -l -E sha256` prints it).
 *
 * The service replaces the whole set on every write, so this resource reads the set, changes its
 * one entry, writes the set back and reads it again to verify: keys that other programs or
 * people registered stay as they are, on create and on delete. If another writer replaces the set
 * between the read and the write, the edit is made once more on the fresh set.
 *
 * Adoption: if the account already holds the same key (the same type and key data, whatever the
 * comment) when this resource is created, that entry is adopted, not duplicated: it is rewritten
 * with this resource's line (its comment), and destroying this resource removes the key from the
 * account. A different key with the same comment is another key and is left alone.
 *
 * Refresh: a key removed from the account outside Pulumi is gone from the state (the next up adds
 * it again); a comment edited outside shows as a change. Needs `runpod:apiKey` (or
 * `RUNPOD_API_KEY`); a REST v1 `runpod:restUrl` fails the preview.
 *
 * ```ts
 * const key = new SshKey("me", { publicKey: fs.readFileSync(`${os.homedir()}/.ssh/id_ed25519.pub`, "utf8") });
 * ```
 *
 * `SshKey.get(name, fingerprint)` reads a key already registered in the account into the program
 * by its fingerprint (`SHA256:...`), without managing it: the stack neither changes nor removes
 * it. A fingerprint not in the account fails with an error naming it.
 */
export class SshKey extends ServiceObjectResource<SshKeyArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<SshKeyArgs>({
    row: RESOURCES.SshKey,
    inputs: ["publicKey"],
    outputs: ["fingerprint", "type", "comment"],
  });

  /** The line as registered: `<type> <base64-key>` and the comment, if any. */
  declare readonly publicKey: pulumi.Output<string>;
  /** `SHA256:...`, as `ssh-keygen -l -E sha256` prints it (also the resource id). */
  declare readonly fingerprint: pulumi.Output<string>;
  /** The key type, e.g. `ssh-ed25519`. */
  declare readonly type: pulumi.Output<string>;
  /** The comment after the key (`""` when none). */
  declare readonly comment: pulumi.Output<string>;
}

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
 * It owns only the entry it writes: the line followed by an owner mark, the resource's URN
 * (`urn:pulumi:<stack>::<project>::...::<name>`), shown as the `entry` output. Two stacks (or two
 * resources) declaring the same key write two entries, and destroying one removes only its own.
 * Keys that other programs or people registered, the same key under another comment included,
 * stay as they are, on create and on delete.
 *
 * The service replaces the whole set on every write, with no compare-and-set: this resource reads
 * the set right before writing it, reads it back to verify, and reads it once more after a settle
 * interval (2 s; `RUNPOD_SSH_KEY_SETTLE_MS` in the provider's environment changes it), making the
 * edit again if another writer's stale copy dropped it. A stale write that lands later still drops
 * the entry: a refresh then finds the key gone, and the next up adds it back.
 *
 * Refresh: an entry removed or edited outside Pulumi is gone from the state (the next up adds it
 * again). Needs `runpod:apiKey` (or `RUNPOD_API_KEY`); a REST v1 `runpod:restUrl` fails the
 * preview.
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
    outputs: ["fingerprint", "type", "comment", "entry"],
    urn: true,
  });

  /** The program's line: `<type> <base64-key>` and the comment, if any. */
  declare readonly publicKey: pulumi.Output<string>;
  /** `SHA256:...`, as `ssh-keygen -l -E sha256` prints it (also the resource id). */
  declare readonly fingerprint: pulumi.Output<string>;
  /** The key type, e.g. `ssh-ed25519`. */
  declare readonly type: pulumi.Output<string>;
  /** The comment after the key (`""` when none). */
  declare readonly comment: pulumi.Output<string>;
  /**
   * The entry as written in the account's set: `publicKey` followed by this resource's URN, its
   * owner mark. Undefined for a key read by `SshKey.get`, and in a state written before owner marks
   * (until an update rewrites the entry).
   */
  declare readonly entry: pulumi.Output<string | undefined>;
}

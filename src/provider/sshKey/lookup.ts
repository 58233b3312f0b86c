/**
 * `getSshKeys`: the SSH public keys registered in the RunPod account (REST v2
 * `GET /v2/account/ssh-keys`), each with its type, comment and fingerprint, so a program can see
 * which keys its pods will get, or find a key's fingerprint for `SshKey.get`.
 *
 * A lookup, not a resource: it runs in the program process (dynamic providers cannot serve
 * invokes), on every `pulumi preview` and `pulumi up`, and only reads. Settings come from the
 * stack (`runpod:apiKey`, `runpod:restUrl`, with their environment fallbacks) unless `opts` carries
 * a client or settings; with no API key anywhere it fails naming `runpod:apiKey` and
 * `RUNPOD_API_KEY`.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { RunpodClient } from "../../client";
import { ValidationError } from "../../client/errors";
import { pulumiSdk } from "../common/sdk";
import { lookupClient, type RunpodSettings } from "../config";
import { describeStoredKey } from "./publicKey";

/** One registered key, as `getSshKeys` returns it. */
export interface GetSshKeysResultKey {
  /** The authorized_keys line as the account holds it. */
  publicKey: string;
  /** The key type, e.g. `ssh-ed25519`. */
  type: string;
  /** The comment after the key (`""` when none). */
  comment: string;
  /** `SHA256:...` as `ssh-keygen -l -E sha256` prints it; null when the line's key data is not base64. */
  fingerprint: string | null;
}

/** Where the lookup gets its client. Both optional; by default settings come from the stack. */
export interface GetSshKeysOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
  /** Aborts the lookup. */
  signal?: AbortSignal;
}

/** The account's registered SSH public keys, in the account's order; an empty list is not an error. */
export async function getSshKeys(
  args: Record<string, never> = {},
  opts: GetSshKeysOptions = {},
): Promise<GetSshKeysResultKey[]> {
  const given = Object.keys(args ?? {}).filter((key) => (args as Record<string, unknown>)[key] !== undefined);
  if (given.length > 0) {
    throw new ValidationError(`getSshKeys takes no arguments; got ${given.join(", ")}`, [given[0] as string]);
  }
  const client = lookupClient(opts);
  const keys = await client.account.sshKeys({ signal: opts.signal });
  return keys.map(describeStoredKey);
}

/** {@link getSshKeys} as an `Output`. */
export function getSshKeysOutput(
  args: Record<string, never> = {},
  opts: GetSshKeysOptions = {},
): pulumi.Output<GetSshKeysResultKey[]> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getSshKeys(resolved as Record<string, never>, opts));
}

/**
 * The operations of `SshKey`'s dynamic provider. They run in Pulumi's dynamic-provider host, never
 * in the program: the serialized provider (`resource.ts`) loads this module from the installed
 * package, as `pulumi-runpod-dynamic/dist/provider/sshKey/operations.js`, and calls them by name.
 * The API key comes from `configure(req)` (stack config `runpod:apiKey`, else `RUNPOD_API_KEY`).
 *
 * One `SshKey` is one entry of the account's set of SSH public keys. The service has only
 * `GET /v2/account/ssh-keys` and a `PUT` that replaces the whole set, with no version to compare
 * and set, so every change here is read, change one entry, write, and read again to verify
 * ({@link editKeySet}):
 * - every other entry is written back as it was read (keys added by other programs or people stay);
 * - within one provider host (one `pulumi up`: the engine runs every dynamic resource through one
 *   host), the edits of the account's set run one at a time, so two SshKeys of a deploy never
 *   write over each other;
 * - another writer (another stack, the console) that replaces the set between this read and this
 *   write and so drops this key shows in the verifying read: the edit is then made once more on
 *   the set as it is now. A second miss fails, naming the key, and changes nothing more. The
 *   service cannot protect the other writer's entry in that instant the same way (it would need a
 *   compare-and-set); a writer that verifies its own write, as this one does, restores it.
 *
 * The resource id is the key's fingerprint (`SHA256:...`). The key's identity is its type and key
 * data: a comment change rewrites the entry in place; other changes replace.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call `operations.<method>`
 * with the arguments of `ResourceOperations` (`../common/dynamicProvider.ts`). Keep that export
 * and never move this file.
 */
import type * as pulumi from "@pulumi/pulumi";
import { type RunpodClient, RunpodError, ValidationError } from "../../client";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient } from "../common/host";
import { v1RestUrlReason } from "../common/needsV2";
import { defineOperations } from "../common/operations";
import { containsUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { checkSshKeyArgs, describeStoredKey, parsePublicKey, type SshPublicKey } from "./args";

/** `check`: the one key line, checked locally (`args.ts`), and a v1 `runpod:restUrl`. No network. */
export async function checkSshKey(
  settings: RunpodSettings | undefined,
  _olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.CheckResult> {
  const { inputs, failures } = checkSshKeyArgs(news);
  const v1 = v1RestUrlReason(settings, "SshKey", "the account's SSH keys");
  return { inputs, failures: v1 ? [{ property: "", reason: v1 }, ...failures] : failures };
}

/**
 * `diff`: the key as last read (old outputs) against the program's line. The same key with another
 * comment is an update in place (the entry is rewritten); another key replaces (the new key is
 * added first, then the old one removed). A line not known yet (preview) is a replacement.
 */
export async function diffSshKey(
  _id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.DiffResult> {
  const given = news.publicKey;
  if (containsUnknown(given)) return { changes: true, replaces: ["publicKey"], deleteBeforeReplace: false };
  if (olds.publicKey === given) return { changes: false };
  const before = parsePublicKey(olds.publicKey);
  const after = parsePublicKey(given);
  const sameKey = !("problem" in before) && !("problem" in after) && before.fingerprint === after.fingerprint;
  return { changes: true, replaces: sameKey ? [] : ["publicKey"], deleteBeforeReplace: false };
}

/**
 * `create`: adds the line to the account's set, keeping every other entry. A key already in the
 * set (the same type and key data, whatever its comment) is adopted rather than added twice: its
 * entry is rewritten to the program's line, and this resource now manages it (a destroy removes
 * it). Verified by reading the set back.
 */
export const createSshKey: ResourceOperations["create"] = async (settings, inputs) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const key = keyOf(inputs.publicKey);
    await editKeySet(
      hostClient(settings),
      `adding SSH key ${key.fingerprint}`,
      (keys) => withEntry(keys, key),
      (keys) => keys.some((line) => line.trim() === key.line),
    );
    return { id: key.fingerprint, outs: outputsOf(key.line) };
  });
};

/**
 * `read`: the account's set, looked up by fingerprint. Refresh: a key no longer in the set is gone
 * (empty id); a comment changed outside Pulumi shows in the outputs and the returned inputs.
 * `SshKey.get` (no props): a fingerprint not in the set is an error naming it.
 */
export const readSshKey: ResourceOperations["read"] = async (settings, id, props) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const keys = await hostClient(settings).account.sshKeys();
    const line = keys.find((entry) => describeStoredKey(entry).fingerprint === id);
    if (line === undefined) {
      if (typeof props?.publicKey === "string") return { id: "", props: {} };
      throw new RunpodError(
        `No SSH key with fingerprint ${id} is registered in this account (GET /v2/account/ssh-keys has ` +
          `${keys.length} key${keys.length === 1 ? "" : "s"}). Check the id given to SshKey.get: it is the ` +
          "fingerprint ssh-keygen -l -E sha256 -f key.pub prints; getSshKeys() lists the account's keys with theirs.",
      );
    }
    const outs = outputsOf(line.trim());
    return { id, props: outs, inputs: { publicKey: outs.publicKey } };
  });
};

/** `update`: the same key with another comment: its entry is rewritten in place (added back if gone). */
export const updateSshKey: ResourceOperations["update"] = async (settings, id, _olds, news) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const key = keyOf(news.publicKey);
    if (key.fingerprint !== id) {
      throw new RunpodError(
        `SshKey ${id}: an update can only change the comment of the same key, but the new publicKey is ` +
          `${key.fingerprint}. This is a replacement; run pulumi up again so the preview plans it.`,
      );
    }
    await editKeySet(
      hostClient(settings),
      `changing SSH key ${id}`,
      (keys) => withEntry(keys, key),
      (keys) => keys.some((line) => line.trim() === key.line),
    );
    return { outs: outputsOf(key.line) };
  });
};

/**
 * `delete`: removes the key (every entry of that type and key data) from the set, keeping every
 * other entry. A key already gone counts as deleted.
 */
export const deleteSshKey: ResourceOperations["delete"] = async (settings, id, _props) => {
  await withProviderErrors(secretsOf(settings), async () => {
    const isThis = (line: string) => describeStoredKey(line).fingerprint === id;
    await editKeySet(
      hostClient(settings),
      `removing SSH key ${id}`,
      (keys) => (keys.some(isThis) ? keys.filter((line) => !isThis(line)) : undefined),
      (keys) => !keys.some(isThis),
    );
  });
};

// ---------------------------------------------------------------------------------------------
// The account's set: read, change one entry, write, verify
// ---------------------------------------------------------------------------------------------

/** The tail of the edits queued in this host process (one at a time; see the module comment). */
let queue: Promise<unknown> = Promise.resolve();

/** Runs `fn` after every edit queued before it in this process has ended, however it ended. */
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

/**
 * Reads the set, applies `edit` (undefined: nothing to write), writes it whole and reads it back:
 * done when `holds` is true of what was read back. When it is not (another writer replaced the set
 * in between), once more from a fresh read; a second miss is an error naming `what`.
 */
export async function editKeySet(
  client: RunpodClient,
  what: string,
  edit: (keys: string[]) => string[] | undefined,
  holds: (keys: string[]) => boolean,
): Promise<string[]> {
  return oneAtATime(async () => {
    for (let attempt = 1; ; attempt++) {
      const before = await client.account.sshKeys();
      const wanted = edit(before);
      if (wanted === undefined && holds(before)) return before;
      if (wanted !== undefined) await client.account.setSshKeys(wanted);
      const after = await client.account.sshKeys();
      if (holds(after)) return after;
      if (attempt >= 2) {
        throw new RunpodError(
          `${what} did not hold: the account's SSH key set was replaced by another writer after each of two ` +
            "writes (another stack, script or the console writes it at the same time). Nothing more was " +
            "changed. Run pulumi up again when the other writer is done.",
        );
      }
    }
  });
}

/** `keys` with `key`'s line in place of its first entry (other entries of the same key dropped), or appended. */
function withEntry(keys: readonly string[], key: SshPublicKey): string[] | undefined {
  const isThis = (line: string) => describeStoredKey(line).fingerprint === key.fingerprint;
  const matches = keys.filter(isThis);
  if (matches.length === 1 && matches[0]?.trim() === key.line) return undefined;
  if (matches.length === 0) return [...keys, key.line];
  const first = keys.findIndex(isThis);
  return keys.flatMap((line, index) => (index === first ? [key.line] : isThis(line) ? [] : [line]));
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The checked line as a key; `check` has already refused anything else. */
function keyOf(value: unknown): SshPublicKey {
  const parsed = parsePublicKey(value);
  if ("problem" in parsed) throw new ValidationError(parsed.problem, ["publicKey"]);
  return parsed;
}

/** Outputs: the line, its fingerprint, type and comment. */
function outputsOf(line: string): Record<string, unknown> {
  const { publicKey, fingerprint, type, comment } = describeStoredKey(line);
  return { publicKey, fingerprint, type, comment };
}

/** The one secret these operations could echo: the API key. */
function secretsOf(settings: RunpodSettings | undefined): string[] {
  return settings?.apiKey ? [settings.apiKey] : [];
}

/** What the shared provider class calls (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  check: checkSshKey,
  diff: (_settings, id, olds, news) => diffSshKey(id, olds, news),
  create: createSshKey,
  read: readSshKey,
  update: updateSshKey,
  delete: deleteSshKey,
});

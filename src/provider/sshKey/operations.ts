/**
 * The operations of `SshKey`'s dynamic provider. They run in Pulumi's dynamic-provider host, never
 * in the program: the serialized provider (`resource.ts`) loads this module from the installed
 * package, as `pulumi-runpod-dynamic/dist/provider/sshKey/operations.js`, and calls them by name.
 * The API key comes from `configure(req)` (stack config `runpod:apiKey`, else `RUNPOD_API_KEY`).
 *
 * One `SshKey` is one entry of the account's set of SSH public keys, and it owns only that entry:
 * the program's line followed by an owner mark, the resource's URN (stack, project and name;
 * {@link ownedEntry}). Two stacks declaring one key write two entries; each deletes only the line
 * it wrote, exactly (a state from before owner marks: one copy of exactly its `publicKey` line).
 *
 * The service has only `GET /v2/account/ssh-keys` and a `PUT` that replaces the whole set, with no
 * version to compare and set, so every change here is read, change one entry, write, read again
 * to verify, and read once more after a settle interval ({@link editKeySet}):
 * - every other entry is written back as it was read (keys added by other programs or people
 *   stay), only made acceptable to the service's own PUT ({@link writable});
 * - within one provider host (one `pulumi up`: the engine runs every dynamic resource through one
 *   host), the edits of the account's set run one at a time, so two SshKeys of a deploy never
 *   write over each other;
 * - another writer (another stack, the console) that read the set before this write and writes
 *   its stale copy after it drops this entry; that shows in the verifying read or in the one after
 *   the settle interval, and the edit is made once more on the set as it is then. A second miss
 *   fails, naming the key. What remains: a stale write landing after the settle read is not seen
 *   here; a refresh then finds the entry gone (empty id) and the next `up` adds it back.
 *
 * The resource id is the key's fingerprint (`SHA256:...`). The key's identity is its type and key
 * data: a comment change rewrites the entry in place; other changes replace.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call `operations.<method>`
 * with the arguments of `ResourceOperations` (`../common/dynamicProvider.ts`). Keep that export
 * and never move this file.
 */
import type * as pulumi from "@pulumi/pulumi";
import { RunpodError, ValidationError } from "../../client";
import { isCancellation, sleep, systemClock } from "../clock";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient } from "../common/host";
import { v1RestUrlReason } from "../common/needsV2";
import { defineOperations } from "../common/operations";
import { containsUnknown } from "../common/unknown";
import { describeError } from "../common/wording";
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
 * `create`: adds this resource's own entry to the account's set: the program's line followed by
 * its owner mark (the resource's URN, {@link ownedEntry}), keeping every other entry. The same key
 * registered by someone else, or by another stack, stays a separate entry: this resource never
 * takes over an entry it did not write, not even one carrying its own mark ({@link unusedEntry}).
 * Verified by reading the set back, and again after the settle interval ({@link editKeySet}). A
 * failure once the set was written is a partial failure keeping the entry ({@link keptKeyError}).
 */
export const createSshKey: ResourceOperations["create"] = async (settings, inputs) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const key = keyOf(inputs.publicKey);
    const base = ownedEntry(key, inputs[URN_INPUT]);
    // Chosen on the first read of the set, then kept: an entry already there is never this one's.
    let entry: string | undefined;
    let wrote = false;
    try {
      await editKeySet(settings, `adding SSH key ${key.fingerprint}`, {
        edit: (keys) => {
          entry ??= unusedEntry(base, keys);
          return countOf(keys, entry) > 0 ? undefined : [...keys, entry];
        },
        holds: (keys) => entry !== undefined && countOf(keys, entry) > 0,
        onWrite: () => {
          wrote = true;
        },
      });
    } catch (error) {
      if (!wrote || entry === undefined) throw error;
      throw keptKeyError(key, entry, error, inputs.__provider);
    }
    return { id: key.fingerprint, outs: outputsOf(key.line, entry ?? base) };
  });
};

/**
 * The entry a new resource writes: `base` (its line and owner mark) when the set has no such
 * line, else `base#2`, `base#3`, ...: the first the set does not hold. An entry already there is
 * another resource's of the same URN (the old one of a replacement, `pulumi up --replace`, whose
 * delete comes after this create; a stack renamed away from this stack's name), never taken over.
 */
function unusedEntry(base: string, keys: readonly string[]): string {
  if (countOf(keys, base) === 0) return base;
  for (let n = 2; ; n++) if (countOf(keys, `${base}#${n}`) === 0) return `${base}#${n}`;
}

/**
 * A partial failure of a create that wrote the set: the entry may be there, so the engine records
 * the resource with it (`properties` as the next update, read and delete need them, `__provider`
 * included) and the next `up` checks it and adds it when missing, instead of writing a second one.
 */
function keptKeyError(key: SshPublicKey, entry: string, error: unknown, provider: unknown): Error {
  const properties: Record<string, unknown> = outputsOf(key.line, entry);
  if (provider !== undefined) properties.__provider = provider;
  return Object.assign(
    new RunpodError(
      `SshKey ${key.fingerprint}: the account's SSH key set was written, but ${describeError(error)} The key ` +
        "is kept in the stack: run pulumi up again (it checks the entry and adds it when missing), or remove " +
        "the SshKey from the program to delete it.",
    ),
    { id: key.fingerprint, properties },
  );
}

/**
 * `read`. Refresh (props given): the account's set holds this resource's own entry (exactly the
 * line it wrote), or the key is gone: an empty id, so the engine drops it from the state and the
 * next `up` adds it again (`RefreshStep.Apply`, pkg/resource/deploy/step.go: "If the ID is blank
 * treat this as a delete"). Gone includes an entry another writer's stale set dropped, and one
 * whose comment was edited outside (the edited line is no longer this resource's). `SshKey.get`
 * (no props): looked up by fingerprint; a fingerprint not in the set is an error naming it.
 */
export const readSshKey: ResourceOperations["read"] = async (settings, id, props) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const keys = await hostClient(settings).account.sshKeys();
    if (typeof props?.publicKey === "string") {
      const entry = entryWritten(props);
      if (entry === undefined || countOf(keys, entry) === 0) return { id: "", props: {} };
      const outs = outputsOf(props.publicKey.trim(), typeof props.entry === "string" ? entry : undefined);
      return { id, props: outs, inputs: { publicKey: outs.publicKey } };
    }
    const line = keys.find((entry) => describeStoredKey(entry).fingerprint === id);
    if (line === undefined) {
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

/**
 * `update`: the same key with another comment: this resource's entry is rewritten in place (added
 * back if gone). An entry from a state written before owner marks becomes a marked one: one copy of
 * exactly the line it wrote is replaced.
 */
export const updateSshKey: ResourceOperations["update"] = async (settings, id, olds, news) => {
  return withProviderErrors(secretsOf(settings), async () => {
    const key = keyOf(news.publicKey);
    if (key.fingerprint !== id) {
      throw new RunpodError(
        `SshKey ${id}: an update can only change the comment of the same key, but the new publicKey is ` +
          `${key.fingerprint}. This is a replacement; run pulumi up again so the preview plans it.`,
      );
    }
    const old = entryWritten(olds);
    // The same line as written (the update after a partial failure): its own entry, added back if gone.
    const kept =
      typeof olds.entry === "string" &&
      typeof olds.publicKey === "string" &&
      olds.publicKey.trim() === key.line
        ? old
        : undefined;
    const base = ownedEntry(key, news[URN_INPUT]);
    let entry: string | undefined = kept;
    await editKeySet(settings, `changing SSH key ${id}`, {
      edit: (keys) => {
        const at = old === undefined || old === entry ? -1 : keys.findIndex((line) => line.trim() === old);
        const rest = at < 0 ? keys : keys.filter((_line, index) => index !== at);
        entry ??= unusedEntry(base, rest);
        if (at < 0) return countOf(keys, entry) > 0 ? undefined : [...keys, entry];
        const written = entry;
        return countOf(rest, written) > 0 ? rest : keys.map((line, index) => (index === at ? written : line));
      },
      holds: (keys) => entry !== undefined && countOf(keys, entry) > 0,
    });
    return { outs: outputsOf(key.line, entry ?? base) };
  });
};

/**
 * `delete`: removes this resource's own entry and nothing else: every line exactly equal to the
 * entry it wrote (its owner mark names it). For a state from before owner marks (no `entry`
 * output), one copy of exactly the line it wrote (`publicKey`). The same key under another comment
 * or another stack's entry is never removed. An entry already gone counts as deleted (one read, no
 * write).
 */
export const deleteSshKey: ResourceOperations["delete"] = async (settings, id, props) => {
  await withProviderErrors(secretsOf(settings), async () => {
    const entry = entryWritten(props);
    if (entry === undefined) return;
    const marked = typeof props.entry === "string";
    await editKeySet(settings, `removing SSH key ${id}`, {
      edit: (keys) => {
        const at = keys.findIndex((line) => line.trim() === entry);
        if (at < 0) return undefined;
        return keys.filter((line, index) => (marked ? line.trim() !== entry : index !== at));
      },
      holds: (keys, before) =>
        marked ? countOf(keys, entry) === 0 : countOf(keys, entry) < countOf(before, entry),
    });
  });
};

// ---------------------------------------------------------------------------------------------
// Owned entries
// ---------------------------------------------------------------------------------------------

/** The input the resource class registers with its URN (`../common/resource.ts`, `urn: true`). */
export const URN_INPUT = "__urn";

/**
 * The entry this resource writes: the program's line, then its owner mark, the resource's URN
 * (`urn:pulumi:<stack>::<project>::<type>::<name>`: its stack, project and name; whitespace and
 * control characters in it become `_`). Two stacks, or two resources, declaring one key so write
 * two entries, and each removes only its own.
 */
export function ownedEntry(key: SshPublicKey, urn: unknown): string {
  if (typeof urn !== "string" || urn === "" || containsUnknown(urn)) {
    throw new RunpodError(
      "SshKey got no URN from its resource (the __urn input), so it cannot mark the entry it owns. The " +
        "program and the provider come from one package: reinstall pulumi-runpod-dynamic and run pulumi up again.",
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
  return `${key.line} ${urn.replace(/[\s\x00-\x1f\x7f]/g, "_")}`;
}

/**
 * The line this resource wrote, from its stored outputs: `entry` (with its owner mark), or, in a
 * state written before owner marks, the `publicKey` line. Undefined when neither is there.
 */
function entryWritten(props: Record<string, unknown> | undefined): string | undefined {
  if (typeof props?.entry === "string") return props.entry.trim();
  if (typeof props?.publicKey === "string") return props.publicKey.trim();
  return undefined;
}

/** How many entries of `keys` are exactly `entry` (surrounding whitespace aside). */
function countOf(keys: readonly string[], entry: string): number {
  return keys.filter((line) => line.trim() === entry).length;
}

// ---------------------------------------------------------------------------------------------
// The account's set: read, change one entry, write, verify, verify again after a while
// ---------------------------------------------------------------------------------------------

/** How long an edit waits after its verified write before reading the set once more, ms. */
export const SSH_KEY_SETTLE_MS = 2000;

/** The environment variable that overrides {@link SSH_KEY_SETTLE_MS} (0 to 60000 ms). */
export const SETTLE_ENV = "RUNPOD_SSH_KEY_SETTLE_MS";

/** Rounds of read, write and verify one edit may take before it fails. */
const MAX_ROUNDS = 2;

/** The tail of the edits queued in this host process (one at a time; see the module comment). */
let queue: Promise<unknown> = Promise.resolve();

/** Runs `fn` after every edit queued before it in this process has ended, however it ended. */
function oneAtATime<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

/** One edit of the account's set: the set to write (undefined: nothing to do), and when it holds. */
interface KeySetEdit {
  edit(keys: string[]): string[] | undefined;
  /** True when `keys`, read after the write, show the edit; `before` is the set the edit was made on. */
  holds(keys: string[], before: string[]): boolean;
  /** Called right before each write of the set is sent. */
  onWrite?: () => void;
}

/**
 * Makes `change` on the account's set. One round: read the set right before the write, apply
 * `edit` (undefined: nothing to do, done with no write), write the set whole (every other entry as
 * read, {@link writable}) and read it back. When the read-back holds, wait the settle interval
 * (`settings.sshKeySettleMs`, else `RUNPOD_SSH_KEY_SETTLE_MS`, else {@link SSH_KEY_SETTLE_MS}, on
 * the settings' clock) and read once more: another writer that had read the set before this write
 * and wrote its stale copy meanwhile shows there. A miss, at either read, starts one more round on
 * the set as it is then; a miss in the last round is an error naming `what`. Costs 4 requests when
 * nothing races (read, write, read, read), 1 when there is nothing to do. A cancelled deployment
 * (`settings.signal`) ends the settle interval at once and the edit with it, as done: its write was
 * verified, and the last read only looks for a race; a round's writes and reads are not cut.
 */
export async function editKeySet(
  settings: RunpodSettings | undefined,
  what: string,
  change: KeySetEdit,
): Promise<void> {
  const client = hostClient(settings);
  const settleMs = settleMsOf(settings);
  for (let round = 1; ; round++) {
    const outcome = await oneAtATime(async () => {
      const before = await client.account.sshKeys();
      const wanted = change.edit(before);
      if (wanted === undefined) return { done: true as const };
      change.onWrite?.();
      await client.account.setSshKeys(wanted.map(writable));
      const after = await client.account.sshKeys();
      return { done: false as const, held: change.holds(after, before), before };
    });
    if (outcome.done) return;
    if (outcome.held) {
      try {
        await sleep(settings?.clock ?? systemClock, settleMs, settings?.signal);
      } catch (error) {
        if (isCancellation(error, settings?.signal)) return;
        throw error;
      }
      const later = await client.account.sshKeys();
      if (change.holds(later, outcome.before)) return;
    }
    if (round >= MAX_ROUNDS) {
      throw new RunpodError(
        `${what} did not hold: the account's SSH key set was replaced by another writer after each of ` +
          `${MAX_ROUNDS} writes (another stack, script or the console writes it at the same time). Nothing ` +
          "more was changed. Run pulumi up again when the other writer is done.",
      );
    }
  }
}

/**
 * An entry as it is written back: surrounding whitespace dropped, and a line break or NUL inside
 * it made a space. The service's own PUT refuses a line ending in `\r` or holding a line break (its
 * pattern), so an entry someone else got stored that way would otherwise block every edit of the
 * set; the key and its comment's words stay as they were.
 */
function writable(line: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it replaces.
  return line.trim().replace(/[\r\n\x00]+/g, " ");
}

/** The settle interval, ms: the settings', else the environment's, else the default. */
function settleMsOf(settings: RunpodSettings | undefined): number {
  if (settings?.sshKeySettleMs !== undefined) return settings.sshKeySettleMs;
  const given = process.env[SETTLE_ENV]?.trim();
  if (given === undefined || given === "") return SSH_KEY_SETTLE_MS;
  const ms = /^\d{1,5}$/.test(given) ? Number(given) : Number.NaN;
  if (!(ms <= 60_000)) {
    throw new ValidationError(
      `${SETTLE_ENV} must be a whole number of milliseconds from 0 to 60000 (it is how long an SshKey edit ` +
        "waits before checking the account's set once more); unset it for the default 2000.",
      [SETTLE_ENV],
    );
  }
  return ms;
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

/**
 * Outputs: the program's line, its fingerprint, type and comment, and `entry`, the line as written
 * with its owner mark (absent for a key read by `SshKey.get` and in a state from before owner marks).
 */
function outputsOf(line: string, entry?: string): Record<string, unknown> {
  const { publicKey, fingerprint, type, comment } = describeStoredKey(line);
  return entry === undefined
    ? { publicKey, fingerprint, type, comment }
    : { publicKey, fingerprint, type, comment, entry };
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

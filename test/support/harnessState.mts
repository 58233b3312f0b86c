/**
 * The deploy harness's state file: what the engine's checkpoint holds for dynamic resources, with
 * every secret encrypted the way Pulumi's passphrase secrets provider does it (never plaintext,
 * never redacted, because the next diff and delete need the values).
 *
 * File format (JSON, version 1):
 * ```json
 * { "version": 1, "project": "p", "stack": "dev",
 *   "encryptionSalt": "v1:<salt b64>:<verifier>",
 *   "resources": [ResourceState...], "pendingDeletes": [ResourceState...],
 *   "outputs": { "name": value | SecretEnvelope }, "secretOutputs": ["name"] }
 * ```
 * A secret value is stored as Pulumi's envelope
 * `{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "v1:<iv>:<data>"}`
 * where data = AES-256-GCM(JSON of the value) followed by its 16-byte tag, with the key derived
 * from the passphrase by scrypt (N=16384, r=8, p=1, 32 bytes) and a random 16-byte salt.
 * The verifier is the encryption of `"pulumi"`: a wrong passphrase fails with a clear error.
 *
 * scrypt costs about 0.15 s of CPU per key by design, so keys are derived once per process, salt and
 * passphrase ({@link deriveKey}), and a new state file takes the salt its process drew for that
 * passphrase ({@link newStateSalt}). The deploy harness hands the keys it holds to each run's runner
 * ({@link knownKeys}, {@link rememberKeys}): a stack's runs and its `state()` reads derive its key once,
 * not once per run. The file is the same either way.
 */
import { createCipheriv, createDecipheriv, randomBytes, scrypt, scryptSync } from "node:crypto";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";

export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** One dynamic resource as the engine records it. Values here are plaintext (decrypted). */
export interface ResourceState {
  urn: string;
  type: string;
  name: string;
  id: string;
  /** Checked inputs (with `__provider`), as sent to create/update. */
  inputs: Record<string, unknown>;
  /**
   * Outputs the provider returned (the host adds `__provider` to a success's), or a partial
   * failure's properties as the provider gave them; read and delete get them as they are.
   */
  outputs: Record<string, unknown>;
  /** Top-level input keys that were secret. */
  secretInputs: string[];
  /** Top-level output keys stored as secrets. */
  secretOutputs: string[];
  /** The resource option, as last registered. */
  additionalSecretOutputs?: string[];
  /**
   * The `reasons` of the last create/update's partial failure (never an empty list): the next `up`
   * runs `update` on it even without a diff. See test/support/README.md, rule 1.
   */
  initErrors?: string[];
  /** `protect: true` at the last registration: delete and replace refuse. */
  protect?: boolean;
  /** `retainOnDelete: true` at the last registration: delete leaves it in the service. */
  retainOnDelete?: boolean;
  /** Read through `Resource.get`: never created, updated nor deleted by Pulumi. */
  external?: boolean;
  /** Deleted by a delete-before-replace whose create has not succeeded yet. */
  pendingReplacement?: boolean;
  /**
   * URNs this resource depends on, as the program registered it (`dependsOn`, resources in its
   * inputs, its parent): the engine's `Dependencies`/`PropertyDependencies`/`Parent`, which order
   * deletes (`ScheduleDeletes`).
   */
  dependencies?: string[];
}

export interface HarnessState {
  version: 1;
  project: string;
  stack: string;
  resources: ResourceState[];
  /** Old halves of create-before-delete replacements not yet deleted (a failed deploy leaves them). */
  pendingDeletes: ResourceState[];
  /** Stack exports of the last successful `up`. */
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  /**
   * The default dynamic provider's inputs as the last `up` stored them: the whole stack config,
   * namespaced (engine: `deploy.Target.GetPackageConfig` passes dynamic providers every key).
   * Destroy and refresh configure the host from these, not from the current config.
   */
  providerConfig?: Record<string, string>;
  /** Which `providerConfig` keys were secret (encrypted in the file). */
  providerSecretKeys?: string[];
}

export function emptyState(project: string, stack: string): HarnessState {
  return { version: 1, project, stack, resources: [], pendingDeletes: [], outputs: {}, secretOutputs: [] };
}

const SCRYPT = { N: 16384, r: 8, p: 1 } as const;

/** Keys derived in this process (or handed to it), per passphrase then salt (base64). */
const derivedKeys = new Map<string, Map<string, Buffer>>();
/** The salt a new state file gets in this process, per passphrase (base64). */
const newStateSalts = new Map<string, string>();

function keysOf(passphrase: string): Map<string, Buffer> {
  const keys = derivedKeys.get(passphrase) ?? new Map<string, Buffer>();
  derivedKeys.set(passphrase, keys);
  return keys;
}

/** The scrypt key of `passphrase` with `salt`, derived once per process (see the module comment). */
export function deriveKey(passphrase: string, salt: Buffer): Buffer {
  const keys = keysOf(passphrase);
  const id = salt.toString("base64");
  const key = keys.get(id) ?? scryptSync(passphrase, salt, 32, SCRYPT);
  keys.set(id, key);
  return key;
}

/**
 * The salt a new state file of `passphrase` gets, drawn at random once per process (or handed to it
 * with {@link rememberKeys}), with its key derived: off the event loop, as scrypt runs in libuv's pool.
 */
export async function newStateSalt(passphrase: string): Promise<string> {
  const known = newStateSalts.get(passphrase);
  if (known !== undefined) return known;
  const salt = randomBytes(16);
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(passphrase, salt, 32, SCRYPT, (err, k) => (err ? reject(err) : resolve(k))),
  );
  // Another call may have drawn one meanwhile: the first stays.
  const id = salt.toString("base64");
  if (!newStateSalts.has(passphrase)) {
    keysOf(passphrase).set(id, key);
    newStateSalts.set(passphrase, id);
  }
  return newStateSalts.get(passphrase) as string;
}

/** The keys this process holds for `passphrase` and its new-state salt, to hand to another process. */
export function knownKeys(passphrase: string): { keys: Array<[string, string]>; newStateSalt?: string } {
  const keys = [...keysOf(passphrase)].map(([salt, key]): [string, string] => [salt, key.toString("base64")]);
  const salt = newStateSalts.get(passphrase);
  return salt === undefined ? { keys } : { keys, newStateSalt: salt };
}

/** Takes keys another process derived for `passphrase` ({@link knownKeys}), and its new-state salt. */
export function rememberKeys(
  passphrase: string,
  handed: { keys: Array<[string, string]>; newStateSalt?: string },
): void {
  const keys = keysOf(passphrase);
  for (const [salt, key] of handed.keys) keys.set(salt, Buffer.from(key, "base64"));
  if (handed.newStateSalt !== undefined && keys.has(handed.newStateSalt))
    newStateSalts.set(passphrase, handed.newStateSalt);
}

/** AES-256-GCM with a scrypt-derived key; see the module comment for the format. */
export class Crypter {
  readonly salt: Buffer;
  private readonly key: Buffer;
  constructor(passphrase: string, salt: Buffer = randomBytes(16)) {
    if (typeof passphrase !== "string" || passphrase === "") {
      throw new Error(
        "passphrase must be a non-empty string (option passphrase or env PULUMI_CONFIG_PASSPHRASE)",
      );
    }
    this.salt = salt;
    this.key = deriveKey(passphrase, salt);
  }
  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v1:${iv.toString("base64")}:${data.toString("base64")}`;
  }
  decrypt(ciphertext: string): string {
    const [version, ivB64, dataB64] = ciphertext.split(":");
    if (version !== "v1" || !ivB64 || !dataB64)
      throw new Error("state: malformed ciphertext (expected v1:<iv>:<data>)");
    const data = Buffer.from(dataB64, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(ivB64, "base64"));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
      "utf8",
    );
  }
  /** `v1:<salt>:<encrypted "pulumi">`, stored in the file to check the passphrase on load. */
  header(): string {
    return `v1:${this.salt.toString("base64")}:${this.encrypt(JSON.stringify("pulumi"))}`;
  }
  static fromHeader(passphrase: string, header: string, file: string): Crypter {
    const [version, saltB64, ...rest] = header.split(":");
    if (version !== "v1" || !saltB64)
      throw new Error(`${file}: unsupported encryptionSalt ${JSON.stringify(header)}`);
    const crypter = new Crypter(passphrase, Buffer.from(saltB64, "base64"));
    try {
      if (JSON.parse(crypter.decrypt(rest.join(":"))) !== "pulumi") throw new Error("verifier mismatch");
    } catch {
      throw new Error(`${file}: incorrect passphrase (the state was written with another one)`);
    }
    return crypter;
  }
}

function isEnvelope(v: unknown): v is { ciphertext: string } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG;
}

function sealKeys(c: Crypter, obj: Record<string, unknown>, secretKeys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = secretKeys.includes(k)
      ? { [SECRET_SIG_KEY]: SECRET_SIG, ciphertext: c.encrypt(JSON.stringify(v ?? null)) }
      : v;
  }
  return out;
}

function openAll(c: Crypter, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => openAll(c, v));
  if (isEnvelope(value)) return JSON.parse(c.decrypt(value.ciphertext));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, openAll(c, v)]));
  }
  return value;
}

function sealResource(c: Crypter, r: ResourceState): unknown {
  return {
    ...r,
    inputs: sealKeys(c, r.inputs, r.secretInputs),
    outputs: sealKeys(c, r.outputs, r.secretOutputs),
  };
}

/** Reads and decrypts a state file; a missing file is an empty state. */
export async function loadState(
  file: string,
  passphrase: string,
  project: string,
  stack: string,
): Promise<{ state: HarnessState; crypter: Crypter }> {
  if (!existsSync(file)) {
    const salt = Buffer.from(await newStateSalt(passphrase), "base64");
    return { state: emptyState(project, stack), crypter: new Crypter(passphrase, salt) };
  }
  const raw = JSON.parse(await fs.readFile(file, "utf8"));
  if (raw.version !== 1) throw new Error(`${file}: unsupported state version ${JSON.stringify(raw.version)}`);
  const crypter = Crypter.fromHeader(passphrase, String(raw.encryptionSalt ?? ""), file);
  const { encryptionSalt: _salt, ...rest } = raw;
  return { state: openAll(crypter, rest) as HarnessState, crypter };
}

/**
 * The state file's bytes, in parts: the secret keys encrypted, the passphrase's verifier in
 * `encryptionSalt`. `entry` gives one resource's sealed JSON (default: serialized anew); the parts
 * joined are the file, so a writer can keep each entry's bytes between writes.
 */
function stateParts(
  state: HarnessState,
  crypter: Crypter,
  entry: (r: ResourceState) => Buffer = (r) => Buffer.from(JSON.stringify(sealResource(crypter, r))),
): Buffer[] {
  const RESOURCES = JSON.stringify("\u0000resources");
  const PENDING = JSON.stringify("\u0000pendingDeletes");
  const sealed = {
    version: 1,
    project: state.project,
    stack: state.stack,
    encryptionSalt: crypter.header(),
    resources: JSON.parse(RESOURCES),
    pendingDeletes: JSON.parse(PENDING),
    outputs: sealKeys(crypter, state.outputs, state.secretOutputs),
    secretOutputs: state.secretOutputs,
    ...(state.providerConfig
      ? {
          providerConfig: sealKeys(crypter, state.providerConfig, state.providerSecretKeys ?? []),
          providerSecretKeys: state.providerSecretKeys ?? [],
        }
      : {}),
  };
  // The placeholders come first in the text: `resources` and `pendingDeletes` precede every
  // user-supplied value (outputs, provider config) in the object.
  const text = JSON.stringify(sealed);
  const r = text.indexOf(RESOURCES);
  const p = text.indexOf(PENDING, r);
  const list = (entries: ResourceState[]) => [
    OPEN,
    ...entries.flatMap((e, i) => (i === 0 ? [entry(e)] : [COMMA, entry(e)])),
    CLOSE,
  ];
  return [
    Buffer.from(text.slice(0, r)),
    ...list(state.resources),
    Buffer.from(text.slice(r + RESOURCES.length, p)),
    ...list(state.pendingDeletes),
    Buffer.from(`${text.slice(p + PENDING.length)}\n`),
  ];
}
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");
const CLOSE = Buffer.from("]");

/** Writes a state file's bytes atomically (temp file + rename), readable by its owner only. */
async function writeStateFile(file: string, data: Buffer): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, data, { mode: 0o600 });
  await fs.rename(tmp, file);
}

/** Encrypts the secret keys and writes the file atomically (temp file + rename). */
export async function saveState(file: string, state: HarnessState, crypter: Crypter): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await writeStateFile(file, Buffer.concat(stateParts(state, crypter)));
}

/**
 * The checkpoints of one run, written one at a time as the engine's `SnapshotManager` serializes
 * them (`mutate` in pkg/backend/snapshot.go: each mutation goes through one channel and is followed
 * by `saveSnapshot`, and a step's `End` returns once that write is done). Where the engine writes
 * once per mutation, this writer coalesces: {@link save} resolves once a write that started after
 * the call has finished, so a step's change is still on disk before the step is reported done, and
 * 64 steps ending together cost one or two writes instead of 64 copies of the whole state. The state
 * is read when its write starts, so the caller's live object is saved, not a copy.
 */
export class CheckpointWriter {
  /** The write in progress (or the last one), settled or not. */
  private writing: Promise<void> = Promise.resolve();
  /** The next write, not started yet: every save() until it starts shares it. */
  private queued: Promise<void> | undefined;
  /** Writes started so far. */
  writes = 0;
  /**
   * Each entry's sealed JSON with the values of its fields when it was made: reused while every
   * field is the same value (the runner replaces an entry's inputs, outputs and lists; it never
   * edits them in place), so a write serializes only the entries that changed since the last one.
   */
  private readonly entryBytes = new WeakMap<ResourceState, { fields: unknown[]; bytes: Buffer }>();
  /** The state file's folder, made once before the first write. */
  private folder: Promise<unknown> | undefined;

  private readonly file: string;
  private readonly state: HarnessState;
  private readonly crypter: Crypter;

  constructor(file: string, state: HarnessState, crypter: Crypter) {
    this.file = file;
    this.state = state;
    this.crypter = crypter;
  }

  /** Resolves when the state as it is now (or later) is on disk; rejects if that write failed. */
  save(): Promise<void> {
    if (this.queued) return this.queued;
    const queued = this.writing
      .catch(() => {})
      .then(() => {
        this.queued = undefined;
        this.writes++;
        const data = Buffer.concat(stateParts(this.state, this.crypter, (r) => this.entry(r)));
        this.folder ??= fs.mkdir(path.dirname(this.file), { recursive: true });
        return this.folder.then(() => writeStateFile(this.file, data));
      });
    this.queued = queued;
    this.writing = queued;
    return queued;
  }

  private entry(r: ResourceState): Buffer {
    const fields = Object.entries(r).flat();
    const kept = this.entryBytes.get(r);
    if (kept && kept.fields.length === fields.length && kept.fields.every((v, i) => v === fields[i]))
      return kept.bytes;
    const bytes = Buffer.from(JSON.stringify(sealResource(this.crypter, r)));
    this.entryBytes.set(r, { fields, bytes });
    return bytes;
  }

  /** Settles with the last write: rejects if it failed (the state on disk is then not the latest). */
  written(): Promise<void> {
    return this.writing;
  }
}

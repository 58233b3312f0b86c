/**
 * Management data (registry auths, network volumes and ECR delegations), shared by the v1 and v2 dialects, and the
 * state file, which also keeps the serverless section that `serverless/` owns (endpoints made
 * over REST v2, their releases, and templates: an optional field, so older emulators still read
 * the file), and the `pods` section that `pods/podStore.ts` owns (pods and the account's SSH keys).
 *
 * Passwords are never stored: only a salted scrypt hash is kept (enough to prove a credential was
 * given, useless to recover it). With a `stateFile`, every change is written before it is
 * acknowledged, atomically (a temporary file in the same folder, then `rename`), so data survives
 * a restart and a crash never leaves a half-written file.
 */

import { randomBytes, scrypt } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";
import type { z } from "zod";
import type { EcrDelegation } from "../wire/ecrDelegations";
import { type ContainerRegistryAuthCreateInput, V2_VOLUME_SIZE } from "../wire/schemas";
import {
  MAX_ECR_DELEGATIONS_PER_ACCOUNT,
  MAX_NETWORK_VOLUMES_PER_ACCOUNT,
  MAX_REGISTRY_AUTHS_PER_ACCOUNT,
} from "./serviceFacts";

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** A stored registry credential. The username is kept; the password only as a salted hash. */
export interface StoredRegistryAuth {
  id: string;
  name: string;
  username: string;
  /** `scrypt$<salt hex>$<hash hex>` */
  passwordHash: string;
  createdAt: string;
}

/** A stored network volume (one shape; each dialect renders it). */
export interface StoredVolume {
  id: string;
  name: string;
  /** GB. */
  size: number;
  dataCenterId: string;
  /** `STANDARD` or `HIGH_PERFORMANCE`. @default "STANDARD" */
  type: string;
}

/** A stored ECR delegation: the record as `GET /v2/registries/delegations` shows it. */
export type StoredEcrDelegation = EcrDelegation & { name: string | null; dockerRegistryUri: string };

/** The user id the emulator's one account answers as `delegatorUserId`. */
export const EMULATOR_USER_ID = "user_emulator";

interface StateFileV1 {
  version: 1;
  registryAuths: StoredRegistryAuth[];
  networkVolumes: StoredVolume[];
  /** Optional, so that files written before delegations were served still load. */
  ecrDelegations?: StoredEcrDelegation[];
  /** Written and checked by `ServerlessStore`. */
  serverless?: unknown;
  /** Written and checked by `PodStore` (pods and the account's SSH keys). */
  pods?: unknown;
}

/**
 * Sizes the store keeps, in GB: REST v2's bounds (10..4096), so every stored volume satisfies v2's
 * `NetworkVolume` schema whichever dialect created it (v1's answer schema has no bounds; v1's
 * create allows 0..4000, so over v1 the emulator takes 10..4000).
 */
export const STORED_VOLUME_SIZE = V2_VOLUME_SIZE;

/** Why `size` cannot be stored (naming `field` and the allowed range), or undefined when it can. */
export function volumeSizeProblem(size: unknown, field = "size"): string | undefined {
  if (
    typeof size === "number" &&
    Number.isInteger(size) &&
    size >= STORED_VOLUME_SIZE.min &&
    size <= STORED_VOLUME_SIZE.max
  ) {
    return undefined;
  }
  return (
    `${field} must be an integer from ${STORED_VOLUME_SIZE.min} to ${STORED_VOLUME_SIZE.max} GB, got ${JSON.stringify(size)} ` +
    "(the emulator keeps every network volume within REST v2's bounds, so both dialects can show it)"
  );
}

/** Thrown for a volume size outside {@link STORED_VOLUME_SIZE} (both dialects answer 400). */
export class VolumeSizeError extends Error {}
/** Thrown on a duplicate registry-auth name (both dialects answer 400). */
export class DuplicateNameError extends Error {}
/** Thrown when an update would shrink a volume (both dialects answer 400). */
export class ShrinkError extends Error {}
/** Thrown when the account holds the most objects of a kind it may (both dialects answer 400). */
export class AccountFullError extends Error {
  constructor(kind: string, held: number, max: number) {
    super(
      `the account holds ${held} ${kind}, the most it may hold (${max}); delete one before creating another`,
    );
  }
}

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A random id of `length` characters that `taken` does not hold yet. */
function freshId(taken: Map<string, unknown>, length: number): string {
  let id = randomId(length);
  while (taken.has(id)) id = randomId(length);
  return id;
}

/** A random id of `length` lowercase letters and digits, like the service's (`agv6w2qcg7`). */
export function randomId(length = 10): string {
  const bytes = randomBytes(length);
  let id = "";
  for (const b of bytes) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32);
  return `scrypt$${salt.toString("hex")}$${hash.toString("hex")}`;
}

/** Registry auths, network volumes and ECR delegations, optionally persisted to a state file. */
export class ManagementStore {
  readonly #registryAuths = new Map<string, StoredRegistryAuth>();
  readonly #volumes = new Map<string, StoredVolume>();
  readonly #delegations = new Map<string, StoredEcrDelegation>();
  readonly #stateFile?: string;
  #writes: Promise<void> = Promise.resolve();
  #writeSeq = 0;
  /** The serverless section as loaded, until a snapshot function is attached. */
  #serverlessSaved: unknown;
  #serverlessSnapshot?: () => unknown;
  /** The pods section as loaded, until a snapshot function is attached. */
  #podsSaved: unknown;
  #podsSnapshot?: () => unknown;

  private constructor(stateFile?: string) {
    this.#stateFile = stateFile;
  }

  /**
   * Opens the store: loads `stateFile` when it exists, then adds the seed volumes whose ids are
   * not there yet. A state file that cannot be parsed is an error (it is never overwritten).
   */
  static async open(options: { stateFile?: string; volumes?: StoredVolume[] }): Promise<ManagementStore> {
    const store = new ManagementStore(options.stateFile);
    if (options.stateFile) {
      let text: string | undefined;
      try {
        text = await readFile(options.stateFile, "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
      if (text !== undefined) {
        let state: StateFileV1;
        try {
          state = JSON.parse(text) as StateFileV1;
        } catch (err) {
          throw new Error(`stateFile ${options.stateFile} is not valid JSON: ${(err as Error).message}`);
        }
        if (
          state?.version !== 1 ||
          !Array.isArray(state.registryAuths) ||
          !Array.isArray(state.networkVolumes) ||
          (state.ecrDelegations !== undefined && !Array.isArray(state.ecrDelegations))
        ) {
          throw new Error(`stateFile ${options.stateFile} is not an emulator state file (version 1)`);
        }
        store.#serverlessSaved = state.serverless;
        store.#podsSaved = state.pods;
        for (const r of state.registryAuths) store.#registryAuths.set(r.id, r);
        for (const d of state.ecrDelegations ?? []) store.#delegations.set(d.id, d);
        for (const [i, v] of state.networkVolumes.entries()) {
          const problem = volumeSizeProblem(v?.size, `networkVolumes[${i}].size`);
          if (problem) throw new Error(`stateFile ${options.stateFile}: ${problem}`);
          store.#volumes.set(v.id, { ...v, type: v.type ?? "STANDARD" });
        }
      }
    }
    let seeded = false;
    for (const v of options.volumes ?? []) {
      const problem = volumeSizeProblem(v.size, `volumes: ${v.id}.size`);
      if (problem) throw new VolumeSizeError(problem);
      if (!store.#volumes.has(v.id)) {
        store.#volumes.set(v.id, { ...v });
        seeded = true;
      }
    }
    if (seeded) await store.#persist();
    return store;
  }

  /** Writes the state file (if any) atomically; writes are serialized in call order. */
  #persist(): Promise<void> {
    const file = this.#stateFile;
    if (!file) return Promise.resolve();
    const serverless = this.#serverlessSnapshot ? this.#serverlessSnapshot() : this.#serverlessSaved;
    const pods = this.#podsSnapshot ? this.#podsSnapshot() : this.#podsSaved;
    const state: StateFileV1 = {
      version: 1,
      registryAuths: [...this.#registryAuths.values()],
      networkVolumes: [...this.#volumes.values()],
      ...(this.#delegations.size > 0 ? { ecrDelegations: [...this.#delegations.values()] } : {}),
      ...(serverless !== undefined ? { serverless } : {}),
      ...(pods !== undefined ? { pods } : {}),
    };
    const text = `${JSON.stringify(state, null, 2)}\n`;
    const tmp = `${file}.${process.pid}.${++this.#writeSeq}.tmp`;
    const write = this.#writes.then(async () => {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, file);
    });
    this.#writes = write.catch(() => undefined);
    return write;
  }

  /** The file this store writes, if any. */
  get stateFile(): string | undefined {
    return this.#stateFile;
  }

  /**
   * A section the state file held when opened, checked with `schema`; undefined when it held
   * none. One that does not match throws, naming the file, the section and the first problem.
   */
  savedSection<S extends z.ZodType>(section: "pods" | "serverless", schema: S): z.output<S> | undefined {
    const saved = section === "pods" ? this.#podsSaved : this.#serverlessSaved;
    if (saved === undefined) return undefined;
    const parsed = schema.safeParse(saved);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new Error(
      `stateFile ${this.#stateFile}: the ${section} section is not valid (${issue?.path.join(".")}: ${issue?.message})`,
    );
  }

  /** Makes every later write take the serverless section from `snapshot`. */
  attachServerless(snapshot: () => unknown): void {
    this.#serverlessSnapshot = snapshot;
  }

  /** Makes every later write take the pods section from `snapshot`. */
  attachPods(snapshot: () => unknown): void {
    this.#podsSnapshot = snapshot;
  }

  /** Writes the state file now (after a serverless change). */
  persist(): Promise<void> {
    return this.#persist();
  }

  /** Waits for pending state-file writes. */
  flush(): Promise<void> {
    return this.#writes;
  }

  // Registry auths ------------------------------------------------------------------------------

  listRegistryAuths(): StoredRegistryAuth[] {
    return [...this.#registryAuths.values()];
  }

  getRegistryAuth(id: string): StoredRegistryAuth | undefined {
    return this.#registryAuths.get(id);
  }

  /** Creates a credential; throws `DuplicateNameError` when the name is taken. */
  async createRegistryAuth(input: ContainerRegistryAuthCreateInput): Promise<StoredRegistryAuth> {
    const refuseTakenName = () => {
      if ([...this.#registryAuths.values()].some((r) => r.name === input.name)) {
        throw new DuplicateNameError(
          `name: a registry auth named "${input.name}" already exists; names must be unique`,
        );
      }
    };
    const refuseFull = () => {
      if (this.#registryAuths.size >= MAX_REGISTRY_AUTHS_PER_ACCOUNT) {
        throw new AccountFullError(
          "registry auths",
          this.#registryAuths.size,
          MAX_REGISTRY_AUTHS_PER_ACCOUNT,
        );
      }
    };
    refuseTakenName();
    refuseFull();
    const passwordHash = await hashPassword(input.password);
    refuseTakenName(); // another create may have taken the name (or the last room) while hashing
    refuseFull();
    const record: StoredRegistryAuth = {
      id: freshId(this.#registryAuths, 25),
      name: input.name,
      username: input.username,
      passwordHash,
      createdAt: new Date().toISOString(),
    };
    this.#registryAuths.set(record.id, record);
    await this.#persist();
    return record;
  }

  /** Deletes a credential; false when absent. */
  deleteRegistryAuth(id: string): Promise<boolean> {
    return this.#remove(this.#registryAuths, id);
  }

  // Network volumes -----------------------------------------------------------------------------

  listVolumes(): StoredVolume[] {
    return [...this.#volumes.values()];
  }

  getVolume(id: string): StoredVolume | undefined {
    return this.#volumes.get(id);
  }

  async createVolume(input: {
    name: string;
    size: number;
    dataCenterId: string;
    type?: string;
  }): Promise<StoredVolume> {
    const problem = volumeSizeProblem(input.size);
    if (problem) throw new VolumeSizeError(problem);
    if (this.#volumes.size >= MAX_NETWORK_VOLUMES_PER_ACCOUNT) {
      throw new AccountFullError("network volumes", this.#volumes.size, MAX_NETWORK_VOLUMES_PER_ACCOUNT);
    }
    const record: StoredVolume = {
      id: freshId(this.#volumes, 10),
      name: input.name,
      size: input.size,
      dataCenterId: input.dataCenterId,
      type: input.type ?? "STANDARD",
    };
    this.#volumes.set(record.id, record);
    await this.#persist();
    return record;
  }

  /**
   * Renames and/or grows a volume; undefined when absent. Throws `ShrinkError` when `size` is
   * below the current size (equal is allowed, so a rename may resend the size).
   */
  async updateVolume(id: string, input: { name?: string; size?: number }): Promise<StoredVolume | undefined> {
    const current = this.#volumes.get(id);
    if (!current) return undefined;
    if (input.size !== undefined && input.size < current.size) {
      throw new ShrinkError(
        `size: a network volume can only grow; it is ${current.size} GB, ${input.size} GB asked`,
      );
    }
    const problem = input.size === undefined ? undefined : volumeSizeProblem(input.size);
    if (problem) throw new VolumeSizeError(problem);
    const next = {
      ...current,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.size !== undefined ? { size: input.size } : {}),
    };
    this.#volumes.set(id, next);
    await this.#persist();
    return next;
  }

  /** Deletes a volume; false when absent. */
  deleteVolume(id: string): Promise<boolean> {
    return this.#remove(this.#volumes, id);
  }

  // ECR delegations ------------------------------------------------------------------------------

  /** Every delegation, oldest first. */
  listDelegations(): StoredEcrDelegation[] {
    return [...this.#delegations.values()];
  }

  /**
   * Registers a delegation of the repository `ref` names (parsed from the create's ARN: the tag is
   * `latest` when the ARN names none); throws `AccountFullError` past the account's bound.
   */
  async createDelegation(
    ref: { partition: string; awsRegion: string; awsUser: string; repository: string; tag?: string },
    name: string | null | undefined,
    now: Date,
  ): Promise<StoredEcrDelegation> {
    if (this.#delegations.size >= MAX_ECR_DELEGATIONS_PER_ACCOUNT) {
      throw new AccountFullError("ECR delegations", this.#delegations.size, MAX_ECR_DELEGATIONS_PER_ACCOUNT);
    }
    const host = ref.partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com";
    let id = `deleg_${randomId(12)}`;
    while (this.#delegations.has(id)) id = `deleg_${randomId(12)}`;
    const record: StoredEcrDelegation = {
      id,
      name: name ?? null,
      delegatorUserId: EMULATOR_USER_ID,
      awsUser: ref.awsUser,
      repository: ref.repository,
      tag: ref.tag ?? "latest",
      awsRegion: ref.awsRegion,
      dockerRegistryUri: `${ref.awsUser}.dkr.ecr.${ref.awsRegion}.${host}`,
      createdAt: now.toISOString(),
    };
    this.#delegations.set(record.id, record);
    await this.#persist();
    return record;
  }

  /** Revokes a delegation; false when absent. */
  revokeDelegation(id: string): Promise<boolean> {
    return this.#remove(this.#delegations, id);
  }

  /** Deletes `id` from `records` and writes the state file; false when absent. */
  async #remove(records: Map<string, unknown>, id: string): Promise<boolean> {
    if (!records.delete(id)) return false;
    await this.#persist();
    return true;
  }
}

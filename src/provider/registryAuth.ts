/**
 * `ContainerRegistryAuth`: a RunPod container registry credential as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program. The provider object is serialized into each
 * resource's state (`__provider`) and run later in Pulumi's dynamic-provider host, so the
 * provider class below stays tiny: every method loads this module from the installed package
 * by name (`require` of a relative path would resolve against the host's working directory)
 * and delegates to the operations exported here. Nothing but that module path is captured: no
 * client, no schema, no credential. The API key comes from `configure(req)` (stack config
 * `runpod:apiKey`, else `RUNPOD_API_KEY`) and lives only in the host process's memory.
 *
 * Compatibility: `__provider` strings already stored in users' states call the exported
 * operations below by name with these arguments, using whatever version of the package is
 * installed when they run. Keep the names and signatures stable and accept older state shapes.
 */
import * as pulumi from "@pulumi/pulumi";
import type { RunpodClient } from "../client/client";
import {
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  ConflictError,
  describeBody,
  NotFoundError,
  RunpodError,
} from "../client/errors";
import { mayHaveActed } from "../client/retry";
import type { ContainerRegistryAuth as RegistryAuthRecord } from "../client/schemas";
import { type ConfigSource, clientFromSettings, type RunpodSettings, resolveSettings } from "./config";
import { redact, redactValue, type Secret, withProviderErrors } from "./secrets";
import { describeError, describeType, isUnknown } from "./values";

/** Module the serialized provider loads in the provider host (resolved from the program's node_modules). */
const OPERATIONS_MODULE = "pulumi-runpod-dynamic/dist/provider/registryAuth.js";

/** Arguments of a {@link ContainerRegistryAuth}. */
export interface ContainerRegistryAuthArgs {
  /**
   * Name of the credential, unique within the RunPod account; templates and endpoints refer to
   * the credential by its id, the console shows this name. Changing it replaces the credential
   * (a new one is created first, then the old one is deleted).
   */
  name: pulumi.Input<string>;
  /**
   * Registry username. The service never returns it, so refresh cannot detect a change made
   * outside Pulumi. Changing it replaces the credential (old one deleted first: names are unique).
   */
  username: pulumi.Input<string>;
  /**
   * Registry password or access token. Always stored as a secret, even when given as a plain
   * string. Write-only on the service. Changing it replaces the credential (old one deleted first).
   */
  password: pulumi.Input<string>;
  /**
   * What to do when a credential with this `name` already exists in the account and this stack
   * did not create it. `false` (the default): creation fails with an error naming the existing
   * credential's id. `true`: this resource takes the existing credential over; from then on
   * the stack owns it and `pulumi destroy` deletes it. Adopting cannot verify that the stored
   * username and password match `username` and `password` (the service never returns them);
   * change `password` afterwards to have Pulumi replace it with known values.
   * Only consulted when the credential is created.
   * @default false
   */
  adoptExisting?: boolean;
}

/** Inputs as the provider sees them after `check` (plain values; unknowns are the sentinel). */
export interface RegistryAuthInputs {
  name: string;
  username: string;
  password: string;
  adoptExisting?: boolean;
}

/**
 * Outputs stored in state: the inputs echoed (the service returns only `id` and `name`), and,
 * when a create that failed ambiguously recorded a credential it found by name afterwards, that
 * fact (`adoptedAfterAmbiguousCreate`, `adoptionNote`).
 */
export type RegistryAuthOutputs = RegistryAuthInputs & {
  adoptedAfterAmbiguousCreate?: boolean;
  adoptionNote?: string;
};

/**
 * The dynamic provider of {@link ContainerRegistryAuth}. Construct it with no arguments; it holds
 * no state until the provider host calls `configure`.
 */
export class ContainerRegistryAuthProvider implements pulumi.dynamic.ResourceProvider {
  /** Settings resolved by `configure`; set only inside the provider host, never serialized. */
  private settings: RunpodSettings | undefined;

  /** Reads `runpod:*` stack config (environment fallback) for this host process. */
  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    const ops: Operations = require(OPERATIONS_MODULE);
    this.settings = ops.settingsFromConfigure(req.config);
  }

  async check(olds: Record<string, unknown>, news: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.checkRegistryAuth(olds, news);
  }

  async diff(id: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.diffRegistryAuth(id, olds, news);
  }

  async create(inputs: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.createRegistryAuth(this.settings, inputs);
  }

  async read(id: string, props?: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.readRegistryAuth(this.settings, id, props);
  }

  async update(id: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.updateRegistryAuth(id, olds, news);
  }

  async delete(id: string, props: Record<string, unknown>) {
    const ops: Operations = require(OPERATIONS_MODULE);
    return ops.deleteRegistryAuth(this.settings, id, props);
  }
}

type Operations = typeof import("./registryAuth");

/**
 * A RunPod container registry credential (`pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth`).
 *
 * Its id is the service's id; pass it as `containerRegistryAuthId` to templates and endpoints.
 * Any change of `name`, `username` or `password` replaces the credential (the service has no
 * update). Creation never duplicates a credential and never takes over one it did not make,
 * unless `adoptExisting` is set. Needs `runpod:apiKey` (or `RUNPOD_API_KEY`), and optionally
 * `runpod:restUrl` to choose the REST v1 or v2 interface.
 */
export class ContainerRegistryAuth extends pulumi.dynamic.Resource {
  /** Name of the credential as the service stores it (refresh shows a rename made elsewhere). */
  declare readonly name: pulumi.Output<string>;
  /** Registry username, as last given (the service never returns it). */
  declare readonly username: pulumi.Output<string>;
  /** Registry password, always secret. */
  declare readonly password: pulumi.Output<string>;
  /** Whether creation was allowed to adopt an existing credential of the same name. */
  declare readonly adoptExisting: pulumi.Output<boolean | undefined>;
  /**
   * True when the create's POST failed in a way the service may have acted on (a 500, a reset, a
   * timeout) and the credential recorded is the one found by name in the list right after. The
   * service has no idempotency key and its list shows only `id` and `name`, so that credential
   * is most likely this deploy's, but may be one another client created under the same name in
   * that moment: `adoptionNote` says what to check. Absent otherwise.
   */
  declare readonly adoptedAfterAmbiguousCreate: pulumi.Output<boolean | undefined>;
  /** What happened when `adoptedAfterAmbiguousCreate` is true, and what to check. */
  declare readonly adoptionNote: pulumi.Output<string | undefined>;

  constructor(name: string, args: ContainerRegistryAuthArgs, opts?: pulumi.CustomResourceOptions) {
    const props = {
      name: args.name,
      username: args.username,
      password: pulumi.secret(args.password),
      adoptExisting: args.adoptExisting,
      adoptedAfterAmbiguousCreate: undefined,
      adoptionNote: undefined,
    };
    super(
      ContainerRegistryAuth.#providerInstance(),
      name,
      props,
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["password"] }),
      "runpod",
      "ContainerRegistryAuth",
    );
  }

  static #provider: ContainerRegistryAuthProvider | undefined;

  /**
   * One provider instance for every ContainerRegistryAuth of a program: Pulumi caches the
   * serialized provider per object, so it is serialized once, not once per resource (same
   * `__provider` text).
   */
  static #providerInstance(): ContainerRegistryAuthProvider {
    ContainerRegistryAuth.#provider ??= new ContainerRegistryAuthProvider();
    return ContainerRegistryAuth.#provider;
  }

  /** The provider object every instance shares (exposed for tests and benchmarks). */
  static get provider(): ContainerRegistryAuthProvider {
    return ContainerRegistryAuth.#providerInstance();
  }

  /**
   * Reads an existing credential into the program by its service id, without managing it: the
   * stack neither changes nor deletes it (`pulumi import` does not work for dynamic resources).
   * `name` is read from the service; `username` and `password` stay unknown, since the service
   * never returns them.
   */
  static get(
    name: string,
    id: pulumi.Input<pulumi.ID>,
    opts?: pulumi.CustomResourceOptions,
  ): ContainerRegistryAuth {
    const unknownArgs = { name: undefined, username: undefined, password: undefined };
    return new ContainerRegistryAuth(name, unknownArgs as unknown as ContainerRegistryAuthArgs, {
      ...opts,
      id,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Operations: run in the provider host, loaded from the installed package by OPERATIONS_MODULE.
// ---------------------------------------------------------------------------------------------

const FIELDS = ["name", "username", "password"] as const;

/** Settings for the host process: the configure request's config, then the environment. */
export function settingsFromConfigure(config: ConfigSource | undefined): RunpodSettings {
  return resolveSettings(config);
}

/** `check`: field-level validation; unknown values (preview) pass through untouched. */
export async function checkRegistryAuth(
  _olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.CheckResult> {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  const inputs: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const value = news[field];
    if (value !== undefined && value !== null) inputs[field] = value;
    if (isUnknown(value)) continue;
    if (value === undefined || value === null) {
      failures.push({ property: field, reason: `${field} is required: a non-empty string` });
    } else if (typeof value !== "string") {
      failures.push({ property: field, reason: `${field} must be a string, got ${describeType(value)}` });
    } else if (value.trim() === "") {
      failures.push({ property: field, reason: `${field} must not be empty` });
    }
  }
  const adopt = news.adoptExisting;
  if (adopt !== undefined && adopt !== null) {
    inputs.adoptExisting = adopt;
    if (!isUnknown(adopt) && typeof adopt !== "boolean") {
      failures.push({
        property: "adoptExisting",
        reason: `adoptExisting must be a boolean (true or false), got ${describeType(adopt)}`,
      });
    }
  }
  for (const key of Object.keys(news)) {
    if (key !== "__provider" && !(FIELDS as readonly string[]).includes(key) && key !== "adoptExisting") {
      failures.push({
        property: key,
        reason: `unknown property ${key}; allowed: name, username, password, adoptExisting`,
      });
    }
  }
  return { inputs, failures };
}

/**
 * `diff`: old outputs against new inputs. Any change of name, username or password replaces
 * the credential; when the name stays, the old one is deleted first (names are unique).
 */
export async function diffRegistryAuth(
  _id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.DiffResult> {
  const replaces = FIELDS.filter((field) => isUnknown(news[field]) || olds[field] !== news[field]);
  if (replaces.length > 0) {
    // With an unknown name (preview only) assume the worst: it may turn out unchanged.
    const sameName = isUnknown(news.name) || olds.name === news.name;
    return { changes: true, replaces: [...replaces], deleteBeforeReplace: sameName };
  }
  const adoptChanged = (olds.adoptExisting ?? false) !== (news.adoptExisting ?? false);
  return { changes: adoptChanged };
}

/**
 * `create`: list, then POST; never duplicates and never takes over a credential it did not make
 * unless `adoptExisting` is true. After a failure the service may have acted on (the client's
 * `mayHaveActed`: a 500 or 408, a reset or timeout after sending, a malformed answer), lists again: a name that was free before and exists now is this create's credential.
 */
export async function createRegistryAuth(
  settings: RunpodSettings | undefined,
  raw: Record<string, unknown>,
): Promise<pulumi.dynamic.CreateResult> {
  const inputs = plainInputs(raw);
  const secrets = registrySecrets(inputs, settings);
  return withProviderErrors(secrets, async () => {
    const created = await createWithClient(hostClient(settings), inputs);
    if (created.outs?.adoptedAfterAmbiguousCreate === true) {
      process.stderr.write(`warning: ${redact(String(created.outs.adoptionNote), secrets)}\n`);
    }
    return { id: created.id, outs: redactOutputs((created.outs ?? {}) as Record<string, unknown>, secrets) };
  });
}

/**
 * Values never to return or throw: the password, Docker's `base64(username:password)` form of
 * it, and the API key.
 */
function registrySecrets(
  inputs: { username?: unknown; password?: unknown },
  settings: RunpodSettings | undefined,
): Secret[] {
  const login = { username: String(inputs.username ?? ""), password: inputs.password };
  return [typeof login.password === "string" ? (login as Secret) : undefined, settings?.apiKey];
}

/** Outputs with secrets redacted everywhere except `password`, the secret input itself (the engine re-marks it). */
function redactOutputs<T extends Record<string, unknown>>(outs: T, secrets: readonly unknown[]): T {
  const { password, ...rest } = outs;
  const clean = redactValue(rest, secrets);
  return (password === undefined ? clean : { ...clean, password }) as unknown as T;
}

/**
 * The body of `create` with the client given (tests pass a scripted one): list, POST, and after
 * a failure list again to tell what the service holds now.
 */
export async function createWithClient(
  client: Pick<RunpodClient, "registryAuths">,
  inputs: RegistryAuthInputs,
): Promise<pulumi.dynamic.CreateResult> {
  const before = await client.registryAuths.list();
  const taken = before.filter((r) => r.name === inputs.name);
  if (taken.length > 0) {
    if (inputs.adoptExisting === true && taken.length === 1) {
      return { id: taken[0].id, outs: { ...inputs, name: taken[0].name } };
    }
    throw nameTakenError(inputs.name, taken);
  }
  let created: RegistryAuthRecord;
  try {
    created = await client.registryAuths.create({
      name: inputs.name,
      username: inputs.username,
      password: inputs.password,
    });
  } catch (error) {
    if (error instanceof ConflictError || error instanceof BadRequestError) {
      // Both dialects answer a duplicate name with 400 (v2 may say 409): a name taken between
      // the list and the POST. The service refused this POST, so whatever exists is not ours.
      const after = await client.registryAuths.list().catch(() => undefined);
      const now = after?.filter((r) => r.name === inputs.name) ?? [];
      if (error instanceof ConflictError || now.length > 0) throw nameTakenError(inputs.name, now, error);
      throw error;
    }
    if (!mayHaveActed(error)) throw error;
    let after: RegistryAuthRecord[];
    try {
      after = await client.registryAuths.list();
    } catch (listError) {
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}) and the ` +
          `service may have stored it anyway; listing credentials to check also failed ` +
          `(${describeError(listError)}). If a credential named "${inputs.name}" exists now, this ` +
          `deploy most likely made it: set adoptExisting: true and run pulumi up again, or delete it.`,
        { cause: error },
      );
    }
    const ours = after.filter((r) => r.name === inputs.name);
    if (ours.length > 1) {
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}) and the ` +
          `service may have stored it anyway; ${ours.length} credentials named "${inputs.name}" exist now ` +
          `(id ${ours.map((r) => r.id).join(", ")}): another client created one with the same name at ` +
          `the same time. This deploy cannot tell which one is its own and recorded none. To resolve: ` +
          `delete the ones you do not want in the RunPod console (or all of them), then run pulumi up ` +
          `again, with adoptExisting: true if you kept one for this resource.`,
        { cause: error },
      );
    }
    if (ours.length === 0) {
      if (stillInFlight(error)) {
        throw new RunpodError(
          `Creating container registry auth "${inputs.name}" got no answer in time ` +
            `(${describeError(error)}). The request may still complete on the service: none named ` +
            `"${inputs.name}" exists yet, but one may appear in the next minutes, and it would be this ` +
            `deploy's. To resolve: check the credentials in the RunPod console. If "${inputs.name}" has ` +
            `appeared, the next pulumi up refuses it as not created by this stack, so set ` +
            `adoptExisting: true (or delete it) and run pulumi up again; if it has not, run pulumi up again.`,
          { cause: error },
        );
      }
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}); ` +
          `the service did not store it, so nothing was created. Run pulumi up again.`,
        { cause: error },
      );
    }
    const found = ours[0];
    return {
      id: found.id,
      outs: {
        ...inputs,
        name: found.name || inputs.name,
        adoptedAfterAmbiguousCreate: true,
        adoptionNote:
          `Creating container registry auth "${inputs.name}" failed in a way the service may have acted on ` +
          `(${describeError(error)}); the name was free just before, and right after the failure one credential ` +
          `named "${inputs.name}" (id ${found.id}) exists, so this stack recorded it as its own. The service ` +
          "has no idempotency key and lists only id and name, so it may instead be one another client " +
          "created under the same name in that moment. If another stack or person uses this name, check " +
          `that credential (id ${found.id}) before destroying this resource, or rename this resource.`,
      } satisfies RegistryAuthOutputs,
    };
  }
  return { id: created.id, outs: { ...inputs, name: created.name || inputs.name } };
}

/** True when a failed request may still be processed by the service (it timed out or was cut on the wire). */
function stillInFlight(error: unknown): boolean {
  return error instanceof APITimeoutError || (error instanceof APIUserAbortError && error.sent);
}

/**
 * `read` (refresh): GET by id. A credential that is gone gives an empty id; a rename made
 * outside Pulumi shows as a changed `name`. Username and password are kept from state.
 */
export async function readRegistryAuth(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown> | undefined,
): Promise<pulumi.dynamic.ReadResult> {
  const old = withoutProvider(props ?? {});
  const secrets = registrySecrets(old, settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    try {
      const live = await client.registryAuths.get(id);
      return { id: live.id || id, props: redactOutputs({ ...old, name: live.name }, secrets) };
    } catch (error) {
      if (error instanceof NotFoundError) return { id: "", props: {} };
      throw error;
    }
  });
}

/** `update`: only `adoptExisting` can change without a replacement; echo the new inputs. */
export async function updateRegistryAuth(
  _id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.UpdateResult> {
  const outs: RegistryAuthOutputs = plainInputs(news);
  // The credential is the same one: how it was recorded stays visible.
  if (olds?.adoptedAfterAmbiguousCreate === true) {
    outs.adoptedAfterAmbiguousCreate = true;
    if (typeof olds.adoptionNote === "string") outs.adoptionNote = olds.adoptionNote;
  }
  return { outs };
}

/**
 * `delete`: DELETE by id; a credential already gone counts as deleted. A refusal (in use)
 * explains what the service said uses it and what to do.
 */
export async function deleteRegistryAuth(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown>,
): Promise<void> {
  const secrets = registrySecrets(props ?? {}, settings);
  const label = typeof props?.name === "string" ? `"${props.name}" (id ${id})` : `id ${id}`;
  await withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    try {
      await client.registryAuths.delete(id);
    } catch (error) {
      if (error instanceof NotFoundError) return;
      if (error instanceof BadRequestError || error instanceof ConflictError) {
        const said = describeBody(error.body);
        throw new RunpodError(
          `RunPod refused to delete container registry auth ${label}` +
            (said ? `: ${said}` : " (it is probably still in use)") +
            `. Stop or change the pods, templates and endpoints that use it (their ` +
            `containerRegistryAuthId), then run the destroy or update again.`,
          { cause: error },
        );
      }
      throw error;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

function hostClient(settings: RunpodSettings | undefined): RunpodClient {
  return clientFromSettings(settings ?? resolveSettings(undefined));
}

function withoutProvider(props: Record<string, unknown>): Record<string, unknown> {
  const { __provider: _ignored, ...rest } = props;
  return rest;
}

function plainInputs(raw: Record<string, unknown>): RegistryAuthInputs {
  const inputs: RegistryAuthInputs = {
    name: String(raw.name ?? ""),
    username: String(raw.username ?? ""),
    password: String(raw.password ?? ""),
  };
  if (typeof raw.adoptExisting === "boolean") inputs.adoptExisting = raw.adoptExisting;
  return inputs;
}

function nameTakenError(name: string, taken: RegistryAuthRecord[], cause?: unknown): RunpodError {
  const ids = taken.map((r) => r.id);
  const which = ids.length > 0 ? ` (id ${ids.join(", ")})` : "";
  const deleteHint =
    ids.length > 0
      ? `delete the existing one (id ${ids[0]}) in the RunPod console or with the API (DELETE .../containerregistryauth/${ids[0]})`
      : "delete the existing one in the RunPod console or with the API";
  return new RunpodError(
    `A container registry auth named "${name}" already exists${which} and this stack did not create it. ` +
      `To resolve: give this resource another name; or ${deleteHint}; or set adoptExisting: true ` +
      `to take it under this stack (destroy will then delete it; the stored username and password ` +
      `cannot be verified).`,
    cause === undefined ? undefined : { cause },
  );
}

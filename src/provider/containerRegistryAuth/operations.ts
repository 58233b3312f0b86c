/**
 * The operations of `ContainerRegistryAuth`'s dynamic provider. They run in Pulumi's
 * dynamic-provider host, never in the program: the serialized provider (`resource.ts`) loads this
 * module from the installed package, as `pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/operations.js`,
 * and calls them by name. The API key comes from `configure(req)` (stack config `runpod:apiKey`,
 * else `RUNPOD_API_KEY`) and lives only in the host process's memory; whatever they return or
 * throw has the password and the key redacted, except `password` itself, the secret input the
 * engine re-marks as secret.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call these functions by name,
 * with these arguments, using whatever version of the package is installed when they run (a
 * refresh, a destroy, or an up that finds no change runs the stored text). Keep every name and
 * signature below, accept every older state shape, and never move this file: a stored text
 * `require`s its path. Texts of version 0.1.0 call the same functions through
 * `dist/provider/registryAuth.js`, which re-exports them (test/provider/oldState.test.ts); texts
 * written before the folder was named for its class, through `dist/provider/registryAuth/operations.js`
 * (`../compat/registryAuth/operations.ts`, test/provider/mainState.test.ts).
 *
 * Texts written since every resource shares one provider class (`../common/dynamicProvider.ts`)
 * call only `operations` below, method by method (`operations.check(settings, olds, news)`, ...);
 * texts written before it call the named functions (test/provider/mainState.test.ts replays them).
 *
 * ```ts
 * settingsFromConfigure(config: ConfigSource | undefined): RunpodSettings
 * checkRegistryAuth(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<CheckResult>
 * diffRegistryAuth(id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult>
 * createRegistryAuth(settings: RunpodSettings | undefined, inputs: Record<string, unknown>): Promise<CreateResult>
 * readRegistryAuth(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown> | undefined): Promise<ReadResult>
 * updateRegistryAuth(id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<UpdateResult>
 * deleteRegistryAuth(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown>): Promise<void>
 * ```
 *
 * Tests also use `createWithClient` (the create's logic with a client of their own, `create.ts`),
 * which no stored text calls.
 */
import type * as pulumi from "@pulumi/pulumi";
import {
  BadRequestError,
  ConflictError,
  describeBody,
  NotFoundError,
  type RunpodClient,
  RunpodError,
} from "../../client";
import type { Clock } from "../clock";
import { READ_BOUND_MS } from "../common/boundedRead";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, withoutProvider } from "../common/host";
import { defineOperations } from "../common/operations";
import { redact, redactValue, type Secret } from "../common/redaction";
import { isUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { checkRegistryAuthArgs, plainInputs, REPLACING_FIELDS, type RegistryAuthOutputs } from "./args";
import { createWithClient } from "./create";
import { consequences, describeUsers, registryUsers } from "./users";

type Props = Record<string, unknown>;

export { settingsFromConfigure } from "../common/host";
export type { RegistryAuthInputs, RegistryAuthOutputs } from "./args";
export { createWithClient } from "./create";

/** `check`: field-level validation (`args.ts`); unknown values (preview) pass through untouched. */
export const checkRegistryAuth = (olds: Props, news: Props) => operations.check(undefined, olds, news);

/**
 * `diff`: old outputs against new inputs. Any change of name, username or password replaces
 * the credential; when the name stays, the old one is deleted first (names are unique).
 */
export const diffRegistryAuth = (id: string, olds: Props, news: Props) =>
  operations.diff(undefined, id, olds, news);

async function diffPlan(olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
  const replaces = REPLACING_FIELDS.filter((field) => isUnknown(news[field]) || olds[field] !== news[field]);
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
 * `mayHaveActed`: a 500 or 408, a reset or timeout after sending, a malformed answer), lists
 * again: a name that was free before and exists now is this create's credential (`create.ts`).
 */
export const createRegistryAuth: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  const secrets = registrySecrets(inputs, settings);
  return withProviderErrors(secrets, async () => {
    const created = await createWithClient(hostClient(settings), inputs);
    if (created.outs?.adoptedAfterAmbiguousCreate === true) {
      process.stderr.write(`warning: ${redact(String(created.outs.adoptionNote), secrets)}\n`);
    }
    return { id: created.id, outs: redactOutputs((created.outs ?? {}) as Record<string, unknown>, secrets) };
  });
};

/**
 * `read` (refresh): GET by id. A credential that is gone gives an empty id; a rename made
 * outside Pulumi shows as a changed `name`. Username and password are kept from state.
 */
export const readRegistryAuth: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const secrets = registrySecrets(old, settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    try {
      const live = await client.registryAuths.get(id);
      return { id: live.id || id, props: redactOutputs({ ...old, name: live.name }, secrets) };
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      // A refresh (state known): the credential is gone, and the engine drops it from the state.
      if (Object.keys(old).length > 0) return { id: "", props: {} };
      // ContainerRegistryAuth.get(name, id): no state to drop. The engine would record an empty
      // resource from an empty answer (ReadStep.Apply fails only on no outputs at all), so say so.
      throw new RunpodError(
        `There is no container registry auth with id ${id} in this account (ContainerRegistryAuth.get). ` +
          "Check the id: the credentials' ids are listed by client.registryAuths.list() and in the RunPod console.",
        { cause: error },
      );
    }
  });
};

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
 * `delete`: over REST v2, first lists the pods, templates and serverless endpoints whose `registry`
 * is this credential (`users.ts`: terminated pods left out, 10 s in all on the settings' clock, a
 * list that does not answer by then skipped with a warning); a pod there refuses the delete before anything is deleted,
 * naming it (the service refuses for pods); templates and endpoints get a warning naming them (the
 * service empties a template's `registry` and leaves endpoints naming the deleted credential). Then DELETE by id; a credential
 * already gone counts as deleted. A refusal of the service itself (over v1, or a user that appeared
 * between the list and the DELETE) quotes what the service said and what to do.
 */
export const deleteRegistryAuth: ResourceOperations["delete"] = async (settings, id, props) => {
  const secrets = registrySecrets(props ?? {}, settings);
  const label = typeof props?.name === "string" ? `"${props.name}" (id ${id})` : `id ${id}`;
  await withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    if (client.restDialect === "v2") await refuseIfUsed(client, id, label, settings?.clock);
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
            `\`registry\` argument), then run the destroy or update again.`,
          { cause: error },
        );
      }
      throw error;
    }
  });
};

/**
 * Throws, naming every pod whose `registry` is `id`, while the credential still exists (one
 * already gone stays a finished delete): the service refuses such a delete, and saying which pods
 * before trying is clearer than its 400. Templates and endpoints that name it do not block the
 * delete (the service empties a template's `registry`; a credential rotated in the same deploy
 * re-points them next), but a warning names each, since a later pull of a private image fails.
 */
async function refuseIfUsed(client: RunpodClient, id: string, label: string, clock?: Clock): Promise<void> {
  const { users, unchecked, unanswered } = await registryUsers(client, id, clock);
  if (unchecked.length > 0) {
    process.stderr.write(
      `warning: deleting container registry auth ${label}: the API key may not list ${unchecked.join("s, ")}s, ` +
        "so those that use this credential were not checked\n",
    );
  }
  if (unanswered.length > 0) {
    process.stderr.write(
      `warning: deleting container registry auth ${label}: the list of ${unanswered.join("s, ")}s did not answer ` +
        `within ${READ_BOUND_MS / 1000} s, so those that use this credential were not checked ` +
        "(RunPod still refuses to delete a credential a pod pulls with)\n",
    );
  }
  const pods = users.filter((u) => u.kind === "pod");
  const others = users.filter((u) => u.kind !== "pod");
  if (users.length === 0) return;
  try {
    await client.registryAuths.get(id);
  } catch (error) {
    if (error instanceof NotFoundError) return;
    throw error;
  }
  if (pods.length > 0) {
    throw new RunpodError(
      `container registry auth ${label} is still used by ${describeUsers(pods)}, so nothing was deleted: ` +
        `${consequences(pods)}. Set their \`registry\` to another credential (or null for a public image), or ` +
        "delete them, and run pulumi up; then run the destroy or update again.",
    );
  }
  process.stderr.write(
    `warning: deleting container registry auth ${label} while ${describeUsers(others)} name it: ${consequences(others)}\n`,
  );
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

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

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["password"],
  check: (_settings, _olds, news) => checkRegistryAuthArgs(news),
  diff: (_settings, _id, olds, news) => diffPlan(olds, news),
  create: createRegistryAuth,
  read: readRegistryAuth,
  update: (_settings, id, olds, news) => updateRegistryAuth(id, olds, news),
  delete: deleteRegistryAuth,
});

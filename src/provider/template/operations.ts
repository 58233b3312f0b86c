/**
 * The operations of `Template`'s dynamic provider. They run in Pulumi's dynamic-provider host,
 * never in the program: the serialized provider (`resource.ts`) loads this module from the
 * installed package, as `pulumi-runpod-dynamic/dist/provider/template/operations.js`, and calls
 * them by name. The API key comes from `configure(req)` (stack config `runpod:apiKey`, else
 * `RUNPOD_API_KEY`) and lives only in the host process's memory.
 *
 * Secrets: `env` is one secret as a whole. Whatever these functions return or throw has every
 * value of `env` (old and new) and the API key redacted, in every encoding the client's
 * `redact.ts` knows, except `env` itself, the secret output the engine re-marks. An env value the
 * program also writes in a plain argument (say `/workspace` in both `env` and `mounts`) is not a
 * secret of the program's: it stays, or the outputs would never match the inputs.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call these functions by name,
 * with these arguments, using whatever version of the package is installed when they run (a
 * refresh, a destroy, or an up that finds no change runs the stored text). Keep every name and
 * signature below, accept every older state shape, and never move this file: a stored text
 * `require`s its path.
 *
 * Texts written since every resource shares one provider class (`../common/dynamicProvider.ts`)
 * call only `operations` below, method by method (`operations.check(settings, olds, news)`, ...);
 * texts written before it call the named functions (test/provider/mainState.test.ts replays them).
 *
 * ```ts
 * settingsFromConfigure(config: ConfigSource | undefined): RunpodSettings
 * checkTemplate(settings: RunpodSettings | undefined, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<CheckResult>
 * diffTemplate(id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult>
 * createTemplate(settings: RunpodSettings | undefined, inputs: Record<string, unknown>): Promise<CreateResult>
 * readTemplate(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown> | undefined): Promise<ReadResult>
 * updateTemplate(settings: RunpodSettings | undefined, id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<UpdateResult>
 * deleteTemplate(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown>): Promise<void>
 * ```
 */
import { isDeepStrictEqual } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import type { Template, TemplateUpdateInput } from "../../client";
import { BadRequestError, ConflictError, describeBody, RunpodError } from "../../client";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readForRefresh } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { envSecretsOf, redact, redactedOutsideEnv } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { ARG_NAMES, checkTemplateArgs, MOUNT_REMOVAL, OMITTED_MEANS, plainInputs } from "./args";

type Props = Record<string, unknown>;
type Settings = RunpodSettings | undefined;

export { settingsFromConfigure } from "../common/host";
export type { TemplateInputs } from "./args";

/**
 * `check`: field-level validation (`args.ts`) and a v1 `runpod:restUrl` (templates are REST v2
 * only); unknown values (preview) pass through untouched. No network.
 */
export const checkTemplate = (settings: Settings, olds: Props, news: Props) =>
  operations.check(settings, olds, news);

/**
 * `diff`: old outputs (the template as last read) against new inputs. A field the program gives
 * is compared with the template's; a field it omits is compared with what it stands for
 * (`OMITTED_MEANS`; `disk` omitted is no change). Every change is a PATCH, except removing the
 * persistent mount, which a PATCH cannot do: that replaces the template (a new one is created
 * first, then the old one is deleted; names need not be unique).
 */
export const diffTemplate = (id: string, olds: Props, news: Props) =>
  operations.diff(undefined, id, olds, news);

async function diffPlan(olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
  const { patch, replaces, unknown } = plannedChanges(olds, news);
  const changed = [...Object.keys(patch), ...unknown];
  return { changes: changed.length > 0 || replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/**
 * `create`: one POST, reconciled by listing after a lost answer (`createReconciled`: never a
 * second template). Outputs are the template as the service answered it.
 */
export const createTemplate: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  const secrets = templateSecrets([inputs], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const { record, recoveredAfter } = await createReconciled<Template>({
      kind: "template",
      name: inputs.name,
      list: () => client.templates.list(),
      create: () => client.templates.create(inputs),
      differences: (listed) => templateDifferences(listed, inputs),
      signal: settings?.signal,
    });
    if (recoveredAfter) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
    return { id: record.id, outs: redactedOutsideEnv(record, secrets) };
  });
};

/**
 * `read`: GET by id. Refresh (props from state): a template that is gone gives an empty id, and a
 * change made outside Pulumi (an image changed in the console) shows in the outputs and in the
 * returned inputs, so the next diff sees it. `Template.get` (no props): a wrong id is an error
 * naming it, not an empty resource. `env` is never returned among the inputs (only as the
 * secret output).
 */
export const readTemplate: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const adopting = typeof old.name !== "string";
  return withProviderErrors(templateSecrets([old], settings), async () => {
    const notFound =
      `No template with id ${id} in this account (GET /templates/${id} answered 404). ` +
      "Check the id given to Template.get: the RunPod console lists your templates, and " +
      "client.templates.list() returns them with their ids.";
    const live = await readForRefresh(() => hostClient(settings).templates.get(id), adopting, notFound);
    if (live === undefined) return { id: "", props: {} };
    const secrets = templateSecrets([old, { env: live.env }], settings);
    const outs = redactedOutsideEnv(live, secrets);
    const inputs: Record<string, unknown> = {};
    for (const key of ARG_NAMES) if (key !== "env" && outs[key] !== undefined) inputs[key] = outs[key];
    return { id: live.id || id, props: outs, inputs };
  });
};

/**
 * `update`: one PATCH with the fields that differ (an omitted field sends what it stands for, so
 * the service really drops it: `env: {}`, `ports: []`, `registry: null`, ...). Outputs are the
 * template as the service answered. The PATCH is one call: when it fails, nothing changed.
 */
export const updateTemplate: ResourceOperations["update"] = async (settings, id, olds, news) => {
  const inputs = plainInputs(news);
  const secrets = templateSecrets([inputs, olds], settings);
  return withProviderErrors(secrets, async () => {
    const { patch } = plannedChanges(olds, inputs as Record<string, unknown>);
    if (Object.keys(patch).length === 0) return { outs: redactedOutsideEnv(olds, secrets) };
    const client = hostClient(settings);
    const updated = await client.templates.update(id, patch as TemplateUpdateInput);
    const outs = redactedOutsideEnv(updated, secrets);
    const ignored = Object.keys(patch).filter((key) => !appliedAsSent(key, patch[key], updated));
    if (ignored.length > 0) throw notApplied(id, inputs.name, ignored, patch, updated, outs, news.__provider);
    return { outs };
  });
};

/** True when the answer to a PATCH holds `sent` for `key` (a mount: the persistent mount sent). */
function appliedAsSent(key: string, sent: unknown, answer: Template): boolean {
  const now = (answer as Record<string, unknown>)[key];
  if (key === "mounts") return isDeepStrictEqual(persistentOf(now), persistentOf(sent));
  return isDeepStrictEqual(normalized(now), normalized(sent));
}

/**
 * A PATCH the service answered 200 without applying some fields sent (the v2 document lists
 * `allowedCudaVersions`, `startJupyter` and `startSsh` in `UpdateTemplateRequest` but not among
 * the PATCH's "mutable fields"): a partial failure naming them and what to do, instead of a diff
 * that never settles. `properties` are the template as answered, `env` included (the engine
 * re-marks it secret from the inputs: `annotateSecrets` in `provider.Update`, provider_plugin.go),
 * with the `__provider` the host received: the engine stores them as the outputs and passes them,
 * exactly, to the next read, update and delete, and the host loads the provider for a read or
 * delete from them (`getProvider(props)` in cmd/dynamic-provider).
 */
function notApplied(
  id: string,
  name: string,
  ignored: string[],
  patch: Record<string, unknown>,
  answer: Template,
  outs: Record<string, unknown>,
  provider: unknown,
): Error {
  const what = ignored.map((key) =>
    key === "env"
      ? "env (values not shown)"
      : `${key} (sent ${JSON.stringify(patch[key])}, the template has ${JSON.stringify((answer as Record<string, unknown>)[key] ?? null)})`,
  );
  const error = new RunpodError(
    `RunPod answered the update of template "${name}" (id ${id}) without applying ${what.join(", ")}. ` +
      "The service may not let these fields change on an existing template. To have Pulumi make a new " +
      `template with them instead, add replaceOnChanges: ${JSON.stringify(ignored)} to this Template's ` +
      "resource options and run pulumi up again.",
  ) as RunpodError & { id?: string; properties?: Record<string, unknown> };
  error.id = id;
  error.properties = provider === undefined ? outs : { ...outs, __provider: provider };
  return error;
}

/**
 * `delete`: DELETE by id; a template already gone counts as deleted (deleting an endpoint also
 * deletes its bound template). A refusal (the template is bound to an endpoint or used by a
 * pod) says which, in the service's words, and what to do.
 */
export const deleteTemplate: ResourceOperations["delete"] = async (settings, id, props) => {
  const secrets = templateSecrets([props ?? {}], settings);
  const label = typeof props?.name === "string" ? `"${props.name}" (id ${id})` : `id ${id}`;
  await withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    try {
      await deleteIfPresent(() => client.templates.delete(id));
    } catch (error) {
      if (!(error instanceof BadRequestError || error instanceof ConflictError)) throw error;
      const said = describeBody(error.body);
      const holder = /endpoint/i.test(said)
        ? "a serverless endpoint is bound to it"
        : /\bpod\b/i.test(said)
          ? "a pod uses it"
          : "it is bound to a serverless endpoint or used by a pod";
      throw new RunpodError(
        `RunPod refused to delete template ${label}: ${holder}` +
          (said ? ` (the service said: ${said})` : "") +
          ". A template in use cannot be deleted. Delete that endpoint or pod first, or point it at " +
          "another template (an endpoint's templateId), then run the destroy or update again. In " +
          "one Pulumi program, give the endpoint templateId: template.id so the engine deletes the " +
          "endpoint first (deleting an endpoint also deletes its bound template).",
        { cause: error },
      );
    }
  });
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/**
 * The arguments of a create that the template `listed` does not hold, compared as diff compares
 * them (an omitted argument as the service's value for it): empty when it is what was sent.
 */
export function templateDifferences(listed: Template, sent: Record<string, unknown>): string[] {
  const { patch, replaces, unknown } = plannedChanges(listed as Record<string, unknown>, sent);
  return [...new Set([...replaces, ...Object.keys(patch), ...unknown])];
}

/** What an update of `olds` (outputs) to `news` (inputs) sends, what replaces, and what is not known yet. */
function plannedChanges(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): { patch: Record<string, unknown>; replaces: string[]; unknown: string[] } {
  const patch: Record<string, unknown> = {};
  const replaces: string[] = [];
  const unknown: string[] = [];
  for (const key of ARG_NAMES) {
    const given = news[key];
    if (given !== undefined && given !== null && containsUnknown(given)) {
      unknown.push(key);
      continue;
    }
    if (key === MOUNT_REMOVAL) {
      const had = persistentOf(olds.mounts);
      const wants = persistentOf(given);
      if (had !== undefined && wants === undefined) replaces.push(key);
      else if (wants !== undefined && !isDeepStrictEqual(had, wants)) patch[key] = { persistent: wants };
      continue;
    }
    const desired =
      given !== undefined && given !== null ? given : (OMITTED_MEANS as Record<string, unknown>)[key];
    if (desired === undefined) continue; // disk omitted: the service's value stays
    if (!isDeepStrictEqual(normalized(olds[key]), normalized(desired))) patch[key] = desired;
  }
  return { patch, replaces, unknown };
}

/** `mounts.persistent`, or undefined when there is none. */
function persistentOf(mounts: unknown): { size: unknown; path: unknown } | undefined {
  const persistent = (mounts as { persistent?: { size: unknown; path: unknown } } | null | undefined)
    ?.persistent;
  return persistent ? { size: persistent.size, path: persistent.path } : undefined;
}

/** `undefined` and `null` compare equal to the empty value a service answer carries for them. */
function normalized(value: unknown): unknown {
  return value === undefined ? null : value;
}

/**
 * Values never to return or throw outside `env`: every env value of the given argument sets and
 * the API key. An env value that appears in the program's own plain arguments is not a secret of
 * the program's (see the module comment).
 */
function templateSecrets(
  sets: readonly Record<string, unknown>[],
  settings: RunpodSettings | undefined,
): string[] {
  return envSecretsOf(sets, settings);
}

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: (settings, _olds, news) => checkTemplateArgs(settings, news),
  diff: (_settings, _id, olds, news) => diffPlan(olds, news),
  create: createTemplate,
  read: readTemplate,
  update: updateTemplate,
  delete: deleteTemplate,
});

/**
 * The operations of `NetworkVolume`'s dynamic provider. They run in Pulumi's dynamic-provider host,
 * never in the program: the serialized provider (`resource.ts`) loads this module from the
 * installed package, as `pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js`, and calls
 * them by name. The API key comes from `configure(req)` (stack config `runpod:apiKey`, else
 * `RUNPOD_API_KEY`) and lives only in the host process's memory; whatever they return or throw has
 * it redacted. A volume has no secret of its own.
 *
 * Both REST dialects (chosen by `runpod:restUrl`): the client maps v2's `dataCenter` onto
 * `dataCenterId`, and `type` exists only over v2.
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
 * checkNetworkVolume(settings: RunpodSettings | undefined, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<CheckResult>
 * diffNetworkVolume(id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult>
 * createNetworkVolume(settings: RunpodSettings | undefined, inputs: Record<string, unknown>): Promise<CreateResult>
 * readNetworkVolume(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown> | undefined): Promise<ReadResult>
 * updateNetworkVolume(settings: RunpodSettings | undefined, id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<UpdateResult>
 * deleteNetworkVolume(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown>): Promise<void>
 * ```
 */
import type * as pulumi from "@pulumi/pulumi";
import type { NetworkVolume as WireVolume } from "../../client";
import {
  BadRequestError,
  ConflictError,
  DEFAULT_REST_URL,
  describeBody,
  RunpodError,
  resolveRestUrl,
} from "../../client";
import { checkDataCenters } from "../catalog/dataCenterCheck";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readOrGone } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { apiKeySecrets, redact } from "../common/redaction";
import { isUnknown } from "../common/unknown";
import { boundEntry } from "../common/wording";
import { type RunpodSettings, resolveSettings } from "../config";
import { volumeCostFields } from "../cost/volume";
import {
  checkNetworkVolumeArgs,
  type NetworkVolumeOutputs,
  plainInputs,
  REPLACING_FIELDS,
  replaceRefusal,
  sameImmutable,
  shrinkMessage,
} from "./args";

type Props = Record<string, unknown>;
type Settings = RunpodSettings | undefined;

export { settingsFromConfigure } from "../common/host";
export type { NetworkVolumeInputs, NetworkVolumeOutputs } from "./args";

/**
 * `check`: field-level validation (`args.ts`) against the dialect `runpod:restUrl` speaks (size
 * bounds, `type` only on v2), and a size smaller than the previous inputs' is refused; a new
 * `dataCenterId` the catalog does not list is refused (the only network: one catalog read per
 * host). Unknown values (preview) pass through untouched.
 */
export const checkNetworkVolume = (settings: Settings, olds: Props, news: Props) =>
  operations.check(settings, olds, news);

/**
 * check's own part: the arguments (`args.ts`), then a new `dataCenterId` against the catalog's
 * data centres (REST v2; read once per host, and a failed read judges nothing:
 * `../catalog/dataCenterCheck.ts`), then the preview's monthly figure.
 */
async function checkVolume(
  settings: Settings,
  olds: Props,
  given: Props,
): Promise<pulumi.dynamic.CheckResult> {
  // The figures check itself added to earlier inputs are no arguments.
  const { monthlyCostUsd: _usd, monthlyCostNote: _note, ...news } = given;
  const checked = checkNetworkVolumeArgs(news, { dialect: dialectOf(settings), olds });
  if ((checked.failures ?? []).length > 0) return checked;
  const where = await checkDataCenters(settings, "dataCenterId", news.dataCenterId, olds.dataCenterId);
  if (where.length > 0) return { ...checked, failures: where };
  // The preview's figure (list price, or the configured rate); no network.
  const cost = volumeCostFields(news.size, news.type, settings);
  if (cost.failure !== undefined) return { ...checked, failures: [{ property: "", reason: cost.failure }] };
  return { inputs: { ...checked.inputs, ...cost.fields }, failures: [] };
}

/**
 * `diff`: old outputs (the volume as last read) against new inputs. `dataCenterId` and a given
 * `type` that differ replace the volume (the service cannot change them; a `type` left out keeps
 * the tier the service chose); `name` and a larger `size` are a PATCH. A smaller `size` than the
 * volume has (grown outside this program, seen by refresh) throws: the preview fails instead of
 * planning a PATCH the service refuses, and a shrink never becomes a replacement.
 *
 * A state written over REST v1 has no `type` (v1 has no tiers): a `type` given after moving the
 * stack to v2 is then an update that checks the tier (see `updateNetworkVolume`), never a
 * replacement planned on a tier the state does not know.
 */
export const diffNetworkVolume = (id: string, olds: Props, news: Props) =>
  operations.diff(undefined, id, olds, news);

async function diffPlan(
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.DiffResult> {
  const given = (field: string) => news[field] !== undefined && news[field] !== null;
  // Compared as the service compares them (any letter case): a refresh that reads `eu-ro-1` back
  // must not plan a replacement, which would delete the volume's data.
  const replaces = REPLACING_FIELDS.filter(
    (field) =>
      given(field) &&
      (field !== "type" || olds.type !== undefined) &&
      (isUnknown(news[field]) || !sameImmutable(news[field], olds[field])),
  );
  const label = typeof olds.name === "string" ? `"${olds.name}" (id ${id})` : `id ${id}`;
  if (replaces.length > 0 && news.allowReplaceDeletingData === true) {
    // The preview shows a replacement; this line says what it costs.
    process.stderr.write(
      `warning: NetworkVolume ${label}: ${replaces.join(" and ")} changes, so the volume is replaced: a new, ` +
        "empty volume is created and this one is deleted with all its data (allowReplaceDeletingData is true)\n",
    );
    return { changes: true, replaces: [...replaces], deleteBeforeReplace: false };
  }
  const known = replaces.filter((field) => !isUnknown(news[field]));
  if (known.length > 0) {
    throw new RunpodError(
      replaceRefusal(
        label,
        olds.size,
        known.map((field) => `${field} ${olds[field]} -> ${news[field]}`),
      ),
    );
  }
  // Not known in the preview, and no opt-in: planned as a change, never as a replacement; the
  // diff of the up itself sees the value and refuses a different one.
  if (replaces.length > 0) return { changes: true, replaces: [] };
  if (typeof news.size === "number" && typeof olds.size === "number" && news.size < olds.size) {
    const which = typeof olds.name === "string" ? `"${olds.name}", id ${id}` : `id ${id}`;
    throw new RunpodError(shrinkMessage(olds.size, news.size, ` as last read from the service (${which})`));
  }
  const changed = (["name", "size"] as const).filter(
    (field) => isUnknown(news[field]) || news[field] !== olds[field],
  );
  const tierUnknown = given("type") && olds.type === undefined;
  return { changes: changed.length > 0 || tierUnknown, replaces: [] };
}

/**
 * `create`: POST once, never leaving a duplicate after a lost answer (`createReconciled`: list
 * before, and after a failure the service may have acted on, list again; one new volume of this
 * name is this create's). Outputs are the volume as the service answered.
 */
export const createNetworkVolume: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  return withProviderErrors(apiKeySecrets(settings), async () => {
    const client = hostClient(settings);
    const { record, recoveredAfter } = await createReconciled({
      kind: "network volume",
      name: inputs.name,
      list: () => client.networkVolumes.list(),
      create: () => client.networkVolumes.create(inputs),
      differences: (listed) => volumeDifferences(listed, inputs),
      bills: true,
      signal: settings?.signal,
    });
    // The CLI shows the host's stderr to the user (under the stack): redacted like every message.
    if (recoveredAfter !== undefined)
      process.stderr.write(`warning: ${redact(recoveredAfter, apiKeySecrets(settings))}\n`);
    return { id: record.id, outs: outputsOf(record, settings) };
  });
};

/**
 * The arguments of a create that the volume `listed` does not hold: `size` as a number, the data
 * centre and `type` in any letter case (ids the service normalises); `type` omitted is the
 * service's choice, so any type holds it.
 */
export function volumeDifferences(
  listed: WireVolume,
  sent: { name: string; size: number; dataCenterId: string; type?: string },
): string[] {
  const same = (a: unknown, b: unknown) =>
    typeof a === "string" && typeof b === "string" && a.toUpperCase() === b.toUpperCase();
  const fields: string[] = [];
  if (listed.name !== sent.name) fields.push("name");
  if (listed.size !== sent.size) fields.push("size");
  if (!same(listed.dataCenterId, sent.dataCenterId)) fields.push("dataCenterId");
  if (sent.type !== undefined && !same(listed.type, sent.type)) fields.push("type");
  return fields;
}

/**
 * `read`: GET by id. On refresh a volume that is gone gives an empty id (it leaves the state);
 * otherwise the outputs AND the inputs become what the service holds, so a change made outside
 * Pulumi (a rename, a volume grown in the console) shows as drift and the next diff starts from
 * it. `NetworkVolume.get` reads with no prior outputs: a 404 then throws, naming the id.
 */
export const readNetworkVolume: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const adopting = old.dataCenterId === undefined && old.size === undefined;
  return withProviderErrors(apiKeySecrets(settings), async () => {
    const live = await readOrGone(() => hostClient(settings).networkVolumes.get(id));
    if (live === undefined) {
      if (!adopting) return { id: "", props: {} };
      throw new RunpodError(
        `no network volume with id ${id} in this account (NetworkVolume.get reads an existing volume by its ` +
          "id): check the id against the RunPod console or getNetworkVolumes(), and the account of runpod:apiKey.",
      );
    }
    const outs = outputsOf(live, settings);
    return { id: live.id || id, props: outs, inputs: { ...outs } };
  });
};

/**
 * `update`: one PATCH of what changed (`name`, a larger `size`); outputs are the service's answer.
 * A smaller size than the volume has is refused before any request (as in `diff`). When the state
 * has no tier (written over REST v1) and the program gives `type`, the volume is read first: a
 * different tier fails before any change (the tier is immutable), the same one is recorded.
 */
export const updateNetworkVolume: ResourceOperations["update"] = async (settings, id, oldsRaw, news) => {
  const olds = withoutProvider(oldsRaw ?? {});
  const inputs = plainInputs(news);
  return withProviderErrors(apiKeySecrets(settings), async () => {
    if (typeof olds.size === "number" && inputs.size < olds.size) {
      throw new RunpodError(shrinkMessage(olds.size, inputs.size, ` (id ${id})`));
    }
    const patch: { name?: string; size?: number } = {};
    if (inputs.name !== olds.name) patch.name = inputs.name;
    if (inputs.size !== olds.size) patch.size = inputs.size;
    const client = hostClient(settings);
    if (inputs.type !== undefined && olds.type === undefined) {
      const current = await client.networkVolumes.get(id);
      if (typeof current.type === "string" && current.type !== inputs.type) {
        throw new RunpodError(
          `network volume "${boundEntry(current.name)}" (id ${boundEntry(id)}) is ${boundEntry(current.type)} on the service, and the program asks ` +
            `for type ${inputs.type}. The tier cannot change and this stack's state did not know it (it was ` +
            "written over REST v1, which has no tiers), so nothing was changed. Set type to " +
            `${boundEntry(current.type)}, or leave type out; or run pulumi refresh and then pulumi up, whose preview shows ` +
            "the replacement (a new, empty volume) that another tier needs.",
        );
      }
      if (Object.keys(patch).length === 0) return { outs: outputsOf(current, settings) };
    }
    const live =
      Object.keys(patch).length === 0
        ? await client.networkVolumes.get(id)
        : await client.networkVolumes.update(id, patch);
    return { outs: outputsOf(live, settings) };
  });
};

/**
 * `delete`: DELETE by id; a volume already gone counts as deleted. A refusal (the volume is still
 * attached to an endpoint) quotes what the service said holds it and says what to do.
 */
export const deleteNetworkVolume: ResourceOperations["delete"] = async (settings, id, props) => {
  const label = typeof props?.name === "string" ? `"${props.name}" (id ${id})` : `id ${id}`;
  await withProviderErrors(apiKeySecrets(settings), async () => {
    try {
      await deleteIfPresent(() => hostClient(settings).networkVolumes.delete(id));
    } catch (error) {
      if (!(error instanceof BadRequestError || error instanceof ConflictError)) throw error;
      const said = describeBody(error.body);
      throw new RunpodError(
        `RunPod refused to delete network volume ${label}` +
          (said ? `: ${said}` : " (it is probably still attached to a serverless endpoint or a pod)") +
          ". To delete it, detach it first: remove its id from the networkVolumes of each endpoint " +
          "that holds it (the networkVolumes argument of a ServerlessEndpoint) and run pulumi up, or " +
          "delete those endpoints; then run the destroy or update again.",
        { cause: error },
      );
    }
  });
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The REST dialect of the settings' `restUrl` (the default's when unset); undefined when malformed. */
function dialectOf(settings: RunpodSettings | undefined): "v1" | "v2" | undefined {
  try {
    return resolveRestUrl((settings ?? resolveSettings(undefined)).restUrl ?? DEFAULT_REST_URL).dialect;
  } catch {
    return undefined;
  }
}

/** The outputs: the volume as the service holds it (no `id`: that is the resource's id). */
function outputsOf(volume: WireVolume, settings: RunpodSettings | undefined): NetworkVolumeOutputs {
  const outs: NetworkVolumeOutputs = {
    name: volume.name,
    size: volume.size,
    dataCenterId: volume.dataCenterId,
  };
  if (typeof volume.type === "string") outs.type = volume.type;
  // What it costs a month at list prices; a bad configured rate was check's failure: no figure here.
  return { ...outs, ...volumeCostFields(volume.size, volume.type, settings).fields };
}

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  check: checkVolume,
  diff: (_settings, id, olds, news) => diffPlan(id, olds, news),
  create: createNetworkVolume,
  read: readNetworkVolume,
  update: updateNetworkVolume,
  delete: deleteNetworkVolume,
});

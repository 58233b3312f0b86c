/**
 * The operations of `EcrDelegation`'s dynamic provider. They run in Pulumi's dynamic-provider host,
 * never in the program: the serialized provider (`resource.ts`) loads this module from the
 * installed package, as `pulumi-runpod-dynamic/dist/provider/ecrDelegation/operations.js`, and
 * calls `operations` by method. The API key comes from `configure(req)` (stack config
 * `runpod:apiKey`, else `RUNPOD_API_KEY`) and lives only in the host process's memory; whatever
 * these return or throw has it redacted. A delegation holds no secret of its own (the request is
 * an ARN and a name).
 *
 * REST v2 only (`/v2/registries/delegations`): list, create and revoke; the document has no read of
 * one delegation and no update. So a read lists and finds the id, and every change of an argument
 * replaces the delegation (a new one is created, then this one is revoked).
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call `operations` below, method
 * by method, using whatever version of the package is installed when they run. Keep the export and
 * its signatures, accept every older state shape, and never move this file: a stored text
 * `require`s its path.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { EcrDelegation } from "../../client";
import { parseEcrRepositoryArn, RunpodError } from "../../client";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { apiKeySecrets, redact } from "../common/redaction";
import { isUnknown } from "../common/unknown";
import { ARG_NAMES, checkEcrDelegationArgs, type EcrDelegationInputs, plainInputs } from "./args";

type Props = Record<string, unknown>;

export type { EcrDelegationInputs } from "./args";

/** The outputs stored in state: the delegation as read back, and the `resource` ARN it was made from. */
export interface EcrDelegationOutputs {
  /** The ARN given (the service does not answer it); absent after `EcrDelegation.get`. */
  resource?: string;
  name?: string;
  delegatorUserId: string;
  awsUser: string;
  repository: string;
  tag: string;
  awsRegion: string;
  dockerRegistryUri?: string;
  createdAt: string;
}

/**
 * `diff`: old outputs against new inputs. The service cannot change a delegation, so a different
 * `resource` or `name` (or one not known yet in a preview) replaces it; `replaces` names the field
 * the preview shows as forcing it. The new delegation is created before this one is revoked.
 */
async function diffPlan(olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
  const replaces = ARG_NAMES.filter((field) => {
    const wanted = news[field] ?? undefined;
    return isUnknown(wanted) || wanted !== (olds[field] ?? undefined);
  });
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/**
 * `create`: one POST, reconciled by listing after a lost answer, a 500, a 429 or a 503
 * (`createReconciled` with `bills`: never a second delegation). Outputs are the delegation as the service answered it, with the `resource` given.
 */
export const createEcrDelegation: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  const secrets = apiKeySecrets(settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const sent = parseEcrRepositoryArn(inputs.resource);
    if (sent === undefined) {
      // check refuses it first; a state edited by hand could still hold one.
      throw new RunpodError(`resource ${JSON.stringify(inputs.resource)} is no ECR repository ARN`);
    }
    const listed = async () =>
      (await client.registries.delegations.list()).map((d) => ({ id: d.id, name: keyOf(d), delegation: d }));
    const { record, recoveredAfter } = await createReconciled({
      kind: "ECR delegation",
      name: keyOf({ name: inputs.name, repository: sent.repository }),
      list: listed,
      create: async () => {
        const d = await client.registries.delegations.create(inputs);
        return { id: d.id, name: keyOf(d), delegation: d };
      },
      differences: ({ delegation: d }) => delegationDifferences(d, inputs),
      // Never POSTed twice blind: a 429 or 503 may follow a create the service made.
      bills: true,
      signal: settings?.signal,
    });
    if (recoveredAfter !== undefined) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
    return { id: record.id, outs: outputsOf(record.delegation, inputs.resource) };
  });
};

/**
 * What reconciling matches a listed delegation by, as `name`: the delegation's name, or for an
 * unnamed one, its repository (`for runpod/deployment`). Messages quote it.
 */
function keyOf(d: { name?: string | null; repository: string }): string {
  return typeof d.name === "string" ? d.name : `for ${d.repository}`;
}

/**
 * The arguments of a create that the delegation `listed` does not hold: the ARN's account,
 * region, repository and, when the ARN names one, tag (without one the service chooses), and the
 * name (none is none).
 */
export function delegationDifferences(listed: EcrDelegation, sent: EcrDelegationInputs): string[] {
  const ref = parseEcrRepositoryArn(sent.resource);
  if (ref === undefined) return ["resource"];
  const fields: string[] = [];
  if ((listed.name ?? undefined) !== sent.name) fields.push("name");
  const same =
    listed.awsUser === ref.awsUser &&
    listed.awsRegion === ref.awsRegion &&
    listed.repository === ref.repository &&
    (ref.tag === undefined || listed.tag === ref.tag);
  if (!same) fields.push("resource");
  return fields;
}

/** Pause before listing again when a refresh's list leaves the delegation out, in ms. */
const RELIST_PAUSE_MS = 500;

/**
 * `read`: lists the account's delegations (the document has no read of one) and finds the id. On
 * refresh a delegation that is gone (revoked outside Pulumi: two lists 500 ms apart leave it out)
 * gives an empty id: it leaves the state, and the next `up` creates it again. `EcrDelegation.get` (no recorded outputs): an id not
 * in the account is an error naming it.
 */
export const readEcrDelegation: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const adopting = typeof old.resource !== "string" && typeof old.awsUser !== "string";
  return withProviderErrors(apiKeySecrets(settings), async () => {
    const client = hostClient(settings);
    const find = async () => (await client.registries.delegations.list()).find((d) => d.id === id);
    let live = await find();
    if (live === undefined && !adopting) {
      // A list may lag behind a create: look once more before dropping it (the next up would
      // create a second delegation).
      await new Promise((resolve) => setTimeout(resolve, RELIST_PAUSE_MS));
      live = await find();
    }
    if (live === undefined) {
      if (!adopting) return { id: "", props: {} };
      throw new RunpodError(
        `No ECR delegation with id ${id} in this account (GET /registries/delegations does not list it). ` +
          "Check the id given to EcrDelegation.get: getEcrDelegations() and " +
          "client.registries.delegations.list() return the account's delegations with their ids.",
      );
    }
    const resource = typeof old.resource === "string" ? old.resource : undefined;
    const outs = outputsOf(live, resource);
    const inputs: Props = {};
    if (resource !== undefined) inputs.resource = resource;
    if (outs.name !== undefined) inputs.name = outs.name;
    return { id: live.id, props: { ...outs }, inputs };
  });
};

/**
 * `update`: never planned (every change replaces, see `diffPlan`). An engine that asks anyway is
 * told so, and nothing is sent.
 */
export const updateEcrDelegation: ResourceOperations["update"] = async (_settings, id) => {
  throw new RunpodError(
    `ECR delegation id ${id} cannot change in place (the service has no update of a delegation); ` +
      "a change of resource or name replaces it. Run pulumi up again: its preview plans the replacement.",
  );
};

/** `delete`: revokes by id; a delegation already gone (404) counts as revoked. */
export const deleteEcrDelegation: ResourceOperations["delete"] = async (settings, id) => {
  await withProviderErrors(apiKeySecrets(settings), async () => {
    await deleteIfPresent(() => hostClient(settings).registries.delegations.revoke(id));
  });
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The outputs: the delegation as the service holds it (no `id`: that is the resource's id). */
function outputsOf(d: EcrDelegation, resource: string | undefined): EcrDelegationOutputs {
  return {
    ...(resource === undefined ? {} : { resource }),
    ...(typeof d.name === "string" ? { name: d.name } : {}),
    delegatorUserId: d.delegatorUserId,
    awsUser: d.awsUser,
    repository: d.repository,
    tag: d.tag,
    awsRegion: d.awsRegion,
    ...(typeof d.dockerRegistryUri === "string" ? { dockerRegistryUri: d.dockerRegistryUri } : {}),
    createdAt: d.createdAt,
  };
}

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  check: (settings, _olds, news) => checkEcrDelegationArgs(settings, news),
  diff: (_settings, _id, olds, news) => diffPlan(olds, news),
  create: createEcrDelegation,
  read: readEcrDelegation,
  update: updateEcrDelegation,
  delete: deleteEcrDelegation,
});

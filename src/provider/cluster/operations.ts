/**
 * The operations of `Cluster`'s dynamic provider. They run in Pulumi's dynamic-provider host, never
 * in the program: the serialized provider (`resource.ts`) loads this module from the installed
 * package, as `pulumi-runpod-dynamic/dist/provider/cluster/operations.js`, and calls its
 * `operations` export (`../common/operations.ts`: the shared check and diff preamble).
 *
 * A cluster bills for every member pod, so the money rules of `Pod` hold: `check` prices it and
 * judges `maxHourlyUsd` and `runpod:maxHourlyUsd` before anything is created; the create's POST is
 * sent once, and a 429 or 503 is settled by listing before any second POST (`createReconciled` with
 * `bills`); once the POST answered, every failure is a partial failure carrying the cluster's id,
 * so nothing created is ever left out of the state.
 *
 * Secrets: `env` is one secret as a whole. Whatever these functions return or throw has every env
 * value and the API key redacted, except in `env` itself, the secret output the engine re-marks.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call `operations.<method>`
 * with the arguments of `ResourceOperations` (`../common/dynamicProvider.ts`). Keep that export
 * and never move this file.
 */
import { isDeepStrictEqual } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import {
  APIError,
  BadRequestError,
  type Cluster,
  type ClusterCreateInput,
  describeBody,
  NotFoundError,
  type Pod,
  type RunpodClient,
  RunpodError,
} from "../../client";
import { checkDataCenters } from "../catalog/dataCenterCheck";
import { checkGpuCount } from "../catalog/gpuCountCheck";
import { CANCELLED, isCancellation } from "../clock";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, labelOf, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readForRefresh } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { envSecretsOf, redact, redactedOutsideEnv } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import { describeError, printable } from "../common/wording";
import type { RunpodSettings } from "../config";
import { pricedCheck } from "../cost/budget";
import { checkClusterCost, clusterCostOutput } from "../cost/cluster";
import { usd } from "../cost/prices";
import { DEFAULT_WAIT_TIMEOUT_MS } from "../pod/args";
import {
  ARG_NAMES,
  type ClusterInputs,
  checkClusterArgs,
  createBodyOf,
  EXTRA_NAMES,
  plainInputs,
} from "./args";
import { describeShortfall, readClusterBack, waitForMembers } from "./members";

type Props = Record<string, unknown>;

/** Arguments whose change replaces the cluster: every one of the create body but `name`. */
const REPLACING = ARG_NAMES.filter((k) => k !== "name" && !EXTRA_NAMES.includes(k as never));

/** Values never to return or throw outside `env`: the env values given and the API key. */
function clusterSecrets(sets: readonly Props[], settings: RunpodSettings | undefined): string[] {
  return envSecretsOf(sets, settings);
}

/** A value as a change is judged: absent, null, false, `[]` and `{}` are all "not given". */
function given(value: unknown): unknown {
  if (value === null || value === false) return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  if (typeof value === "object" && value !== null && Object.keys(value).length === 0) return undefined;
  return value;
}

/** The three fields of `ClusterCompute`, as the read-back or the arguments hold them. */
function computeOf(value: unknown): Props | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const c = value as Props;
  return { gpuTypeId: c.gpuTypeId, gpuCountPerPod: c.gpuCountPerPod, podCount: c.podCount };
}

/** Two ids or enum values the service may spell in another letter case. */
function sameText(a: unknown, b: unknown): boolean {
  return typeof a === "string" && typeof b === "string" && a.toUpperCase() === b.toUpperCase();
}

/** Whether two `compute` blocks are the same pods: counts equal, the GPU type in any letter case. */
function sameCompute(a: unknown, b: unknown): boolean {
  const x = computeOf(a);
  const y = computeOf(b);
  if (x === undefined || y === undefined) return x === y;
  return (
    sameText(x.gpuTypeId, y.gpuTypeId) && x.gpuCountPerPod === y.gpuCountPerPod && x.podCount === y.podCount
  );
}

/** A data centre list as a set of upper-case ids (the order is a preference, not a placement). */
function centreSet(value: unknown): string[] | undefined {
  const list = given(value);
  if (!Array.isArray(list)) return list === undefined ? undefined : [String(list)];
  return [...new Set(list.map((id) => String(id).toUpperCase()))].sort();
}

/**
 * The arguments that replace the cluster when `news` (inputs) differs from `olds` (outputs), in
 * the service's equivalences: `type` and the GPU type in any letter case, `dataCenterIds` in any
 * order (and not at all while the cluster's data centre is among them, or none is asked).
 */
export function replacingChanges(olds: Props, news: Props): string[] {
  return REPLACING.filter((field) => {
    const wanted = news[field];
    if (containsUnknown(wanted)) return true;
    if (field === "compute") return !sameCompute(wanted, olds.compute);
    if (field === "type")
      return !(sameText(wanted, olds.type) || (wanted === undefined && olds.type === undefined));
    if (field === "dataCenterIds") {
      const asked = centreSet(wanted);
      const where = typeof olds.dataCenterId === "string" ? olds.dataCenterId.toUpperCase() : undefined;
      if (where !== undefined) return asked !== undefined && !asked.includes(where);
      return !isDeepStrictEqual(asked, centreSet(olds[field]));
    }
    return !isDeepStrictEqual(given(wanted), given(olds[field]));
  });
}

/**
 * The line a replacement writes to the host's stderr (shown under the stack in the preview): which
 * fields force it, and how many member pods and GPUs it deletes.
 */
export function replacementWarning(
  label: string,
  replaces: readonly string[],
  olds: Props,
): string | undefined {
  if (replaces.length === 0) return undefined;
  const compute = computeOf(olds.compute) ?? {};
  const pods = typeof compute.podCount === "number" ? compute.podCount : undefined;
  const perPod = typeof compute.gpuCountPerPod === "number" ? compute.gpuCountPerPod : undefined;
  const what =
    pods === undefined
      ? "every member pod"
      : `its ${pods} member pods` +
        (perPod === undefined ? "" : ` (${pods * perPod} ${printable(String(compute.gpuTypeId), 80)} GPUs)`);
  return (
    `warning: replacing Cluster ${label} (${replaces.join(", ")} ${replaces.length === 1 ? "changes" : "change"}) ` +
    `creates a new cluster, then deletes this one with ${what} and their disks; the new members start empty. ` +
    "Only name changes in place: to keep the cluster, undo the change."
  );
}

/**
 * `diff`: old outputs (the cluster as last read, with the echo of the arguments) against new
 * inputs. A change of any argument of the create body but `name` replaces the cluster (`replaces`
 * names it) and writes one line to the host's stderr saying how many pods and GPUs that replaces;
 * `name` is a rename in place; the provider's own arguments change nothing on the service.
 */
async function diffCluster(settings: RunpodSettings | undefined, id: string, olds: Props, news: Props) {
  const inputs = plainInputs(news) as unknown as Props;
  const replaces = replacingChanges(olds, inputs);
  const label = labelOf(typeof olds.name === "string" ? olds.name : undefined, id);
  const warning = replacementWarning(label, replaces, olds);
  if (warning !== undefined)
    process.stderr.write(`${redact(warning, clusterSecrets([olds, inputs], settings))}\n`);
  const others = ["name", ...EXTRA_NAMES].filter(
    (k) => containsUnknown(inputs[k]) || !isDeepStrictEqual(inputs[k], olds[k]),
  );
  const result: pulumi.dynamic.DiffResult = {
    changes: replaces.length > 0 || others.length > 0,
    replaces,
    deleteBeforeReplace: false,
  };
  return result;
}

/** The fields the create sent that the listed cluster does not hold (names only). */
export function clusterDifferences(listed: Cluster, sent: ClusterInputs): string[] {
  const out: string[] = [];
  if (!sameText(listed.type, sent.type)) out.push("type");
  if (!sameCompute(listed.compute, sent.compute)) out.push("compute");
  return out;
}

/** Where a cluster stands while a create or update works on it: as last read, and its members. */
interface ClusterProgress {
  cluster: Cluster;
  members?: Pod[];
}

/**
 * The outputs: the cluster as read back, its `members` (id, status, rank, role, and ssh once it
 * has an endpoint), and the
 * echo of the arguments the service does not answer (so the next diff compares them); `env` kept
 * whole (the secret output), every other value redacted.
 */
function outputsOf(
  cluster: Cluster,
  members: readonly Pod[] | undefined,
  inputs: Props,
  secrets: string[],
): Props {
  const echo = Object.fromEntries(
    ARG_NAMES.filter((k) => inputs[k] !== undefined).map((k) => [k, inputs[k]]),
  );
  const record: Props = {
    ...echo,
    ...cluster,
    ...(members === undefined
      ? {}
      : {
          members: members.map((m) => ({
            id: m.id,
            status: m.status,
            ...(typeof m.cluster?.rank === "number" ? { rank: m.cluster.rank } : {}),
            ...(m.cluster?.role ? { role: m.cluster.role } : {}),
            ...(m.ssh?.direct || m.ssh?.proxy ? { ssh: m.ssh } : {}),
          })),
        }),
  };
  delete record.id;
  return redactedOutsideEnv(record, secrets, ["type", "compute", "dataCenterId", "dataCenterIds"]);
}

/** `outs` with `hourlyCost` from the catalog (left out when the catalog cannot be read). */
async function withHourlyCost(settings: RunpodSettings | undefined, outs: Props, client: RunpodClient) {
  const hourlyCost = await clusterCostOutput(settings, { compute: computeOf(outs.compute) }, client);
  return hourlyCost === undefined ? outs : { ...outs, hourlyCost };
}

/** What to do about a cluster kept in the stack after a failure. */
const KEPT_HINT =
  "The cluster is kept in the stack (its member pods cost money while they hold GPUs): fix the cause and run " +
  "pulumi up again (it checks the members again), or remove the Cluster from the program to delete it.";

/** A partial failure keeping the cluster in the state: its id, and its outputs as last read with `__provider`. */
function keptClusterError(
  message: string,
  progress: ClusterProgress,
  inputs: Props,
  secrets: string[],
  provider: unknown,
): Error {
  const properties = outputsOf(progress.cluster, progress.members, inputs, secrets);
  if (provider !== undefined) properties.__provider = provider;
  return Object.assign(new RunpodError(message), { id: progress.cluster.id, properties });
}

/**
 * Reads the members and waits per `waitFor`, then reads the cluster back (`readClusterBack`: a 404
 * read again for up to 30 s); a cluster whose members do not all become usable is a partial failure
 * naming those that did not, with their last status. Any other failure once the cluster exists, a
 * cancellation included, is a partial failure too (`done` says what happened to it first).
 */
async function settleCluster(
  client: RunpodClient,
  settings: RunpodSettings | undefined,
  progress: ClusterProgress,
  inputs: ClusterInputs,
  secrets: string[],
  provider: unknown,
  done: "was created" | "was renamed" | "was read again",
): Promise<Props> {
  const label = labelOf(inputs.name, progress.cluster.id);
  const props = inputs as unknown as Props;
  try {
    const result = await waitForMembers({
      client,
      clusterId: progress.cluster.id,
      podCount: progress.cluster.compute.podCount,
      waitFor: inputs.waitFor ?? "running",
      timeoutMs: inputs.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
      clock: settings?.clock,
      signal: settings?.signal,
    });
    progress.members = result.members;
    const signal = settings?.signal;
    try {
      progress.cluster = await readClusterBack(client, progress.cluster.id, {
        clock: settings?.clock,
        signal,
      });
    } catch (error) {
      if (!isCancellation(error, signal)) throw error;
      // Cancelled: the cluster as last read; a failed wait says why below.
      if (result.kind === "ready") {
        throw keptClusterError(
          `Cluster ${label} ${done} and its members are usable, but ${CANCELLED} before it was read back.\n${KEPT_HINT}`,
          progress,
          props,
          secrets,
          provider,
        );
      }
    }
    if (result.kind === "failure") {
      // None is named when none was listed (a cancel while the service could not find them yet).
      const named =
        result.notUsable.length > 0 ? ` Members not usable: ${describeShortfall(result.notUsable)}.` : "";
      throw keptClusterError(
        `Cluster ${label} is not usable: ${result.why}.${named}\n${KEPT_HINT}`,
        progress,
        props,
        secrets,
        provider,
      );
    }
    return withHourlyCost(settings, outputsOf(progress.cluster, progress.members, props, secrets), client);
  } catch (error) {
    if ((error as { id?: unknown }).id !== undefined) throw error;
    throw keptClusterError(
      `Cluster ${label} ${done}, but a later step failed: ${describeError(error)}\n${KEPT_HINT}`,
      progress,
      props,
      secrets,
      provider,
    );
  }
}

/**
 * The failure of a create the service refused with a 400 (no capacity for the whole cluster in one
 * data centre, or a rule of the document): its words, and what the catalog shows in stock for
 * clusters of that GPU type now.
 */
async function refusedCreate(client: RunpodClient, inputs: ClusterInputs, error: BadRequestError) {
  const gpuTypeId = inputs.compute.gpuTypeId;
  let stock: string;
  try {
    const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["CLUSTER"] } as never);
    const type = gpus.find((g) => g.id === gpuTypeId);
    const centres = (type?.dataCenters ?? []).filter((d) => d.availability && d.availability !== "NONE");
    stock =
      type === undefined || centres.length === 0
        ? `The catalog shows no cluster stock of ${gpuTypeId} now.`
        : `The catalog shows cluster stock of ${gpuTypeId} now: ${type.availability ?? "unknown"}, in ${centres
            .map((d) => `${d.id} (${d.availability})`)
            .join(", ")}.`;
  } catch (readError) {
    stock = `The catalog could not be read for current stock (${describeError(readError)}).`;
  }
  const { podCount, gpuCountPerPod } = inputs.compute;
  return new RunpodError(
    `RunPod refused to create cluster "${inputs.name}" (${podCount} pods × ${gpuCountPerPod} ${gpuTypeId}, ` +
      `${podCount * gpuCountPerPod} GPUs in one data centre): 400 ${printable(describeBody(error.body) || error.message, 500)}. ` +
      `No cluster was created. ${stock} Ask for fewer pods or GPUs per pod, another GPU type or other ` +
      "dataCenterIds, or try again later.",
  );
}

/**
 * The failure of a create the service refused for the account's balance (402): what the cluster
 * would cost an hour at list prices (when the catalog can be read), the service's words (which may
 * give the balance), and what to do. Nothing was created: a 402 is an answer that did not act.
 */
async function shortBalance(
  settings: RunpodSettings | undefined,
  client: RunpodClient,
  inputs: ClusterInputs,
  error: APIError,
) {
  const { podCount, gpuCountPerPod, gpuTypeId } = inputs.compute;
  const cost = await clusterCostOutput(settings, { compute: inputs.compute }, client);
  const hourly =
    typeof cost?.ceilingUsd === "number" && typeof cost.ratePerWorkerUsd === "number"
      ? ` It would cost ${usd(cost.ceilingUsd)} USD an hour at list prices (${podCount} pods × ` +
        `${usd(cost.ratePerWorkerUsd)} USD/h).`
      : "";
  const said = describeBody(error.body);
  return new RunpodError(
    `RunPod refused to create cluster "${inputs.name}" (${podCount} pods × ${gpuCountPerPod} ${gpuTypeId}, ` +
      `${podCount * gpuCountPerPod} GPUs): the account's balance is too low (402${said ? `: ${printable(said, 500)}` : ""}).` +
      `${hourly} No cluster was created. Add funds in the RunPod console, or ask for fewer pods or GPUs per ` +
      "pod, then run pulumi up again.",
  );
}

/**
 * `create`: one POST (a 429 or 503 is settled by listing before any second POST; a lost answer is
 * reconciled by listing: never a second cluster), then the wait for every member per `waitFor`.
 * Once the POST answered, every failure is a partial failure carrying the cluster's id.
 */
export const createCluster: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  const provider = raw.__provider;
  const secrets = clusterSecrets([inputs as unknown as Props], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    let created: Cluster;
    try {
      const { record, recoveredAfter } = await createReconciled<Cluster>({
        kind: "cluster",
        name: inputs.name,
        list: () => client.clusters.list(),
        create: () => client.clusters.create(createBodyOf(inputs) as ClusterCreateInput),
        differences: (listed) => clusterDifferences(listed, inputs),
        bills: true,
        signal: settings?.signal,
      });
      if (recoveredAfter) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
      created = record;
    } catch (error) {
      if (error instanceof BadRequestError) throw await refusedCreate(client, inputs, error);
      if (error instanceof APIError && error.status === 402)
        throw await shortBalance(settings, client, inputs, error);
      throw error;
    }
    const progress: ClusterProgress = { cluster: created };
    const outs = await settleCluster(client, settings, progress, inputs, secrets, provider, "was created");
    return { id: created.id, outs };
  });
};

/**
 * `read`: GET by id and the members. A cluster that is gone (its GET answers 404 and the list
 * does not hold it) gives an empty id (it leaves the state); a members read answering 404 while the cluster answers is read again (never taken as
 * gone); `Cluster.get` of an id not in the account is an error naming it.
 */
export const readCluster: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const adopting = typeof old.name !== "string";
  const secrets = clusterSecrets([old], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const notFound =
      `No cluster with id ${id} in this account (GET /clusters/${id} answered 404). Check the id given to ` +
      "Cluster.get: client.clusters.list() returns the account's clusters with their ids.";
    // A 404 of the GET is confirmed by the account's list before the cluster leaves the state (one
    // lagging answer must not orphan the largest bill); the list's entry stands in when it has it.
    const live =
      (await readForRefresh(() => client.clusters.get(id), adopting, notFound)) ??
      (await client.clusters.list()).find((c) => c.id === id);
    if (live === undefined) return { id: "", props: {} };
    let members: Pod[] | undefined;
    try {
      members = await client.clusters.pods(id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      // The cluster just answered: a 404 of its members is the cluster gone since, or the service
      // lagging. Only a cluster that is gone leaves the state (it may still bill otherwise).
      if ((await readForRefresh(() => client.clusters.get(id), adopting, notFound)) === undefined)
        return { id: "", props: {} };
      try {
        members = await client.clusters.pods(id);
      } catch (again) {
        if (!(again instanceof NotFoundError)) throw again;
        throw new RunpodError(
          `Cluster ${labelOf(live.name, id)} exists, but reading its members answered 404 twice ` +
            `(GET /clusters/${id}/pods). It stays in the stack unchanged: run pulumi refresh again in a minute.`,
        );
      }
    }
    const echo = Object.fromEntries(ARG_NAMES.filter((k) => old[k] !== undefined).map((k) => [k, old[k]]));
    const inputs: Props = { ...echo, name: live.name, type: live.type, compute: computeOf(live.compute) };
    const outs = await withHourlyCost(settings, outputsOf(live, members, inputs, secrets), client);
    return { id: live.id || id, props: outs, inputs };
  });
};

/**
 * `update`: a rename (PATCH) when `name` changed, else a read; then the wait for every member per
 * `waitFor` again, so a cluster still not usable fails again. Every other change replaces (`diff`).
 */
export const updateCluster: ResourceOperations["update"] = async (settings, id, olds, news) => {
  const inputs = plainInputs(news);
  const provider = news.__provider;
  const secrets = clusterSecrets([inputs as unknown as Props, olds], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const renaming = inputs.name !== olds.name;
    const cluster = renaming
      ? await client.clusters.update(id, { name: inputs.name })
      : await client.clusters.get(id);
    const progress: ClusterProgress = { cluster };
    const done = renaming ? "was renamed" : "was read again";
    return { outs: await settleCluster(client, settings, progress, inputs, secrets, provider, done) };
  });
};

/** `delete`: deletes the cluster with every member pod; a cluster already gone (404) counts as deleted. */
export const deleteCluster: ResourceOperations["delete"] = async (settings, id, props) => {
  await withProviderErrors(clusterSecrets([withoutProvider(props ?? {})], settings), async () => {
    await deleteIfPresent(() => hostClient(settings).clusters.delete(id));
  });
};

/**
 * The failure of `compute.gpuCountPerPod` over the catalog's secure `maxCount` of the GPU type (the
 * largest machine of that type: a member pod runs on one). Judged as a `Pod`'s `gpu.count` is
 * (`../catalog/gpuCountCheck.ts`): one bounded catalog read per host, nothing said when it cannot
 * be read, a count the previous inputs already had not judged again.
 */
async function checkGpuCountPerPod(settings: RunpodSettings | undefined, news: Props, olds: Props) {
  const asPod = (args: Props) => {
    const compute = computeOf(args.compute);
    return compute === undefined ? {} : { gpu: { id: compute.gpuTypeId, count: compute.gpuCountPerPod } };
  };
  const failures = await checkGpuCount(settings, asPod(news), asPod(olds));
  if (failures.length === 0) return [];
  const compute = computeOf(news.compute) ?? {};
  const max = /at most (\d+)/.exec(failures[0].reason)?.[1];
  return [
    {
      property: "compute",
      reason:
        `compute.gpuCountPerPod ${String(compute.gpuCountPerPod)} is more GPUs than one machine holds: the catalog's ` +
        `maxCount (GET /v2/catalog/gpus) of ${JSON.stringify(compute.gpuTypeId)} is ${max ?? "lower"}, so no member ` +
        "pod could be placed. Lower compute.gpuCountPerPod (and raise compute.podCount for the same GPUs), or " +
        "name a GPU type whose machines hold that many (getGpuTypes() lists maxCount).",
    },
  ];
}

/** `check`'s own part: the arguments, the data centres, then `hourlyCost` and the budgets (`../cost/budget.ts`). */
const checkClusterWithCost = pricedCheck({
  kind: "Cluster",
  checkArgs: checkClusterArgs,
  checkCatalog: async (settings, news, olds) => [
    ...(await checkDataCenters(settings, "dataCenterIds", news.dataCenterIds, olds.dataCenterIds)),
    ...(await checkGpuCountPerPod(settings, news, olds)),
  ],
  checkCost: checkClusterCost,
  secrets: (settings, news) => clusterSecrets([news], settings),
});

/** What the shared provider class calls (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: checkClusterWithCost,
  diff: diffCluster,
  create: createCluster,
  read: readCluster,
  update: updateCluster,
  delete: deleteCluster,
});

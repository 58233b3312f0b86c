/**
 * The operations of `Pod`'s dynamic provider. They run in Pulumi's dynamic-provider host, never in
 * the program: the serialized provider (`resource.ts`) loads this module from the installed
 * package, as `pulumi-runpod-dynamic/dist/provider/pod/operations.js`, and calls its `operations`
 * export (`../common/operations.ts`: the shared check and diff preamble).
 *
 * Secrets: `env` is one secret as a whole, and the service adds to it (`PUBLIC_KEY` with
 * `startSsh`, a generated `JUPYTER_PASSWORD` with `startJupyter`). Whatever these functions return
 * or throw has every env value (given or injected) and the API key redacted, except in `env`
 * itself, the secret output the engine re-marks.
 *
 * COMPATIBILITY CONTRACT. `__provider` texts stored in users' states call `operations.<method>`
 * with the arguments of `ResourceOperations` (`../common/dynamicProvider.ts`). Keep that export
 * and never move this file.
 */
import type * as pulumi from "@pulumi/pulumi";
import { ConflictError, describeBody, type Pod, type PodUpdateInput, RunpodError } from "../../client";
import { checkDataCenters } from "../catalog/dataCenterCheck";
import { checkGpuCount } from "../catalog/gpuCountCheck";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, labelOf, withoutProvider } from "../common/host";
import { deleteIfPresent, readForRefresh } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { redact } from "../common/redaction";
import type { RunpodSettings } from "../config";
import { pricedCheck } from "../cost/budget";
import { checkPodCost } from "../cost/pod";
import { checkPodArgs, type PodInputs, plainInputs } from "./args";
import { mountKind, plannedChanges, replacementWarning, userEnv, wantedOf } from "./changes";
import { echoOf, observedDesired, outputsOf, podSecrets, withHourlyCost, withOmittedKept } from "./outputs";
import { placePod } from "./placement";
import { keepingPod, type PodProgress, powerTo, waitOrFail } from "./power";

/**
 * `check`: field-level validation (`args.ts`; unknown values pass), then the preview's hourly
 * figures and the budgets, judged before any network write. Reads the catalog at most once per host.
 */
export async function checkPod(
  settings: RunpodSettings | undefined,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.CheckResult> {
  return operations.check(settings, olds, news);
}

/**
 * `diff`: old outputs (the pod as last read, plus the echo of the provider's own arguments)
 * against new inputs. `replaces` names the field that forces a new pod; a replacement also writes
 * one line to the host's stderr (shown under the stack in the preview), redacted, saying which
 * disks it deletes.
 */
export async function diffPod(
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
  settings?: RunpodSettings,
): Promise<pulumi.dynamic.DiffResult> {
  const plan = plannedChanges(olds, plainInputs(news));
  const label = labelOf(typeof olds.name === "string" ? olds.name : undefined, id);
  const warning = replacementWarning(label, plan.replaces, olds);
  if (warning !== undefined)
    process.stderr.write(`${redact(warning, podSecrets([olds, plainInputs(news)], settings))}\n`);
  const changes =
    plan.replaces.length > 0 ||
    plan.patchKeys.length > 0 ||
    plan.other.length > 0 ||
    plan.action !== undefined;
  return { changes, replaces: plan.replaces, deleteBeforeReplace: false };
}

/**
 * `create`: tries `gpu.id` then each of `fallbackGpuIds` as the v2 document's loop says (400: the
 * next; 402: stop; 403: skip; 429: back off; 5xx: retry the same), each POST reconciled by listing
 * after a lost answer (never a second pod). Then stops it for `desiredStatus: "EXITED"`, locks it
 * for `locked: true`, and waits per `waitFor`. Once the POST answered, every failure is a partial
 * failure (`keepingPod`): the pod stays in the state with its id, and the next up checks it again.
 */
export const createPod: ResourceOperations["create"] = async (settings, raw) => {
  const inputs = plainInputs(raw);
  const provider = raw.__provider;
  const secrets = podSecrets([inputs], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const progress: PodProgress = {
      pod: await placePod(client, inputs, secrets, { signal: settings?.signal }),
    };
    const secretsOf = (pod: Pod) => podSecrets([inputs, { env: pod.env }], settings);
    return keepingPod(progress, "was created", inputs, secretsOf, provider, async () => {
      const all = secretsOf(progress.pod);
      if (wantedOf(inputs) === "EXITED")
        progress.pod = (await client.pods.action(progress.pod.id, "stop")) ?? progress.pod;
      // A locked pod refuses stop: lock after it.
      if (inputs.locked === true) progress.pod = await client.pods.update(progress.pod.id, { locked: true });
      progress.pod = await waitOrFail(client, progress.pod, inputs, all, settings, provider);
      const pod = progress.pod;
      return {
        id: pod.id,
        outs: await withHourlyCost(settings, outputsOf(pod, inputs, all), inputs, client),
      };
    });
  });
};

/**
 * `read`: GET by id. A pod that is gone gives an empty id. A pod stopped outside Pulumi shows as
 * `desiredStatus: "EXITED"` (and started outside as `"RUNNING"`), env changed outside as `env`.
 */
export const readPod: ResourceOperations["read"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const adopting = typeof old.name !== "string";
  return withProviderErrors(podSecrets([old], settings), async () => {
    const client = hostClient(settings);
    const notFound = `No pod with id ${id} in this account (GET /pods/${id} answered 404).`;
    const answer = await readForRefresh(() => client.pods.get(id), adopting, notFound);
    if (answer === undefined) return { id: "", props: {} };
    // What the answer leaves out of the fields that decide a replacement keeps its last value.
    const live = withOmittedKept(answer, old);
    const echo = echoOf(old);
    const secrets = podSecrets([old, { env: live.env }], settings);
    const outs = outputsOf(live, echo, secrets);
    outs.desiredStatus = observedDesired(live.status, old.desiredStatus);
    const { requestedGpu, ...ownArgs } = echo;
    const inputs: Record<string, unknown> = { ...ownArgs, desiredStatus: outs.desiredStatus };
    for (const key of ["name", "image", "args", "disk", "ports", "registry", "cloud", "locked"] as const) {
      if (live[key] !== undefined && live[key] !== null) inputs[key] = live[key];
    }
    if (live.mounts && mountKind(live.mounts as PodInputs["mounts"] & object) !== "none")
      inputs.mounts = live.mounts;
    if (live.gpu) inputs.gpu = requestedGpu ?? { id: live.gpu.id, count: live.gpu.count ?? 1 };
    if (live.cpu) inputs.cpu = { id: live.cpu.id, vcpuCount: live.cpu.vcpuCount };
    if (live.env !== undefined) inputs.env = userEnv(live.env, old);
    const priced = await withHourlyCost(settings, outs, { ...inputs, cloud: live.cloud }, client);
    return { id: live.id || id, props: priced, inputs };
  });
};

/**
 * `update`: one PATCH with the fields that changed (`env` sent whole, with what the service
 * injected kept), a stop or start when `desiredStatus` changed, then the wait. With no field to
 * change (only the provider's own arguments changed, or the engine re-runs an unchanged pod whose
 * last create or update failed partially) it reads the pod and waits per `waitFor` again, so a pod
 * still not usable fails again. Once the pod was changed or read, every failure is a partial
 * failure keeping it as last read.
 */
export const updatePod: ResourceOperations["update"] = async (settings, id, olds, news) => {
  const inputs = plainInputs(news);
  const provider = news.__provider;
  const secrets = podSecrets([inputs, olds], settings);
  return withProviderErrors(secrets, async () => {
    const plan = plannedChanges(olds, inputs);
    const client = hostClient(settings);
    const label = labelOf(inputs.name, id);
    // Locking waits until after a stop or start (a locked pod refuses stop); unlocking goes first.
    const { locked: lock, ...patch } = plan.patch;
    const lockLater = lock === true;
    if (!lockLater && lock !== undefined) patch.locked = lock;
    const patching = Object.keys(patch).length > 0;
    const progress: PodProgress = {
      pod: patching ? await client.pods.update(id, patch as PodUpdateInput) : await client.pods.get(id),
    };
    const secretsOf = (pod: Pod) => podSecrets([inputs, olds, { env: pod.env }], settings);
    const done = patching ? "was changed" : "was read again";
    return keepingPod(progress, done, inputs, secretsOf, provider, async () => {
      progress.pod = await powerTo(client, progress.pod, wantedOf(inputs), label);
      if (lockLater) progress.pod = await client.pods.update(id, { locked: true });
      const all = secretsOf(progress.pod);
      progress.pod = await waitOrFail(client, progress.pod, inputs, all, settings, provider);
      return { outs: await withHourlyCost(settings, outputsOf(progress.pod, inputs, all), inputs, client) };
    });
  });
};

/** `delete`: terminate; a pod already gone counts as deleted; a locked pod's refusal says to unlock it. */
export const deletePod: ResourceOperations["delete"] = async (settings, id, props) => {
  const old = withoutProvider(props ?? {});
  const label = labelOf(typeof old.name === "string" ? old.name : undefined, id);
  await withProviderErrors(podSecrets([old], settings), async () => {
    const client = hostClient(settings);
    try {
      await deleteIfPresent(() => client.pods.delete(id));
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      throw new RunpodError(
        `RunPod refused to terminate pod ${label}: it is locked (${describeBody(error.body) || "409"}). ` +
          "Set locked: false on the Pod and run pulumi up (an update in place), then destroy or remove it again.",
      );
    }
  });
};

/** `check`'s own part: the arguments, then `hourlyCost` and the budgets (`../cost/budget.ts`). */
const checkPodWithCost = pricedCheck({
  kind: "Pod",
  checkArgs: checkPodArgs,
  checkCatalog: async (settings, news, olds) => [
    ...(await checkDataCenters(settings, "dataCenterIds", news.dataCenterIds, olds.dataCenterIds)),
    ...(await checkGpuCount(settings, news, olds)),
  ],
  checkCost: checkPodCost,
  secrets: (settings, news) => podSecrets([news], settings),
});

/** What the shared provider class calls (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: checkPodWithCost,
  diff: (settings, id, olds, news) => diffPod(id, olds, news, settings),
  create: createPod,
  read: readPod,
  update: updatePod,
  delete: deletePod,
});

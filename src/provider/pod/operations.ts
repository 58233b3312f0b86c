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
import { isDeepStrictEqual } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import type { Pod, PodCreateInput, PodUpdateInput, RunpodClient } from "../../client";
import {
  APIError,
  BadRequestError,
  ConflictError,
  describeBody,
  InternalServerError,
  mayHaveActed,
  PermissionDeniedError,
  RateLimitError,
  RunpodError,
  secretEnvValues,
} from "../../client";
import { withProviderErrors } from "../common/engineText";
import { hostClient, labelOf, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readOrGone } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { redact, redactValue } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import { describeError, printable } from "../common/wording";
import type { RunpodSettings } from "../config";
import { URN_INPUT } from "../cost/endpoint";
import { checkPodCost, podCostOutput } from "../cost/pod";
import { readLogTail } from "../release/logTail";
import {
  checkPodArgs,
  createBodyOf,
  DEFAULT_WAIT_TIMEOUT_MS,
  EXTRA_NAMES,
  type PodInputs,
  plainInputs,
} from "./args";
import { type WaitFailure, waitForPod } from "./wait";

/** Fields a PATCH changes in place (`UpdatePodRequest`), compared one by one. */
const IN_PLACE = ["name", "image", "args", "disk", "ports", "registry", "locked"] as const;
/** Create-only flags: never read back, so compared with their echo in the outputs; a change replaces. */
const CREATE_ONLY = ["startSsh", "startJupyter"] as const;
/** Tries of one candidate after a 429 or a 5xx the service did not act on (the client's own retries aside). */
const SAME_CANDIDATE_TRIES = 3;

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

/** check's own part: the arguments, then `hourlyCost` and the budgets (`../cost/pod.ts`). */
async function checkPodWithCost(
  settings: RunpodSettings | undefined,
  raw: Record<string, unknown>,
): Promise<pulumi.dynamic.CheckResult> {
  // The URN the resource passes for the stack budget, and the figure check itself added to earlier
  // inputs, are no arguments.
  const { [URN_INPUT]: urn, hourlyCost: _cost, ...news } = raw;
  const checked = checkPodArgs(settings, news);
  if ((checked.failures ?? []).length > 0) return checked;
  const name = typeof news.name === "string" ? news.name : undefined;
  const label = `Pod ${name === undefined ? "(unnamed)" : JSON.stringify(name)}`;
  const key = typeof urn === "string" ? urn : `Pod::${name ?? ""}`;
  const cost = await checkPodCost(settings, news, key, label);
  const inputs =
    cost.hourlyCost === undefined ? checked.inputs : { ...checked.inputs, hourlyCost: cost.hourlyCost };
  const secrets = podSecrets([news], settings);
  return { inputs, failures: cost.failures.map((f) => ({ ...f, reason: redact(f.reason, secrets) })) };
}

/** The outputs with `hourlyCost` from the catalog (left out when the catalog cannot be read). */
async function withHourlyCost(
  settings: RunpodSettings | undefined,
  outs: Record<string, unknown>,
  inputs: Record<string, unknown>,
  client?: RunpodClient,
): Promise<Record<string, unknown>> {
  const shape = {
    gpu: inputs.requestedGpu ?? inputs.gpu,
    cpu: inputs.cpu,
    cloud: inputs.cloud,
    fallbackGpuIds: inputs.fallbackGpuIds,
    desiredStatus: outs.desiredStatus,
  };
  const hourlyCost = await podCostOutput(settings, shape as never, client);
  return hourlyCost === undefined ? outs : { ...outs, hourlyCost };
}

/**
 * `diff`: old outputs (the pod as last read, plus the echo of the provider's own arguments)
 * against new inputs. `replaces` names the field that forces a new pod.
 */
export async function diffPod(
  _id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.DiffResult> {
  const plan = plannedChanges(olds, plainInputs(news));
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
 * after a lost answer (never a second pod). Then waits per `waitFor`. A pod that does not become
 * usable is a partial failure: it stays in the state with its id.
 */
export async function createPod(
  settings: RunpodSettings | undefined,
  raw: Record<string, unknown>,
): Promise<pulumi.dynamic.CreateResult> {
  const inputs = plainInputs(raw);
  const secrets = podSecrets([inputs], settings);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    let pod = await placePod(client, inputs, secrets);
    const all = podSecrets([inputs, { env: pod.env }], settings);
    if (wantedOf(inputs) === "EXITED") pod = (await client.pods.action(pod.id, "stop")) ?? pod;
    // A locked pod refuses stop: lock after it.
    if (inputs.locked === true) pod = await client.pods.update(pod.id, { locked: true });
    pod = await waitOrFail(client, pod, inputs, all);
    return { id: pod.id, outs: await withHourlyCost(settings, outputsOf(pod, inputs, all), inputs, client) };
  });
}

/**
 * `read`: GET by id. A pod that is gone gives an empty id. A pod stopped outside Pulumi shows as
 * `desiredStatus: "EXITED"` (and started outside as `"RUNNING"`), env changed outside as `env`.
 */
export async function readPod(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown> | undefined,
): Promise<pulumi.dynamic.ReadResult> {
  const old = withoutProvider(props ?? {});
  const adopting = typeof old.name !== "string";
  return withProviderErrors(podSecrets([old], settings), async () => {
    const client = hostClient(settings);
    const live = await readOrGone(() => client.pods.get(id));
    if (live === undefined) {
      if (adopting)
        throw new RunpodError(`No pod with id ${id} in this account (GET /pods/${id} answered 404).`);
      return { id: "", props: {} };
    }
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
    const priced = await withHourlyCost(
      settings,
      outs,
      { ...inputs, cloud: live.cloud ?? old.cloud },
      client,
    );
    return { id: live.id || id, props: priced, inputs };
  });
}

/**
 * `update`: one PATCH with the fields that changed (`env` sent whole, with what the service
 * injected kept), a stop or start when `desiredStatus` changed, then the wait. Changes of the
 * provider's own arguments make no call.
 */
export async function updatePod(
  settings: RunpodSettings | undefined,
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.UpdateResult> {
  const inputs = plainInputs(news);
  const secrets = podSecrets([inputs, olds], settings);
  return withProviderErrors(secrets, async () => {
    const plan = plannedChanges(olds, inputs);
    if (plan.patchKeys.length === 0 && plan.action === undefined) {
      // Only the provider's own arguments changed (fallbackGpuIds, waitFor, ...): no service call.
      const { __provider: _provider, env, ...kept } = olds;
      const outs: Record<string, unknown> = { ...redactValue(kept, secrets), ...echoOf(inputs) };
      outs.desiredStatus = wantedOf(inputs);
      const priced = await withHourlyCost(settings, outs, inputs);
      return { outs: env === undefined ? priced : { ...priced, env } };
    }
    const client = hostClient(settings);
    const label = labelOf(inputs.name, id);
    let pod: Pod | undefined;
    // Locking waits until after a stop or start (a locked pod refuses stop); unlocking goes first.
    const { locked: lock, ...patch } = plan.patch;
    const lockLater = lock === true;
    if (!lockLater && lock !== undefined) patch.locked = lock;
    if (Object.keys(patch).length > 0) pod = await client.pods.update(id, patch as PodUpdateInput);
    pod ??= await client.pods.get(id);
    const wanted = wantedOf(inputs);
    try {
      if (wanted === "EXITED" && pod.status !== "EXITED" && pod.status !== "ERROR") {
        pod = (await client.pods.action(id, "stop")) ?? pod;
      } else if (wanted === "RUNNING" && (pod.status === "EXITED" || pod.status === "ERROR")) {
        pod = (await client.pods.action(id, "start")) ?? pod;
      }
    } catch (error) {
      if (error instanceof ConflictError && pod.locked) {
        throw new RunpodError(
          `RunPod refused to ${wanted === "EXITED" ? "stop" : "start"} pod ${label}: it is locked. ` +
            "Set locked: false on the Pod (an update in place), run pulumi up, then change desiredStatus.",
        );
      }
      if (error instanceof BadRequestError) {
        throw new RunpodError(
          `RunPod could not start pod ${label}: ${describeBody(error.body) || error.message}. A stopped pod ` +
            `starts again only on its own data center (${pod.dataCenterId ?? "unknown"}), which has no free ` +
            `${pod.gpu?.id ?? "compute"} now; try again later, or replace the pod.`,
        );
      }
      throw error;
    }
    if (lockLater) pod = await client.pods.update(id, { locked: true });
    const all = podSecrets([inputs, olds, { env: pod.env }], settings);
    pod = await waitOrFail(client, pod, inputs, all);
    return { outs: await withHourlyCost(settings, outputsOf(pod, inputs, all), inputs, client) };
  });
}

/** `delete`: terminate; a pod already gone counts as deleted; a locked pod's refusal says to unlock it. */
export async function deletePod(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown>,
): Promise<void> {
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
}

// ---------------------------------------------------------------------------------------------
// Create: the candidates
// ---------------------------------------------------------------------------------------------

/** The GPU types to try in order: `gpu.id`, then `fallbackGpuIds`, without repeats. */
export function candidatesOf(inputs: PodInputs): (string | undefined)[] {
  if (!inputs.gpu) return [undefined];
  return [...new Set([inputs.gpu.id, ...(inputs.fallbackGpuIds ?? [])])];
}

/** Places the pod on the first candidate the service takes; one error naming each when none does. */
async function placePod(client: RunpodClient, inputs: PodInputs, secrets: readonly string[]): Promise<Pod> {
  const said: { candidate: string; answer: string }[] = [];
  const candidates = candidatesOf(inputs);
  for (const candidate of candidates) {
    const body = createBodyOf(inputs);
    if (candidate !== undefined) body.gpu = { ...(inputs.gpu ?? {}), id: candidate };
    for (let attempt = 1; ; attempt++) {
      try {
        const { record, recoveredAfter } = await createReconciled<Pod>({
          kind: "pod",
          name: inputs.name,
          list: () => client.pods.list(),
          create: () => client.pods.create(body as PodCreateInput),
          differences: (listed) => podDifferences(listed, body),
        });
        if (recoveredAfter) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
        if (said.length > 0) {
          const tried = said.map((s) => `${s.candidate}: ${s.answer}`).join("; ");
          process.stderr.write(
            `${redact(`pod "${inputs.name}" placed on ${candidate} after ${tried}`, secrets)}\n`,
          );
        }
        return record;
      } catch (error) {
        const name = candidate ?? inputs.cpu?.id ?? "cpu";
        if (error instanceof APIError && error.status === 402) {
          const before = said.map((s) => `${s.candidate}: ${s.answer}`).join("; ");
          throw new RunpodError(
            redact(
              `RunPod refused to create pod "${inputs.name}" on ${name}: the account's balance is too low (402` +
                `${describeBody(error.body) ? `: ${describeBody(error.body)}` : ""}).` +
                (before ? ` Tried before it: ${before}.` : "") +
                " No other GPU type was tried after it: none would succeed. Add funds in the RunPod console, " +
                "then run pulumi up again.",
              secrets,
            ),
          );
        }
        if (error instanceof BadRequestError || error instanceof PermissionDeniedError) {
          const answer = `${error.status} ${printable(describeBody(error.body) || error.message, 300)}`;
          said.push({
            candidate: name,
            answer: error.status === 403 ? `${answer} (skipped: no access)` : answer,
          });
          break;
        }
        const transient =
          error instanceof RateLimitError || (error instanceof InternalServerError && !mayHaveActed(error));
        if (transient && attempt < SAME_CANDIDATE_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, retryDelayMs(error, attempt)));
          continue;
        }
        if (transient) {
          said.push({ candidate: name, answer: `${(error as APIError).status} after ${attempt} tries` });
          break;
        }
        throw error; // a lost answer the listing could not settle, a 401, a 422: never try another
      }
    }
  }
  throw await noCandidateLanded(client, inputs, said);
}

/** Pause before trying the same candidate again: the service's `Retry-After` (capped), else 1, 2, 4 s. */
function retryDelayMs(error: unknown, attempt: number): number {
  const header = (error as APIError).headers?.["retry-after"];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(60, seconds) * 1000;
  return 1000 * 2 ** (attempt - 1);
}

/** The error when no candidate landed: each one with what the service said, and the catalog's stock now. */
async function noCandidateLanded(
  client: RunpodClient,
  inputs: PodInputs,
  said: readonly { candidate: string; answer: string }[],
): Promise<Error> {
  let stock: string;
  try {
    const gpus = await client.catalog.gpus({
      include: ["AVAILABILITY"],
      product: ["POD"],
      ...(inputs.cloud ? { cloud: inputs.cloud } : {}),
    } as never);
    const inStock = gpus.filter((g) => g.availability !== undefined && g.availability !== "NONE");
    stock =
      inStock.length === 0
        ? "The catalog shows no GPU type with pod stock now."
        : `The catalog shows pod stock now for: ${inStock
            .slice(0, 12)
            .map(
              (g) =>
                `${g.id} (${g.availability}${
                  g.dataCenters?.length
                    ? ` in ${g.dataCenters
                        .filter((d) => d.availability !== "NONE")
                        .map((d) => d.id)
                        .join(", ")}`
                    : ""
                })`,
            )
            .join("; ")}${inStock.length > 12 ? ` and ${inStock.length - 12} more` : ""}.`;
  } catch (error) {
    stock = `The catalog could not be read for current stock (${describeError(error)}).`;
  }
  const every400 = said.length > 0 && said.every((s) => s.answer.startsWith("400"));
  const hint = every400
    ? " Every candidate answered 400: if the service's words above name a rule rather than capacity, the request itself is at fault."
    : "";
  return new RunpodError(
    `No GPU type could be placed for pod "${inputs.name}"; no pod was created. Tried in order: ` +
      `${said.map((s) => `${s.candidate}: ${s.answer}`).join("; ")}. ${stock}${hint} Add a GPU type with ` +
      "stock to fallbackGpuIds (or change gpu.id), or try again later.",
  );
}

/** Fields the create sent that the pod `listed` does not hold (names only: values may be secrets). */
export function podDifferences(listed: Pod, sent: Record<string, unknown>): string[] {
  const out: string[] = [];
  const gpu = sent.gpu as PodInputs["gpu"];
  if (gpu && (listed.gpu?.id !== gpu.id || (listed.gpu?.count ?? 1) !== (gpu.count ?? 1))) out.push("gpu");
  const cpu = sent.cpu as PodInputs["cpu"];
  if (cpu && (listed.cpu?.id !== cpu.id || listed.cpu?.vcpuCount !== cpu.vcpuCount)) out.push("cpu");
  for (const key of ["image", "args", "disk", "ports", "registry"] as const) {
    if (sent[key] !== undefined && !isDeepStrictEqual(listed[key], sent[key])) out.push(key);
  }
  if (sent.cloud !== undefined && listed.cloud !== undefined && listed.cloud !== sent.cloud)
    out.push("cloud");
  const env = (sent.env ?? {}) as Record<string, string>;
  if (Object.entries(env).some(([k, v]) => listed.env?.[k] !== v)) out.push("env");
  return out;
}

// ---------------------------------------------------------------------------------------------
// Diff
// ---------------------------------------------------------------------------------------------

interface Plan {
  replaces: string[];
  patch: Record<string, unknown>;
  patchKeys: string[];
  /** Changes that need no service call (the provider's own arguments). */
  other: string[];
  action?: "start" | "stop";
}

/** What an update of `olds` (outputs) to `news` (inputs) does. */
function plannedChanges(olds: Record<string, unknown>, news: PodInputs): Plan {
  const replaces: string[] = [];
  const patch: Record<string, unknown> = {};
  const other: string[] = [];
  const unknown = (key: string) => news[key] !== undefined && containsUnknown(news[key]);
  const oldGpu = olds.gpu as { id?: string; count?: number } | undefined;
  const oldCpu = olds.cpu as { id?: string; vcpuCount?: number } | undefined;
  const requested = olds.requestedGpu as PodInputs["gpu"] | undefined;
  // Compute: a GPU pod stays when gpu.id is what it asked for or the type it landed on.
  if (unknown("gpu") || unknown("cpu")) replaces.push(unknown("gpu") ? "gpu" : "cpu");
  else if (news.gpu) {
    if (!oldGpu) replaces.push("gpu");
    else {
      const sameType = news.gpu.id === oldGpu.id || news.gpu.id === requested?.id;
      const sameCount = (news.gpu.count ?? 1) === (oldGpu.count ?? 1);
      const cudaOk = cudaAccepts(news.gpu, olds.cudaVersion);
      if (!sameType || !sameCount || !cudaOk) replaces.push("gpu");
      else if (!isDeepStrictEqual(requested, news.gpu)) other.push("gpu");
    }
  } else if (news.cpu) {
    if (!oldCpu || oldCpu.id !== news.cpu.id || oldCpu.vcpuCount !== news.cpu.vcpuCount) replaces.push("cpu");
  }
  if (unknown("cloud") || (news.cloud ?? "SECURE") !== ((olds.cloud as string | undefined) ?? "SECURE")) {
    replaces.push("cloud");
  }
  // Mounts: the kind (and a network volume) is fixed; a persistent mount's size and path change in place.
  const oldMounts = (olds.mounts ?? {}) as PodInputs["mounts"] & object;
  const newMounts = (news.mounts ?? {}) as PodInputs["mounts"] & object;
  if (unknown("mounts")) replaces.push("mounts");
  else if (mountKind(oldMounts) !== mountKind(newMounts)) replaces.push("mounts");
  else if (newMounts.network && !isDeepStrictEqual(volumesOf(oldMounts), volumesOf(newMounts)))
    replaces.push("mounts");
  else if (
    newMounts.persistent &&
    !isDeepStrictEqual(pick(oldMounts.persistent), pick(newMounts.persistent))
  ) {
    patch.mounts = { persistent: newMounts.persistent };
  }
  for (const key of CREATE_ONLY) {
    if (unknown(key) || (news[key] ?? false) !== (olds[key] ?? false)) replaces.push(key);
  }
  if (unknown("templateId") || (news.templateId ?? null) !== (olds.templateId ?? null))
    replaces.push("templateId");
  // Placement: the pod stays while its data center is still one of those asked for.
  if (!isDeepStrictEqual(news.dataCenterIds ?? [], olds.dataCenterIds ?? [])) {
    const where = olds.dataCenterId as string | undefined;
    const list = news.dataCenterIds ?? [];
    if (unknown("dataCenterIds") || (list.length > 0 && where !== undefined && !list.includes(where))) {
      replaces.push("dataCenterIds");
    } else other.push("dataCenterIds");
  }
  // In place: what the program gives; an omitted field keeps the pod's value (env: none of the program's).
  for (const key of IN_PLACE) {
    const given = news[key];
    if (given === undefined) continue;
    if (containsUnknown(given) || !isDeepStrictEqual(olds[key] ?? null, given)) patch[key] = given;
  }
  if (news.globalNetworking !== undefined) {
    const had = (olds.globalNetworking as { enabled?: boolean } | undefined)?.enabled ?? false;
    if (containsUnknown(news.globalNetworking) || had !== news.globalNetworking)
      patch.globalNetworking = news.globalNetworking;
  }
  const oldEnv = (olds.env ?? {}) as Record<string, string>;
  const env = unknown("env") ? news.env : { ...injectedEnv(oldEnv, olds, news), ...(news.env ?? {}) };
  if (!isDeepStrictEqual(oldEnv, env)) patch.env = env;
  // The provider's own arguments: no call.
  for (const key of EXTRA_NAMES) {
    if (key === "desiredStatus") continue;
    if (!isDeepStrictEqual(news[key], olds[key])) other.push(key);
  }
  if (containsUnknown(news.desiredStatus)) other.push("desiredStatus");
  const wanted = wantedOf(news);
  const had = olds.desiredStatus ?? "RUNNING";
  const action = wanted !== had ? (wanted === "EXITED" ? "stop" : "start") : undefined;
  return { replaces: [...new Set(replaces)], patch, patchKeys: Object.keys(patch), other, action };
}

/** True when the pod's CUDA version satisfies the new GPU constraint (or nothing is known of it). */
function cudaAccepts(gpu: NonNullable<PodInputs["gpu"]>, cudaVersion: unknown): boolean {
  if (typeof cudaVersion !== "string") return true;
  if (gpu.allowedCudaVersions && gpu.allowedCudaVersions.length > 0)
    return gpu.allowedCudaVersions.includes(cudaVersion);
  if (gpu.minCudaVersion) {
    const [a, b] = cudaVersion.split(".").map(Number);
    const [x, y] = gpu.minCudaVersion.split(".").map(Number);
    return (a ?? 0) > (x ?? 0) || ((a ?? 0) === (x ?? 0) && (b ?? 0) >= (y ?? 0));
  }
  return true;
}

function mountKind(mounts: NonNullable<PodInputs["mounts"]>): string {
  if (mounts.persistent) return "persistent";
  if (mounts.network && mounts.network.length > 0) return "network";
  return "none";
}

function volumesOf(mounts: NonNullable<PodInputs["mounts"]>): unknown {
  return (mounts.network ?? []).map((m) => ({ volumeId: m.volumeId, path: m.path }));
}

function pick(persistent: { size?: unknown; path?: unknown } | undefined): unknown {
  return persistent ? { size: persistent.size, path: persistent.path } : undefined;
}

/**
 * The variables the service put in the pod's env that the program does not set: `PUBLIC_KEY` (with
 * `startSsh`) and `JUPYTER_PASSWORD` (with `startJupyter`). Kept on every PATCH of env: a partial
 * env would drop them, and SSH with them.
 */
function injectedEnv(
  oldEnv: Record<string, string>,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Record<string, string> {
  const kept: Record<string, string> = {};
  const ssh = olds.startSsh ?? news.startSsh;
  const jupyter = olds.startJupyter ?? news.startJupyter;
  if (ssh && oldEnv.PUBLIC_KEY !== undefined) kept.PUBLIC_KEY = oldEnv.PUBLIC_KEY;
  if (jupyter && oldEnv.JUPYTER_PASSWORD !== undefined) kept.JUPYTER_PASSWORD = oldEnv.JUPYTER_PASSWORD;
  return kept;
}

/** The pod's env without what the service injected: the program's part, for refresh's inputs. */
function userEnv(env: Record<string, string>, olds: Record<string, unknown>): Record<string, string> {
  const injected = injectedEnv(env, olds, {});
  return Object.fromEntries(
    Object.entries(env).filter(
      ([k]) => !(k in injected) || (olds.env as Record<string, string>)?.[k] !== env[k],
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Waiting, outputs, secrets
// ---------------------------------------------------------------------------------------------

function wantedOf(inputs: Record<string, unknown>): "RUNNING" | "EXITED" {
  return inputs.desiredStatus === "EXITED" ? "EXITED" : "RUNNING";
}

/** What the pod's status says of `desiredStatus`: stopped (or failed) is EXITED, on its way or running is RUNNING. */
function observedDesired(status: string, old: unknown): string {
  if (status === "EXITED" || status === "ERROR") return "EXITED";
  if (status === "RUNNING" || status === "STARTING" || status === "PROVISIONING") return "RUNNING";
  return typeof old === "string" ? old : "RUNNING";
}

/** Waits per the inputs; a pod that does not become usable is a partial failure with its log tail. */
async function waitOrFail(
  client: RunpodClient,
  pod: Pod,
  inputs: PodInputs,
  secrets: readonly string[],
): Promise<Pod> {
  const result = await waitForPod({
    client,
    pod,
    wanted: wantedOf(inputs),
    waitFor: inputs.waitFor ?? "running",
    timeoutMs: inputs.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
  });
  if (result.kind === "ready") return result.pod;
  throw await waitFailed(client, result, inputs, secrets);
}

async function waitFailed(
  client: RunpodClient,
  failure: WaitFailure,
  inputs: PodInputs,
  secrets: readonly string[],
): Promise<Error> {
  const { pod, history, why } = failure;
  const tail = await readLogTail(
    (_unused, podId, options) => client.pods.logs(podId, options),
    "",
    pod.id,
    secrets,
    3000,
  );
  const log =
    "lines" in tail
      ? tail.lines.length > 0
        ? `Last lines of the pod's log:\n${tail.lines
            .slice(-20)
            .map((l) => `  ${l}`)
            .join("\n")}`
        : "The pod's log is empty."
      : `The pod's log is unavailable: ${tail.unavailable}.`;
  const error = new RunpodError(
    `Pod ${labelOf(inputs.name, pod.id)} is not usable: ${why}. Status history: ${history.join(" -> ")}. ${log}\n` +
      "The pod is kept in the stack (it may still cost money while it holds compute): fix the cause and run " +
      "pulumi up again, or remove the Pod from the program to terminate it.",
  ) as RunpodError & { id?: string; properties?: Record<string, unknown> };
  const { env: _env, ...properties } = outputsOf(pod, inputs, secrets);
  properties.desiredStatus = observedDesired(pod.status, inputs.desiredStatus);
  error.id = pod.id;
  error.properties = properties;
  return error;
}

/** The provider's own arguments and the create-only ones, echoed into the outputs for the next diff. */
function echoOf(inputs: Record<string, unknown>): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const key of [...EXTRA_NAMES, ...CREATE_ONLY, "dataCenterIds", "templateId"]) {
    if (inputs[key] !== undefined) echo[key] = inputs[key];
  }
  // The GPU asked for (the pod's `gpu` output is the type it landed on).
  const requested = inputs.requestedGpu ?? inputs.gpu;
  if (requested !== undefined && inputs.cpu === undefined) echo.requestedGpu = requested;
  return echo;
}

/** The pod as read back (every field, secrets redacted outside `env`), plus the echo of the inputs. */
function outputsOf(
  pod: Record<string, unknown>,
  inputs: Record<string, unknown>,
  secrets: readonly string[],
) {
  const { env, __provider: _provider, ...rest } = pod;
  const clean = redactValue({ ...rest, ...echoOf(inputs) }, secrets) as Record<string, unknown>;
  clean.desiredStatus = inputs.desiredStatus ?? "RUNNING";
  return env === undefined ? clean : { ...clean, env };
}

/** Values never to return or throw outside `env`: every env value (given or injected) and the API key. */
function podSecrets(
  sets: readonly Record<string, unknown>[],
  settings: RunpodSettings | undefined,
): string[] {
  const values = new Set(sets.flatMap((set) => secretEnvValues(set.env)));
  const plain = sets.map((set) => {
    const { env: _env, __provider: _provider, ...rest } = set;
    return JSON.stringify(rest);
  });
  const secret = [...values].filter((value) => !plain.some((text) => text.includes(value)));
  return settings?.apiKey ? [...secret, settings.apiKey] : secret;
}

/** What the shared provider class calls (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: (settings, _olds, news) => checkPodWithCost(settings, news),
  diff: (_settings, id, olds, news) => diffPod(id, olds, news),
  create: createPod,
  read: readPod,
  update: updatePod,
  delete: deletePod,
});

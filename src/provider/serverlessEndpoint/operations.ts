/**
 * The operations of `ServerlessEndpoint`'s dynamic provider. They run in Pulumi's dynamic-provider
 * host, never in the program: the serialized provider (`resource.ts`) loads this module from the
 * installed package, as `pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js`, and
 * calls them by name. The API key comes from `configure(req)` (stack config `runpod:apiKey`, else
 * `RUNPOD_API_KEY`) and lives only in the host process's memory. Whatever they return or throw
 * has the `env` values and the key redacted, except `env` itself, the secret input the engine
 * re-marks as secret (`additionalSecretOutputs: ["env"]`).
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
 * checkServerlessEndpoint(olds: Record<string, unknown>, news: Record<string, unknown>, settings?: RunpodSettings): Promise<CheckResult>
 * diffServerlessEndpoint(id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<DiffResult>
 * createServerlessEndpoint(settings: RunpodSettings | undefined, inputs: Record<string, unknown>): Promise<CreateResult>
 * readServerlessEndpoint(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown> | undefined): Promise<ReadResult>
 * updateServerlessEndpoint(settings: RunpodSettings | undefined, id: string, olds: Record<string, unknown>, news: Record<string, unknown>): Promise<UpdateResult>
 * deleteServerlessEndpoint(settings: RunpodSettings | undefined, id: string, props: Record<string, unknown>): Promise<void>
 * ```
 */
import type * as pulumi from "@pulumi/pulumi";
import {
  BadRequestError,
  ConflictError,
  describeBody,
  type RunpodClient,
  RunpodError,
  type ServerlessEndpoint,
  type ServerlessRelease,
  type ServerlessReleaseList,
  secretEnvValues,
} from "../../client";
import { withProviderErrors } from "../common/engineText";
import { hostClient, labelOf, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readOrGone } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { redact, redactValue } from "../common/redaction";
import { describeError } from "../common/wording";
import { type RunpodSettings, resolveSettings } from "../config";
import { checkEndpointCost, endpointCostOutput, URN_INPUT } from "../cost/endpoint";
import { contextFromSettings, restDialectOf } from "../release/context";
import { clientPollKey } from "../release/workerPoll";
import {
  BODY_NAMES,
  bodyOf,
  checkEndpointArgs,
  plainInputs,
  ROLLOUT_TIMEOUT_DEFAULT_MS,
  type ServerlessEndpointInputs,
} from "./args";
import { makesRelease, planEndpointChange, RELEASE_FIELDS } from "./changes";
import { EndpointRolloutError, waitForEndpointRollout } from "./rollout";
import {
  createFailedMessage,
  type GateVerdict,
  keptMessage,
  movedPastMessage,
  rollbackFailedMessage,
  rolledBackMessage,
  rolloutVerdict,
  runGate,
  type SmokeTest,
  SmokeTestSchema,
} from "./smokeTest";

type Props = Record<string, unknown>;

export { settingsFromConfigure } from "../common/host";
export { ROLLOUT_TIMEOUT_DEFAULT_MS } from "./args";

const PROVIDER_KEY = "__provider";

/**
 * `check`: field-level validation (`args.ts`), no network; unknown values (preview) pass. With the
 * provider's settings, a REST v1 `restUrl` fails here: endpoints exist only on REST v2.
 */
export const checkServerlessEndpoint = (olds: Props, news: Props, settings?: RunpodSettings) =>
  operations.check(settings, olds, news);

/**
 * check's own part: the arguments (`args.ts`), then the preview's hourly figures and the budgets,
 * judged before anything that costs money runs. Reads the catalog at most once per host.
 */
async function checkEndpoint(
  settings: RunpodSettings | undefined,
  raw: Props,
): Promise<pulumi.dynamic.CheckResult> {
  // The URN the resource passes for the stack budget, and the figure check itself added to earlier
  // inputs, are no arguments.
  const { [URN_INPUT]: urn, hourlyCost: _cost, ...news } = raw;
  const checked = checkEndpointArgs(news, settings === undefined ? undefined : restDialectOf(settings));
  if ((checked.failures ?? []).length > 0) return checked;
  const name = typeof news.name === "string" ? news.name : undefined;
  const label = `ServerlessEndpoint ${name === undefined ? "(unnamed)" : JSON.stringify(name)}`;
  const key = typeof urn === "string" ? urn : `ServerlessEndpoint::${name ?? ""}`;
  const cost = await checkEndpointCost(settings, news, key, label);
  const inputs =
    cost.hourlyCost === undefined ? checked.inputs : { ...checked.inputs, hourlyCost: cost.hourlyCost };
  const secrets = endpointSecrets(settings, plainInputs(news));
  return { inputs, failures: cost.failures.map((f) => ({ ...f, reason: redact(f.reason, secrets) })) };
}

/**
 * `diff`: old outputs against new inputs (`changes.ts`). `type` and the compute family (`gpu` or
 * `cpu`) replace the endpoint (a new one first, then the old one is deleted: names need not be
 * unique); everything else is an update.
 */
export const diffServerlessEndpoint = (id: string, olds: Props, news: Props) =>
  operations.diff(undefined, id, olds, news);

async function diffPlan(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.DiffResult> {
  const inputs = plainInputs(news);
  const plan = planEndpointChange(olds, inputs);
  if (plan.replaces.length > 0) return { changes: true, replaces: plan.replaces, deleteBeforeReplace: false };
  // A gate recorded as failed on the release that serves is an update to make even with nothing
  // changed: a refresh clears the engine's init errors (step.go RefreshStep.Apply), so without this
  // the next up would never test that release again.
  const retest = inputs.smokeTest !== undefined && gateFailedOnLive(withoutProvider(olds));
  return { changes: plan.changed.length > 0 || retest };
}

/**
 * `create`: list, POST once, and after a failure the service may have acted on, list again
 * (`createReconciled`): never a duplicate endpoint. Then, with `rollout: "wait"`, waits until
 * its workers run it. A failure after the POST is a partial failure: the endpoint exists.
 */
export async function createServerlessEndpoint(
  settings: RunpodSettings | undefined,
  raw: Record<string, unknown>,
): Promise<pulumi.dynamic.CreateResult> {
  const inputs = plainInputs(raw);
  const secrets = endpointSecrets(settings, inputs);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const body = bodyOf(inputs);
    const { record, recoveredAfter } = await createReconciled({
      kind: "serverless endpoint",
      name: body.name,
      list: () => client.serverless.list(),
      create: () => client.serverless.create(body),
      differences: (listed) => differencesFrom(listed, inputs),
    });
    if (recoveredAfter !== undefined) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
    const outs = await settle(client, settings, record, inputs, secrets, raw[PROVIDER_KEY]);
    if (inputs.smokeTest === undefined) return { id: record.id, outs };
    const smoke = SmokeTestSchema.parse(inputs.smokeTest);
    const verdict = await gate(settings, record.id, outs, smoke);
    outs.lastSmokeTest = verdict.record;
    if (verdict.record.passed) return { id: record.id, outs };
    const label = labelOf(record.name || inputs.name, record.id);
    throw partialFailure(createFailedMessage(label, verdict, smoke), record.id, outs, raw[PROVIDER_KEY]);
  });
}

/**
 * `read`: refresh (with the recorded outputs) reads the endpoint and its releases; an endpoint
 * that is gone leaves the state (empty id). Drift (an image changed in the console) shows as
 * changed outputs and, through the returned inputs, in the next diff. `ServerlessEndpoint.get`
 * (no recorded outputs) throws for an id the account does not have.
 */
export async function readServerlessEndpoint(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown> | undefined,
): Promise<pulumi.dynamic.ReadResult> {
  const old = withoutProvider(props ?? {});
  const adopting = Object.values(old).every((v) => v === undefined);
  const secrets = endpointSecrets(settings, old);
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const live = await readOrGone(() => client.serverless.get(id));
    const releases = live && (await readOrGone(() => client.serverless.releases(id)));
    if (live === undefined || releases === undefined) {
      if (!adopting) return { id: "", props: {} };
      throw new RunpodError(
        `ServerlessEndpoint.get: there is no serverless endpoint with id ${JSON.stringify(id)} in this account ` +
          "(the service answered 404). Check the id: it is the endpoint's id in the RunPod console, not its name.",
      );
    }
    const settings_ = old as ServerlessEndpointInputs;
    const outs = endpointOutputs(live, releases, settings_, [...secrets, ...secretEnvValues(live.env)]);
    const hourlyCost = await endpointCostOutput(settings, live, client);
    if (hourlyCost !== undefined) outs.hourlyCost = hourlyCost;
    if (adopting) return { id: live.id, props: outs };
    return { id: live.id, props: outs, inputs: inputsOf(live, settings_) };
  });
}

/**
 * `update`: one PATCH with what changed (`changes.ts`): a container change makes a release, a
 * scaling change applies at once. With `rollout: "wait"`, waits until no worker is stale; a
 * rollout that stalls or times out is a partial failure (the endpoint was changed).
 */
export async function updateServerlessEndpoint(
  settings: RunpodSettings | undefined,
  id: string,
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.UpdateResult> {
  const inputs = plainInputs(news);
  const previous = withoutProvider(olds ?? {});
  const secrets = [...endpointSecrets(settings, inputs), ...secretEnvValues(previous.env)];
  return withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    const plan = planEndpointChange(previous, inputs);
    const record =
      Object.keys(plan.patch).length > 0
        ? await client.serverless.update(id, plan.patch)
        : await client.serverless.get(id);
    // The last gate's result stays in the outputs, also when the rollout wait fails.
    const kept = { ...inputs, lastSmokeTest: previous.lastSmokeTest };
    const label = labelOf(record.name || inputs.name, id);
    const gated = inputs.smokeTest !== undefined && (makesRelease(plan) || gateFailedOnLive(previous));
    const smoke = gated ? SmokeTestSchema.parse(inputs.smokeTest) : undefined;
    const { outs, failure, during } = await settled(client, settings, record, kept, secrets);
    let verdict: GateVerdict;
    if (failure !== undefined) {
      // A release that cannot start fails its gate too: with "rollback", it is rolled back. A
      // wait that only ran out of time says nothing about the release: it is neither judged nor
      // rolled back, and the record says its test did not run, so the next up tests it.
      const stalled =
        failure instanceof EndpointRolloutError && failure.kind === "stalled" && makesRelease(plan);
      if (smoke?.onFailure !== "rollback" || !stalled) {
        if (failure instanceof EndpointRolloutError && failure.kind === "timeout" && smoke !== undefined) {
          outs.lastSmokeTest = untestedRecord(failure.version ?? outs.version);
          const message =
            `${failure.message}\nThe release was not judged: its smoke test did not run and it was not rolled ` +
            "back. The next pulumi up waits for its rollout again and tests it.";
          throw partialFailure(message, id, outs, news[PROVIDER_KEY]);
        }
        throw settleFailure(label, failure, during, id, outs, news[PROVIDER_KEY]);
      }
      const version = failure.version ?? (typeof outs.version === "number" ? outs.version : null);
      verdict = rolloutVerdict(version, failure.message);
    } else {
      if (smoke === undefined) return { outs };
      verdict = await gate(settings, id, outs, smoke);
    }
    outs.lastSmokeTest = verdict.record;
    if (verdict.record.passed) return { outs };
    // What the rollback puts back: the fields this update's PATCH set (a release's, and the scaling
    // fields changed with it), never a field someone else changed meanwhile.
    const touched = Object.keys(plan.patch);
    const back = rollbackPatch(outs, previous, touched);
    if (smoke?.onFailure !== "rollback" || back === undefined) {
      throw partialFailure(keptMessage(label, verdict, smoke as SmokeTest), id, outs, news[PROVIDER_KEY]);
    }
    // A change made elsewhere while the gate ran (the endpoint moved past the release under test)
    // is not rolled back over: what runs is read, recorded and named instead.
    const moved = await movedPast(client, id, verdict.record.version);
    if (moved !== undefined) {
      const live = await readOutputs(client, id, inputs, secrets).catch(() => outs);
      throw partialFailure(
        movedPastMessage(label, verdict, smoke, moved.version, moved.release),
        id,
        { ...live, lastSmokeTest: verdict.record },
        news[PROVIDER_KEY],
      );
    }
    // Roll back: the previous container settings, as a new release, always waited for.
    let rolledBack: Record<string, unknown>;
    let restored: ServerlessEndpoint | undefined;
    try {
      restored = await patchBack(client, id, back, previous, touched);
      const done = await settled(client, settings, restored, { ...inputs, rollout: "wait" }, secrets);
      if (done.failure !== undefined) throw done.failure;
      // What the program says, not the forced wait.
      rolledBack = { ...done.outs, rollout: inputs.rollout, lastSmokeTest: verdict.record };
      if (inputs.rollout === undefined) delete rolledBack.rollout;
    } catch (error) {
      // What the service holds now: the failed release when the PATCH back failed; the previous
      // configuration (not yet on the workers) when its rollout stalled.
      const live = await readOutputs(client, id, inputs, secrets).catch(() => outs);
      const failed = { ...live, lastSmokeTest: verdict.record };
      const heldVersion = restored === undefined ? undefined : (live.version as number | null);
      throw partialFailure(
        rollbackFailedMessage(label, verdict, smoke, error, heldVersion),
        id,
        failed,
        news[PROVIDER_KEY],
      );
    }
    const alongside = Object.keys(back).filter((f) => !(RELEASE_FIELDS as readonly string[]).includes(f));
    const message = rolledBackMessage(
      label,
      verdict,
      smoke,
      rolledBack.version as number,
      previous.image,
      alongside,
    );
    throw partialFailure(message, id, rolledBack, news[PROVIDER_KEY]);
  });
}

/**
 * `delete`: DELETE by id; an endpoint already gone counts as deleted. The service also deletes
 * the template bound to the endpoint, and ends its workers and queued jobs.
 */
export async function deleteServerlessEndpoint(
  settings: RunpodSettings | undefined,
  id: string,
  props: Record<string, unknown>,
): Promise<void> {
  const secrets = endpointSecrets(settings, props ?? {});
  const label = labelOf(typeof props?.name === "string" ? props.name : undefined, id);
  await withProviderErrors(secrets, async () => {
    const client = hostClient(settings);
    try {
      await deleteIfPresent(() => client.serverless.delete(id));
    } catch (error) {
      if (error instanceof BadRequestError || error instanceof ConflictError) {
        const said = describeBody(error.body);
        throw new RunpodError(
          `RunPod refused to delete serverless endpoint ${label}${said ? `: ${said}` : ""}. ` +
            "Check in the RunPod console what holds it, then run the destroy or update again.",
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

/**
 * After a create or a PATCH: the rollout wait (unless `rollout: "ignore"`), then the endpoint as
 * read back. Any failure from here on is a partial failure: the endpoint exists and was changed,
 * so the error carries its id and the outputs known (redacted but for `env`).
 */
async function settle(
  client: RunpodClient,
  settings: RunpodSettings | undefined,
  record: ServerlessEndpoint,
  inputs: ServerlessEndpointInputs & { lastSmokeTest?: unknown },
  secrets: string[],
  provider: unknown,
): Promise<Record<string, unknown>> {
  const label = labelOf(record.name || inputs.name, record.id);
  const { outs, failure, during } = await settled(client, settings, record, inputs, secrets);
  if (failure === undefined) return outs;
  throw settleFailure(label, failure, during, record.id, outs, provider);
}

/** The partial failure of a rollout wait or read back that failed after the endpoint was changed. */
function settleFailure(
  label: string,
  failure: unknown,
  during: string,
  id: string,
  outs: Record<string, unknown>,
  provider: unknown,
): RunpodError {
  const message =
    failure instanceof EndpointRolloutError
      ? failure.message
      : `ServerlessEndpoint ${label} was created or changed, but ${during} failed (${describeError(failure)}). ` +
        "The endpoint is recorded in the state; run pulumi up again to finish (it waits for the rollout again).";
  return partialFailure(message, id, outs, provider);
}

/** The rollout wait (unless `rollout: "ignore"`) and the read back, with what failed on the way. */
async function settled(
  client: RunpodClient,
  settings: RunpodSettings | undefined,
  record: ServerlessEndpoint,
  inputs: ServerlessEndpointInputs & { lastSmokeTest?: unknown },
  secrets: string[],
): Promise<{ outs: Record<string, unknown>; failure?: unknown; during: string }> {
  const label = labelOf(record.name || inputs.name, record.id);
  const all = [...secrets, ...secretEnvValues(record.env)];
  let failure: unknown;
  let during = "waiting for its rollout";
  if ((inputs.rollout ?? "wait") === "wait") {
    try {
      await waitForEndpointRollout(
        {
          workers: (endpointId, options) => client.serverless.workers(endpointId, options),
          workerLogs: (endpointId, workerId, options) =>
            client.serverless.workerLogs(endpointId, workerId, { ...options, maxReconnects: 1 }),
        },
        record.id,
        label,
        {
          timeoutMs: inputs.rolloutTimeoutMs ?? ROLLOUT_TIMEOUT_DEFAULT_MS,
          secrets: all,
          // Every wait on this endpoint in the host (JobRuns too) shares one read loop.
          pollKey: clientPollKey(settings ?? resolveSettings(undefined)),
          onWaiting: (version, stale, total) =>
            process.stderr.write(
              `ServerlessEndpoint ${label}: waiting for version ${version ?? "(unknown)"} to roll out ` +
                `(${stale} of ${total} workers on an older version)\n`,
            ),
        },
      );
    } catch (error) {
      failure = error;
    }
  }
  let outs: Record<string, unknown>;
  try {
    const [live, releases] = await Promise.all([
      client.serverless.get(record.id),
      client.serverless.releases(record.id),
    ]);
    outs = endpointOutputs(live, releases, inputs, [...all, ...secretEnvValues(live.env)]);
    const hourlyCost = await endpointCostOutput(settings, live, client);
    if (hourlyCost !== undefined) outs.hourlyCost = hourlyCost;
  } catch (error) {
    if (failure === undefined) {
      failure = error;
      during = "reading it back";
    }
    outs = endpointOutputs(record, undefined, inputs, all);
  }
  return { outs, failure, during };
}

/** A partial failure: the endpoint `id` stays in the state with `properties` (what runs). */
function partialFailure(
  message: string,
  id: string,
  outs: Record<string, unknown>,
  provider: unknown,
): RunpodError {
  return Object.assign(new RunpodError(message), { id, properties: { ...outs, [PROVIDER_KEY]: provider } });
}

/** The endpoint as read back now (after a failed rollback: what really runs). */
async function readOutputs(
  client: RunpodClient,
  id: string,
  inputs: ServerlessEndpointInputs,
  secrets: string[],
): Promise<Record<string, unknown>> {
  const [live, releases] = await Promise.all([client.serverless.get(id), client.serverless.releases(id)]);
  return endpointOutputs(live, releases, inputs, [...secrets, ...secretEnvValues(live.env)]);
}

/**
 * Runs the gate on the release the outputs say the endpoint runs, through JobRun's execution
 * with the provider's settings; its progress lines go to the host's stderr.
 */
function gate(
  settings: RunpodSettings | undefined,
  id: string,
  outs: Record<string, unknown>,
  smoke: SmokeTest,
): Promise<GateVerdict> {
  const version = typeof outs.version === "number" ? outs.version : null;
  return runGate(contextFromSettings(settings ?? resolveSettings(undefined)), id, version, smoke);
}

/** `lastSmokeTest` of a release whose gate never ran (its rollout wait ran out of time). */
function untestedRecord(version: unknown) {
  return {
    version: typeof version === "number" ? version : null,
    passed: false,
    jobIds: [],
    failures: 0,
    timeline: ["not run: the rollout did not complete within rolloutTimeoutMs"],
  };
}

/**
 * A gate recorded as failed on the release that still serves (`onFailure: "keep"`, a failed
 * create, a failed rollback, a rollout wait that ran out of time): diff plans an update and the
 * update tests it again even when nothing changed.
 */
function gateFailedOnLive(previous: Record<string, unknown>): boolean {
  const last = previous.lastSmokeTest as { passed?: unknown; version?: unknown } | undefined;
  return last !== undefined && last !== null && last.passed === false && last.version === previous.version;
}

/**
 * The PATCH that puts the previous configuration back: the change from what runs now (`current`,
 * outputs) to the previous outputs taken as arguments (as refresh takes them), kept to the fields
 * the failed update's own PATCH set (`touched`): its release, and the scaling fields (`name`,
 * `workers`, `scaling`, ...) changed with it, so that what runs is again what the state's inputs
 * say (the engine keeps the old inputs after a partially failed update, and a refresh diffs
 * against them). A field the update did not set is left as the service holds it: someone else may
 * have changed it. Undefined when no release field differs (there is no release to roll back).
 */
function rollbackPatch(
  current: Record<string, unknown>,
  previous: Record<string, unknown>,
  touched: readonly string[],
): Record<string, unknown> | undefined {
  const wanted = inputsOf(previous as ServerlessEndpoint, {} as ServerlessEndpointInputs);
  const plan = planEndpointChange(current, wanted as ServerlessEndpointInputs);
  const back = Object.fromEntries(Object.entries(plan.patch).filter(([field]) => touched.includes(field)));
  return makesRelease({ patch: back }) ? back : undefined;
}

/**
 * The endpoint's version now, when it is past `tested` (the release the gate judged): someone else
 * deployed while the gate ran. Undefined when it is not, or when either version is unknown (the
 * rollback then goes ahead as before).
 */
async function movedPast(
  client: RunpodClient,
  id: string,
  tested: number | null,
): Promise<{ version: number; release: ServerlessRelease | undefined } | undefined> {
  if (tested === null) return undefined;
  // A failed read says nothing about a change elsewhere: the rollback goes ahead.
  const now = await client.serverless.releases(id).catch(() => undefined);
  const version = now?.endpointVersion;
  if (typeof version !== "number" || version <= tested) return undefined;
  return { version, release: now?.releases.find((r) => r.version === version) };
}

/**
 * The rollback's PATCH. When it fails, the service may still have acted on it (an answer lost
 * after the PATCH was applied): the endpoint is read back, and when it holds the previous
 * configuration already, the rollback went through and that record is its answer. Otherwise the
 * PATCH's own error stands.
 */
async function patchBack(
  client: RunpodClient,
  id: string,
  back: Record<string, unknown>,
  previous: Record<string, unknown>,
  touched: readonly string[],
): Promise<ServerlessEndpoint> {
  try {
    return await client.serverless.update(id, back);
  } catch (error) {
    const live = await client.serverless.get(id).catch(() => undefined);
    if (
      live !== undefined &&
      rollbackPatch(live as Record<string, unknown>, previous, touched) === undefined
    ) {
      return live;
    }
    throw error;
  }
}

/**
 * The outputs: the endpoint as read back (every field), its `version` (the release it runs) and
 * `latestReleaseId`, and the provider's own settings as given. `env` is kept as is (the engine
 * stores it as a secret); every other field has the secrets redacted.
 */
function endpointOutputs(
  live: ServerlessEndpoint,
  releases: ServerlessReleaseList | undefined,
  given: Pick<
    ServerlessEndpointInputs,
    "rollout" | "rolloutTimeoutMs" | "templateId" | "smokeTest" | "maxHourlyUsd"
  > & {
    lastSmokeTest?: unknown;
  },
  secrets: readonly string[],
): Record<string, unknown> {
  const { id: _id, env, version, ...fields } = live;
  const outs: Record<string, unknown> = {
    ...fields,
    // The document's Endpoint does not carry templateId: keep the one given.
    templateId: live.templateId ?? given.templateId,
    version: releases?.endpointVersion ?? version ?? null,
    latestReleaseId: releases?.releases[0]?.id ?? null,
    rollout: given.rollout,
    rolloutTimeoutMs: given.rolloutTimeoutMs,
    smokeTest: given.smokeTest,
    lastSmokeTest: given.lastSmokeTest,
    maxHourlyUsd: given.maxHourlyUsd,
  };
  for (const key of Object.keys(outs)) if (outs[key] === undefined) delete outs[key];
  // What the service and the gate answered is cleaned of the secrets; `smokeTest` is the program's
  // own argument, kept as given (the state's inputs hold it so anyway, and secret when it carries
  // headers): cleaned, a job naming an env value (the served model) would differ from the program's
  // input on every diff.
  const { smokeTest, ...answered } = outs;
  const clean = redactValue(answered, secrets) as Record<string, unknown>;
  if (smokeTest !== undefined) clean.smokeTest = smokeTest;
  return env === undefined ? clean : { ...clean, env };
}

/**
 * The arguments of a create that the endpoint `listed` does not hold, compared as refresh and diff
 * compare them (the service's defaults and normal forms): empty when it is what the create sent.
 */
export function differencesFrom(listed: ServerlessEndpoint, sent: ServerlessEndpointInputs): string[] {
  const plan = planEndpointChange(inputsOf(listed, sent), sent);
  return [...new Set([...plan.replaces, ...Object.keys(plan.patch)])];
}

/** The arguments the endpoint as read back amounts to (refresh returns them as the inputs). */
function inputsOf(live: ServerlessEndpoint, given: ServerlessEndpointInputs): Record<string, unknown> {
  const fields = live as Record<string, unknown>;
  const inputs: Record<string, unknown> = {};
  for (const key of BODY_NAMES) {
    const value = fields[key];
    if (value !== undefined && value !== null) inputs[key] = value;
  }
  if (Array.isArray(inputs.cpu)) {
    inputs.cpu = (inputs.cpu as Record<string, unknown>[]).map(({ memory: _m, ...cpu }) => cpu);
  }
  if (inputs.gpu !== null && typeof inputs.gpu === "object") {
    const gpu = Object.fromEntries(Object.entries(inputs.gpu).filter(([, v]) => v !== null));
    inputs.gpu = gpu;
  }
  for (const key of ["templateId", "rollout", "rolloutTimeoutMs", "smokeTest", "maxHourlyUsd"] as const) {
    if (inputs[key] === undefined && given[key] !== undefined) inputs[key] = given[key];
  }
  return inputs;
}

/** Values never to return or throw outside `env`: the env values and the API key. */
function endpointSecrets(settings: RunpodSettings | undefined, inputs: { env?: unknown }): string[] {
  const key = settings?.apiKey;
  return [...secretEnvValues(inputs.env), ...(typeof key === "string" && key !== "" ? [key] : [])];
}

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: (settings, _olds, news) => checkEndpoint(settings, news),
  diff: (_settings, _id, olds, news) => diffPlan(olds, news),
  create: createServerlessEndpoint,
  read: readServerlessEndpoint,
  update: updateServerlessEndpoint,
  delete: deleteServerlessEndpoint,
});

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
import { BadRequestError, ConflictError, describeBody, RunpodError, secretEnvValues } from "../../client";
import { checkDataCenters } from "../catalog/dataCenterCheck";
import type { ResourceOperations } from "../common/dynamicProvider";
import { withProviderErrors } from "../common/engineText";
import { hostClient, labelOf, withoutProvider } from "../common/host";
import { createReconciled, deleteIfPresent, readOrGone } from "../common/managedCreate";
import { defineOperations } from "../common/operations";
import { redact } from "../common/redaction";
import type { RunpodSettings } from "../config";
import { pricedCheck } from "../cost/budget";
import { checkEndpointCost, endpointCostOutput } from "../cost/endpoint";
import { restDialectOf } from "../smokeTestJob/context";
import { PROVIDER_KEY, partialFailure, settleFailure, settleOrFail, waitAndReadBack } from "./afterChange";
import { bodyOf, checkEndpointArgs, plainInputs, type ServerlessEndpointInputs } from "./args";
import { makesRelease, planEndpointChange } from "./changes";
import { differencesFrom, endpointOutputs, endpointSecrets, inputsOf } from "./outputs";
import {
  failedGate,
  gate,
  gateFailedOnLive,
  notFollowedWhy,
  notRunWhy,
  servesUntestedRelease,
  untestedRecord,
} from "./rollback";
import { EndpointRolloutError } from "./rolloutWait";
import { checkServingRelease } from "./servingCheck";
import {
  createFailedMessage,
  type GateVerdict,
  gateCancelledMessage,
  rolloutVerdict,
  type SmokeTest,
  SmokeTestSchema,
} from "./smokeTest";

type Props = Record<string, unknown>;

export { settingsFromConfigure } from "../common/host";
export { ROLLOUT_TIMEOUT_DEFAULT_MS } from "./args";
export { differencesFrom } from "./outputs";

/**
 * `check`: field-level validation (`args.ts`), no network; unknown values (preview) pass. With the
 * provider's settings, a REST v1 `restUrl` fails here: endpoints exist only on REST v2.
 */
export const checkServerlessEndpoint = (olds: Props, news: Props, settings?: RunpodSettings) =>
  operations.check(settings, olds, news);

/**
 * `diff`: old outputs against new inputs (`changes.ts`). `type` and the compute family (`gpu` or
 * `cpu`) replace the endpoint (a new one first, then the old one is deleted: names need not be
 * unique); everything else is an update. For a guarded endpoint (a `smokeTest` in the state and in
 * the program) it first reads which release serves, once (`servingCheck.ts`): a release newer than
 * the state knows fails the diff, saying to refresh. Older states calling this export carry no
 * settings: no read.
 */
export const diffServerlessEndpoint = (id: string, olds: Props, news: Props) =>
  operations.diff(undefined, id, olds, news);

async function diffPlan(olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
  const inputs = plainInputs(news);
  const plan = planEndpointChange(olds, inputs);
  if (plan.replaces.length > 0) return { changes: true, replaces: plan.replaces, deleteBeforeReplace: false };
  // A gate recorded as failed on the release that serves, or a release that serves untested (read
  // back newer than the last gate's), is an update to make even with nothing changed: a refresh
  // clears the engine's init errors (step.go RefreshStep.Apply), and a host killed mid-gate leaves
  // the old outputs, so without this the next up would never test that release.
  const previous = withoutProvider(olds);
  const retest =
    inputs.smokeTest !== undefined && (gateFailedOnLive(previous) || servesUntestedRelease(previous));
  return { changes: plan.changed.length > 0 || retest };
}

/**
 * `create`: list, POST once, and after a failure the service may have acted on, list again
 * (`createReconciled`): never a duplicate endpoint. Then, with `rollout: "wait"`, waits until
 * its workers run it. A failure after the POST is a partial failure: the endpoint exists.
 */
export const createServerlessEndpoint: ResourceOperations["create"] = async (settings, raw) => {
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
      bills: true,
      signal: settings?.signal,
    });
    if (recoveredAfter !== undefined) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
    const label = labelOf(record.name || inputs.name, record.id);
    if (inputs.smokeTest === undefined) {
      const outs = await settleOrFail(client, settings, record, inputs, secrets, raw[PROVIDER_KEY]);
      return { id: record.id, outs };
    }
    const { outs, failure, during } = await waitAndReadBack(client, settings, record, inputs, secrets);
    if (failure !== undefined) {
      // A rollout wait that ran out of time, stalled, or that the deployment's cancellation cut
      // short: the first release is recorded untested (there is no previous one to roll back to),
      // so the next up tests it, also after a refresh has cleared the init error (`gateFailedOnLive`).
      if (failure instanceof EndpointRolloutError) {
        outs.lastSmokeTest = untestedRecord(failure.version ?? outs.version, notRunWhy(failure.kind));
        const notJudged =
          failure.kind === "stalled"
            ? "The release did not roll out, so its smoke test did not run (a new endpoint has no previous " +
              "release to roll back to)."
            : "The release was not judged: its smoke test did not run.";
        const message = `${failure.message}\n${notJudged} The next pulumi up waits for its rollout again and tests it.`;
        throw partialFailure(message, record.id, outs, raw[PROVIDER_KEY]);
      }
      // A wait that could not follow the rollout (its reads of the workers kept failing after the
      // client's retries), or a read back that failed: the release was not judged either. When the
      // read back failed too, the version is unknown (the create's answer carries none): the record
      // is on version null, as `version` is, and `gateFailedOnLive` counts a record on an unknown
      // version as on what serves, so the next up (also after a refresh) tests it.
      outs.lastSmokeTest = untestedRecord(outs.version, notFollowedWhy(failure, during));
      const failed = settleFailure(label, failure, during, record.id, outs, raw[PROVIDER_KEY]);
      failed.message +=
        "\nThe release was not judged: its smoke test did not run. The next pulumi up tests it.";
      throw failed;
    }
    const smoke = SmokeTestSchema.parse(inputs.smokeTest);
    const verdict = await gate(settings, record.id, outs, smoke);
    outs.lastSmokeTest = verdict.record;
    if (verdict.record.passed) return { id: record.id, outs };
    if (verdict.cancelled) {
      throw partialFailure(gateCancelledMessage(label, verdict, smoke), record.id, outs, raw[PROVIDER_KEY]);
    }
    throw partialFailure(createFailedMessage(label, verdict, smoke), record.id, outs, raw[PROVIDER_KEY]);
  });
};

/**
 * `read`: refresh (with the recorded outputs) reads the endpoint and its releases; an endpoint
 * that is gone leaves the state (empty id). Drift (an image changed in the console) shows as
 * changed outputs and, through the returned inputs, in the next diff. `ServerlessEndpoint.get`
 * (no recorded outputs) throws for an id the account does not have.
 */
export const readServerlessEndpoint: ResourceOperations["read"] = async (settings, id, props) => {
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
    const given = old as ServerlessEndpointInputs;
    const outs = endpointOutputs(live, releases, given, [...secrets, ...secretEnvValues(live.env)]);
    const hourlyCost = await endpointCostOutput(settings, live, client);
    if (hourlyCost !== undefined) outs.hourlyCost = hourlyCost;
    if (adopting) return { id: live.id, props: outs };
    return { id: live.id, props: outs, inputs: inputsOf(live, given) };
  });
};

/**
 * `update`: one PATCH with what changed (`changes.ts`): a container change makes a release, a
 * scaling change applies at once. With `rollout: "wait"`, waits until no worker is stale; a
 * rollout that stalls or times out is a partial failure (the endpoint was changed).
 */
export const updateServerlessEndpoint: ResourceOperations["update"] = async (settings, id, olds, news) => {
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
    const gated =
      inputs.smokeTest !== undefined &&
      (makesRelease(plan) || gateFailedOnLive(previous) || servesUntestedRelease(previous));
    const smoke = gated ? SmokeTestSchema.parse(inputs.smokeTest) : undefined;
    const { outs, failure, during } = await waitAndReadBack(client, settings, record, kept, secrets);
    let verdict: GateVerdict;
    if (failure !== undefined) {
      // A release that cannot start fails its gate too: with "rollback", it is rolled back. A
      // wait that only ran out of time, or that the deployment's cancellation cut short, says
      // nothing about the release: it is neither judged nor rolled back, and the record says its
      // test did not run, so the next up tests it.
      const stalled =
        failure instanceof EndpointRolloutError && failure.kind === "stalled" && makesRelease(plan);
      if (smoke?.onFailure !== "rollback" || !stalled) {
        if (failure instanceof EndpointRolloutError && failure.kind !== "stalled" && smoke !== undefined) {
          outs.lastSmokeTest = untestedRecord(failure.version ?? outs.version, notRunWhy(failure.kind));
          const message =
            `${failure.message}\nThe release was not judged: its smoke test did not run and it was not rolled ` +
            "back. The next pulumi up waits for its rollout again and tests it.";
          throw partialFailure(message, id, outs, news[PROVIDER_KEY]);
        }
        // A release that did not roll out, kept (`onFailure: "keep"`): the step fails as without a
        // smokeTest, and the release must not be left untested. A record that already makes the
        // next up test it (a pass on an older version, or a failure on this one) stays; otherwise
        // (no record yet: a smokeTest added with this release, or a failure on an older one) the
        // release is recorded as not run.
        if (
          failure instanceof EndpointRolloutError &&
          failure.kind === "stalled" &&
          smoke?.onFailure === "keep"
        ) {
          if (!gateFailedOnLive(outs) && !servesUntestedRelease(outs)) {
            outs.lastSmokeTest = untestedRecord(failure.version ?? outs.version, notRunWhy(failure.kind));
          }
          const message =
            `${failure.message}\nThe release did not roll out, so its smoke test did not run; onFailure is ` +
            '"keep", so it was not rolled back. The next pulumi up waits for its rollout again and tests it.';
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
    // A gate the deployment's cancellation cut short (its jobs cancelled on the service) judges
    // nothing, so nothing is rolled back: the user asked to stop, and a rollback is a PATCH and a
    // rollout wait. The record (not passed, on the release that serves) makes the next up test
    // the release again, and roll it back then if it fails.
    if (verdict.cancelled) {
      throw partialFailure(
        gateCancelledMessage(label, verdict, smoke as SmokeTest),
        id,
        outs,
        news[PROVIDER_KEY],
      );
    }
    return failedGate({
      client,
      settings,
      id,
      label,
      inputs,
      previous,
      secrets,
      provider: news[PROVIDER_KEY],
      touched: Object.keys(plan.patch),
      smoke,
      outs,
      verdict,
    });
  });
};

/**
 * `delete`: DELETE by id; an endpoint already gone counts as deleted. The service also deletes
 * the template bound to the endpoint, and ends its workers and queued jobs.
 */
export const deleteServerlessEndpoint: ResourceOperations["delete"] = async (settings, id, props) => {
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
};

/** `check`'s own part: the arguments, then `hourlyCost` and the budgets (`../cost/budget.ts`). */
const checkEndpointWithCost = pricedCheck({
  kind: "ServerlessEndpoint",
  checkArgs: (settings, news) =>
    checkEndpointArgs(news, settings === undefined ? undefined : restDialectOf(settings)),
  checkCatalog: (settings, news, olds) =>
    checkDataCenters(settings, "dataCenterIds", news.dataCenterIds, olds.dataCenterIds),
  checkCost: checkEndpointCost,
  secrets: (settings, news) => endpointSecrets(settings, plainInputs(news)),
});

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: ["env"],
  check: checkEndpointWithCost,
  diff: async (settings, id, olds, news) => {
    await withProviderErrors(endpointSecrets(settings, plainInputs(news)), () =>
      checkServingRelease(settings, id, olds, news),
    );
    return diffPlan(olds, news);
  },
  create: createServerlessEndpoint,
  read: readServerlessEndpoint,
  update: updateServerlessEndpoint,
  delete: deleteServerlessEndpoint,
});

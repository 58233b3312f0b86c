/**
 * The guarded release of an endpoint: the gate run on the release the endpoint serves, and what
 * follows a failed one. With `onFailure: "rollback"` the fields the failed update's PATCH set are
 * put back as a new release, always waited for; a change made elsewhere while the gate ran is not
 * rolled back over. Every failed gate ends as a partial failure naming what runs now.
 */
import {
  APIError,
  type EndpointRolloutError,
  type RunpodClient,
  RunpodError,
  type ServerlessEndpoint,
  type ServerlessRelease,
} from "../../client";
import { CANCELLED } from "../clock";
import { type RunpodSettings, resolveSettings } from "../config";
import { contextFromSettings } from "../smokeTestJob/context";
import { partialFailure, waitAndReadBack } from "./afterChange";
import type { ServerlessEndpointInputs } from "./args";
import { makesRelease, planEndpointChange, RELEASE_FIELDS } from "./changes";
import { inputsOf, readOutputs } from "./outputs";
import {
  type GateVerdict,
  keptMessage,
  movedPastMessage,
  notRolledBackMessage,
  rollbackFailedMessage,
  rolledBackMessage,
  runGate,
  type SmokeTest,
  type SmokeTestRecord,
} from "./smokeTest";

/** An update whose release failed its gate (or could not start), as the update knows it. */
export interface FailedGate {
  client: RunpodClient;
  settings: RunpodSettings | undefined;
  id: string;
  label: string;
  inputs: ServerlessEndpointInputs;
  /** The outputs before the update. */
  previous: Record<string, unknown>;
  secrets: string[];
  /** The serialized provider, kept in the partial failure's outputs. */
  provider: unknown;
  /** The fields the update's PATCH set: what a rollback may put back. */
  touched: readonly string[];
  smoke: SmokeTest | undefined;
  /** The outputs after the update, with the verdict recorded. */
  outs: Record<string, unknown>;
  verdict: GateVerdict;
}

/**
 * After a failed gate: the release is kept (`onFailure: "keep"`, or no release field to put
 * back), named as moved past (someone deployed meanwhile), or rolled back. Always a partial
 * failure: the endpoint stays in the state with what runs.
 */
export async function failedGate(update: FailedGate): Promise<never> {
  const { client, settings, id, label, inputs, previous, secrets, provider, touched, smoke, outs, verdict } =
    update;
  // What the rollback puts back: the fields this update's PATCH set (a release's, and the scaling
  // fields changed with it), never a field someone else changed meanwhile.
  const back = rollbackPatch(outs, previous, touched);
  if (smoke?.onFailure !== "rollback" || back === undefined) {
    throw partialFailure(keptMessage(label, verdict, smoke as SmokeTest), id, outs, provider);
  }
  // After the deployment's cancellation no rollback starts: it is a write and a wait, and the user
  // asked to stop. The failed record stays on what runs, so the next up tests the release again.
  if (settings?.signal?.aborted === true) {
    throw partialFailure(notRolledBackMessage(label, verdict, smoke), id, outs, provider);
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
      provider,
    );
  }
  // Roll back: the previous container settings, as a new release, always waited for.
  let rolledBack: Record<string, unknown>;
  let restored: ServerlessEndpoint | undefined;
  try {
    restored = await patchBack(client, id, back, previous, touched);
    const done = await waitAndReadBack(client, settings, restored, { ...inputs, rollout: "wait" }, secrets);
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
      provider,
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
  throw partialFailure(message, id, rolledBack, provider);
}

/**
 * Runs the gate on the release the outputs say the endpoint runs, through JobRun's execution
 * with the provider's settings; its progress lines go to the host's stderr.
 */
export function gate(
  settings: RunpodSettings | undefined,
  id: string,
  outs: Record<string, unknown>,
  smoke: SmokeTest,
): Promise<GateVerdict> {
  const version = typeof outs.version === "number" ? outs.version : null;
  return runGate(contextFromSettings(settings ?? resolveSettings(undefined)), id, version, smoke);
}

/** Why a release's smoke test did not run, by how its rollout wait ended: the `not run: <why>` line. */
export function notRunWhy(kind: EndpointRolloutError["kind"]): string {
  if (kind === "cancelled") return CANCELLED;
  if (kind === "stalled") return "the rollout stalled (a worker of the release was UNHEALTHY)";
  return "the rollout did not complete within rolloutTimeoutMs";
}

/**
 * Why a release's smoke test did not run when its rollout wait failed for another reason than the
 * rollout's own (the reads of its workers kept failing after the client's retries), or the endpoint
 * could not be read back after it (`during`, as `waitAndReadBack` says): the reason in a few words,
 * an HTTP status or an error code, never the service's text.
 */
export function notFollowedWhy(failure: unknown, during: string): string {
  const short =
    failure instanceof APIError
      ? `HTTP ${failure.status}`
      : failure instanceof RunpodError
        ? failure.code
        : "an unexpected error";
  return during === "reading it back"
    ? `the endpoint could not be read back after its rollout (${short})`
    : `the rollout could not be followed (${short})`;
}

/**
 * `lastSmokeTest` of a release whose gate never ran: its rollout wait ran out of time, stalled (a
 * create, which has nothing to roll back to), or the deployment was cancelled during it (`why`,
 * {@link notRunWhy}). Not passed on `version`, so the next up tests it.
 */
export function untestedRecord(version: unknown, why = notRunWhy("timeout")): SmokeTestRecord {
  return {
    version: typeof version === "number" ? version : null,
    passed: false,
    jobIds: [],
    failures: 0,
    timeline: [`not run: ${why}`],
  };
}

/**
 * A release serving that no gate has judged: the version read back (a refresh after a host killed
 * mid-gate, or a deploy made elsewhere) is newer than the one the last smoke test passed on. Diff
 * plans an update and the update tests it, as for {@link gateFailedOnLive}.
 */
export function servesUntestedRelease(previous: Record<string, unknown>): boolean {
  const last = previous.lastSmokeTest as { passed?: unknown; version?: unknown } | undefined;
  return (
    last !== undefined &&
    last !== null &&
    last.passed === true &&
    typeof last.version === "number" &&
    typeof previous.version === "number" &&
    previous.version > last.version
  );
}

/**
 * A gate recorded as failed on the release that still serves (`onFailure: "keep"`, a failed
 * create, a failed rollback, a rollout wait that ran out of time), or recorded on an unknown
 * version (`null`: a create whose rollout wait and read back both failed), which may be what
 * serves: diff plans an update and the update tests it again even when nothing changed.
 */
export function gateFailedOnLive(previous: Record<string, unknown>): boolean {
  const last = previous.lastSmokeTest as { passed?: unknown; version?: unknown } | undefined;
  return (
    last !== undefined &&
    last !== null &&
    last.passed === false &&
    (last.version === previous.version || last.version === null)
  );
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
export function rollbackPatch(
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
export async function movedPast(
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
export async function patchBack(
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

/**
 * An endpoint's outputs and refresh inputs: the endpoint as read back with its `version` and
 * `latestReleaseId` and the provider's own arguments as given (secrets redacted outside `env`);
 * the arguments the endpoint as read back amounts to (what refresh returns as inputs, and what
 * create reconciliation and the rollback compare); and the values never to return or throw.
 */
import {
  type RunpodClient,
  type ServerlessEndpoint,
  type ServerlessReleaseList,
  secretEnvValues,
} from "../../client";
import { redactedOutsideEnv } from "../common/redaction";
import type { RunpodSettings } from "../config";
import { BODY_NAMES, type ServerlessEndpointInputs } from "./args";
import { planEndpointChange } from "./changes";

/** The endpoint as read back now (after a failed rollback: what really runs). */
export async function readOutputs(
  client: RunpodClient,
  id: string,
  inputs: ServerlessEndpointInputs,
  secrets: string[],
): Promise<Record<string, unknown>> {
  const [live, releases] = await Promise.all([client.serverless.get(id), client.serverless.releases(id)]);
  return endpointOutputs(live, releases, inputs, [...secrets, ...secretEnvValues(live.env)]);
}

/**
 * The outputs: the endpoint as read back (every field), its `version` (the release it runs) and
 * `latestReleaseId`, and the provider's own settings as given. `env` is kept as is (the engine
 * stores it as a secret); every other field has the secrets redacted.
 */
/**
 * Fields answered in the service's own vocabulary (`QUEUE`, `QUEUE_DELAY`, pool, flavour and data
 * centre ids), which the next diff compares: kept as answered, never redacted. They cannot carry an
 * env value the program wrote unless one equals them by chance (an env value `QUEUE`), and hiding
 * them then made the next preview replace the endpoint (`type`) or PATCH it on every up.
 */
const SERVICE_CHOSEN = ["type", "scaling", "flashboot", "gpu", "cpu", "dataCenterIds"];

export function endpointOutputs(
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
  const clean = redactedOutsideEnv(answered, secrets, SERVICE_CHOSEN);
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
export function inputsOf(live: ServerlessEndpoint, given: ServerlessEndpointInputs): Record<string, unknown> {
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
export function endpointSecrets(settings: RunpodSettings | undefined, inputs: { env?: unknown }): string[] {
  const key = settings?.apiKey;
  return [...secretEnvValues(inputs.env), ...(typeof key === "string" && key !== "" ? [key] : [])];
}

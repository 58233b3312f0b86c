/**
 * After a create or a PATCH of an endpoint: the rollout wait (unless `rollout: "ignore"`), then the
 * endpoint as read back. Any failure from here on is a partial failure: the endpoint exists and was
 * changed, so the error carries its id and the outputs known (redacted but for `env`).
 */
import { type RunpodClient, RunpodError, type ServerlessEndpoint, secretEnvValues } from "../../client";
import { labelOf } from "../common/host";
import { describeError } from "../common/wording";
import { type RunpodSettings, resolveSettings } from "../config";
import { endpointCostOutput } from "../cost/endpoint";
import { clientPollKey, workerPollsOn } from "../smokeTestJob/workerPoll";
import { ROLLOUT_TIMEOUT_DEFAULT_MS, type ServerlessEndpointInputs } from "./args";
import { endpointOutputs } from "./outputs";
import { EndpointRolloutError, waitForEndpointRollout } from "./rolloutWait";

/** Where the engine keeps the serialized provider in inputs and outputs; a partial failure keeps it. */
export const PROVIDER_KEY = "__provider";

/**
 * After a create or a PATCH: the rollout wait (unless `rollout: "ignore"`), then the endpoint as
 * read back. Any failure from here on is a partial failure: the endpoint exists and was changed,
 * so the error carries its id and the outputs known (redacted but for `env`).
 */
export async function settleOrFail(
  client: RunpodClient,
  settings: RunpodSettings | undefined,
  record: ServerlessEndpoint,
  inputs: ServerlessEndpointInputs & { lastSmokeTest?: unknown },
  secrets: string[],
  provider: unknown,
): Promise<Record<string, unknown>> {
  const label = labelOf(record.name || inputs.name, record.id);
  const { outs, failure, during } = await waitAndReadBack(client, settings, record, inputs, secrets);
  if (failure === undefined) return outs;
  throw settleFailure(label, failure, during, record.id, outs, provider);
}

/** The partial failure of a rollout wait or read back that failed after the endpoint was changed. */
export function settleFailure(
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
export async function waitAndReadBack(
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
          clock: settings?.clock,
          // The deployment's cancellation ends the wait at once (kind "cancelled").
          signal: settings?.signal,
          polls: workerPollsOn(settings?.clock),
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
export function partialFailure(
  message: string,
  id: string,
  outs: Record<string, unknown>,
  provider: unknown,
): RunpodError {
  return Object.assign(new RunpodError(message), { id, properties: { ...outs, [PROVIDER_KEY]: provider } });
}

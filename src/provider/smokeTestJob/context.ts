/**
 * How a JobRun operation reaches the service and reports progress ({@link LifecycleContext}),
 * built from the provider's settings in the host ({@link contextFromSettings}) or by hand in tests.
 *
 * Jobs go through a client that never uses `restUrl`. REST v2 is read only for what a JobRun
 * learns about the endpoint: its workers (the rollout wait and the release check of
 * `rollout: "wait"`) and a failed run's worker log, through one client made on first use, so a run
 * that needs neither never touches `restUrl`.
 */
import {
  DEFAULT_REST_URL,
  type Endpoint,
  type RunpodClient,
  resolveRestUrl,
  secretEnvValues,
} from "../../client";
import type { Clock } from "../clock";
import { apiKeySecrets } from "../common/redaction";
import { printable } from "../common/wording";
import { clientFromSettings, type RunpodSettings, resolveSettings } from "../config";
import { runWorkerRate } from "../cost/endpoint";
import type { RunContext } from "./execution";
import { PROBE_NEEDS_V2, ROLLOUT_NEEDS_V2 } from "./jobArgsCheck";
import type { WorkerLogReader } from "./logTail";
import type { ProbeTarget } from "./probe";
import type { WorkerListReader } from "./staleWorkers";
import { clientPollKey } from "./workerPoll";

/** How the provider reaches the service and reports progress; replaceable in tests. */
export interface LifecycleContext {
  endpoint: (endpointId: string) => RunContext["endpoint"];
  log: (line: string) => void;
  /** Values redacted from every error and progress line (the API key). @default [] */
  secrets?: readonly string[];
  /**
   * Reads an endpoint's workers (REST v2), for `rollout: "wait"`. It may throw (a malformed
   * `restUrl`): the run then fails saying so. Without it, `rollout` defaults to `"ignore"`.
   */
  workers?: WorkerListReader;
  /** Why `workers` is absent (a REST v1 `restUrl`): an explicit `rollout: "wait"` fails with it. */
  workersUnavailable?: string;
  /** The client's key of the shared worker poll (see `RunContext.workersKey`). */
  workersKey?: string;
  /**
   * Opens a worker's log stream (REST v2), read for the tail of a failed run. It may throw (a v1
   * `restUrl`, a malformed one): the failure then says the log is unavailable. Without it no
   * log is read.
   */
  workerLogs?: WorkerLogReader;
  /**
   * Reads the endpoint's `env` values (REST v2 `GET /v2/serverless/{id}`): tokens a worker may
   * print, redacted from everything the run records. Without it only the run's own secrets are.
   */
  endpointEnv?: (endpointId: string, options: { signal: AbortSignal }) => Promise<string[]>;
  /**
   * A load-balancer endpoint's HTTP interface (`client.loadBalancer(id)`, REST v2), for `http`
   * probes. Absent on a REST v1 `restUrl`: `loadBalancerUnavailable` says why.
   */
  loadBalancer?: (endpointId: string) => ProbeTarget;
  loadBalancerUnavailable?: string;
  /**
   * The hourly list price of the worker that ran the job (`placement`: its GPU type × GPU count,
   * as the release check read it; no read of its own), else of the endpoint's dearest candidate (`hourlyCost.ratePerWorkerUsd`), USD, REST
   * v2, for a run's `costUsd`; undefined when the catalog gives none. Without it no cost is recorded.
   */
  workerRate?: (
    endpointId: string,
    options: { signal: AbortSignal; placement?: { gpuTypeId?: string | null; gpuCount?: number } },
  ) => Promise<number | undefined>;
  /**
   * The time and timers of the run (its deadline, the rollout wait, the log tail); its rollout
   * wait joins the worker poll loops of this clock. @default the real clock
   */
  clock?: Clock;
  /**
   * The deployment's cancellation (`RunpodSettings.signal`): a run ends its waits at once when it
   * aborts, as at its deadline (`RunContext.cancellation`). @default never
   */
  signal?: AbortSignal;
}

/** The REST dialect `restUrl` speaks (the default URL's when unset); undefined when it is malformed. */
export function restDialectOf(
  settings: Pick<RunpodSettings, "restUrl"> | undefined,
): "v1" | "v2" | undefined {
  try {
    return resolveRestUrl(settings?.restUrl ?? DEFAULT_REST_URL).dialect;
  } catch {
    return undefined;
  }
}

/**
 * Builds the context from resolved settings: clients made on first use, progress to stderr. On a
 * REST v1 `restUrl` there is no worker reader (the rollout is not checked unless asked, and then
 * the run fails saying why); a malformed one fails the reads that need it, naming the setting.
 */
export function contextFromSettings(settings: RunpodSettings | undefined): LifecycleContext {
  const resolved = settings ?? resolveSettings(undefined);
  let jobs: RunpodClient | undefined;
  let rest: RunpodClient | undefined;
  const restClient = () => {
    rest ??= clientFromSettings(resolved);
    return rest;
  };
  const v1 = restDialectOf(resolved) === "v1";
  // The endpoint is read once per run for both its env values and its price.
  const endpoints = new Map<string, ReturnType<RunpodClient["serverless"]["get"]>>();
  const readEndpoint = (endpointId: string, options: { signal: AbortSignal }) => {
    let pending = endpoints.get(endpointId);
    if (pending === undefined) {
      pending = restClient().serverless.get(endpointId, { ...options, maxRetries: 1 });
      endpoints.set(endpointId, pending);
      pending.catch(() => endpoints.delete(endpointId));
    }
    return pending;
  };
  return {
    endpoint: (endpointId) => {
      jobs ??= clientFromSettings(resolved, {}, { rest: false }); // jobs only: restUrl is never used
      return jobs.endpoint(endpointId) as Endpoint;
    },
    workers: v1 ? undefined : (endpointId, options) => restClient().serverless.workers(endpointId, options),
    workersUnavailable: v1 ? ROLLOUT_NEEDS_V2 : undefined,
    // Rollout waits of every provider with these settings share one read loop per endpoint.
    workersKey: v1 ? undefined : clientPollKey(resolved),
    // One reconnect at most: the log tail is read within a few seconds, after the job failed.
    workerLogs: (endpointId, workerId, options) =>
      restClient().serverless.workerLogs(endpointId, workerId, { ...options, maxReconnects: 1 }),
    endpointEnv: v1
      ? undefined
      : async (endpointId, options) =>
          // The emulator's RUNPOD_EMULATOR_* instructions stay readable (see secretEnvValues).
          secretEnvValues((await readEndpoint(endpointId, options)).env),
    workerRate: v1
      ? undefined
      : async (endpointId, { signal, placement }) =>
          runWorkerRate(resolved, await readEndpoint(endpointId, { signal }), restClient(), placement),
    loadBalancer: v1 ? undefined : (endpointId) => restClient().loadBalancer(endpointId),
    loadBalancerUnavailable: v1 ? PROBE_NEEDS_V2 : undefined,
    clock: resolved.clock,
    signal: resolved.signal,
    secrets: apiKeySecrets(resolved),
    log: (line) => {
      // Progress lines carry the service's text (statuses, ids): no ESC, BEL or CR reaches the terminal.
      process.stderr.write(`${printable(line, Number.POSITIVE_INFINITY, true)}\n`);
    },
  };
}

/**
 * A local emulator of the service: REST v1 and v2 management and the serverless job interface on
 * one port, with the service's limits, timers, webhooks and (optionally) its failures.
 *
 * ```ts
 * const emu = await startEmulator({ endpoints: ["echo:2"] });
 * const client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrl, serverlessUrl: emu.serverlessUrl });
 * await emu.close();
 * ```
 */
import type { AddressInfo } from "node:net";
import { KeyChecker } from "./auth";
import { UsageMeter } from "./billing/meter";
import { serverlessRates } from "./billing/prices";
import { findPublicTemplate } from "./catalog";
import type { Clock } from "./clock";
import { FaultInjector } from "./faults";
import { loadFastify } from "./http/loadFastify";
import { type EndpointCounters, JobEngine } from "./jobs/engine";
import { checkHandlerSpec, type HandlerSpec, loadHandlerModule } from "./jobs/handlers";
import { type EmulatorOptions, resolveOptions } from "./options";
import { PodStore } from "./pods/podStore";
import { RateLimitEnforcer } from "./rateLimit";
import { buildServer } from "./server";
import { ServerlessStore } from "./serverless";
import { ManagementStore } from "./store";
import { type WebhookAttempt, WebhookSender } from "./webhooks";

export { type Clock, ManualClock, realClock } from "./clock";
export type { FaultConfig } from "./faults";
export type { Handler, HandlerContext, HandlerJob, HandlerSpec } from "./jobs/handlers";
export { type EmulatorOptions, type EndpointSpec, RESERVED_ENDPOINT_IDS } from "./options";

/** What the emulator saw so far, for tests. */
export interface EmulatorStats {
  /** Jobs submitted (run + runsync, not retries) per endpoint id. */
  submitted: Record<string, number>;
  /** All counters per endpoint id. */
  endpoints: Record<string, EndpointCounters>;
  /** Every webhook attempt, in order. */
  webhooks: WebhookAttempt[];
  /** Faults injected so far, by kind. */
  faults: { "429": number; "503": number; "500": number; reset: number };
  /** HTTP requests received. */
  requests: number;
  /** The same, by interface: the job API (`/v2/{endpointId}/...`) and REST management (v1 and v2). */
  requestsByInterface: { jobs: number; management: number };
}

/** A running emulator. */
export interface RunningEmulator {
  /** REST management base URL of the default dialect, v2: `http://127.0.0.1:PORT/v2`. */
  restUrl: string;
  /** REST v1 management base URL (the retired dialect, still served): `http://127.0.0.1:PORT/v1`. */
  restUrlV1: string;
  /** REST v2 management base URL, the same as `restUrl` (kept for 0.1.0 callers). */
  restUrlV2: string;
  /** Job interface base URL (paths start with `/v2`): `http://127.0.0.1:PORT`. */
  serverlessUrl: string;
  /** The first accepted API key. */
  apiKey: string;
  /** Every accepted API key. */
  apiKeys: string[];
  /** The bound port. */
  port: number;
  /** The clock the emulator's timers run on. */
  clock: Clock;
  /** Counters and records for tests. */
  stats(): EmulatorStats;
  /**
   * Sets the account's balance, USD (undefined: no limit): a pod create or start whose pod costs
   * more an hour, or a cluster create whose pods together do, answers 402 from then on. The option `balanceUsd` sets it at start.
   */
  setBalanceUsd(usd: number | undefined): void;
  /** Stops serving, ends open connections, stops timers, and flushes the state file. */
  close(): Promise<void>;
}

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Starts the emulator; resolves once it listens. Bad options reject with an error naming them.
 * The HTTP server (fastify, an optional peer dependency) is loaded here, not when this module is
 * required; without it this rejects with an error saying `npm install fastify`.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const resolved = resolveOptions(options);
  loadFastify(); // before touching any state file: fails with what to install when it is missing
  let handlers: HandlerSpec | undefined;
  if (typeof resolved.handlers === "string") handlers = await loadHandlerModule(resolved.handlers);
  else if (resolved.handlers !== undefined) handlers = checkHandlerSpec(resolved.handlers);

  const store = await ManagementStore.open({ stateFile: resolved.stateFile, volumes: resolved.volumes });
  const webhooks = new WebhookSender(resolved.clock, resolved.webhookRetryDelayMs);
  const meter = new UsageMeter(resolved.clock);
  const engine = new JobEngine({
    clock: resolved.clock,
    endpoints: resolved.endpoints,
    retention: resolved.retention,
    handlers,
    webhooks,
    rolloutMs: resolved.rolloutMs,
    usage: meter,
  });
  let serverless: ServerlessStore;
  try {
    serverless = new ServerlessStore(engine, resolved.clock, resolved.endpoints, store, {
      ...(resolved.coldStartMs !== undefined ? { coldStartMs: resolved.coldStartMs } : {}),
    });
  } catch (err) {
    engine.close();
    webhooks.close();
    throw err;
  }
  meter.serverlessRate = serverlessRates(serverless);
  const pods = new PodStore({
    usage: meter,
    clock: resolved.clock,
    podStartMs: resolved.podStartMs,
    ...(resolved.balanceUsd !== undefined ? { balanceUsd: resolved.balanceUsd } : {}),
    store,
    templates: (id) => serverless.getTemplate(id) ?? findPublicTemplate(id),
  });
  const faults = resolved.faults ? new FaultInjector(resolved.faults, resolved.faultSeed) : undefined;
  let requests = 0;
  const requestsByInterface = { jobs: 0, management: 0 };
  const app = buildServer({
    engine,
    store,
    serverless,
    pods,
    keys: new KeyChecker(resolved.apiKeys),
    faults,
    limiter: resolved.rateLimits ? new RateLimitEnforcer(resolved.clock) : undefined,
    rateLimits: resolved.rateLimits,
    clock: resolved.clock,
    meter,
    loadBalancerRequestWaitMs: resolved.loadBalancerRequestWaitMs,
    onRequest: (dialect) => {
      requests++;
      if (dialect === "job") requestsByInterface.jobs++;
      else requestsByInterface.management++;
    },
  });
  await app.listen({ port: resolved.port, host: resolved.host });
  const port = (app.server.address() as AddressInfo).port;
  const base = `http://${urlHost(resolved.host)}:${port}`;
  serverless.serverlessUrl = base;
  let closing: Promise<void> | undefined;

  return {
    restUrl: `${base}/v2`,
    restUrlV1: `${base}/v1`,
    restUrlV2: `${base}/v2`,
    serverlessUrl: base,
    apiKey: resolved.apiKeys[0] as string,
    apiKeys: [...resolved.apiKeys],
    port,
    clock: resolved.clock,
    setBalanceUsd(usd) {
      pods.setBalanceUsd(usd);
    },
    stats() {
      const endpoints: Record<string, EndpointCounters> = {};
      const submitted: Record<string, number> = {};
      for (const id of engine.endpointIds()) {
        endpoints[id] = engine.counters(id);
        submitted[id] = endpoints[id].submitted;
      }
      return {
        submitted,
        endpoints,
        webhooks: [...webhooks.attempts],
        faults: { ...(faults?.counts ?? { "429": 0, "503": 0, "500": 0, reset: 0 }) },
        requests,
        requestsByInterface: { ...requestsByInterface },
      };
    },
    close() {
      closing ??= (async () => {
        engine.close();
        webhooks.close();
        await pods.close();
        await app.close();
        await store.flush();
      })();
      return closing;
    },
  };
}

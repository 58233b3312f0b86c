/**
 * The emulator's HTTP surface, one port for everything:
 * - `/v1/...`: REST v1 management, errors `{"message": "..."}`.
 * - `/v2/registries`, `/v2/network-volumes`, `/v2/serverless` (with releases, workers and worker
 *   logs), `/v2/templates`, `/v2/catalog/...` (a fixed catalog, `catalog/`): REST v2 management, errors `application/problem+json`,
 *   wrapped lists, `dataCenter`, 201 on create; `/v2/pods` and `/v2/account/ssh-keys` (`http/podRoutes.ts`);
 *   `/v2/registries/delegations` (`http/delegationRoutes.ts`);
 *   `/v2/billing/...` (`http/billingRoutes.ts`, adding up what `billing/meter.ts` metered). Every first segment of the v2 document (`pods`,
 *   `serverless`, ...) is reserved: no endpoint may use it.
 * - `/v2/{endpointId}/...`: the job interface, errors `{"message": "..."}`; its OpenAI-compatible
 *   route `/v2/{endpointId}/openai/v1/...` (`http/openAiRoutes.ts`), errors as OpenAI gives them.
 * - `/lb/{endpointId}/...`: load-balancer endpoints (`http/loadBalancerRoutes.ts`), errors `{"error": "..."}`.
 *
 * The pieces: `http/pipeline.ts` (auth, faults, rate limits, latency, body limits, the answers to
 * unserved v2 paths), `http/jobRoutes.ts`, and `http/management.ts` (one route table for both REST
 * dialects). fastify is loaded when a server is built, never at require time.
 */
import type { FastifyInstance } from "fastify";
import type { UsageMeter } from "./billing/meter";
import type { Clock } from "./clock";
import { registerBillingRoutes } from "./http/billingRoutes";
import { registerCatalogRoutes } from "./http/catalogRoutes";
import { registerDelegationRoutes } from "./http/delegationRoutes";
import { registerJobRoutes } from "./http/jobRoutes";
import { registerLoadBalancerRoutes } from "./http/loadBalancerRoutes";
import { registerManagementRoutes } from "./http/management";
import { registerOpenAiRoutes } from "./http/openAiRoutes";
import { createApp, type PipelineDeps } from "./http/pipeline";
import { registerPodRoutes } from "./http/podRoutes";
import { registerServerlessRoutes } from "./http/serverlessRoutes";
import type { PodStore } from "./pods/podStore";
import type { ServerlessStore } from "./serverless";
import type { ManagementStore } from "./store";

export { STREAM_WAIT_DEFAULT_MS } from "./http/jobRoutes";
export { MANAGEMENT_RATE_LIMIT_ROW } from "./http/pipeline";

/** Dependencies of the server. */
export interface ServerDeps extends PipelineDeps {
  store: ManagementStore;
  serverless: ServerlessStore;
  /** Pods, their stock and the account's SSH keys. */
  pods: PodStore;
  /** The emulator's clock (load-balancer request waits and latency). */
  clock: Clock;
  /** What workers and pods ran, which the billing routes add up. */
  meter: UsageMeter;
  /** How long a load-balancer request waits for a ready worker, ms. */
  loadBalancerRequestWaitMs: number;
}

/** Builds the fastify app (not listening yet). */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const app = createApp(deps);
  registerJobRoutes(app, deps.engine);
  registerOpenAiRoutes(app, deps.engine);
  registerManagementRoutes(app, { store: deps.store, serverless: deps.serverless, pods: deps.pods });
  registerServerlessRoutes(app, deps.serverless);
  registerCatalogRoutes(app, deps.pods);
  registerPodRoutes(app, deps.pods);
  registerDelegationRoutes(app, { store: deps.store, clock: deps.clock });
  registerBillingRoutes(app, { meter: deps.meter, clock: deps.clock });
  registerLoadBalancerRoutes(app, {
    engine: deps.engine,
    serverless: deps.serverless,
    clock: deps.clock,
    requestWaitMs: deps.loadBalancerRequestWaitMs,
  });
  return app;
}

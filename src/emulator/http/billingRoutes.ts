/**
 * REST v2 billing routes: `/v2/billing`, `/v2/billing/pods`, `/serverless`, `/endpoints`,
 * `/network-volumes` and `/clusters`, answering what the emulator's workers and pods ran at the
 * catalog's prices (`../billing/`). Queries are parsed with the wire module's schemas (the
 * client's own): a broken rule of the document (`lastN` with `startTime`/`endTime`, an end before
 * the start) and a window past the emulator's bound are 400; any other malformed parameter is a
 * 422 `Request validation failed`.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  BillingQueryInputSchema,
  billingQueryFromWire,
  ClusterBillingQueryInputSchema,
  NetworkVolumeBillingQueryInputSchema,
  PodBillingQueryInputSchema,
  ServerlessBillingQueryInputSchema,
} from "../../wire/billing";
import { isBadRequestRule } from "../../wire/fields";
import {
  aggregateBilling,
  type BillingWindow,
  clusterBilling,
  endpointBilling,
  networkVolumeBilling,
  podBilling,
  resolveWindow,
  serverlessBilling,
  WindowTooLargeError,
} from "../billing/ledger";
import type { UsageMeter } from "../billing/meter";
import type { Clock } from "../clock";
import { HttpError, parse } from "./errors";
import type { RouteMeta } from "./routeMeta";

export function registerBillingRoutes(app: FastifyInstance, deps: { meter: UsageMeter; clock: Clock }): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };

  /** The parsed query and its resolved window: 400 for the document's rules, else 422. */
  const read = <S extends z.ZodType>(schema: S, request: FastifyRequest): [z.output<S>, BillingWindow] => {
    const value = billingQueryFromWire(request.query as Record<string, string | string[] | undefined>);
    const result = schema.safeParse(value);
    let query: z.output<S>;
    if (result.success) query = result.data;
    else {
      const status = result.error.issues.every(isBadRequestRule) ? 400 : 422;
      try {
        query = parse(schema, value, status);
      } catch (err) {
        if (err instanceof HttpError && status === 422) {
          throw new HttpError(422, `Request validation failed: ${err.message}`, err.errors);
        }
        throw err;
      }
    }
    try {
      return [query, resolveWindow(query as Parameters<typeof resolveWindow>[0], deps.clock.now())];
    } catch (err) {
      if (err instanceof WindowTooLargeError) throw new HttpError(400, err.message);
      throw err;
    }
  };

  app.get("/v2/billing", options, async (request) => {
    const [, window] = read(BillingQueryInputSchema, request);
    return aggregateBilling(deps.meter.spans(), window);
  });
  app.get("/v2/billing/pods", options, async (request) => {
    const [query, window] = read(PodBillingQueryInputSchema, request);
    return podBilling(deps.meter.spans(), window, query.podId);
  });
  app.get("/v2/billing/serverless", options, async (request) => {
    const [query, window] = read(ServerlessBillingQueryInputSchema, request);
    return serverlessBilling(deps.meter.spans(), window, query.serverlessId);
  });
  app.get("/v2/billing/endpoints", options, async (request) => {
    const [, window] = read(BillingQueryInputSchema, request);
    return endpointBilling(window);
  });
  app.get("/v2/billing/network-volumes", options, async (request) => {
    const [query, window] = read(NetworkVolumeBillingQueryInputSchema, request);
    return networkVolumeBilling(window, query.networkVolumeId);
  });
  app.get("/v2/billing/clusters", options, async (request) => {
    const [query, window] = read(ClusterBillingQueryInputSchema, request);
    return clusterBilling(deps.meter.spans(), window, query.clusterId);
  });
}

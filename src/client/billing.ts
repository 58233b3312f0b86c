/**
 * `client.billing`: what was spent (REST v2 `/v2/billing/...`), in time buckets. Each call answers
 * the service's whole list: `records` (one per bucket, or per resource per bucket) and `metadata`
 * (the resolved window, record count and totals). A v1 `restUrl` gets a `ValidationError` before
 * any network call (v1 never had billing), and so does a bad query, naming the parameter.
 *
 * ```ts
 * const spend = await client.billing.serverless({ serverlessId: "jpnw0v75y3qoql", lastN: 7, bucketSize: "day" });
 * console.log(spend.metadata.totals.totalAmount, spend.records.map((r) => [r.startTime, r.totalAmount]));
 * ```
 */

import type { z } from "zod";
import {
  type BillingList,
  BillingListSchema,
  type BillingQuery,
  BillingQueryInputSchema,
  type ClusterBillingList,
  ClusterBillingListSchema,
  type ClusterBillingQuery,
  ClusterBillingQueryInputSchema,
  type EndpointBillingList,
  EndpointBillingListSchema,
  type NetworkVolumeBillingList,
  NetworkVolumeBillingListSchema,
  type NetworkVolumeBillingQuery,
  NetworkVolumeBillingQueryInputSchema,
  type PodBillingList,
  PodBillingListSchema,
  type PodBillingQuery,
  PodBillingQueryInputSchema,
  type ServerlessBillingList,
  ServerlessBillingListSchema,
  type ServerlessBillingQuery,
  ServerlessBillingQueryInputSchema,
} from "../wire/billing";
import { queryToWire } from "../wire/fields";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/** One billing route: its path below `/billing`, its query schema (strict) and its answer's. */
interface Route<S extends z.ZodType> {
  sub: string;
  query: z.ZodType;
  answer: S;
  what: string;
}

const route = <S extends z.ZodType>(name: string, sub: string, query: z.ZodType, answer: S): Route<S> => ({
  sub,
  query,
  answer,
  what: `billing.${name} query`,
});

const ROUTES = {
  list: route("list", "", BillingQueryInputSchema, BillingListSchema),
  pods: route("pods", "/pods", PodBillingQueryInputSchema, PodBillingListSchema),
  serverless: route(
    "serverless",
    "/serverless",
    ServerlessBillingQueryInputSchema,
    ServerlessBillingListSchema,
  ),
  endpoints: route("endpoints", "/endpoints", BillingQueryInputSchema, EndpointBillingListSchema),
  networkVolumes: route(
    "networkVolumes",
    "/network-volumes",
    NetworkVolumeBillingQueryInputSchema,
    NetworkVolumeBillingListSchema,
  ),
  clusters: route("clusters", "/clusters", ClusterBillingQueryInputSchema, ClusterBillingListSchema),
};

/**
 * Billing history (REST v2 only): every call is a read, retried under the client's policy. The
 * window is `startTime`/`endTime` (RFC 3339; end exclusive) or `lastN` buckets ending with the
 * current one, never both; `bucketSize` is `hour`, `day` (the default), `week`, `month` or `year`.
 */
export class Billing extends RestV2Resource {
  protected readonly label = "client.billing";

  /** Total spend per bucket across every billable resource, each cost component apart (`GET /v2/billing`). */
  async list(query: BillingQuery = {}, options?: RequestOptions): Promise<BillingList> {
    return this.#get(ROUTES.list, query, options);
  }

  /** Pod spend per pod per bucket (`GET /v2/billing/pods`); `podId` narrows it to one pod. */
  async pods(query: PodBillingQuery = {}, options?: RequestOptions): Promise<PodBillingList> {
    return this.#get(ROUTES.pods, query, options);
  }

  /**
   * Serverless spend per endpoint per bucket (`GET /v2/billing/serverless`); `serverlessId` narrows
   * it to one endpoint.
   */
  async serverless(
    query: ServerlessBillingQuery = {},
    options?: RequestOptions,
  ): Promise<ServerlessBillingList> {
    return this.#get(ROUTES.serverless, query, options);
  }

  /** Spend on Runpod's public endpoints per bucket (`GET /v2/billing/endpoints`). */
  async endpoints(query: BillingQuery = {}, options?: RequestOptions): Promise<EndpointBillingList> {
    return this.#get(ROUTES.endpoints, query, options);
  }

  /**
   * Network volume storage spend per volume per bucket (`GET /v2/billing/network-volumes`);
   * `networkVolumeId` narrows it to one volume.
   */
  async networkVolumes(
    query: NetworkVolumeBillingQuery = {},
    options?: RequestOptions,
  ): Promise<NetworkVolumeBillingList> {
    return this.#get(ROUTES.networkVolumes, query, options);
  }

  /** Instant Cluster spend per cluster per bucket (`GET /v2/billing/clusters`); `clusterId` narrows it. */
  async clusters(query: ClusterBillingQuery = {}, options?: RequestOptions): Promise<ClusterBillingList> {
    return this.#get(ROUTES.clusters, query, options);
  }

  /** Checks the v2 dialect, then the query (strictly), then sends it in its wire form. */
  async #get<S extends z.ZodType>(
    route: Route<S>,
    query: unknown,
    options: RequestOptions | undefined,
  ): Promise<z.output<S>> {
    this.requireV2();
    const wire = queryToWire(parseInput(route.query, query, route.what) as Record<string, unknown>);
    const { data } = await this.target.transport.request({
      method: "GET",
      baseUrl: this.target.restUrl,
      path: `/billing${route.sub}`,
      query: wire,
      schema: route.answer,
      options,
    });
    return data as z.output<S>;
  }
}

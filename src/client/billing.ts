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
  billingQueryToWire,
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
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/**
 * Billing history (REST v2 only): every call is a read, retried under the client's policy. The
 * window is `startTime`/`endTime` (RFC 3339; end exclusive) or `lastN` buckets ending with the
 * current one, never both; `bucketSize` is `hour`, `day` (the default), `week`, `month` or `year`.
 */
export class Billing extends RestV2Resource {
  protected readonly label = "client.billing";

  /** Total spend per bucket across every billable resource, each cost component apart (`GET /v2/billing`). */
  async list(query: BillingQuery = {}, options?: RequestOptions): Promise<BillingList> {
    return this.#get("", BillingQueryInputSchema, query, "billing.list query", BillingListSchema, options);
  }

  /** Pod spend per pod per bucket (`GET /v2/billing/pods`); `podId` narrows it to one pod. */
  async pods(query: PodBillingQuery = {}, options?: RequestOptions): Promise<PodBillingList> {
    return this.#get(
      "/pods",
      PodBillingQueryInputSchema,
      query,
      "billing.pods query",
      PodBillingListSchema,
      options,
    );
  }

  /**
   * Serverless spend per endpoint per bucket (`GET /v2/billing/serverless`); `serverlessId` narrows
   * it to one endpoint.
   */
  async serverless(
    query: ServerlessBillingQuery = {},
    options?: RequestOptions,
  ): Promise<ServerlessBillingList> {
    return this.#get(
      "/serverless",
      ServerlessBillingQueryInputSchema,
      query,
      "billing.serverless query",
      ServerlessBillingListSchema,
      options,
    );
  }

  /** Spend on Runpod's public endpoints per bucket (`GET /v2/billing/endpoints`). */
  async endpoints(query: BillingQuery = {}, options?: RequestOptions): Promise<EndpointBillingList> {
    return this.#get(
      "/endpoints",
      BillingQueryInputSchema,
      query,
      "billing.endpoints query",
      EndpointBillingListSchema,
      options,
    );
  }

  /**
   * Network volume storage spend per volume per bucket (`GET /v2/billing/network-volumes`);
   * `networkVolumeId` narrows it to one volume.
   */
  async networkVolumes(
    query: NetworkVolumeBillingQuery = {},
    options?: RequestOptions,
  ): Promise<NetworkVolumeBillingList> {
    return this.#get(
      "/network-volumes",
      NetworkVolumeBillingQueryInputSchema,
      query,
      "billing.networkVolumes query",
      NetworkVolumeBillingListSchema,
      options,
    );
  }

  /** Instant Cluster spend per cluster per bucket (`GET /v2/billing/clusters`); `clusterId` narrows it. */
  async clusters(query: ClusterBillingQuery = {}, options?: RequestOptions): Promise<ClusterBillingList> {
    return this.#get(
      "/clusters",
      ClusterBillingQueryInputSchema,
      query,
      "billing.clusters query",
      ClusterBillingListSchema,
      options,
    );
  }

  /** Checks the v2 dialect, then the query (strictly), then sends it in its wire form. */
  async #get<S extends z.ZodType>(
    sub: string,
    querySchema: z.ZodType,
    query: unknown,
    what: string,
    schema: S,
    options: RequestOptions | undefined,
  ): Promise<z.output<S>> {
    this.requireV2();
    const wire = billingQueryToWire(parseInput(querySchema, query, what) as Record<string, unknown>);
    const { data } = await this.target.transport.request({
      method: "GET",
      baseUrl: this.target.restUrl,
      path: `/billing${sub}`,
      query: wire,
      schema,
      options,
    });
    return data as z.output<S>;
  }
}

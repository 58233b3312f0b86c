/**
 * `client.catalog`: what the service offers (REST v2 `/v2/catalog/...`): GPU types with their
 * serverless `pool` ids, CPU flavours, data centres, and the public template catalog. A v1
 * `restUrl` gets a `ValidationError` before any network call (v1 never had a catalog).
 *
 * ```ts
 * const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["SERVERLESS"] });
 * const pools = [...new Set(gpus.filter((g) => g.pool && g.memory >= 48 && g.availability !== "NONE").map((g) => g.pool))];
 * await client.serverless.create({ name: "ep", type: "QUEUE", image: "me/worker:1", gpu: { pools },
 *   scaling: { type: "QUEUE_DELAY", queueDelay: 4 } });
 * ```
 *
 * Pod stock: `gpus({ include: ["AVAILABILITY"], product: ["POD"], cloud })` gives each GPU type's
 * `availability` and its `dataCenters` with stock now (a create may still find none: order the
 * candidates by it, it is no reservation).
 */

import type { z } from "zod";
import {
  type CpuType,
  CpuTypeListSchema,
  CpuTypeSchema,
  type CpuTypesQuery,
  CpuTypesQueryInputSchema,
  type DataCenter,
  DataCenterListSchema,
  type DataCenterQuery,
  DataCenterQueryInputSchema,
  DataCenterSchema,
  type DataCentersQuery,
  DataCentersQueryInputSchema,
  type GpuType,
  GpuTypeListSchema,
  GpuTypeSchema,
  type GpuTypesQuery,
  GpuTypesQueryInputSchema,
  type PublicTemplatesQuery,
  PublicTemplatesQueryInputSchema,
} from "../wire/catalog";
import { queryToWire } from "../wire/fields";
import { type Template, TemplateListSchema } from "../wire/templates";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/** The catalog (REST v2 only): every call is a read, retried under the client's policy. */
export class Catalog extends RestV2Resource {
  protected readonly label = "client.catalog";

  /**
   * GPU types, each with its serverless `pool` (null when it is in none) and prices. With
   * `include: ["AVAILABILITY"]` and `product` (required with it: `POD`, `CLUSTER`, `SERVERLESS`)
   * each also carries `availability`, `dataCenters` and `cudaVersions`; `countryCodes` then drops
   * the types with no data centre in those countries. The query is checked first
   * (`ValidationError` naming the parameter).
   */
  async gpus(query: GpuTypesQuery = {}, options?: RequestOptions): Promise<GpuType[]> {
    const wire = this.#query(GpuTypesQueryInputSchema, query, "catalog.gpus query");
    return (await this.#get("/catalog/gpus", wire, GpuTypeListSchema, options)).gpus;
  }

  /** One GPU type by id (e.g. `NVIDIA GeForce RTX 4090`), same query as `gpus`; `NotFoundError` when none. */
  async gpu(id: string, query: GpuTypesQuery = {}, options?: RequestOptions): Promise<GpuType> {
    const wire = this.#query(GpuTypesQueryInputSchema, query, "catalog.gpu query");
    return this.#get(path`/catalog/gpus/${id}`, wire, GpuTypeSchema, options);
  }

  /**
   * CPU flavours (ids for an endpoint's `cpu[].id`). With `include: ["AVAILABILITY"]` and
   * `product` (`POD` or `SERVERLESS`), each carries `availability` and `dataCenters`.
   */
  async cpus(query: CpuTypesQuery = {}, options?: RequestOptions): Promise<CpuType[]> {
    const wire = this.#query(CpuTypesQueryInputSchema, query, "catalog.cpus query");
    return (await this.#get("/catalog/cpus", wire, CpuTypeListSchema, options)).cpus;
  }

  /** One CPU flavour by id (e.g. `cpu3c`), same query as `cpus`; `NotFoundError` when none. */
  async cpu(id: string, query: CpuTypesQuery = {}, options?: RequestOptions): Promise<CpuType> {
    const wire = this.#query(CpuTypesQueryInputSchema, query, "catalog.cpu query");
    return this.#get(path`/catalog/cpus/${id}`, wire, CpuTypeSchema, options);
  }

  /**
   * Data centres with region, compliance and network volume tiers; `include` adds
   * `gpuAvailability` / `cpuAvailability`. `regions` keeps any of them; `networkVolumeTypes` and
   * `compliance` keep the data centres having all of them; `globalNetwork` keeps one kind.
   */
  async dataCenters(query: DataCentersQuery = {}, options?: RequestOptions): Promise<DataCenter[]> {
    const wire = this.#query(DataCentersQueryInputSchema, query, "catalog.dataCenters query");
    return (await this.#get("/catalog/datacenters", wire, DataCenterListSchema, options)).dataCenters;
  }

  /** One data centre by id (e.g. `EU-RO-1`); `NotFoundError` when none. */
  async dataCenter(id: string, query: DataCenterQuery = {}, options?: RequestOptions): Promise<DataCenter> {
    const wire = this.#query(DataCenterQueryInputSchema, query, "catalog.dataCenter query");
    return this.#get(path`/catalog/datacenters/${id}`, wire, DataCenterSchema, options);
  }

  /**
   * The public template catalog (at most 100): `source` `official` (the service's default),
   * `verified` or `community`. Pod and serverless templates both appear; read each one's
   * `serverless`. The account's own templates are `client.templates`.
   */
  async templates(query: PublicTemplatesQuery = {}, options?: RequestOptions): Promise<Template[]> {
    const wire = this.#query(PublicTemplatesQueryInputSchema, query, "catalog.templates query");
    return (await this.#get("/catalog/templates", wire, TemplateListSchema, options)).templates;
  }

  /** Checks the v2 dialect, then the query (strictly), and writes it in its wire form. */
  #query(schema: z.ZodType, query: unknown, what: string): Record<string, string | undefined> {
    this.requireV2();
    return queryToWire(parseInput(schema, query, what) as Record<string, unknown>);
  }

  async #get<S extends z.ZodType>(
    p: string,
    query: Record<string, string | undefined>,
    schema: S,
    options: RequestOptions | undefined,
  ): Promise<z.output<S>> {
    this.beforeSend();
    const { data } = await this.target.transport.request({
      method: "GET",
      baseUrl: this.target.restUrl,
      path: p,
      query,
      schema,
      options,
    });
    return data as z.output<S>;
  }
}

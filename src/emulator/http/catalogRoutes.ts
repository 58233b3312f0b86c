/**
 * REST v2 catalog routes: `/v2/catalog/gpus`, `/gpus/{id}`, `/cpus`, `/cpus/{id}`,
 * `/datacenters`, `/datacenters/{id}` and `/templates`, over the fixed catalog of `../catalog/`.
 *
 * Queries are parsed with the wire module's schemas (the client's own): a malformed value or an
 * unknown parameter is a 422 `Request validation failed`, and a broken pairing rule of the
 * document (`include=AVAILABILITY` without `product`, `product` or `count` without it,
 * `cudaVersions` with `minCudaVersion`) is a 400, both `application/problem+json`. An unknown id
 * is a 404.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  CpuTypesQueryInputSchema,
  catalogQueryFromWire,
  DataCenterQueryInputSchema,
  DataCentersQueryInputSchema,
  GpuTypesQueryInputSchema,
  PublicTemplatesQueryInputSchema,
} from "../../wire/catalog";
import {
  getCpuType,
  getDataCenter,
  getGpuType,
  listCpuTypes,
  listDataCenters,
  listGpuTypes,
  listPublicTemplates,
  type PodStockView,
} from "../catalog";
import { HttpError, parseV2 } from "./errors";
import type { RouteMeta } from "./pipeline";

/** Parses a catalog query: 400 when only the document's pairing rules fail, else 422. */
function query<S extends z.ZodType>(schema: S, request: FastifyRequest): z.output<S> {
  const value = catalogQueryFromWire(request.query as Record<string, string | string[] | undefined>);
  return parseV2(schema, value);
}

/** `podStock`: the pods' live stock, which the `POD` availability shows. */
export function registerCatalogRoutes(app: FastifyInstance, podStock?: PodStockView): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  /** `GET /v2/catalog/{path}` (the list, under `key`) and `/{path}/{id}` (one, or a 404 naming `what`). */
  const collection = <L, G>(
    path: string,
    key: string,
    what: string,
    list: { schema: z.ZodType<L>; read: (q: L) => unknown[] },
    one: { schema: z.ZodType<G>; read: (id: string, q: G) => unknown },
  ) => {
    app.get(`/v2/catalog/${path}`, options, async (request) => ({
      [key]: list.read(query(list.schema, request)),
    }));
    app.get(`/v2/catalog/${path}/:id`, options, async (request) => {
      const found = one.read(idOf(request), query(one.schema, request));
      if (!found) {
        throw new HttpError(
          404,
          `${what} ${idOf(request)} not found (GET /v2/catalog/${path} lists the ${what}s)`,
        );
      }
      return found;
    });
  };

  const gpuQuery = { schema: GpuTypesQueryInputSchema };
  const cpuQuery = { schema: CpuTypesQueryInputSchema };
  collection(
    "gpus",
    "gpus",
    "GPU type",
    { ...gpuQuery, read: (q) => listGpuTypes(q, podStock) },
    { ...gpuQuery, read: (id, q) => getGpuType(id, q, podStock) },
  );
  collection(
    "cpus",
    "cpus",
    "CPU type",
    { ...cpuQuery, read: (q) => listCpuTypes(q, podStock) },
    { ...cpuQuery, read: (id, q) => getCpuType(id, q, podStock) },
  );
  collection(
    "datacenters",
    "dataCenters",
    "data center",
    { schema: DataCentersQueryInputSchema, read: (q) => listDataCenters(q, podStock) },
    { schema: DataCenterQueryInputSchema, read: (id, q) => getDataCenter(id, q, podStock) },
  );

  app.get("/v2/catalog/templates", options, async (request) => ({
    templates: listPublicTemplates(query(PublicTemplatesQueryInputSchema, request)),
  }));
}

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
import type { RouteMeta } from "./routeMeta";

/** Parses a catalog query: 400 when only the document's pairing rules fail, else 422. */
function query<S extends z.ZodType>(schema: S, request: FastifyRequest): z.output<S> {
  const value = catalogQueryFromWire(request.query as Record<string, string | string[] | undefined>);
  return parseV2(schema, value);
}

/** `podStock`: the pods' live stock, which the `POD` availability shows. */
export function registerCatalogRoutes(app: FastifyInstance, podStock?: PodStockView): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  /**
   * `GET /v2/catalog/{path}` (the list, under `key`; the path is `key` in lower case) and
   * `/{path}/{id}` (one, or a 404 naming `what`); `oneSchema` is the one's query when it differs.
   */
  const collection = <L, G>(
    key: string,
    what: string,
    list: (q: L, live?: PodStockView) => unknown[],
    get: (id: string, q: G, live?: PodStockView) => unknown,
    listSchema: z.ZodType<L>,
    oneSchema: z.ZodType<G> = listSchema as unknown as z.ZodType<G>,
  ) => {
    const path = key.toLowerCase();
    app.get(`/v2/catalog/${path}`, options, async (request) => ({
      [key]: list(query(listSchema, request), podStock),
    }));
    app.get(`/v2/catalog/${path}/:id`, options, async (request) => {
      const found = get(idOf(request), query(oneSchema, request), podStock);
      if (!found) {
        throw new HttpError(
          404,
          `${what} ${idOf(request)} not found (GET /v2/catalog/${path} lists the ${what}s)`,
        );
      }
      return found;
    });
  };

  collection("gpus", "GPU type", listGpuTypes, getGpuType, GpuTypesQueryInputSchema);
  collection("cpus", "CPU type", listCpuTypes, getCpuType, CpuTypesQueryInputSchema);
  collection(
    "dataCenters",
    "data center",
    listDataCenters,
    getDataCenter,
    DataCentersQueryInputSchema,
    DataCenterQueryInputSchema,
  );

  app.get("/v2/catalog/templates", options, async (request) => ({
    templates: listPublicTemplates(query(PublicTemplatesQueryInputSchema, request)),
  }));
}

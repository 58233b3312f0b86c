/**
 * REST v2 catalog routes: `/v2/catalog/gpus`, `/gpus/{id}`, `/cpus`, `/cpus/{id}`,
 * `/datacenters`, `/datacenters/{id}` and `/templates`, over the fixed catalog of `../catalog.ts`.
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
import { isBadRequestRule } from "../../wire/serverless";
import {
  getCpuType,
  getDataCenter,
  getGpuType,
  listCpuTypes,
  listDataCenters,
  listGpuTypes,
  listPublicTemplates,
} from "../catalog";
import { HttpError, parse } from "./errors";
import type { RouteMeta } from "./pipeline";

/** Parses a catalog query: 400 when only the document's pairing rules fail, else 422. */
function query<S extends z.ZodType>(schema: S, request: FastifyRequest): z.output<S> {
  const value = catalogQueryFromWire(request.query as Record<string, string | string[] | undefined>);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const status = result.error.issues.every(isBadRequestRule) ? 400 : 422;
  try {
    return parse(schema, value, status);
  } catch (err) {
    if (err instanceof HttpError && status === 422) {
      throw new HttpError(422, `Request validation failed: ${err.message}`, err.errors);
    }
    throw err;
  }
}

export function registerCatalogRoutes(app: FastifyInstance): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  app.get("/v2/catalog/gpus", options, async (request) => ({
    gpus: listGpuTypes(query(GpuTypesQueryInputSchema, request)),
  }));

  app.get("/v2/catalog/gpus/:id", options, async (request) => {
    const found = getGpuType(idOf(request), query(GpuTypesQueryInputSchema, request));
    if (!found) {
      throw new HttpError(
        404,
        `GPU type ${idOf(request)} not found (GET /v2/catalog/gpus lists the GPU types)`,
      );
    }
    return found;
  });

  app.get("/v2/catalog/cpus", options, async (request) => ({
    cpus: listCpuTypes(query(CpuTypesQueryInputSchema, request)),
  }));

  app.get("/v2/catalog/cpus/:id", options, async (request) => {
    const found = getCpuType(idOf(request), query(CpuTypesQueryInputSchema, request));
    if (!found) {
      throw new HttpError(
        404,
        `CPU type ${idOf(request)} not found (GET /v2/catalog/cpus lists the CPU types)`,
      );
    }
    return found;
  });

  app.get("/v2/catalog/datacenters", options, async (request) => ({
    dataCenters: listDataCenters(query(DataCentersQueryInputSchema, request)),
  }));

  app.get("/v2/catalog/datacenters/:id", options, async (request) => {
    const found = getDataCenter(idOf(request), query(DataCenterQueryInputSchema, request));
    if (!found) {
      throw new HttpError(
        404,
        `data center ${idOf(request)} not found (GET /v2/catalog/datacenters lists the data centers)`,
      );
    }
    return found;
  });

  app.get("/v2/catalog/templates", options, async (request) => ({
    templates: listPublicTemplates(query(PublicTemplatesQueryInputSchema, request)),
  }));
}

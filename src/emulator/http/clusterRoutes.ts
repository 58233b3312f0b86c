/**
 * REST v2 cluster routes over `../pods/clusterStore.ts`: `/v2/clusters` (list, create),
 * `/v2/clusters/{id}` (get, PATCH rename, DELETE) and `/v2/clusters/{id}/pods` (the member pods,
 * whole). Bodies are parsed with the wire module's schemas: a cross-field rule of the document is
 * a 400, any other malformed body a 422.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ClusterCreateInputSchema, ClusterUpdateInputSchema } from "../../wire/clusters";
import { PodError, type PodStore } from "../pods/podStore";
import { HttpError } from "./errors";
import { validateV2Body } from "./management";
import type { RouteMeta } from "./routeMeta";

export function registerClusterRoutes(app: FastifyInstance, pods: PodStore): void {
  const clusters = pods.clusters;
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const notFound = (id: string) => new HttpError(404, `cluster ${id} not found`);

  app.get("/v2/clusters", options, async () => ({ clusters: clusters.list() }));

  app.post("/v2/clusters", options, async (request, reply) => {
    const body = validateV2Body(ClusterCreateInputSchema, request);
    let cluster: ReturnType<typeof clusters.create>;
    try {
      cluster = clusters.create(body);
    } catch (err) {
      if (err instanceof PodError) throw new HttpError(err.status, err.message);
      throw err;
    }
    await pods.persist();
    return reply.code(201).send(cluster);
  });

  app.get("/v2/clusters/:id", options, async (request) => {
    const cluster = clusters.get(idOf(request));
    if (!cluster) throw notFound(idOf(request));
    return cluster;
  });

  app.patch("/v2/clusters/:id", options, async (request) => {
    if (!clusters.has(idOf(request))) throw notFound(idOf(request));
    const { name } = validateV2Body(ClusterUpdateInputSchema, request);
    const cluster = name === undefined ? clusters.get(idOf(request)) : clusters.rename(idOf(request), name);
    await pods.persist();
    return cluster;
  });

  app.delete("/v2/clusters/:id", options, async (request, reply) => {
    if (!(await clusters.delete(idOf(request)))) throw notFound(idOf(request));
    await pods.persist();
    return reply.code(204).send();
  });

  app.get("/v2/clusters/:id/pods", options, async (request) => {
    const members = clusters.pods(idOf(request));
    if (!members) throw notFound(idOf(request));
    return { pods: members };
  });
}

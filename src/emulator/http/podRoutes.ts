/**
 * REST v2 pod routes over `../pods/podStore.ts`: `/v2/pods` (list, without cluster members unless
 * `includeClusterPods=true`; create), `/v2/pods/{id}` (get,
 * PATCH, DELETE), `/v2/pods/{id}/action`, `/v2/pods/{id}/logs` (Server-Sent Events, the same
 * stream as a worker's log) and `/v2/account/ssh-keys` (GET, PUT). Bodies are parsed with the wire
 * module's schemas: a cross-field rule of the document is a 400, any other malformed body a 422.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import {
  PodActionInputSchema,
  PodCreateInputSchema,
  PodUpdateInputSchema,
  SshKeysInputSchema,
} from "../../wire/pods";
import { PodError, type PodStore } from "../pods/podStore";
import { HttpError } from "./errors";
import { validateV2Body } from "./management";
import type { RouteMeta } from "./routeMeta";
import { sendLogStream } from "./serverlessRoutes";

export function registerPodRoutes(app: FastifyInstance, pods: PodStore): void {
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const notFound = (id: string) => new HttpError(404, `pod ${id} not found`);
  const call = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof PodError) throw new HttpError(err.status, err.message);
      throw err;
    }
  };

  app.get("/v2/pods", options, async (request) => {
    const { includeClusterPods } = request.query as { includeClusterPods?: string | string[] };
    if (includeClusterPods !== undefined && includeClusterPods !== "true" && includeClusterPods !== "false") {
      throw new HttpError(422, "Request validation failed: includeClusterPods must be true or false");
    }
    return { pods: pods.list({ includeClusterPods: includeClusterPods === "true" }) };
  });

  app.post("/v2/pods", options, async (request, reply) => {
    const body = validateV2Body(PodCreateInputSchema, request);
    const pod = call(() => pods.create(body));
    await pods.persist();
    return reply.code(201).send(pod);
  });

  app.get("/v2/pods/:id", options, async (request) => {
    const pod = pods.get(idOf(request));
    if (!pod) throw notFound(idOf(request));
    return pod;
  });

  app.patch("/v2/pods/:id", options, async (request) => {
    if (!pods.has(idOf(request))) throw notFound(idOf(request));
    const patch = validateV2Body(PodUpdateInputSchema, request);
    const pod = call(() => pods.update(idOf(request), patch));
    await pods.persist();
    return pod;
  });

  app.delete("/v2/pods/:id", options, async (request, reply) => {
    const deleted = await call(() => pods.delete(idOf(request))).catch((err: unknown) => {
      throw err instanceof PodError ? new HttpError(err.status, err.message) : err;
    });
    if (!deleted) throw notFound(idOf(request));
    await pods.persist();
    return reply.code(204).send();
  });

  app.post("/v2/pods/:id/action", options, async (request, reply) => {
    if (!pods.has(idOf(request))) throw notFound(idOf(request));
    const { action } = validateV2Body(PodActionInputSchema, request);
    if (action === "terminate") {
      await call(() => pods.delete(idOf(request))).catch((err: unknown) => {
        throw err instanceof PodError ? new HttpError(err.status, err.message) : err;
      });
      await pods.persist();
      return reply.code(204).send();
    }
    const pod = call(() => pods.action(idOf(request), action));
    await pods.persist();
    return pod;
  });

  app.get("/v2/pods/:id/logs", options, async (request, reply) => {
    if (!pods.has(idOf(request))) throw notFound(idOf(request));
    sendLogStream(request, reply, pods.logs, idOf(request));
  });

  app.get("/v2/account/ssh-keys", options, async () => ({ keys: pods.sshKeys() }));

  app.put("/v2/account/ssh-keys", options, async (request) => {
    const { keys } = validateV2Body(SshKeysInputSchema, request);
    const stored = pods.setSshKeys(keys);
    await pods.persist();
    return { keys: stored };
  });
}

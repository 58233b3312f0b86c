/**
 * REST v2 ECR delegation routes over the {@link ManagementStore}, as the document defines them:
 * `GET /v2/registries/delegations` (`{ delegations }`), `POST` (201 with the delegation; a body the
 * document refuses, such as a `resource` that is no ECR repository ARN or an unknown key, is a 422
 * naming the field) and `DELETE /v2/registries/delegations/{id}` (204; 404 when there is none).
 * The document has no read of one delegation: `GET .../{id}` is a 405 with `Allow: DELETE`.
 *
 * The repository ARN is answered in parts: `awsUser` is its account, `awsRegion` its region,
 * `repository` its name, `tag` the `:<tag>` after the name or `latest`, and `dockerRegistryUri` the
 * registry host (`<account>.dkr.ecr.<region>.amazonaws.com`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { EcrDelegationCreateInputSchema, parseEcrRepositoryArn } from "../../wire/ecrDelegations";
import type { Clock } from "../clock";
import { AccountFullError, type ManagementStore } from "../store";
import { HttpError } from "./errors";
import { validateV2Body } from "./management";
import type { RouteMeta } from "./routeMeta";
import { unservedV2 } from "./unservedV2";

/** The methods fastify routes that the document does not list on each path: answered 405 with `Allow`. */
const OTHER_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export function registerDelegationRoutes(
  app: FastifyInstance,
  deps: { store: ManagementStore; clock: Clock },
): void {
  const { store, clock } = deps;
  const options = { config: { dialect: "v2" } satisfies RouteMeta };
  const collection = "/v2/registries/delegations";
  const item = `${collection}/:id`;

  app.get(collection, options, async () => ({ delegations: store.listDelegations() }));

  app.post(collection, options, async (request, reply) => {
    const body = validateV2Body(EcrDelegationCreateInputSchema, request);
    // The schema accepted it, so the ARN parses.
    const ref = parseEcrRepositoryArn(body.resource);
    if (ref === undefined) throw new HttpError(422, "resource must be an ECR repository ARN");
    try {
      const created = await store.createDelegation(ref, body.name, new Date(clock.now()));
      return reply.code(201).send(created);
    } catch (err) {
      if (err instanceof AccountFullError) throw new HttpError(400, err.message);
      throw err;
    }
  });

  app.delete(item, options, async (request: FastifyRequest, reply) => {
    const { id } = request.params as { id: string };
    if (!(await store.revokeDelegation(id))) throw new HttpError(404, `delegation ${id} not found`);
    return reply.code(204).send();
  });

  // The other methods of these paths: 405 with Allow, not the `/v2/registries/{id}` routes.
  const unserved = { config: { dialect: "v2", unserved: true } satisfies RouteMeta };
  const handler = async (request: FastifyRequest, reply: FastifyReply) => unservedV2(request, reply);
  app.route({
    method: OTHER_METHODS.filter((m) => m !== "GET" && m !== "HEAD" && m !== "POST"),
    url: collection,
    ...unserved,
    handler,
  });
  app.route({ method: OTHER_METHODS.filter((m) => m !== "DELETE"), url: item, ...unserved, handler });
}

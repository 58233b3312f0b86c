/**
 * REST v2 paths the emulator does not serve get what v2 would answer: 501 for a path and method in
 * the document, 405 with `Allow` for another method, 404 for a path not in it (see `v2Document.ts`).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { HttpError, sendError } from "./errors";
import { pathOf } from "./requestPath";
import { v2DocumentPath } from "./v2Document";

/** The answer to a v2 document path the emulator does not serve: 501, 405 with Allow, or 404. */
export function unservedV2(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = pathOf(request.url);
  const found = v2DocumentPath(path);
  if (!found) {
    return sendError(reply, "v2", new HttpError(404, `no such path: ${request.method} ${path}`));
  }
  const method = request.method === "HEAD" ? "GET" : request.method;
  if (found.methods.includes(method)) {
    return sendError(
      reply,
      "v2",
      new HttpError(
        501,
        `${request.method} ${found.template} is in the REST v2 document but the emulator does not implement it; ` +
          "it serves /v2/registries (with /v2/registries/delegations), /v2/network-volumes, /v2/serverless (with releases, workers and worker logs), " +
          "/v2/templates, /v2/catalog, /v2/pods, /v2/account/ssh-keys and /v2/billing",
      ),
    );
  }
  return sendError(
    reply,
    "v2",
    new HttpError(405, `${request.method} is not allowed on ${found.template}`, undefined, {
      allow: found.methods.join(", "),
    }),
  );
}

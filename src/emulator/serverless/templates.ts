/** Serverless templates as the store keeps them: made from a create request, or filled in from the public catalog. */
import { findPublicTemplate } from "../catalog";
import type { TemplateCreateBody } from "../requestBodies";
import type { Template } from "./records";

/** A new template with id `id` from a create request, every field the request leaves out at its default. */
export function templateFromRequest(id: string, body: TemplateCreateBody): Template {
  return {
    id,
    name: body.name,
    image: body.image,
    args: body.args ?? "",
    disk: body.disk ?? 20,
    mounts: body.mounts ?? {},
    ports: body.ports ?? [],
    env: body.env ?? {},
    registry: body.registry ?? null,
    serverless: body.serverless ?? false,
    public: body.public ?? false,
    category: body.category ?? "NVIDIA",
    startSsh: body.startSsh ?? true,
    startJupyter: body.startJupyter ?? true,
    allowedCudaVersions: body.allowedCudaVersions ?? [],
  };
}

/** A public catalog template with every field a stored template has; undefined when there is none. */
export function publicTemplateRecord(id: string): Template | undefined {
  const listed = findPublicTemplate(id);
  return (
    listed && {
      args: "",
      disk: 20,
      ports: [],
      env: {},
      registry: null,
      public: true,
      category: "NVIDIA",
      startSsh: true,
      startJupyter: true,
      allowedCudaVersions: [],
      ...listed,
      image: listed.image ?? "",
      mounts: listed.mounts ?? {},
      serverless: listed.serverless ?? false,
    }
  );
}

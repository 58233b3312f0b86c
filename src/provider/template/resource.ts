/**
 * `Template`: a RunPod template (REST v2 `/v2/templates`) as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module
 * path: serialized into each resource's state (`__provider`), it loads that module in Pulumi's
 * dynamic-provider host and captures nothing else.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import { RESOURCES } from "../resources";
import type { TemplateArgs } from "./args.generated";

export type { TemplateArgs };

/** A template's one persistent mount (host-local storage; network mounts are not allowed). */
export interface TemplatePersistentMount {
  /** Size in GB, at least 10. */
  size: number;
  /** Mount path inside the container, e.g. `/workspace`. */
  path: string;
}

/**
 * A RunPod template (`pulumi-nodejs:dynamic/runpod:Template`), REST v2 only: a container
 * configuration (image, env, disk, ports, ...) that endpoints and pods are created from. Its id
 * is the service's id; pass it as an endpoint's `templateId`.
 *
 * A template is a SNAPSHOT applied when an endpoint is created: a later change of the template
 * (its image, its env) does NOT reach endpoints that already exist. The endpoint's own fields
 * override the template's, so to roll a new image out with one edit, give the endpoint the
 * template's image too:
 *
 * ```ts
 * const tmpl = new Template("worker", { name: "worker", image: `me/worker:${tag}`, serverless: true });
 * const ep = new ServerlessEndpoint("ep", { templateId: tmpl.id, image: tmpl.image, ... });
 * ```
 *
 * Every field changes in place (one PATCH), except the removal of the persistent mount, which
 * replaces the template. A create never leaves a duplicate after a lost answer (it lists to
 * reconcile). Needs `runpod:apiKey` (or `RUNPOD_API_KEY`); a REST v1 `runpod:restUrl` fails the
 * preview.
 *
 * `Template.get(name, id)` reads an existing template by its service id, without managing it:
 * every field is read from the service (`env` as a secret). A wrong id fails with an error naming it.
 */
export class Template extends ServiceObjectResource<TemplateArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<TemplateArgs>({
    row: RESOURCES.Template,
    // biome-ignore format: the names read best as the service's document groups them
    inputs: [
      "name", "image", "args", "disk", "env", "ports", "registry", "mounts", "allowedCudaVersions",
      "category", "public", "serverless", "startJupyter", "startSsh",
    ],
  });

  /** Name, as the service stores it. */
  declare readonly name: pulumi.Output<string>;
  /** Docker image reference, as the service stores it. */
  declare readonly image: pulumi.Output<string>;
  /** Entrypoint arguments (`""` for none). */
  declare readonly args: pulumi.Output<string>;
  /** Container disk in GB. */
  declare readonly disk: pulumi.Output<number>;
  /** Environment variables, always secret. */
  declare readonly env: pulumi.Output<Record<string, string>>;
  /** Exposed ports. */
  declare readonly ports: pulumi.Output<string[]>;
  /** Registry credential id, or null. */
  declare readonly registry: pulumi.Output<string | null>;
  /** Mounts (`{}` for none). */
  declare readonly mounts: pulumi.Output<{ persistent?: TemplatePersistentMount }>;
  /** Acceptable CUDA versions (empty: any). */
  declare readonly allowedCudaVersions: pulumi.Output<string[]>;
  /** Console category. */
  declare readonly category: pulumi.Output<string>;
  /** Visible to other users. */
  declare readonly public: pulumi.Output<boolean>;
  /** For serverless workers. */
  declare readonly serverless: pulumi.Output<boolean>;
  /** JupyterLab at container start. */
  declare readonly startJupyter: pulumi.Output<boolean>;
  /** SSH access at container start. */
  declare readonly startSsh: pulumi.Output<boolean>;
}

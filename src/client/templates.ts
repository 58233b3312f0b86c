/**
 * `client.templates`: reusable container configurations (REST v2 `/v2/templates`). A v1
 * `restUrl` gets a `ValidationError` before any network call.
 *
 * ```ts
 * const t = await client.templates.create({ name: "worker", image: "me/worker:1", serverless: true });
 * await client.serverless.create({ name: "ep", type: "QUEUE", templateId: t.id, gpu: { pools: ["ADA_24"] },
 *   scaling: { type: "QUEUE_DELAY", queueDelay: 4 } });
 * ```
 */

import {
  type Template,
  type TemplateCreateInput,
  TemplateCreateInputSchema,
  TemplateListSchema,
  TemplateSchema,
  type TemplateUpdateInput,
  TemplateUpdateInputSchema,
} from "../wire/templates";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";

/** Templates of the account (and, for `get`, public catalog templates). */
export class Templates extends RestV2Resource {
  protected readonly label = "client.templates";

  /** Every template the account owns. */
  async list(options?: RequestOptions): Promise<Template[]> {
    return (await this.send("GET", "/templates", TemplateListSchema, options)).templates;
  }

  /** One template by id (own or public); `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<Template> {
    return this.send("GET", path`/templates/${id}`, TemplateSchema, options);
  }

  /**
   * Creates a template (`POST`, 201). `name` and `image` are required; the body is checked
   * against the v2 document first (`ValidationError` naming the field). Not retried after the
   * service may have acted (a 500 or a reset): list to learn whether it was created.
   */
  async create(input: TemplateCreateInput, options?: RequestOptions): Promise<Template> {
    return this.write(
      "POST",
      "/templates",
      TemplateCreateInputSchema,
      input,
      "template",
      TemplateSchema,
      options,
    );
  }

  /**
   * Changes the fields given (`PATCH`); answers the whole template. Endpoints made from the
   * template earlier keep their copy of its settings.
   */
  async update(id: string, patch: TemplateUpdateInput, options?: RequestOptions): Promise<Template> {
    const p = path`/templates/${id}`;
    return this.write(
      "PATCH",
      p,
      TemplateUpdateInputSchema,
      patch,
      "template update",
      TemplateSchema,
      options,
    );
  }

  /** Deletes a template (204). The service refuses one still bound to an endpoint or a pod. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", path`/templates/${id}`, undefined, options);
  }
}

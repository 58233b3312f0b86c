/**
 * REST v2 wire schemas of templates (`/v2/templates...`, `CreateTemplateRequest`,
 * `UpdateTemplateRequest`, `Template`): bodies parsed strictly, answers loosely.
 */
import { z } from "zod";
import { containerConfigAnswerShape, containerConfigShape } from "./containerConfig";
import { bool, cudaVersion, int, nonEmpty } from "./fields";

const templateCategory = z.enum(["CPU", "NVIDIA", "AMD"], { error: "category must be CPU, NVIDIA or AMD" });

/** Template mounts: one persistent mount (network mounts are rejected by the service). */
const TemplateMountsInputSchema = z.strictObject({
  persistent: z
    .strictObject({
      size: int("size").min(10, { error: "size must be at least 10 GB" }),
      path: nonEmpty("path"),
    })
    .optional(),
});

const templateShape = {
  ...containerConfigShape,
  /** Acceptable CUDA versions (`major.minor`); empty means any. */
  allowedCudaVersions: z.array(cudaVersion("allowedCudaVersions")).optional(),
  /** Console grouping only. @default "NVIDIA" */
  category: templateCategory.optional(),
  mounts: TemplateMountsInputSchema.optional(),
  /** Visible to other users. @default false */
  public: bool("public").optional(),
  /** For serverless workers (true) or pods (false). @default false */
  serverless: bool("serverless").optional(),
  /** @default true */
  startJupyter: bool("startJupyter").optional(),
  /** @default true */
  startSsh: bool("startSsh").optional(),
};

/** Body of `POST /v2/templates` (`CreateTemplateRequest`): `name` and `image` are required. */
export const TemplateCreateInputSchema = z.strictObject({
  ...templateShape,
  name: nonEmpty("name"),
  image: nonEmpty("image"),
});
export type TemplateCreateInput = z.input<typeof TemplateCreateInputSchema>;

/** Body of `PATCH /v2/templates/{id}` (`UpdateTemplateRequest`): only the fields given change. */
export const TemplateUpdateInputSchema = z
  .strictObject({ ...templateShape, name: nonEmpty("name").optional() })
  .refine((body) => Object.keys(body).length > 0, { error: "give at least one field to update" });
export type TemplateUpdateInput = z.input<typeof TemplateUpdateInputSchema>;

/** A template as the service answers (`Template`). */
export const TemplateSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  ...containerConfigAnswerShape,
  mounts: z
    .looseObject({ persistent: z.looseObject({ size: z.number().int(), path: z.string() }).optional() })
    .optional(),
  serverless: z.boolean().optional(),
  public: z.boolean().optional(),
  category: z.string().optional(),
  startSsh: z.boolean().optional(),
  startJupyter: z.boolean().optional(),
  allowedCudaVersions: z.array(z.string()).optional(),
});
export type Template = z.infer<typeof TemplateSchema>;

/** `GET /v2/templates`: `{ templates: [...] }`. */
export const TemplateListSchema = z.looseObject({ templates: z.array(TemplateSchema) });

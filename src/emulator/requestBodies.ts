/**
 * The request bodies the emulator's stores take: each is what its wire schema hands on after it
 * parsed the body (defaults applied, transforms run), named once here so the routes, the stores
 * and their rules agree on one type.
 */
import type { z } from "zod";
import type { ClusterCreateInputSchema } from "../wire/clusters";
import type { PodCreateInputSchema, PodUpdateInputSchema } from "../wire/pods";
import type { ContainerRegistryAuthCreateInputSchema } from "../wire/schemas";
import type {
  ServerlessEndpointCreateInputSchema,
  ServerlessEndpointUpdateInputSchema,
} from "../wire/serverless";
import type { TemplateCreateInputSchema, TemplateUpdateInputSchema } from "../wire/templates";

/** `POST` of a registry credential (both dialects). */
export type RegistryAuthCreateBody = z.output<typeof ContainerRegistryAuthCreateInputSchema>;
/** `POST /v2/serverless`. */
export type EndpointCreateBody = z.output<typeof ServerlessEndpointCreateInputSchema>;
/** `PATCH /v2/serverless/{id}`. */
export type EndpointUpdateBody = z.output<typeof ServerlessEndpointUpdateInputSchema>;
/** `POST /v2/templates`. */
export type TemplateCreateBody = z.output<typeof TemplateCreateInputSchema>;
/** `PATCH /v2/templates/{id}`. */
export type TemplateUpdateBody = z.output<typeof TemplateUpdateInputSchema>;
/** `POST /v2/pods`. */
export type PodCreateBody = z.output<typeof PodCreateInputSchema>;
/** `PATCH /v2/pods/{id}`. */
export type PodUpdateBody = z.output<typeof PodUpdateInputSchema>;
/** `POST /v2/clusters`. */
export type ClusterCreateBody = z.output<typeof ClusterCreateInputSchema>;

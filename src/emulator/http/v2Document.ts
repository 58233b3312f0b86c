/**
 * The paths and methods of the service's REST v2 document (`rest-v2.openapi.json`, version
 * 2.0.0), so that a v2 request the emulator does not serve still gets the answer v2 would give, as
 * `application/problem+json`:
 * - a path of the document, with a method the document lists but the emulator does not serve:
 *   501 Not Implemented (the service would act; the emulator says plainly it cannot);
 * - a path of the document, with a method the document does not list: 405 Method Not Allowed with
 *   `Allow` (the document's `MethodNotAllowedError` response: "The request method is not supported
 *   for the target path", with an `Allow` header);
 * - any other path under a management segment below: 404.
 * Paths whose first segment is not one of these belong to the job interface (`/v2/{endpointId}/...`).
 */

/** The document's paths (below `/v2`) and their methods. `{x}` is one path segment. */
export const V2_DOCUMENT_PATHS: Readonly<Record<string, readonly string[]>> = {
  "/account/ssh-keys": ["GET", "PUT"],
  "/pods": ["GET", "POST"],
  "/pods/{id}": ["GET", "PATCH", "DELETE"],
  "/pods/{id}/logs": ["GET"],
  "/pods/{id}/action": ["POST"],
  "/clusters": ["GET", "POST"],
  "/clusters/{id}": ["GET", "PATCH", "DELETE"],
  "/clusters/{id}/pods": ["GET"],
  "/serverless": ["GET", "POST"],
  "/serverless/{id}": ["GET", "PATCH", "DELETE"],
  "/serverless/{id}/workers": ["GET"],
  "/serverless/{id}/releases": ["GET"],
  "/serverless/{id}/workers/{workerId}/logs": ["GET"],
  "/templates": ["GET", "POST"],
  "/templates/{id}": ["GET", "PATCH", "DELETE"],
  "/network-volumes": ["GET", "POST"],
  "/network-volumes/{id}": ["GET", "PATCH", "DELETE"],
  "/registries": ["GET", "POST"],
  "/registries/{id}": ["GET", "DELETE"],
  "/registries/delegations": ["GET", "POST"],
  "/registries/delegations/{id}": ["DELETE"],
  "/catalog/gpus": ["GET"],
  "/catalog/gpus/{id}": ["GET"],
  "/catalog/cpus": ["GET"],
  "/catalog/cpus/{id}": ["GET"],
  "/catalog/datacenters": ["GET"],
  "/catalog/datacenters/{id}": ["GET"],
  "/catalog/templates": ["GET"],
  "/billing": ["GET"],
  "/billing/pods": ["GET"],
  "/billing/serverless": ["GET"],
  "/billing/endpoints": ["GET"],
  "/billing/network-volumes": ["GET"],
  "/billing/clusters": ["GET"],
};

/** First path segments (after `/v2/`) that belong to REST v2 management, not to an endpoint id. */
export const V2_MANAGEMENT_SEGMENTS: readonly string[] = [
  ...new Set(Object.keys(V2_DOCUMENT_PATHS).map((p) => p.split("/")[1] as string)),
];

/** True when `pathname` (no query) is a REST v2 management path: `/v2/<management segment>...`. */
export function isV2ManagementPath(pathname: string): boolean {
  const m = /^\/v2\/([^/]+)/.exec(pathname);
  return m !== null && V2_MANAGEMENT_SEGMENTS.includes(m[1] as string);
}

const templates = Object.entries(V2_DOCUMENT_PATHS)
  .map(([template, methods]) => ({
    template,
    methods,
    params: (template.match(/\{/g) ?? []).length,
    regex: new RegExp(`^/v2${template.replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
  }))
  // A literal segment wins over a parameter: /registries/delegations before /registries/{id}.
  .sort((a, b) => a.params - b.params);

/** The document's path template matching `pathname` and its methods, or undefined when none does. */
export function v2DocumentPath(
  pathname: string,
): { template: string; methods: readonly string[] } | undefined {
  const found = templates.find((t) => t.regex.test(pathname));
  return found ? { template: `/v2${found.template}`, methods: found.methods } : undefined;
}

/**
 * The one rule for a serverless endpoint id, applied before any network call by
 * `client.endpoint(id)`, `getEndpointHealth` and JobRun's `check` (whose zod schema refines with
 * {@link isEndpointId}). No zod here: the package root loads this module for the lookups.
 *
 * The id becomes one path segment (`/v2/{endpointId}/run`). It is percent-encoded there anyway,
 * but an id with whitespace or a slash is never a real endpoint id (the service's are short
 * alphanumeric strings), and one of those would only buy a confusing 404 from the service or a
 * proxy; "." and ".." would change the path's meaning.
 */
import { ValidationError } from "./errors";

/** What an endpoint id may be, as error messages say it. */
export const ENDPOINT_ID_RULE =
  'a non-empty endpoint id without whitespace or slashes, other than "." and ".."';

const ENDPOINT_ID = /^[^\s/]+$/;

/** True when `value` is a usable endpoint id under {@link ENDPOINT_ID_RULE}. */
export function isEndpointId(value: unknown): value is string {
  return typeof value === "string" && ENDPOINT_ID.test(value) && value !== "." && value !== "..";
}

/**
 * `value` when it is an endpoint id; else a `ValidationError` with path `["endpointId"]` whose
 * message names the field, what is allowed and what was given, prefixed with `where` if given.
 */
export function checkEndpointId(value: unknown, where?: string): string {
  if (isEndpointId(value)) return value;
  const got =
    typeof value === "string" ? JSON.stringify(value) : value === undefined ? "nothing" : typeof value;
  throw new ValidationError(
    `${where ? `${where}: ` : ""}endpointId must be ${ENDPOINT_ID_RULE}, got ${got}`,
    ["endpointId"],
  );
}

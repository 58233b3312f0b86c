/**
 * `check`'s failure for a resource the REST v1 interface cannot manage, on a v1 `runpod:restUrl`
 * (or `RUNPOD_REST_API_URL`): the service documents v1 as retired on 2026-11-15 in favour of v2.
 */
import { resolveRestUrl } from "../../client";
import type { RunpodSettings } from "../config";

/**
 * The reason `resource` fails `check` on a v1 `restUrl`, naming where the URL was set; undefined
 * on v2, with no `restUrl`, or on a malformed one (that fails when the client is built, naming
 * where it was set). `neverHad` says what v1 lacks (`templates`), for a resource v1 never knew;
 * without it the reason says only that the URL is v1 (pods existed there, managed otherwise).
 */
export function v1RestUrlReason(
  settings: RunpodSettings | undefined,
  resource: string,
  neverHad?: string,
): string | undefined {
  const raw = settings?.restUrl;
  if (raw === undefined) return undefined;
  try {
    if (resolveRestUrl(raw).dialect === "v2") return undefined;
  } catch {
    return undefined;
  }
  const where = settings?.sources?.restUrl === "env" ? "RUNPOD_REST_API_URL" : "runpod:restUrl";
  if (neverHad === undefined) {
    return `${resource} needs the REST v2 interface, but ${where} is ${raw} (REST v1). Set ${where} to a URL ending in /v2.`;
  }
  return (
    `${resource} needs the REST v2 interface, but ${where} is ${raw}, REST v1 (retired 2026-11-15; it ` +
    `never had ${neverHad}). Set ${where} to a URL ending in /v2, e.g. https://api.runpod.io/v2.`
  );
}

/** Which interface a request is for, from its path. */
import type { Dialect } from "./errors";
import { isV2ManagementPath } from "./v2Document";

/** The path of a request URL, without its query. */
export function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** The dialect of a path: `/v1...` v1; `/v2/<management segment>...` v2; the rest the job interface. */
export function dialectOf(url: string): Dialect {
  const path = pathOf(url);
  if (path === "/v1" || path.startsWith("/v1/")) return "v1";
  if (isV2ManagementPath(path)) return "v2";
  return "job";
}

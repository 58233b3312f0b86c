/**
 * `check`'s judgement of the data centres a program names (`ServerlessEndpoint.dataCenterIds`,
 * `Pod.dataCenterIds`, `NetworkVolume.dataCenterId`): an id the catalog does not list fails in the
 * preview, naming the field, the id and the ids the catalog has, instead of a create the service
 * refuses (or an endpoint placed nowhere) during the up.
 *
 * A courtesy, never a gate of its own: the catalog exists only over REST v2 (on v1 nothing is
 * judged); a value unknown in a preview, an id the previous inputs already named, and an argument
 * left out are not judged (no read); and when the catalog cannot be read, check says nothing and
 * the service decides. The read is the catalog's own, once per provider host (`../cost/catalog.ts`),
 * with one try within the catalog's 10 s bound, so a service that does not answer costs one check
 * 10 s, once.
 * Ids are compared in any letter case, as the service compares them (`eu-ro-1` is `EU-RO-1`).
 */
import { isUnknown } from "../common/unknown";
import { listSome } from "../common/wording";
import type { RunpodSettings } from "../config";
import type { CheckFailure } from "../cost/budget";
import { CATALOG_READ_BOUND_MS, catalogDataCenterIds } from "../cost/catalog";
import { speaksV2 } from "../cost/endpoint";

/** How long the one catalog read of data centres may take before check goes on without it (the catalog's bound). */
export const DATA_CENTER_READ_TIMEOUT_MS = CATALOG_READ_BOUND_MS;

/** How many of the catalog's ids a failure lists before "and N more". */
const KNOWN_LISTED = 10;

/** The ids a value names: a string, or the strings of an array; unknown values left out. */
function idsOf(value: unknown): string[] {
  const all = typeof value === "string" ? [value] : Array.isArray(value) ? value : [];
  return all.filter((id): id is string => typeof id === "string" && id !== "" && !isUnknown(id));
}

/**
 * The failure of `field` when it names data centres the catalog does not list, or none: `news` is
 * the field's value now, `olds` its value in the previous inputs (ids already there are not judged
 * again: a data centre the catalog dropped later must not block every update of the stack).
 */
export async function checkDataCenters(
  settings: RunpodSettings | undefined,
  field: "dataCenterIds" | "dataCenterId",
  news: unknown,
  olds?: unknown,
): Promise<CheckFailure[]> {
  const before = new Set(idsOf(olds).map((id) => id.toUpperCase()));
  const asked = idsOf(news).filter((id) => !before.has(id.toUpperCase()));
  if (asked.length === 0 || settings?.apiKey === undefined || !speaksV2(settings)) return [];
  const known = await catalogDataCenterIds(settings);
  if (known === undefined || known.length === 0) return [];
  const listed = new Set(known.map((id) => id.toUpperCase()));
  const missing = [...new Set(asked.filter((id) => !listed.has(id.toUpperCase())))];
  if (missing.length === 0) return [];
  const named = listSome(
    missing.map((id) => JSON.stringify(id)),
    KNOWN_LISTED,
  );
  const what = missing.length === 1 ? "not a data centre" : "not data centres";
  return [
    {
      property: field,
      reason:
        `${field} has ${named}, ${what} of the catalog (GET /v2/catalog/datacenters), which lists ` +
        `${listSome(known, KNOWN_LISTED)} (in any letter case). ` +
        "Use one of those ids; getDataCenters() lists them with their regions.",
    },
  ];
}

/**
 * Network volume lookups for Pulumi programs. Dynamic providers cannot serve invokes, so these
 * are plain async functions that run in the program process (in preview too: they only read).
 * Each call lists the account's volumes once and picks from that list, so a failed lookup can
 * say what does exist. Settings come from the stack (`runpod:apiKey`, `runpod:restUrl`, with
 * their environment fallbacks) unless `opts` carries a client or settings.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { RunpodClient, NetworkVolume as WireNetworkVolume } from "../../client";
import { ValidationError } from "../../client/errors";
import { pulumiSdk } from "../common/sdk";
import { lookupClient, type RunpodSettings } from "../config";

/**
 * A network volume as the lookups return it: `id`, `name`, `size` (GB), `dataCenterId`, and
 * `type` (v2 only). Fields the service adds beyond these are kept at run time but not typed, so
 * that `getNetworkVolumeOutput(...).id` lifts to `Output<string>`.
 */
export type GetNetworkVolumeResult = Pick<
  WireNetworkVolume,
  "id" | "name" | "size" | "dataCenterId" | "type"
>;

/** Find one volume by its id. */
export interface GetNetworkVolumeByIdArgs {
  /** The volume's id, as shown in the console. */
  id: string;
}

/** Find one volume by its name, optionally within one data centre. */
export interface GetNetworkVolumeByNameArgs {
  /** The volume's name. Names need not be unique: add `dataCenterId` or use `id` when several match. */
  name: string;
  /** Only consider volumes in this data centre, e.g. `EU-RO-1`. */
  dataCenterId?: string;
}

/** Arguments of {@link getNetworkVolume}: exactly one of `id` or `name`. */
export type GetNetworkVolumeArgs = GetNetworkVolumeByIdArgs | GetNetworkVolumeByNameArgs;

/** Arguments of {@link getNetworkVolumeOutput}: as {@link GetNetworkVolumeArgs}, each field may be an Output. */
export type GetNetworkVolumeOutputArgs =
  | { id: pulumi.Input<string> }
  | { name: pulumi.Input<string>; dataCenterId?: pulumi.Input<string> };

/** Filters of {@link getNetworkVolumes}; each one given narrows the result. */
export interface GetNetworkVolumesArgs {
  /** Only volumes in this data centre. */
  dataCenterId?: string;
  /** Only volumes with exactly this name. */
  name?: string;
}

/** {@link GetNetworkVolumesArgs} with Output-capable fields. */
export interface GetNetworkVolumesOutputArgs {
  dataCenterId?: pulumi.Input<string>;
  name?: pulumi.Input<string>;
}

/** Where a lookup gets its client. Both optional; by default settings come from the stack. */
export interface LookupOptions {
  /** A ready client (tests, scripts). Takes precedence over `settings`. */
  client?: RunpodClient;
  /** Explicit settings instead of the stack's `runpod:*` config and the environment. */
  settings?: RunpodSettings;
}

/** At most this many volumes are listed in a "no match" error. */
const MAX_LISTED = 20;

/**
 * Looks up one network volume by `id`, or by `name` (optionally within `dataCenterId`).
 * Rejects with a `ValidationError` naming the argument when the arguments are malformed, and
 * with an error listing what exists when nothing matches, or listing the candidates when a
 * name matches several volumes.
 */
export async function getNetworkVolume(
  args: GetNetworkVolumeArgs,
  opts?: LookupOptions,
): Promise<GetNetworkVolumeResult> {
  const query = validateOne(args);
  const volumes = await clientFor(opts).networkVolumes.list();
  if (query.id !== undefined) {
    const found = volumes.find((v) => v.id === query.id);
    if (!found)
      throw new ValidationError(`No network volume has id "${query.id}". ${existing(volumes)}`, ["id"]);
    return found;
  }
  const { name, dataCenterId } = query;
  const where = dataCenterId === undefined ? "" : ` in data centre ${dataCenterId}`;
  const matches = volumes.filter(
    (v) => v.name === name && (dataCenterId === undefined || v.dataCenterId === dataCenterId),
  );
  if (matches.length === 0) {
    throw new ValidationError(`No network volume is named "${name}"${where}. ${existing(volumes)}`, ["name"]);
  }
  if (matches.length > 1) {
    const list = matches.map((v) => `${v.id} (${v.dataCenterId})`).join(", ");
    const ask =
      dataCenterId === undefined && new Set(matches.map((v) => v.dataCenterId)).size === matches.length
        ? "Pass `id`, or `dataCenterId` to choose one."
        : "Pass `id` to choose one.";
    throw new ValidationError(
      `${matches.length} network volumes are named "${name}"${where}: ${list}. ${ask}`,
      ["name"],
    );
  }
  return matches[0];
}

/** {@link getNetworkVolume} for Output arguments: resolves once every argument is known. */
export function getNetworkVolumeOutput(
  args: GetNetworkVolumeOutputArgs,
  opts?: LookupOptions,
): pulumi.Output<GetNetworkVolumeResult> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getNetworkVolume(resolved as GetNetworkVolumeArgs, opts));
}

/** Lists network volumes, filtered by `dataCenterId` and/or `name`; an empty list is not an error. */
export async function getNetworkVolumes(
  args: GetNetworkVolumesArgs = {},
  opts?: LookupOptions,
): Promise<GetNetworkVolumeResult[]> {
  const filters = validateFilters(args);
  const volumes = await clientFor(opts).networkVolumes.list();
  return volumes.filter(
    (v) =>
      (filters.name === undefined || v.name === filters.name) &&
      (filters.dataCenterId === undefined || v.dataCenterId === filters.dataCenterId),
  );
}

/** {@link getNetworkVolumes} for Output arguments. */
export function getNetworkVolumesOutput(
  args: GetNetworkVolumesOutputArgs = {},
  opts?: LookupOptions,
): pulumi.Output<GetNetworkVolumeResult[]> {
  return pulumiSdk()
    .output(args)
    .apply((resolved) => getNetworkVolumes(resolved as GetNetworkVolumesArgs, opts));
}

// ---------------------------------------------------------------------------------------------

function clientFor(opts: LookupOptions | undefined): RunpodClient {
  return lookupClient(opts);
}

type OneQuery =
  | { id: string; name?: undefined; dataCenterId?: undefined }
  | { id?: undefined; name: string; dataCenterId?: string };

function validateOne(args: unknown): OneQuery {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new ValidationError("getNetworkVolume takes an object: { id } or { name, dataCenterId? }", []);
  }
  const a = args as Record<string, unknown>;
  const allowed = ["id", "name", "dataCenterId"];
  const unknown = Object.keys(a).filter((k) => !allowed.includes(k) && a[k] !== undefined);
  if (unknown.length > 0) {
    throw new ValidationError(
      `getNetworkVolume: unknown argument ${unknown[0]}; allowed: id, name, dataCenterId`,
      [unknown[0]],
    );
  }
  const hasId = a.id !== undefined;
  const hasName = a.name !== undefined;
  if (hasId === hasName) {
    throw new ValidationError(
      `getNetworkVolume needs exactly one of id or name (got ${hasId ? "both" : "neither"})`,
      [hasId ? "name" : "id"],
    );
  }
  if (hasId) {
    const id = nonEmpty(a.id, "id");
    if (a.dataCenterId !== undefined) {
      throw new ValidationError("getNetworkVolume: dataCenterId narrows a lookup by name; omit it with id", [
        "dataCenterId",
      ]);
    }
    return { id };
  }
  const name = nonEmpty(a.name, "name");
  const dataCenterId = a.dataCenterId === undefined ? undefined : nonEmpty(a.dataCenterId, "dataCenterId");
  return { name, dataCenterId };
}

function validateFilters(args: unknown): GetNetworkVolumesArgs {
  if (args === undefined) return {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new ValidationError("getNetworkVolumes takes an object: { dataCenterId?, name? }", []);
  }
  const a = args as Record<string, unknown>;
  const unknown = Object.keys(a).filter((k) => k !== "name" && k !== "dataCenterId" && a[k] !== undefined);
  if (unknown.length > 0) {
    throw new ValidationError(
      `getNetworkVolumes: unknown argument ${unknown[0]}; allowed: dataCenterId, name`,
      [unknown[0]],
    );
  }
  return {
    name: a.name === undefined ? undefined : nonEmpty(a.name, "name"),
    dataCenterId: a.dataCenterId === undefined ? undefined : nonEmpty(a.dataCenterId, "dataCenterId"),
  };
}

function nonEmpty(value: unknown, field: string): string {
  if (typeof value !== "string") {
    throw new ValidationError(`${field} must be a string, got ${value === null ? "null" : typeof value}`, [
      field,
    ]);
  }
  if (value.trim() === "") throw new ValidationError(`${field} must not be empty`, [field]);
  return value;
}

/** "Existing volumes (N): id "name" (dc), ..." capped at {@link MAX_LISTED}. */
function existing(volumes: GetNetworkVolumeResult[]): string {
  if (volumes.length === 0) return "The account has no network volumes.";
  const shown = volumes
    .slice(0, MAX_LISTED)
    .map((v) => `${v.id} "${v.name}" (${v.dataCenterId})`)
    .join(", ");
  const more = volumes.length > MAX_LISTED ? `, and ${volumes.length - MAX_LISTED} more` : "";
  return `Existing volumes (${volumes.length}): ${shown}${more}.`;
}

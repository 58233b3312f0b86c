/**
 * The arguments of a `NetworkVolume` as the provider sees them (plain values; values not known yet
 * in a preview are Pulumi's unknown sentinel), their one schema, and `check`'s field-level
 * validation built on it. No network.
 *
 * The schema is the client's body of a volume create (`NetworkVolumeCreateInputSchema`: the field
 * names, `dataCenterId` as the lookups and REST v1 call it, the `type` tier) with the size left to
 * the dialect: its bounds differ (REST v1 0..4000 GB, REST v2 10..4096 GB) and are judged against
 * the dialect `runpod:restUrl` speaks, which the provider host knows after `configure`. What only
 * the provider knows is judged here too: a `type` on REST v1, and a size smaller than the one
 * the program gave before (a volume cannot shrink; see {@link shrinkMessage}).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { NetworkVolumeCreateInputSchema, V1_VOLUME_SIZE, V2_VOLUME_SIZE } from "../../client";
import { boundedName, checkFlatArgs, describeArgIssue, notBlank, optInFlag } from "../common/checkArgs";
import { isUnknown } from "../common/unknown";

const body = NetworkVolumeCreateInputSchema.shape;

/** A field of the create body that must also not be blank: a name of spaces is a typo. */
const filled = (field: "name" | "dataCenterId") => notBlank(body[field], field);

/** Strict schema of the arguments (an unknown key is a typo and fails); size bounds are the dialect's. */
export const NetworkVolumeArgsSchema = NetworkVolumeCreateInputSchema.extend({
  name: boundedName(filled("name")).meta({
    description:
      "Human-readable name; need not be unique in the account. Changing it renames the volume in\n" +
      "place (a PATCH).",
  }),
  size: z.int({ error: "size must be an integer number of GB" }).meta({
    description:
      "Allocated storage in GB, an integer: 10..4096 over REST v2, 0..4000 over REST v1 (checked\n" +
      "against the dialect `runpod:restUrl` speaks). A larger size grows the volume in place (a\n" +
      "PATCH). A smaller one is refused, in `check` and in the preview: a volume cannot shrink, and\n" +
      "replacing it would delete its data.",
  }),
  dataCenterId: filled("dataCenterId").meta({
    description:
      "Data centre of the volume, e.g. `EU-RO-1` (REST v2 calls it `dataCenter`), compared in any\n" +
      "letter case as the service does. Immutable on the service: changing it replaces the volume (a\n" +
      "new, empty one is created, then this one is deleted with its data), which needs\n" +
      "`allowReplaceDeletingData: true`; without it `check` and the preview fail saying what would be lost.\n" +
      "Over REST v2, `check` refuses a data centre the catalog does not list, naming the ids it has;\n" +
      "when the catalog cannot be read, the service decides.",
    replaces: true,
  }),
  type: body.type.meta({
    description:
      "Storage tier, REST v2 only: `STANDARD` or `HIGH_PERFORMANCE`. When omitted the service uses the\n" +
      "data centre's default tier (the output `type` shows which). Immutable: changing it replaces\n" +
      "the volume; leaving it out later keeps the volume as it is. On a REST v1 `runpod:restUrl` a\n" +
      "`type` fails `check`: v1 has no volume types.",
    replaces: true,
  }),
  allowReplaceDeletingData: optInFlag(
    "allowReplaceDeletingData must be true or false",
    "Opt-in to replace the volume when the program changes `dataCenterId` or `type`: the new\n" +
      "volume starts empty and this one is deleted with all its data. Without it such a change fails\n" +
      "`check` and the preview, naming the change and what would be lost; with it the preview shows\n" +
      "the replacement and a warning that the data is deleted. Set it back to `false` afterwards.",
  ),
});

/** The arguments as a program gives them (before `check`); the generated `NetworkVolumeArgs` derives from it. */
export type NetworkVolumeArgsInput = z.input<typeof NetworkVolumeArgsSchema>;

/** Inputs as the provider sees them after `check`. */
export type NetworkVolumeInputs = z.infer<typeof NetworkVolumeArgsSchema>;

/** Outputs stored in state: the volume as the service reads it back (`type` only over REST v2). */
export interface NetworkVolumeOutputs {
  name: string;
  /** GB. */
  size: number;
  dataCenterId: string;
  type?: string;
}

/** Every argument name, in the schema's order. */
export const ARG_NAMES = Object.keys(NetworkVolumeArgsSchema.shape) as (keyof NetworkVolumeInputs)[];

/** The fields the service cannot change on a volume (the v2 document): a change replaces it. */
export const REPLACING_FIELDS = ["dataCenterId", "type"] as const;

/**
 * The same data centre or tier, as the service compares them: ids in any letter case
 * (`eu-ro-1` is `EU-RO-1`). Unknown or missing values are not the same as anything.
 */
export function sameImmutable(a: unknown, b: unknown): boolean {
  return (
    typeof a === "string" &&
    typeof b === "string" &&
    !isUnknown(a) &&
    !isUnknown(b) &&
    a.toUpperCase() === b.toUpperCase()
  );
}

/**
 * Why a replacement the program asks for is refused without `allowReplaceDeletingData: true`:
 * what would be lost, and how to keep it or opt in. `changes` are `dataCenterId EU-RO-1 -> US-KS-2`.
 */
export function replaceRefusal(label: string, size: unknown, changes: readonly string[]): string {
  const gb = typeof size === "number" ? ` (${size} GB)` : "";
  return (
    `${changes.join(" and ")}: the service cannot change this on network volume ${label}, so this would ` +
    `replace it: a new, empty volume is created and this one is deleted with all its data${gb}. Nothing was ` +
    "changed. To keep the data, set the field back. To replace the volume and delete its data on purpose, set " +
    "allowReplaceDeletingData: true on this resource (and back to false after the up)."
  );
}

/** Size bounds in GB of each REST dialect. */
export const SIZE_BOUNDS = { v1: V1_VOLUME_SIZE, v2: V2_VOLUME_SIZE } as const;

/** Why `type` fails on a REST v1 `restUrl`. */
export const TYPE_NEEDS_V2 =
  "type: REST v1 has no volume types (STANDARD and HIGH_PERFORMANCE exist only in REST v2); " +
  "omit type, or set runpod:restUrl to a URL ending in /v2";

/** What `check` knows beyond the arguments. */
export interface CheckContext {
  /** The dialect `runpod:restUrl` speaks; undefined when unknown (a malformed URL): bounds are not judged. */
  dialect?: "v1" | "v2";
  /** The previous inputs (empty on a create): a smaller `size` than theirs is refused. */
  olds?: Record<string, unknown>;
}

/**
 * The message of a refused shrink: what the volume is, what the program asks, why not, and how
 * to start over on purpose. `where` says where the current size comes from.
 */
export function shrinkMessage(current: number, asked: number, where: string): string {
  return (
    `size may only grow: the volume is ${current} GB${where}, the program asks for ${asked} GB; a network ` +
    `volume cannot shrink, and replacing it would delete its data. Set size to ${current} or more. To start ` +
    "over with a smaller volume, give this resource a new name in the program (pulumi up then creates the " +
    "new volume and deletes this one with its data), or remove it from the program, run pulumi up, and add it back."
  );
}

/**
 * `check`'s validation: every failure found, one per argument, naming the field and what is
 * allowed. `null` counts as not given. Values unknown in a preview are not judged; an unknown
 * argument name fails whatever its value. `inputs` are the given arguments, as given.
 */
export function checkNetworkVolumeArgs(
  news: Record<string, unknown>,
  context: CheckContext = {},
): pulumi.dynamic.CheckResult {
  const { args, inputs, failures } = checkFlatArgs(NetworkVolumeArgsSchema, news, ARG_NAMES, reasonFor);
  const judged = (property: string) => !failures.some((f) => f.property === property);
  const { dialect, olds = {} } = context;
  if (dialect === "v1" && args.type !== undefined && !isUnknown(args.type) && judged("type")) {
    failures.push({ property: "type", reason: TYPE_NEEDS_V2 });
  }
  // A replacement deletes the volume's data: only with the program's explicit opt-in.
  if (args.allowReplaceDeletingData !== true) {
    const changes = REPLACING_FIELDS.filter(
      (field) =>
        typeof olds[field] === "string" &&
        typeof args[field] === "string" &&
        !isUnknown(args[field]) &&
        judged(field) &&
        !sameImmutable(olds[field], args[field]),
    ).map((field) => `${field} ${olds[field]} -> ${args[field]}`);
    if (changes.length > 0) {
      const name = typeof olds.name === "string" ? `"${olds.name}"` : "of this resource";
      failures.push({ property: "", reason: replaceRefusal(name, olds.size, changes) });
    }
  }
  const size = args.size;
  if (typeof size === "number" && judged("size")) {
    const bounds = dialect === undefined ? undefined : SIZE_BOUNDS[dialect];
    if (bounds && (size < bounds.min || size > bounds.max)) {
      failures.push({
        property: "size",
        reason: `size must be from ${bounds.min} to ${bounds.max} GB on REST ${dialect}, got ${size}`,
      });
    } else if (typeof olds.size === "number" && size < olds.size && !replacing(olds, args)) {
      failures.push({ property: "size", reason: shrinkMessage(olds.size, size, "") });
    }
  }
  return { inputs, failures };
}

/**
 * True when the new arguments surely replace the volume (a known, different `dataCenterId`, or a
 * `type` given both times and different): a smaller size then is a new volume's, not a shrink.
 */
function replacing(olds: Record<string, unknown>, news: Record<string, unknown>): boolean {
  const known = (v: unknown) => typeof v === "string" && !isUnknown(v);
  return REPLACING_FIELDS.some(
    (field) => known(olds[field]) && known(news[field]) && !sameImmutable(olds[field], news[field]),
  );
}

/** The failure's wording: the schema's message, with what was given for a wrong type. */
function reasonFor(issue: z.core.$ZodIssue, property: string, value: unknown): string {
  if (property !== "size") return describeArgIssue(issue, property, value, "a non-empty string");
  // A number that is no integer is shown as given (1.5), not as its type.
  if (issue.code === "invalid_type" && typeof value === "number") return `${issue.message}, got ${value}`;
  return describeArgIssue(issue, property, value, "an integer number of GB");
}

/** The stored or checked arguments as plain values (create sends them). */
export function plainInputs(raw: Record<string, unknown>): NetworkVolumeInputs {
  const inputs: NetworkVolumeInputs = {
    name: String(raw.name ?? ""),
    size: Number(raw.size),
    dataCenterId: String(raw.dataCenterId ?? ""),
  };
  if (raw.type === "STANDARD" || raw.type === "HIGH_PERFORMANCE") inputs.type = raw.type;
  return inputs;
}

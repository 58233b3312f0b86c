/**
 * What a change of a `ServerlessEndpoint`'s arguments does to the endpoint: replace it (the
 * fields the service cannot change) or PATCH it, and with what body. `diff` and `update` share
 * this one plan, so the preview says exactly what the update sends.
 *
 * Old OUTPUTS (the endpoint as last read back) meet new inputs. A field given in the program is
 * compared with what the service holds: objects by the keys the program gives (the service adds
 * its defaults, e.g. `gpu.count`), arrays item by item (`dataCenterIds` in any letter case, as the
 * service compares ids and as `check` accepts them), `env` as a whole map. A field the
 * program no longer gives, or never gave, is dropped on the service when it holds something else
 * than the v2 document's "nothing" for it, so an `env`, a volume or a data centre removed from
 * the program (or added in the console) really goes ({@link RESETS}): `env: {}`, `ports: []`,
 * `args: ""`, `registry: null`, `dataCenterIds: []`, `networkVolumes: []`, `flashboot: "OFF"`,
 * `timeout: 300000`, `workers` `min: 0`, `max: 3`, `idleTimeout: 10`, `gpu` `count: 1`,
 * `allowedCudaVersions: []`, `minCudaVersion: ""` (the document's clear), and `gpu.excludedTypes`
 * by sending `gpu.pools` without them (the document: pools without excludedTypes clears them).
 * With a `templateId`, the container settings the program omits (`image`, `args`, `disk`,
 * `ports`, `env`, `registry`, `gpu.allowedCudaVersions`) come from the template and are left
 * alone. `image`, `disk`, `name`, `scaling` and `templateId` are never dropped: the document
 * has no "none" for them (and a template is applied once, with no link kept).
 *
 * Replaced, never patched: `type` (not a field of the update) and the compute family (`gpu`
 * for `cpu` or back: the service answers 400).
 */
import { ENDPOINT_CONTAINER_FIELDS, ENDPOINT_RELEASE_FIELDS } from "../../wire/serverless";
import { containsUnknown } from "../common/unknown";
import type { ServerlessEndpointInputs } from "./args";

type Values = Record<string, unknown>;

const isObject = (v: unknown): v is Values => v !== null && typeof v === "object" && !Array.isArray(v);

/** The v2 document's create default of `timeout`, in ms. */
const TIMEOUT_DEFAULT_MS = 300_000;

/**
 * Fields whose change makes a release (the service's rule: the container settings, the template,
 * and where workers run); the other fields (name, scaling, workers, timeout, flashboot) apply at
 * once. A `smokeTest` gates exactly the updates that change one of these.
 */
export const RELEASE_FIELDS = ENDPOINT_RELEASE_FIELDS;

/** True when the plan's PATCH makes a release. */
export function makesRelease(plan: Pick<EndpointPlan, "patch">): boolean {
  return RELEASE_FIELDS.some((field) => field in plan.patch);
}

/**
 * Top-level fields dropped when the program omits them: the value the PATCH sends, and when
 * that does not apply (the template supplies it).
 */
const RESETS: { field: string; none: unknown; fromTemplate?: boolean }[] = [
  { field: "env", none: {}, fromTemplate: true },
  { field: "ports", none: [], fromTemplate: true },
  { field: "args", none: "", fromTemplate: true },
  { field: "registry", none: null, fromTemplate: true },
  { field: "dataCenterIds", none: [] },
  { field: "networkVolumes", none: [] },
  { field: "flashboot", none: "OFF" },
  { field: "timeout", none: TIMEOUT_DEFAULT_MS },
];

/** `workers` keys dropped to the document's create defaults when omitted. */
const WORKER_DEFAULTS: Record<string, number> = { min: 0, max: 3, idleTimeout: 10 };

/** Fields compared as given (top level), in the order the plan lists them. */
const COMPARED = [
  "name",
  "templateId",
  ...ENDPOINT_CONTAINER_FIELDS,
  "dataCenterIds",
  "networkVolumes",
  "flashboot",
  "timeout",
  "scaling",
] as const;

/** True when the service's `actual` holds what the program's `given` says (see the module comment). */
export function matches(given: unknown, actual: unknown): boolean {
  if (given === undefined) return true;
  if (Array.isArray(given)) {
    return (
      Array.isArray(actual) && actual.length === given.length && given.every((g, i) => matches(g, actual[i]))
    );
  }
  if (isObject(given)) {
    return isObject(actual) && Object.entries(given).every(([k, v]) => matches(v, actual[k]));
  }
  return given === actual;
}

/** Two plain maps with the same keys and values (`env`). */
function sameMap(a: unknown, b: unknown): boolean {
  const left = isObject(a) ? a : {};
  const right = isObject(b) ? b : {};
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((k) => left[k] === right[k]);
}

/** Two lists of data centre ids, in any letter case, as the service compares them (`eu-ro-1` is `EU-RO-1`). */
function sameIds(a: unknown, b: unknown): boolean {
  const upper = (v: unknown) =>
    Array.isArray(v) ? v.map((id) => (typeof id === "string" ? id.toUpperCase() : id)) : v;
  return matches(upper(a), upper(b));
}

/** Deep equality of plain JSON values, whatever the order of object keys (gRPC does not keep it). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    return (
      keys.length === Object.keys(b).filter((k) => b[k] !== undefined).length &&
      keys.every((k) => sameValue(a[k], b[k]))
    );
  }
  return a === b;
}

/** True when the service's value is the document's "nothing" for it. */
function isNone(actual: unknown, none: unknown): boolean {
  if (actual === undefined || actual === null) return true;
  if (Array.isArray(none)) return Array.isArray(actual) && actual.length === 0;
  if (isObject(none)) return isObject(actual) && Object.keys(actual).length === 0;
  return actual === none;
}

/** A plan: the fields to replace, the PATCH body, and every argument that changed. */
export interface EndpointPlan {
  /** Fields whose change needs a new endpoint (`type`, `gpu`/`cpu`). */
  replaces: string[];
  /** The PATCH body (empty when nothing on the service changes). */
  patch: Values;
  /** Arguments that changed, the provider's own (`rollout`, `rolloutTimeoutMs`, `smokeTest`) included. */
  changed: string[];
}

/**
 * Compares old outputs with new inputs. Values unknown in a preview count as changed (and
 * `type` unknown as a replacement: it may turn out different).
 */
export function planEndpointChange(olds: Values, news: ServerlessEndpointInputs): EndpointPlan {
  const given = news as Values;
  const replaces: string[] = [];
  const patch: Values = {};
  const changed = new Set<string>();
  // Values unknown in a preview (anywhere inside a field) count as changed: found once, here.
  const unknown = new Set(Object.keys(given).filter((field) => containsUnknown(given[field])));

  if (unknown.has("type") || (given.type !== undefined && given.type !== olds.type)) replaces.push("type");
  const wasCpu = Array.isArray(olds.cpu) && olds.cpu.length > 0;
  if ((given.gpu !== undefined && wasCpu) || (given.cpu !== undefined && !wasCpu))
    replaces.push("cpu", "gpu");

  const fromTemplate = given.templateId !== undefined;
  for (const field of COMPARED) {
    const value = given[field];
    if (value === undefined) continue;
    const same =
      field === "env"
        ? sameMap(value, olds.env)
        : field === "dataCenterIds"
          ? sameIds(value, olds.dataCenterIds)
          : matches(value, olds[field]);
    if (unknown.has(field) || !same) {
      patch[field] = value;
      changed.add(field);
    }
  }
  for (const { field, none, fromTemplate: templated } of RESETS) {
    if (given[field] !== undefined || (templated && fromTemplate)) continue;
    if (!isNone(olds[field], none)) {
      patch[field] = none;
      changed.add(field);
    }
  }

  planWorkers(given, olds, patch, changed, unknown.has("workers"));
  if (replaces.length === 0) {
    planGpu(given, olds, patch, changed, fromTemplate, unknown.has("gpu"));
    if (given.cpu !== undefined && (unknown.has("cpu") || !matches(given.cpu, olds.cpu))) {
      patch.cpu = given.cpu;
      changed.add("cpu");
    }
  }
  for (const field of ["rollout", "rolloutTimeoutMs"] as const) {
    if (given[field] !== olds[field]) changed.add(field);
  }
  if (unknown.has("smokeTest") || !sameValue(given.smokeTest, olds.smokeTest)) {
    changed.add("smokeTest");
  }
  return { replaces, patch, changed: [...changed] };
}

/**
 * `workers`: the keys given, and the omitted ones back to the document's defaults; `unknown`
 * (a value not known in a preview) sends what is given.
 */
function planWorkers(
  given: Values,
  olds: Values,
  patch: Values,
  changed: Set<string>,
  unknown: boolean,
): void {
  const want = isObject(given.workers) ? given.workers : {};
  const have = isObject(olds.workers) ? olds.workers : {};
  if (unknown) {
    patch.workers = given.workers;
    changed.add("workers");
    return;
  }
  const body: Values = { ...want };
  // idleTimeout does not apply to a queue endpoint scaling on request count (the service omits it).
  const scaling = isObject(given.scaling) ? given.scaling.type : undefined;
  let differs = !matches(want, have);
  for (const [key, none] of Object.entries(WORKER_DEFAULTS)) {
    if (want[key] !== undefined || have[key] === undefined) continue;
    if (key === "idleTimeout" && scaling === "REQUEST_COUNT") continue;
    if (have[key] !== none) {
      body[key] = none;
      differs = true;
    }
  }
  if (differs) {
    patch.workers = body;
    changed.add("workers");
  }
}

/**
 * `gpu`: the whole selection when anything in it differs, with omitted constraints cleared;
 * `unknown` (a value not known in a preview) sends what is given.
 */
function planGpu(
  given: Values,
  olds: Values,
  patch: Values,
  changed: Set<string>,
  fromTemplate: boolean,
  unknown: boolean,
): void {
  if (given.gpu === undefined) return;
  if (unknown || !isObject(given.gpu)) {
    patch.gpu = given.gpu;
    changed.add("gpu");
    return;
  }
  const want = given.gpu;
  const have = isObject(olds.gpu) ? olds.gpu : {};
  const body: Values = { ...want };
  let differs = !matches(want, have);
  if (want.count === undefined && have.count !== undefined && have.count !== 1) {
    body.count = 1;
    differs = true;
  }
  if (
    want.excludedTypes === undefined &&
    Array.isArray(have.excludedTypes) &&
    have.excludedTypes.length > 0
  ) {
    differs = true; // sending pools without excludedTypes clears them
  }
  const seeded = fromTemplate && want.minCudaVersion === undefined;
  if (want.allowedCudaVersions === undefined && !seeded && !isNone(have.allowedCudaVersions, [])) {
    body.allowedCudaVersions = [];
    differs = true;
  }
  if (want.minCudaVersion === undefined && !isNone(have.minCudaVersion, "")) {
    body.minCudaVersion = "";
    differs = true;
  }
  if (differs) {
    patch.gpu = body;
    changed.add("gpu");
  }
}

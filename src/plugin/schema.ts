/**
 * `GetSchema`'s answer: a Pulumi package schema of what the plugin serves now, generated from the
 * resources' zod argument schemas (the one source of `check`, the argument types and the pages),
 * through zod's JSON Schema export. Each argument's description is its `.meta({ description })`;
 * `secret` comes from the row's `secretInputs`; `replaceOnChanges` from `.meta({ replaces: true })`.
 *
 * Every argument maps (see {@link propertyOf}): nested objects become named types in the
 * schema's `types`, unions (`waitFor`, `scaling`) a `oneOf`. Outputs beyond the arguments (and an
 * output whose shape differs from its argument's, a pod's `globalNetworking`) come from the resource
 * classes' declarations and doc comments, what a TypeScript user sees (`./outputs.generated.ts`,
 * written by `npm run gen:types`, `scripts/functionSchemas.mts`). No property has a name Pulumi
 * reserves ({@link RESERVED_PROPERTY_NAMES}).
 */
import { z } from "zod";
import { loadArgsSchema, type ResourceRow } from "../provider/resources";
import { configKey, PACKAGE_NAME, PLUGIN_CONFIG } from "./config";
import { type ServedFunction, servedFunctions } from "./functions";
import { FUNCTION_TYPES, FUNCTIONS } from "./functions.generated";
import { OUTPUT_TYPES, RESOURCE_OUTPUTS } from "./outputs.generated";
import type { ServedResource } from "./resources";

type JsonSchema = Record<string, unknown>;

/** A property of a Pulumi schema. */
interface PulumiProperty {
  type?: string;
  items?: PulumiProperty;
  additionalProperties?: PulumiProperty;
  $ref?: string;
  oneOf?: PulumiProperty[];
  discriminator?: { propertyName: string; mapping: Record<string, string> };
  description?: string;
  secret?: boolean;
  replaceOnChanges?: boolean;
}

/** Pulumi's type of an output of any shape. */
const ANY_REF = "pulumi.json#/Any";

/**
 * Property names Pulumi reserves on a resource (pulumi/pulumi `pkg/codegen/schema/reserved_keywords.go`:
 * `pulumi` on everything, `urn` on every resource, `id` on a custom resource; `bindResourceDef` in
 * `bind.go` warns "is a reserved property name for resources", and the Go generator renames such a
 * field `Id_`, `fieldName` in `pkg/codegen/go/gen.go`). The resource's id and URN are already the
 * resource's own: an operation's output of that name (a pod's and a template's `id`) is left out.
 */
export const RESERVED_PROPERTY_NAMES: readonly string[] = ["id", "urn", "pulumi"];

/** Descriptions of the provider's config keys. */
const CONFIG_DOCS: Record<keyof typeof PLUGIN_CONFIG, string> = {
  apiKey: "RunPod API key. Falls back to the environment variable RUNPOD_API_KEY.",
  restUrl:
    "Base URL of RunPod's REST management API (v1 or v2). Falls back to RUNPOD_REST_API_URL, then the client's default.",
  serverlessUrl:
    "Base URL of RunPod's serverless job API. Falls back to RUNPOD_SERVERLESS_API_URL, then https://api.runpod.ai.",
  maxHourlyUsd:
    "Budget of the deployment, USD an hour. Falls back to RUNPOD_MAX_HOURLY_USD; unset: no budget.",
};

/** Object types the properties refer to (`#/types/<token>`), filled in as the resources are mapped. */
type TypeTable = Record<string, JsonSchema>;

/** `PodGpu` from `Pod` and `gpu`: the name of a nested object's type. */
const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * One argument's JSON Schema (zod's export) as a Pulumi property. `where` names the property
 * (`Pod.gpu`) for a type's token (`runpod-native:index:PodGpu`) and in a failure.
 * - string, number, integer, boolean: that type (an enum of strings is a `string`; the description
 *   lists the values).
 * - array: `items` mapped the same way; an object with only `additionalProperties`: a map.
 * - an object with `properties`: a named type in the schema's `types`, referred to by `$ref`.
 * - a value of any shape (`{}`): `pulumi.json#/Any`.
 * - `X | null` (`registry`): X (null is what leaving it out means to the service; the description says so).
 * - a union (`waitFor`: a word or an HTTP probe; `scaling`: one object per `type`): `oneOf` its
 *   branches, an object branch a named type (`<where><Const>` for a branch whose `type` is a const,
 *   else `<where>Object`), with a `discriminator` on `type` when every branch has one.
 * `replaceOnChanges` only where the argument always replaces (`replaces: true`): a conditional
 * replacement (`replaces: "<when>"`) is the provider's diff to decide, never the SDK's option.
 */
function propertyOf(where: string, json: JsonSchema, types: TypeTable): PulumiProperty {
  const prop: PulumiProperty = { ...typeOf(where, json, types) };
  if (typeof json.description === "string") prop.description = json.description;
  if (json.replaces === true) prop.replaceOnChanges = true;
  return prop;
}

/** The type part of {@link propertyOf} (no description). */
function typeOf(where: string, json: JsonSchema, types: TypeTable): PulumiProperty {
  const branches = (json.anyOf ?? json.oneOf) as JsonSchema[] | undefined;
  if (branches !== undefined) {
    const given = branches.filter((b) => b.type !== "null");
    if (given.length === 1) return typeOf(where, given[0]!, types);
    const discriminated = given.every((b) => constOfType(b) !== undefined);
    const mapping: Record<string, string> = {};
    const oneOf = given.map((b) => {
      const name = constOfType(b);
      const t = typeOf(
        `${where}${name === undefined ? pascal(String(b.type)) : pascalConst(name)}`,
        b,
        types,
      );
      if (name !== undefined && t.$ref !== undefined) mapping[name] = t.$ref;
      return t;
    });
    return discriminated ? { oneOf, discriminator: { propertyName: "type", mapping } } : { oneOf };
  }
  switch (json.type) {
    case "string":
    case "boolean":
    case "number":
    case "integer":
      return { type: json.type };
    case "array":
      return { type: "array", items: typeOf(`${where}Item`, (json.items ?? {}) as JsonSchema, types) };
    case "object": {
      if (json.properties === undefined) {
        return {
          type: "object",
          additionalProperties: typeOf(where, (json.additionalProperties ?? {}) as JsonSchema, types),
        };
      }
      const token = `${PACKAGE_NAME}:index:${where.replace(/\./g, "")}`;
      const properties: Record<string, PulumiProperty> = {};
      for (const [name, p] of Object.entries(json.properties as Record<string, JsonSchema>)) {
        properties[name] = propertyOf(`${where}.${pascal(name)}`, p, types);
      }
      types[token] = {
        type: "object",
        description: typeof json.description === "string" ? json.description : `${where}: its fields.`,
        properties,
        required: (json.required ?? []) as string[],
      };
      return { $ref: `#/types/${token}` };
    }
    case undefined:
      if (Object.keys(json).every((k) => k === "description" || k === "default")) return { $ref: ANY_REF };
  }
  throw new Error(`${where}: no package-schema type for ${JSON.stringify(json)}`);
}

/** The const of an object branch's `type` field (`scaling`'s `QUEUE_DELAY`), if it has one. */
function constOfType(branch: JsonSchema): string | undefined {
  const t = (branch.properties as Record<string, JsonSchema> | undefined)?.type;
  return typeof t?.const === "string" ? t.const : undefined;
}

/** `QueueDelay` from `QUEUE_DELAY`. */
const pascalConst = (c: string) => c.toLowerCase().split(/[_-]/).map(pascal).join("");

/** The schema entry of one resource; its nested object types go into `types`. */
async function resourceSchema(row: ResourceRow, types: TypeTable): Promise<JsonSchema> {
  const args = z.toJSONSchema(await loadArgsSchema(row), {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  const inputProperties: Record<string, PulumiProperty> = {};
  for (const [name, json] of Object.entries((args.properties ?? {}) as Record<string, JsonSchema>)) {
    const prop = propertyOf(`${row.className}.${pascal(name)}`, json, types);
    if (row.secretInputs.includes(name)) prop.secret = true;
    inputProperties[name] = prop;
  }
  const required = (args.required ?? []) as string[];
  const outputs = (RESOURCE_OUTPUTS[row.className] ?? {}) as Record<string, PulumiProperty>;
  const properties = Object.fromEntries(
    Object.entries({ ...inputProperties, ...outputs }).filter(
      ([name]) => !RESERVED_PROPERTY_NAMES.includes(name),
    ),
  );
  return {
    description: row.args.summary,
    properties,
    required,
    inputProperties,
    requiredInputs: required,
  };
}

/**
 * The package schema of the served resources and functions, as `GetSchema` sends it (JSON text).
 * A function's entry and the types it refers to are generated from the lookup's declarations
 * (`./functions.generated.ts`, written by `npm run gen:types`).
 */
export async function packageSchema(
  served: readonly ServedResource[],
  servedFns: readonly ServedFunction[] = servedFunctions(),
): Promise<string> {
  const resources: Record<string, JsonSchema> = {};
  const types: TypeTable = {};
  const functions: Record<string, JsonSchema> = {};
  for (const f of servedFns) {
    const spec = FUNCTIONS[f.token];
    if (spec === undefined) throw new Error(`${f.token} has no generated schema: run npm run gen:types`);
    functions[f.token] = spec;
  }
  if (servedFns.length > 0) Object.assign(types, FUNCTION_TYPES);
  for (const resource of served) resources[resource.token] = await resourceSchema(resource.row, types);
  // The outputs' object types; an argument's type of the same name (`PodGpu`) is the one kept.
  if (served.length > 0) for (const [token, spec] of Object.entries(OUTPUT_TYPES)) types[token] ??= spec;
  const variables = Object.fromEntries(
    Object.entries(PLUGIN_CONFIG).map(([key, spec]) => [
      key,
      {
        type: "string",
        description: CONFIG_DOCS[key as keyof typeof PLUGIN_CONFIG],
        ...(spec.secret ? { secret: true } : {}),
      },
    ]),
  );
  const schema = {
    name: PACKAGE_NAME,
    displayName: "RunPod (guarded releases)",
    version: packageVersion(),
    description:
      "RunPod resources with guarded releases, smoke tests, pods that fall back and wait until usable, " +
      `and budgets in the preview. Config: ${Object.keys(PLUGIN_CONFIG).map(configKey).join(", ")}.`,
    keywords: ["runpod", "gpu", "serverless", "category/cloud", "kind/native"],
    license: "Apache-2.0",
    config: { variables },
    provider: {
      description: `The ${PACKAGE_NAME} provider.`,
      properties: variables,
      inputProperties: variables,
    },
    types,
    resources,
    functions,
  };
  return JSON.stringify(schema);
}

/** This package's version, from its package.json (two folders up from src/plugin and dist/plugin). */
export function packageVersion(): string {
  return (require("../../package.json") as { version: string }).version;
}

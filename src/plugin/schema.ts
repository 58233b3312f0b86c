/**
 * `GetSchema`'s answer: a Pulumi package schema of what the plugin serves now, generated from the
 * resources' zod argument schemas (the one source of `check`, the argument types and the pages),
 * through zod's JSON Schema export. Each argument's description is its `.meta({ description })`;
 * `secret` comes from the row's `secretInputs`; `replaceOnChanges` from `.meta({ replaces: true })`.
 *
 * This first part maps flat arguments (string, number, integer, boolean, and lists or maps of
 * those); an argument of another shape fails the generation naming it, since the resources with
 * nested arguments (Pod, ServerlessEndpoint, ...) are not served yet. Outputs beyond the inputs
 * come from {@link EXTRA_OUTPUTS} until the table carries output schemas.
 */
import { z } from "zod";
import { loadArgsSchema, type ResourceRow } from "../provider/resources";
import { configKey, PACKAGE_NAME, PLUGIN_CONFIG } from "./config";
import type { ServedResource } from "./resources";

type JsonSchema = Record<string, unknown>;

/** A property of a Pulumi schema. */
interface PulumiProperty {
  type?: string;
  items?: PulumiProperty;
  additionalProperties?: PulumiProperty;
  description?: string;
  secret?: boolean;
  replaceOnChanges?: boolean;
}

/** Outputs a resource has besides its inputs echoed, with their descriptions (to move into the resource table). */
const EXTRA_OUTPUTS: Record<string, Record<string, PulumiProperty>> = {
  ContainerRegistryAuth: {
    adoptedAfterAmbiguousCreate: {
      type: "boolean",
      description:
        "True when the create's POST failed in a way the service may have acted on and the credential recorded " +
        "is the one found by name right after; `adoptionNote` says what to check. Absent otherwise.",
    },
    adoptionNote: {
      type: "string",
      description: "What happened when `adoptedAfterAmbiguousCreate` is true, and what to check.",
    },
  },
};

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

/** The JSON Schema type of a flat argument as a Pulumi property; throws naming the argument otherwise. */
function propertyOf(where: string, json: JsonSchema): PulumiProperty {
  const scalar = (j: JsonSchema): string | undefined =>
    j.type === "string" || j.type === "boolean" || j.type === "number" || j.type === "integer"
      ? (j.type as string)
      : undefined;
  const prop: PulumiProperty = {};
  const type = scalar(json);
  if (type !== undefined) prop.type = type;
  else if (json.type === "array" && json.items && scalar(json.items as JsonSchema)) {
    prop.type = "array";
    prop.items = { type: scalar(json.items as JsonSchema) };
  } else if (
    json.type === "object" &&
    json.additionalProperties &&
    scalar(json.additionalProperties as JsonSchema)
  ) {
    prop.type = "object";
    prop.additionalProperties = { type: scalar(json.additionalProperties as JsonSchema) };
  } else {
    throw new Error(`${where}: only flat arguments are mapped to the package schema so far`);
  }
  if (typeof json.description === "string") prop.description = json.description;
  if (json.replaces === true) prop.replaceOnChanges = true;
  return prop;
}

/** The schema entry of one resource. */
async function resourceSchema(row: ResourceRow): Promise<JsonSchema> {
  const args = z.toJSONSchema(await loadArgsSchema(row), {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  const inputProperties: Record<string, PulumiProperty> = {};
  for (const [name, json] of Object.entries((args.properties ?? {}) as Record<string, JsonSchema>)) {
    const prop = propertyOf(`${row.className}.${name}`, json);
    if (row.secretInputs.includes(name)) prop.secret = true;
    inputProperties[name] = prop;
  }
  const required = (args.required ?? []) as string[];
  const properties = { ...inputProperties, ...(EXTRA_OUTPUTS[row.className] ?? {}) };
  return {
    description: row.args.summary,
    properties,
    required,
    inputProperties,
    requiredInputs: required,
  };
}

/** The package schema of the served resources, as `GetSchema` sends it (JSON text). */
export async function packageSchema(served: readonly ServedResource[]): Promise<string> {
  const resources: Record<string, JsonSchema> = {};
  for (const resource of served) resources[resource.token] = await resourceSchema(resource.row);
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
    resources,
  };
  return JSON.stringify(schema);
}

/** This package's version, from its package.json (two folders up from src/plugin and dist/plugin). */
export function packageVersion(): string {
  return (require("../../package.json") as { version: string }).version;
}

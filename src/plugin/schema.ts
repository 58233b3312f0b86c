/**
 * `GetSchema`'s answer: a Pulumi package schema of what the plugin serves now, generated from the
 * resources' zod argument schemas (the one source of `check`, the argument types and the pages),
 * through zod's JSON Schema export. Each argument's description is its `.meta({ description })`;
 * `secret` comes from the row's `secretInputs`; `replaceOnChanges` from `.meta({ replaces: true })`.
 *
 * Every argument maps (see {@link propertyOf}): nested objects become named types in the
 * schema's `types`, unions (`waitFor`, `scaling`) a `oneOf`. Outputs beyond the inputs come from
 * {@link EXTRA_OUTPUTS} (an output whose shape differs from its argument's, such as a pod's
 * `globalNetworking`, overrides it there) until the table carries output schemas.
 */
import { z } from "zod";
import { loadArgsSchema, type ResourceRow } from "../provider/resources";
import { configKey, PACKAGE_NAME, PLUGIN_CONFIG } from "./config";
import { type ServedFunction, servedFunctions } from "./functions";
import { FUNCTION_TYPES, FUNCTIONS } from "./functions.generated";
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

EXTRA_OUTPUTS.NetworkVolume = {
  monthlyCostUsd: {
    type: "number",
    description:
      "What the volume costs a month, in US dollars at list prices: `size` GB at RunPod's published storage " +
      "prices. Absent when there is no list price (a `HIGH_PERFORMANCE` volume): `monthlyCostNote` says so.",
  },
  monthlyCostNote: {
    type: "string",
    description: "Present only when `monthlyCostUsd` is absent: which price is missing.",
  },
};
EXTRA_OUTPUTS.SshKey = {
  fingerprint: {
    type: "string",
    description: "`SHA256:...`, as `ssh-keygen -l -E sha256` prints it (also the resource id).",
  },
  type: { type: "string", description: "The key type, e.g. `ssh-ed25519`." },
  comment: { type: "string", description: 'The comment after the key (`""` when none).' },
  entry: {
    type: "string",
    description:
      "The entry as written in the account's set: `publicKey` followed by this resource's URN, its owner mark.",
  },
};

/** Pulumi's type of an output of any shape. */
const ANY_REF = "pulumi.json#/Any";

/** `#/types/runpod-native:index:<name>`. */
const typeRef = (name: string) => `#/types/${PACKAGE_NAME}:index:${name}`;

/** Object types of outputs (not arguments), by name under `runpod-native:index:`. */
const OUTPUT_TYPES: Record<string, JsonSchema> = {
  HourlyCost: {
    type: "object",
    description:
      "What a resource may cost an hour, in US dollars at the catalog's list prices. A price the catalog " +
      "does not give: figures absent and a `note`, never 0.",
    properties: {
      floorUsd: { type: "number", description: "Always on: the cheapest the resource may run at." },
      ceilingUsd: { type: "number", description: "At most: the dearest the resource may run at." },
      ratePerWorkerUsd: {
        type: "number",
        description: "One worker (or the pod) at the dearest rate it may land on.",
      },
      note: { type: "string", description: "Present only when a figure is missing: which price." },
    },
  },
  PodSshEndpoint: {
    type: "object",
    description: "An SSH endpoint of a pod.",
    properties: {
      host: { type: "string", description: "Host name or IP address." },
      port: { type: "integer", description: "TCP port." },
      username: { type: "string", description: "User to log in as." },
      command: { type: "string", description: "The whole command, when the service gives one." },
    },
    required: ["host", "port", "username"],
  },
  PodSsh: {
    type: "object",
    description: "A pod's SSH endpoints: through RunPod's proxy, and direct to its public IP.",
    properties: {
      proxy: { $ref: typeRef("PodSshEndpoint"), description: "Through RunPod's SSH proxy." },
      direct: {
        $ref: typeRef("PodSshEndpoint"),
        description: "Straight to the pod's public IP and mapped port 22 (absent when it has none).",
      },
    },
  },
  PodGlobalNetworking: {
    type: "object",
    description: "A pod's global networking, as the service reports it.",
    properties: { enabled: { type: "boolean", description: "True when the pod has global networking." } },
  },
  PodRuntimePort: {
    type: "object",
    description: "An exposed port of a running pod.",
    properties: {
      private: { type: "integer", description: "The port inside the pod." },
      public: { type: "integer", description: "The port on `ip`." },
      type: { type: "string", description: "`http` or `tcp`." },
      ip: { type: "string", description: "The address it is reachable on." },
    },
  },
  PodRuntime: {
    type: "object",
    description: "A running pod's live port mappings and uptime.",
    properties: {
      uptime: { type: "integer", description: "Seconds since it started." },
      ports: { type: "array", items: { $ref: typeRef("PodRuntimePort") }, description: "Each exposed port." },
    },
  },
};

EXTRA_OUTPUTS.Pod = {
  status: {
    type: "string",
    description: "`PROVISIONING`, `STARTING`, `RUNNING`, `EXITED`, `ERROR` or `TERMINATED`.",
  },
  requestedGpu: { $ref: typeRef("PodGpu"), description: "The GPU asked for (`gpu` argument)." },
  dataCenterId: { type: "string", description: "Data center the pod runs in." },
  cudaVersion: { type: "string", description: "CUDA version of its host." },
  // The argument is a boolean; the output is the service's object.
  globalNetworking: {
    $ref: typeRef("PodGlobalNetworking"),
    description: "Global networking, as the service reports it (`enabled`).",
  },
  ssh: {
    $ref: typeRef("PodSsh"),
    description: "SSH endpoints (`proxy`, `direct`) while it runs with `startSsh`.",
  },
  cost: { type: "number", description: "USD per hour now, as the service reports it (0 when stopped)." },
  runtime: { $ref: typeRef("PodRuntime"), description: "Live port mappings and uptime." },
  hourlyCost: {
    $ref: typeRef("HourlyCost"),
    description:
      "What the pod may cost an hour at list prices: `floorUsd` the cheapest GPU type it may land on " +
      "(0 while `desiredStatus` is `EXITED`), `ceilingUsd` the dearest.",
  },
};

OUTPUT_TYPES.SmokeTestRecord = {
  type: "object",
  description: "What a `ServerlessEndpoint`'s last smoke test found (`lastSmokeTest`).",
  properties: {
    version: {
      type: "integer",
      description: "The release tested (the endpoint's `version`); null when unknown.",
    },
    passed: { type: "boolean", description: "True when at most `maxFailures` jobs failed." },
    jobIds: {
      type: "array",
      items: { type: "string" },
      description: "The jobs run, in order (a run that could not submit one has none).",
    },
    failures: { type: "integer", description: "How many jobs failed." },
    timeline: {
      type: "array",
      items: { type: "string" },
      description:
        "One line per job: `<jobId>: IN_QUEUE 0.01 s -> COMPLETED 0.05 s` (and `(failed)` when it failed).",
    },
    costUsd: {
      type: "number",
      description:
        "What the jobs cost, USD, an ESTIMATE: each job's execution time × the hourly list price of one " +
        "worker, summed. Absent when no job has both.",
    },
  },
  required: ["version", "passed", "jobIds", "failures", "timeline"],
};
OUTPUT_TYPES.JobRunTimelineEntry = {
  type: "object",
  description: "One status a `JobRun` saw.",
  properties: {
    status: {
      type: "string",
      description: "The job's status (`IN_QUEUE`, `IN_PROGRESS`, `COMPLETED`, ...).",
    },
    atMs: { type: "integer", description: "Milliseconds since the run started (submission is at about 0)." },
  },
  required: ["status", "atMs"],
};

EXTRA_OUTPUTS.ServerlessEndpoint = {
  lastSmokeTest: {
    $ref: typeRef("SmokeTestRecord"),
    description:
      "What the last smoke test found: the release it tested (`version`), whether it `passed`, the `jobIds`, " +
      "how many `failures`, one `timeline` line per job and `costUsd`, an estimate. Kept until the next " +
      "release is tested; absent before the first.",
  },
  hourlyCost: {
    $ref: typeRef("HourlyCost"),
    description:
      "What the endpoint may cost an hour at list prices: `ratePerWorkerUsd` one worker at the dearest " +
      "candidate, `floorUsd` `workers.min` workers at the cheapest, `ceilingUsd` `workers.max` at the dearest.",
  },
  createdAt: { type: "string", description: "When the service created the endpoint (RFC 3339)." },
  version: {
    type: "integer",
    description:
      "The release the endpoint runs (`endpointVersion`), raised by every container change. Pass it to a " +
      "`JobRun`'s `triggers` to smoke-test each release.",
  },
  latestReleaseId: { type: "string", description: "Id of the endpoint's newest release; null when none." },
  requestUrls: {
    type: "object",
    additionalProperties: { type: "string" },
    description:
      "URLs of the endpoint: for `QUEUE`, `run`, `runSync`, `status`, `stream`, `cancel`, `retry`, " +
      "`purgeQueue`, `health`; for `LOAD_BALANCER`, `base` and `health`.",
  },
};

EXTRA_OUTPUTS.EcrDelegation = {
  delegatorUserId: { type: "string", description: "The RunPod user that created the delegation." },
  awsUser: { type: "string", description: "The AWS account (user or role) the access is delegated to." },
  repository: { type: "string", description: "The ECR repository's name." },
  tag: { type: "string", description: "The ECR image tag (`latest` when the ARN names none)." },
  awsRegion: { type: "string", description: "The repository's AWS region, e.g. `us-east-2`." },
  dockerRegistryUri: {
    type: "string",
    description: "The ECR registry URI for `docker login`; absent when the service gives none.",
  },
  createdAt: { type: "string", description: "When the delegation was created (ISO 8601)." },
};

EXTRA_OUTPUTS.JobRun = {
  passed: {
    type: "boolean",
    description:
      "The verdict of the last run: true when the job ended as `expect` asks. False makes the next up run it again.",
  },
  status: {
    type: "string",
    description: "Terminal status of the last run (or its last status when the JobRun stopped waiting).",
  },
  error: { type: "string", description: "The worker's error message, when it failed (redacted)." },
  attempts: { type: "integer", description: "Runs made: 1 plus the retries used." },
  timeline: {
    type: "array",
    items: { $ref: typeRef("JobRunTimelineEntry") },
    description: "Each status seen, with the milliseconds since the run started.",
  },
  jobId: { type: "string", description: "Id of the job on the service (the resource's id is its own UUID)." },
  workerId: { type: "string", description: "The worker that ran the job, when the job status said." },
  endpointVersion: {
    type: "integer",
    description: 'The endpoint\'s release the job ran on (`rollout: "wait"`); absent otherwise.',
  },
  workerLogTail: {
    type: "array",
    items: { type: "string" },
    description:
      "Only when the run failed: the newest lines of the log of the worker that ran the job (redacted).",
  },
  output: {
    $ref: ANY_REF,
    description:
      "The worker's output, redacted (secret with `secretOutput`); for an http probe the answer's body. " +
      "Absent when over 1 MB of JSON or 100 levels deep (`outputTruncated`).",
  },
  outputTruncated: {
    type: "boolean",
    description: "True when the output is not stored (too large or too deep).",
  },
  outputBytes: {
    type: "integer",
    description: "Size of the output as JSON, in bytes, when it was not stored.",
  },
  outputDepth: {
    type: "integer",
    description: "Nesting depth of the output, when it was not stored for its depth.",
  },
  stream: {
    type: "array",
    items: { $ref: ANY_REF },
    description:
      "Stream chunks as sent (`{ output, metrics? }`), with `collectStream` (secret with `secretOutput`).",
  },
  streamTruncated: { type: "boolean", description: "True when `stream` is incomplete." },
  httpStatus: { type: "integer", description: "An http probe's answer status." },
  latencyMs: { type: "number", description: "An http probe's latency, ms." },
  bodyTruncated: { type: "boolean", description: "True when an http probe's answer body was over 1 MB." },
  delayTime: { type: "number", description: "Time the job spent queued, ms (service figure)." },
  executionTime: { type: "number", description: "Time the job ran, ms (service figure)." },
  startedAt: { type: "string", description: "When the service accepted the job (ISO 8601)." },
  completedAt: { type: "string", description: "When the JobRun saw the job end (ISO 8601)." },
  costUsd: {
    type: "number",
    description:
      "What the job cost, USD, an ESTIMATE: `executionTime` × the hourly list price of its worker.",
  },
  s3ConfigDigest: {
    type: "string",
    description: "Salted digest of `s3Config`, kept instead of the value to notice changes.",
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
      if (Object.keys(json).every((k) => k === "description" || k === "default")) return { $ref: ANY };
  }
  throw new Error(`${where}: no package-schema type for ${JSON.stringify(json)}`);
}

/** Pulumi's type of a value of any shape. */
const ANY = "pulumi.json#/Any";

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
  const properties = { ...inputProperties, ...(EXTRA_OUTPUTS[row.className] ?? {}) };
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
  for (const [name, spec] of Object.entries(OUTPUT_TYPES)) types[`${PACKAGE_NAME}:index:${name}`] = spec;
  const functions: Record<string, JsonSchema> = {};
  for (const f of servedFns) {
    const spec = FUNCTIONS[f.token];
    if (spec === undefined) throw new Error(`${f.token} has no generated schema: run npm run gen:types`);
    functions[f.token] = spec;
  }
  if (servedFns.length > 0) Object.assign(types, FUNCTION_TYPES);
  for (const resource of served) resources[resource.token] = await resourceSchema(resource.row, types);
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

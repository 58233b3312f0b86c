/**
 * The one table of this package's resources and lookups: what each resource is called, the type
 * token and operations module its states store, where its argument schema is, which fields are
 * secret, and its reference page. Everything that used to list every resource by hand derives
 * from it: the resource classes' specs (`./common/resource.ts`), the generated argument types and
 * the pages' tables (`scripts/gen-types.mts`), and the tests that go over every resource. Adding a
 * resource adds one row to {@link RESOURCES} (and a lookup one row to {@link LOOKUPS}).
 *
 * Loaded in the program whenever the package root is (each resource class reads its row): plain
 * data and no runtime import, so neither zod nor a schema loads with it; {@link loadArgsSchema}
 * loads a schema on first call. Nothing here reaches `__provider`: the provider holds only the
 * row's `operationsModule` string (DESIGN.md fact 1).
 *
 * COMPATIBILITY CONTRACT: `className`, `typeToken` and `operationsModule` of a shipped resource are
 * stored in users' states (the type in each URN, the module path in each `__provider` text). The
 * first two never change; when a `folder` changes, its old `operationsModule` path keeps resolving
 * through an exact key in package.json `exports` to a module in `compat/` (ContainerRegistryAuth's
 * `registryAuth/operations.js`). `test/provider/resourceTable.test.ts` holds the shipped values.
 */
import type { ZodObject } from "zod";

/** Where a zod schema is: a module under `src/provider/` and the export holding it. */
export interface SchemaRef {
  /** The module, from `src/provider/` without extension (`pod/args`). */
  readonly module: string;
  /** The export holding the schema (a zod object). */
  readonly schema: string;
}

/** A resource's arguments: its zod schema, the one source of its check, its type and its page's table. */
export interface ArgsRef extends SchemaRef {
  /** The exported plain input type in `module` (`z.input` of the schema). */
  readonly input: string;
  /** The doc comment of the generated `<Class>Args` interface. */
  readonly summary: string;
  /** Fields given a fixed type instead of `InputOf<...>` (a plain value fixed at construction). */
  readonly plainFields?: Readonly<Record<string, string>>;
}

/** One resource of the package. */
export interface ResourceRow {
  /** The class name the package root exports (`Pod`); also the name of its `<Class>Args` type. */
  readonly className: string;
  /** Its folder under `src/provider/`, holding `resource.ts` and `operations.ts`. */
  readonly folder: string;
  /** The type token the dynamic resource registers: `pulumi-nodejs:dynamic/runpod:<Class>`. */
  readonly typeToken: string;
  /**
   * The operations module as the serialized provider requires it, by package name:
   * `pulumi-runpod-dynamic/dist/provider/<folder>/operations.js`. Stored in every `__provider`.
   */
  readonly operationsModule: string;
  /** The argument schema. */
  readonly args: ArgsRef;
  /** The generated argument type, from the repo root (`src/provider/<args module>.generated.ts`). */
  readonly argsType: string;
  /** A zod schema of the outputs, where one exists (none does yet: the class declares them). */
  readonly outputs?: SchemaRef;
  /**
   * Arguments stored as secrets: the class wraps each in `pulumi.secret` when given; the
   * operations never print them in a check failure.
   */
  readonly secretInputs: readonly string[];
  /** Outputs the engine stores as secrets whatever their value (`additionalSecretOutputs`). */
  readonly additionalSecretOutputs: readonly string[];
  /** The reference page, from the repo root: `docs/resources/<kebab-case class name>.md`. */
  readonly page: string;
}

/** What a row says; the rest is derived (see {@link ResourceRow}). */
interface RowFacts {
  folder: string;
  args: ArgsRef;
  secretInputs?: readonly string[];
  /** Default: the secret inputs (an output of the same name stays secret). */
  additionalSecretOutputs?: readonly string[];
  outputs?: SchemaRef;
}

/** The rows, keyed by class name, with every derived field filled in. */
function defineResources<T extends Record<string, RowFacts>>(
  facts: T,
): { readonly [K in keyof T]: ResourceRow } {
  const rows: Record<string, ResourceRow> = {};
  for (const [className, row] of Object.entries(facts)) {
    const secretInputs = row.secretInputs ?? [];
    rows[className] = {
      className,
      folder: row.folder,
      typeToken: `pulumi-nodejs:dynamic/runpod:${className}`,
      operationsModule: `pulumi-runpod-dynamic/dist/provider/${row.folder}/operations.js`,
      args: row.args,
      argsType: `src/provider/${row.args.module}.generated.ts`,
      ...(row.outputs === undefined ? {} : { outputs: row.outputs }),
      secretInputs,
      additionalSecretOutputs: row.additionalSecretOutputs ?? secretInputs,
      page: `docs/resources/${className.replace(/(?<=[a-z0-9])([A-Z])/g, "-$1").toLowerCase()}.md`,
    };
  }
  return rows as { readonly [K in keyof T]: ResourceRow };
}

/**
 * Every resource, by class name. The order is the order of `docs/reference/facts.json`.
 */
export const RESOURCES = defineResources({
  JobRun: {
    folder: "jobRun",
    args: {
      module: "smokeTestJob/jobArgs",
      schema: "JobRunArgsObject",
      input: "JobRunInputs",
      summary:
        "Arguments of a `JobRun`: every field of the provider's argument schema, each accepting a value or an\n" +
        "output, except `secretOutput`, which is fixed when the resource is constructed.",
      plainFields: { secretOutput: "boolean" },
    },
    secretInputs: ["s3Config", "redact"],
    // The class marks `redact` (when given) and, with `secretOutput`, `output` and `stream` itself.
    additionalSecretOutputs: [],
  },
  NetworkVolume: {
    folder: "networkVolume",
    args: {
      module: "networkVolume/args",
      schema: "NetworkVolumeArgsSchema",
      input: "NetworkVolumeArgsInput",
      summary: "Arguments of a `NetworkVolume`: the fields of the service's `CreateNetworkVolumeRequest`.",
    },
  },
  ContainerRegistryAuth: {
    folder: "containerRegistryAuth",
    args: {
      module: "containerRegistryAuth/args",
      schema: "RegistryAuthArgsSchema",
      input: "RegistryAuthArgsInput",
      summary:
        "Arguments of a `ContainerRegistryAuth`: the fields of the service's registry-auth create, plus `adoptExisting`.",
    },
    secretInputs: ["password"],
  },
  Template: {
    folder: "template",
    args: {
      module: "template/args",
      schema: "TemplateArgsSchema",
      input: "TemplateArgsInput",
      summary:
        "Arguments of a `Template`: the fields of the REST v2 document's `CreateTemplateRequest`, under its\n" +
        "names. What an argument left out means: the service's default at create; on an update, an\n" +
        "argument removed from the program is set back to that default (`env: {}`, `ports: []`,\n" +
        '`args: ""`, `registry: null`, `allowedCudaVersions: []`, `category: "NVIDIA"`,\n' +
        "`public`/`serverless: false`, `startSsh`/`startJupyter: true`), except `disk` (kept as it is).",
    },
    secretInputs: ["env"],
  },
  SshKey: {
    folder: "sshKey",
    args: {
      module: "sshKey/args",
      schema: "SshKeyArgsSchema",
      input: "SshKeyArgsInput",
      summary: "Arguments of an `SshKey`: the one key line it manages in the account's set.",
    },
  },
  Pod: {
    folder: "pod",
    args: {
      module: "pod/args",
      schema: "PodArgsSchema",
      input: "PodArgsInput",
      summary:
        "Arguments of a `Pod`: the fields of the REST v2 document's `CreatePodRequest` under its names, plus\n" +
        "`fallbackGpuIds`, `desiredStatus`, `waitFor`, `waitTimeoutMs` and `maxHourlyUsd`. What the program\n" +
        "omits, the service decides (an omitted field keeps the pod's value on an update).",
    },
    secretInputs: ["env"],
  },
  ServerlessEndpoint: {
    folder: "serverlessEndpoint",
    args: {
      module: "serverlessEndpoint/args",
      schema: "ServerlessEndpointArgsSchema",
      input: "ServerlessEndpointArgsInput",
      summary:
        "Arguments of a `ServerlessEndpoint`: every field of the REST v2 document's `CreateEndpointRequest`,\n" +
        "by its own name, plus `rollout`, `rolloutTimeoutMs`, `smokeTest` and `maxHourlyUsd`. What the program\n" +
        "omits, the service decides (its defaults are the document's). Fields marked as replacing cannot\n" +
        "change on the service: changing them creates a new endpoint, then deletes the old one.",
    },
    secretInputs: ["env"],
  },
  EcrDelegation: {
    folder: "ecrDelegation",
    args: {
      module: "ecrDelegation/args",
      schema: "EcrDelegationArgsSchema",
      input: "EcrDelegationArgsInput",
      summary:
        "Arguments of an `EcrDelegation`: the fields of the REST v2 document's `CreateDelegationRequest`. The\n" +
        "service cannot change a delegation: a change of either replaces it.",
    },
  },
  Cluster: {
    folder: "cluster",
    args: {
      module: "cluster/args",
      schema: "ClusterArgsSchema",
      input: "ClusterArgsInput",
      summary:
        "Arguments of a `Cluster`: every field of the REST v2 document's `CreateClusterRequest` under its names,\n" +
        "plus `waitFor`, `waitTimeoutMs` and `maxHourlyUsd`. Only `name` changes in place; a change of any other\n" +
        "field of the request replaces the cluster (a new one is created, then this one deleted).",
    },
    secretInputs: ["env"],
  },
});

/** The class names of every resource. */
export type ResourceName = keyof typeof RESOURCES;

/** Every resource, in the table's order. */
export const RESOURCE_ROWS: readonly ResourceRow[] = Object.values(RESOURCES);

/** A lookup function the package root exports (with its `<name>Output` twin). */
export interface LookupRow {
  /** The exported function (a public name). */
  readonly fn: string;
  /** The module exporting it, from `src/provider/` without extension. */
  readonly module: string;
  /**
   * Its arguments' type in `module`: an interface, or a union of interfaces (one form each). The
   * page carries its table between `<!-- lookup-arguments:start <fn> ... -->` and
   * `<!-- lookup-arguments:end <fn> -->`. Absent: the lookup takes none (the page says so in words).
   */
  readonly args?: string;
  /** The page documenting it, from the repo root. */
  readonly page: string;
  /**
   * For a lookup returning a list: the property holding it in the result of the native plugin's
   * `Invoke` (a function's outputs are an object), and its description. Absent: the lookup returns
   * an object, which is the result as it is.
   */
  readonly listResult?: { readonly property: string; readonly description: string };
  /** Result fields that hold secrets: the plugin's `Invoke` and the `<fn>Output` form mark them secret. */
  readonly secretOutputs?: readonly string[];
}

/** Every lookup, beside the resource whose page documents it. */
export const LOOKUPS: readonly LookupRow[] = [
  {
    fn: "getNetworkVolume",
    module: "networkVolume/lookups",
    args: "GetNetworkVolumeArgs",
    page: RESOURCES.NetworkVolume.page,
  },
  {
    fn: "getNetworkVolumes",
    module: "networkVolume/lookups",
    args: "GetNetworkVolumesArgs",
    page: RESOURCES.NetworkVolume.page,
    listResult: { property: "volumes", description: "The matching network volumes (empty when none does)." },
  },
  {
    fn: "getServerlessEndpoint",
    module: "serverlessEndpoint/lookup",
    args: "GetServerlessEndpointArgs",
    page: RESOURCES.ServerlessEndpoint.page,
  },
  {
    fn: "getEndpointHealth",
    module: "endpointHealth",
    args: "GetEndpointHealthArgs",
    page: RESOURCES.JobRun.page,
  },
  {
    fn: "getPod",
    module: "pod/lookup",
    args: "GetPodArgs",
    page: RESOURCES.Pod.page,
    secretOutputs: ["env"],
  },
  {
    fn: "getSshKeys",
    module: "sshKey/lookup",
    page: RESOURCES.SshKey.page,
    listResult: { property: "keys", description: "The account's registered keys, in its order." },
  },
  {
    fn: "getGpuTypes",
    module: "catalog/lookups",
    args: "GetGpuTypesArgs",
    page: "docs/resources/catalog.md",
    listResult: { property: "gpuTypes", description: "The GPU types that match the arguments." },
  },
  {
    fn: "getCpuTypes",
    module: "catalog/lookups",
    args: "GetCpuTypesArgs",
    page: "docs/resources/catalog.md",
    listResult: { property: "cpuTypes", description: "The CPU flavours." },
  },
  {
    fn: "getDataCenters",
    module: "catalog/lookups",
    args: "GetDataCentersArgs",
    page: "docs/resources/catalog.md",
    listResult: { property: "dataCenters", description: "The data centres." },
  },
  { fn: "getBilling", module: "billing/lookup", args: "GetBillingArgs", page: "docs/cost.md" },
  {
    fn: "getEcrDelegations",
    module: "ecrDelegation/lookup",
    page: RESOURCES.EcrDelegation.page,
    listResult: {
      property: "delegations",
      description: "The account's ECR delegations, in the service's order.",
    },
  },
  { fn: "getCluster", module: "cluster/lookup", args: "GetClusterArgs", page: RESOURCES.Cluster.page },
];

/**
 * The argument schema of `row`, loaded on first call (and zod with it): from the built package,
 * from the sources under a TypeScript loader (tests, `scripts/gen-types.mts`).
 */
export async function loadArgsSchema(row: ResourceRow): Promise<ZodObject> {
  const loaded = (await import(/* @vite-ignore */ `./${row.args.module}.ts`)) as Record<string, unknown>;
  const schema = loaded[row.args.schema] as ZodObject | undefined;
  if (schema?.shape === undefined)
    throw new Error(`src/provider/${row.args.module} exports no zod object ${row.args.schema}`);
  return schema;
}

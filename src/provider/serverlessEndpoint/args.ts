/**
 * The arguments of a `ServerlessEndpoint` as the provider sees them (plain values; values not
 * known yet in a preview are Pulumi's unknown sentinel), their one schema, and `check`'s
 * validation built on it. No network.
 *
 * The schema is the client's own body of an endpoint create (`ServerlessEndpointCreateInputSchema`,
 * the v2 document's `CreateEndpointRequest`: every field, its bounds, and the document's
 * cross-field rules: exactly one of `gpu` or `cpu`, `image` unless `templateId`, a CUDA set or a
 * floor, `REQUEST_COUNT` on a load balancer) plus what only the provider has: `rollout` and
 * `rolloutTimeoutMs`.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { type ServerlessEndpointCreateInput, ServerlessEndpointCreateInputSchema } from "../../client";
import { containerFields, documented, withDocs, withFields } from "../common/argDocs";
import { boundedName, givenArgs, unknownArgFailures } from "../common/checkArgs";
import { containsUnknown } from "../common/unknown";
import { describeType } from "../common/wording";
import { MaxHourlyUsdSchema } from "../cost/budget";
import { outputSchemaFailure } from "../smokeTestJob/jobArgsCheck";
import { SMOKE_TEST_FIELDS, type SmokeTestInputs, SmokeTestSchema } from "./smokeTest";

/** Default of `rolloutTimeoutMs`: 10 minutes, in ms. */
export const ROLLOUT_TIMEOUT_DEFAULT_MS = 600_000;
/** Largest `rolloutTimeoutMs`: 24 hours, in ms. */
export const ROLLOUT_TIMEOUT_MAX_MS = 86_400_000;
/**
 * Smallest `rolloutTimeoutMs`: 30 s, in ms. A rollout starts new workers (an image pull, a
 * container start) and is read once a second; a shorter wait ends before a good release can roll
 * out, and a wait that ends says nothing about the release.
 */
export const ROLLOUT_TIMEOUT_MIN_MS = 30_000;
/**
 * Largest `workers.max` `check` accepts. The v2 document sets no upper bound (only `minimum: 0`);
 * a figure past any account's worker quota is a typo (`1e7`), refused before it reaches the service.
 */
export const WORKERS_MAX_LIMIT = 10_000;
const ROLLOUT_TIMEOUT_RANGE = `${ROLLOUT_TIMEOUT_MIN_MS} .. ${ROLLOUT_TIMEOUT_MAX_MS} ms (30 s .. 24 h)`;

const body = ServerlessEndpointCreateInputSchema.shape;
const gpuSchema = body.gpu.unwrap();
const cpuSchema = body.cpu.unwrap();
const cpuItem = cpuSchema.element;
const workersSchema = body.workers.unwrap();
const [queueDelayArm, requestCountArm] = body.scaling.options;

/** The create body's `scaling`, each arm's fields documented; the union's rules and messages kept. */
const scalingSchema = body.scaling.clone({
  ...body.scaling.def,
  options: [
    withDocs(queueDelayArm, {
      type: "`QUEUE_DELAY`: scale on how long requests wait in the queue (queue endpoints only).",
      queueDelay: "Seconds a request may wait in the queue before more workers start, at least 0.5.",
    }),
    withDocs(requestCountArm, {
      type: "`REQUEST_COUNT`: scale on in-flight requests per worker (required on a load balancer).",
      requestCount: "In-flight requests per worker before more workers start, at least 1.",
    }),
  ],
});

/**
 * Strict schema of the arguments: the create body (its fields, bounds and cross-field rules) plus
 * the rollout settings, the smoke test and the budget. The body's fields are overridden by copies
 * carrying their documentation (`.meta`), from which the program's argument type
 * (`ServerlessEndpointArgs`, generated) and the reference facts are written; the copies validate
 * as the body's own fields do.
 */
export const ServerlessEndpointArgsSchema = ServerlessEndpointCreateInputSchema.safeExtend({
  name: boundedName(body.name).meta({
    description: "Name shown in the console (names need not be unique). Updates in place.",
  }),
  type: body.type.meta({
    description:
      "Request routing: `QUEUE` (the job API: `/run`, `/runsync`, ...) or `LOAD_BALANCER` (HTTP paths\n" +
      "the worker defines; scaling must be `REQUEST_COUNT`).",
    replaces: true,
  }),
  scaling: scalingSchema.meta({
    description:
      'Autoscaling signal: `{ type: "QUEUE_DELAY", queueDelay }` (seconds a request waits, at least\n' +
      '0.5; queue endpoints only) or `{ type: "REQUEST_COUNT", requestCount }`. Updates in place, at once.',
  }),
  gpu: withDocs(gpuSchema, {
    pools:
      'Serverless GPU pool ids (`pool` of `getGpuTypes`), e.g. `["ADA_24"]`: workers run on whichever\n' +
      "listed pool has capacity.",
    excludedTypes:
      "GPU type ids (`id` of `getGpuTypes`) to subtract from the pools; omit to use the whole pools.",
    count: { description: "GPUs per worker.", default: "1" },
    allowedCudaVersions:
      "Acceptable CUDA versions (`major.minor`); empty or omitted means any. A non-empty set excludes\n" +
      "`minCudaVersion`.",
    minCudaVersion:
      "Lowest acceptable CUDA version (`major.minor`, compared numerically: 12.11 is above 12.2); not\n" +
      "with a non-empty `allowedCudaVersions`.",
  })
    .optional()
    .meta({
      description:
        "GPU workers: `pools` (serverless pool ids from `getGpuTypes`), optional `excludedTypes`, `count`\n" +
        "(GPUs per worker), `allowedCudaVersions` or `minCudaVersion`. Exactly one of `gpu` or `cpu`.\n" +
        "Changes update in place (placement takes effect as workers are replaced).",
      replaces: "it is switched to `cpu`",
    }),
  cpu: cpuSchema
    .clone({
      ...cpuSchema.def,
      element: withDocs(cpuItem, {
        id: "CPU flavour id (`getCpuTypes`).",
        vcpuCount: "vCPUs per worker: a power of two, at least 2, valid for the flavour.",
      }),
    })
    .optional()
    .meta({
      description:
        "CPU workers: the eligible configurations `[{ id, vcpuCount }]`. Exactly one of `gpu` or `cpu`.",
      replaces: "it is switched to `gpu`",
    }),
  templateId: body.templateId.meta({
    description:
      "A serverless template whose container settings (`image`, `args`, `disk`, `ports`, `env`,\n" +
      "`registry`) the endpoint takes; fields given here override them (`env` merges per key). A\n" +
      "template is applied once, when the endpoint is created or when `templateId` changes: later\n" +
      "edits of the template do not reach the endpoint. Changing it updates in place (a release).",
  }),
  ...containerFields(body, {
    image: "Docker image reference; required unless `templateId`. A change makes a release.",
    args: "Arguments passed to the container's entrypoint. A change makes a release.",
    disk: "Container disk in GB (ephemeral). A change makes a release.",
    env:
      "Environment variables. Always stored as ONE secret, even when given as plain strings: its\n" +
      "values never appear in another output, an error or a log line. A change makes a release;\n" +
      "removing `env` from the program sends `env: {}`.",
    ports: "Exposed ports as `port/protocol`, e.g. `8000/http`. A change makes a release.",
    registry:
      "Container registry credential id (a `ContainerRegistryAuth`'s id) for a private image. A change\n" +
      "makes a release.",
  }),
  ...documented(body, {
    dataCenterIds:
      "Preferred data centres (`getDataCenters`); omit to let the scheduler choose. Updates in place.\n" +
      "Over REST v2, `check` refuses an id the catalog does not list (compared in any letter case), naming\n" +
      "the ids it has; when the catalog cannot be read, the service decides.",
    flashboot:
      "FlashBoot mode: `OFF` (the service's default), `FLASHBOOT` or `PRIORITY_FLASHBOOT`. Updates in place.",
    networkVolumes: "Network volume ids to attach (a `NetworkVolume`'s id). Updates in place.",
    timeout: {
      description: "Per-request execution timeout in ms. Updates in place, at once.",
      default: "300000 (the service's)",
    },
  }),
  workers: withFields(workersSchema, {
    ...documented(workersSchema.shape, {
      min: { description: "Fewest workers kept running.", default: "0" },
      idleTimeout: {
        description:
          "Seconds an idle worker is kept before it scales down, 1 .. 3600; not with `REQUEST_COUNT`\n" +
          "scaling on a queue endpoint.",
        default: "10",
      },
    }),
    max: workersSchema.shape.max
      .unwrap()
      .max(WORKERS_MAX_LIMIT, {
        error: (issue) =>
          `max must be at most ${WORKERS_MAX_LIMIT} (the v2 document sets no upper bound; no account's worker quota comes near it), got ${String(issue.input)}`,
      })
      .optional()
      .meta({ description: `Most workers running at once, 0 .. ${WORKERS_MAX_LIMIT}.`, default: "3" }),
  })
    .superRefine((w, ctx) => {
      if (w.min === undefined || w.max === undefined || w.min <= w.max) return;
      ctx.addIssue({
        code: "custom",
        path: ["min"],
        message: `min must be at most max (got min ${w.min}, max ${w.max}): the fewest workers kept cannot exceed the most allowed`,
      });
    })
    .optional()
    .meta({ description: "Worker bounds: `min`, `max` and `idleTimeout`. Updates in place, at once." }),
  rollout: z
    .enum(["wait", "ignore"], { error: 'rollout must be "wait" or "ignore"' })
    .optional()
    .meta({
      description:
        '`"wait"`: create and update return once no worker runs an older version and none of the new\n' +
        "one is UNHEALTHY (read once a second, at most `rolloutTimeoutMs`); a stalled or timed-out\n" +
        "rollout fails the step naming the release, the workers by status and a failing worker's log\n" +
        'tail (the endpoint keeps the change). `"ignore"`: return once the service accepted the change.',
      default: '"wait"',
    }),
  rolloutTimeoutMs: z
    .int({ error: `rolloutTimeoutMs must be an integer number of milliseconds, ${ROLLOUT_TIMEOUT_RANGE}` })
    .min(ROLLOUT_TIMEOUT_MIN_MS, {
      error: (issue) =>
        `rolloutTimeoutMs must be at least ${ROLLOUT_TIMEOUT_MIN_MS} ms (30 s), got ${String(issue.input)}: ` +
        `a rollout starts new workers, and a shorter wait ends before a good release is out (allowed: ${ROLLOUT_TIMEOUT_RANGE})`,
    })
    .max(ROLLOUT_TIMEOUT_MAX_MS, {
      error: `rolloutTimeoutMs must be at most ${ROLLOUT_TIMEOUT_MAX_MS} ms (24 h)`,
    })
    .optional()
    .meta({
      description:
        "Longest rollout wait of a create or update, in milliseconds (30000 .. 86400000: a rollout\n" +
        "starts new workers, which takes more than a few seconds). A wait that ends unfinished fails\n" +
        "the step saying so; it is not a failed release: the release is neither judged nor rolled back,\n" +
        "and the next `pulumi up` tests it.",
      default: "600000 (10 minutes)",
    }),
  smokeTest: SmokeTestSchema.optional().meta({
    description:
      "Guards each release: after the create, and after each update that makes a release (a change\n" +
      "of the container, compute or placement) has rolled out, runs `runs` smoke-test jobs on it as a\n" +
      "`JobRun` would and fails the step when more than `maxFailures` fail; an update then rolls back\n" +
      "(`onFailure`). The result is in `lastSmokeTest`. A load-balancer endpoint is probed over `http`\n" +
      "instead of `input`; with `http.headers` it is a secret. See docs/guarded-release.md.",
  }),
  maxHourlyUsd: MaxHourlyUsdSchema.meta({
    description:
      "Budget of this endpoint, in US dollars an hour: a change whose `hourlyCost.ceilingUsd`\n" +
      "(`workers.max` workers at the dearest list price it may land on) is over it fails the preview\n" +
      "(`check`), before anything is created or changed. Needs `workers.max`. The stack's\n" +
      "`runpod:maxHourlyUsd` bounds the sum of every endpoint's ceiling. List prices: negotiated\n" +
      "discounts are not counted.",
  }),
});

/** The arguments as a program gives them; the generated `ServerlessEndpointArgs` derives from it. */
export type ServerlessEndpointArgsInput = z.input<typeof ServerlessEndpointArgsSchema>;

/** The endpoint's create body, as the arguments give it. */
export type EndpointBody = ServerlessEndpointCreateInput;

/** Inputs as the provider sees them after `check`. */
export type ServerlessEndpointInputs = EndpointBody & {
  rollout?: "wait" | "ignore";
  rolloutTimeoutMs?: number;
  smokeTest?: SmokeTestInputs;
  maxHourlyUsd?: number;
};

/** Every argument name, in the schema's order. */
export const ARG_NAMES = Object.keys(
  ServerlessEndpointArgsSchema.shape,
) as (keyof ServerlessEndpointInputs)[];

/** The arguments that are the endpoint's own (the create body), not the provider's. */
export const BODY_NAMES = Object.keys(ServerlessEndpointCreateInputSchema.shape) as (keyof EndpointBody)[];

/** Arguments whose value is an object or array: a failure names them in the reason, not as `property`. */
const NESTED = new Set([
  "env",
  "gpu",
  "cpu",
  "workers",
  "scaling",
  "ports",
  "dataCenterIds",
  "networkVolumes",
  "smokeTest",
]);

/** What `check` says of a `smokeTest` without `http` on a load-balancer endpoint. */
export const SMOKE_TEST_NEEDS_HTTP =
  'smokeTest on a type "LOAD_BALANCER" endpoint needs smokeTest.http (method, path, body, headers, ' +
  "expectStatus): a load balancer serves its workers' own HTTP paths, not queue jobs (/run), so its smoke " +
  'test is an HTTP probe, e.g. http: { path: "/v1/models" }';

/** What `check` says of `smokeTest.http` on a queue endpoint. */
export const SMOKE_TEST_HTTP_NEEDS_LB =
  'smokeTest.http probes type "LOAD_BALANCER" endpoints, and this endpoint is type "QUEUE": give ' +
  "smokeTest.input (the queue job to run) instead of smokeTest.http";

/** What `check` says on a REST v1 `restUrl`. */
export const ENDPOINT_NEEDS_V2 =
  "ServerlessEndpoint needs the REST v2 interface (serverless endpoints do not exist on REST v1), but " +
  "runpod:restUrl (or RUNPOD_REST_API_URL) is a REST v1 URL. Set it to the REST v2 base " +
  "(https://rest.runpod.io/v2, or the emulator's restUrl) or unset it: the default is REST v2.";

/**
 * `check`'s validation: every failure found, one per argument, naming the field and what is
 * allowed. `null` counts as not given. Values unknown in a preview are not judged; an unknown
 * argument name fails whatever its value. `inputs` are the given arguments, as given.
 */
export function checkEndpointArgs(
  news: Record<string, unknown>,
  restDialect?: "v1" | "v2",
): pulumi.dynamic.CheckResult {
  const { args, inputs } = givenArgs(news, ARG_NAMES);
  const failures: pulumi.dynamic.CheckFailure[] = [];
  if (restDialect === "v1") failures.push({ property: "", reason: ENDPOINT_NEEDS_V2 });
  const smokeSchema = smokeTestSchemaFailure(args.smokeTest);
  if (smokeSchema !== undefined) failures.push(smokeSchema);
  const smoke = args.smokeTest as { http?: unknown; input?: unknown } | undefined;
  if (smoke !== undefined && smoke !== null && typeof smoke === "object" && !containsUnknown(args.type)) {
    if (args.type === "LOAD_BALANCER" && smoke.http === undefined) {
      failures.push({ property: "", reason: SMOKE_TEST_NEEDS_HTTP });
    }
    if (args.type === "QUEUE" && smoke.http !== undefined) {
      failures.push({ property: "", reason: SMOKE_TEST_HTTP_NEEDS_LB });
    }
  }
  const result = ServerlessEndpointArgsSchema.safeParse(args);
  if (result.success) return { inputs, failures };
  const seen = new Set<string>();
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys" && issue.path[0] === "smokeTest") {
      if (containsUnknown(args.smokeTest)) continue;
      const where = issue.path.map(String).join(".");
      for (const key of issue.keys) {
        const allowed = issue.path.length === 1 ? ` (allowed: ${SMOKE_TEST_FIELDS.join(", ")})` : "";
        failures.push({ property: "", reason: `${where}.${key} is not a smokeTest argument${allowed}` });
      }
      continue;
    }
    const unknownNames = unknownArgFailures(issue, ARG_NAMES);
    if (unknownNames) {
      failures.push(...unknownNames);
      continue;
    }
    if (issue.code === "unrecognized_keys") {
      // Inside a nested argument (`workers`, `gpu`, `scaling`): its dotted path, as Template says it.
      if (containsUnknown(args[String(issue.path[0])])) continue;
      const where = issue.path
        .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
        .join("")
        .slice(1);
      failures.push({ property: "", reason: `${where}: unknown key ${issue.keys.join(", ")}` });
      continue;
    }
    const top = String(issue.path[0] ?? "");
    // A value (or a part of it) not known yet: its rules are judged once it is known.
    if (containsUnknown(args[top])) continue;
    if (issue.code === "custom" && BODY_NAMES.some((k) => containsUnknown(args[k]))) continue;
    const dotted = issue.path
      .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
      .join("")
      .slice(1);
    const key = dotted || top;
    if (seen.has(key)) continue;
    seen.add(key);
    const reason = reasonFor(issue, top, dotted, args[top]);
    failures.push(
      NESTED.has(top) || issue.path.length > 1 ? { property: "", reason } : { property: top, reason },
    );
  }
  return { inputs, failures };
}

/** An invalid `smokeTest.expect.outputSchema` (JSON Schema 2020-12), judged as JobRun judges it. */
function smokeTestSchemaFailure(smokeTest: unknown): pulumi.dynamic.CheckFailure | undefined {
  if (smokeTest === null || typeof smokeTest !== "object") return undefined;
  const failure = outputSchemaFailure((smokeTest as { expect?: unknown }).expect);
  return failure === undefined ? undefined : { property: "", reason: `smokeTest.${failure.reason}` };
}

/** The failure's wording: the dotted field, the schema's message, and what was given for a wrong type. */
function reasonFor(issue: z.core.$ZodIssue, top: string, dotted: string, value: unknown): string {
  const field = dotted || top;
  // An object argument given as something else: say an object is expected, and which one.
  const shape = OBJECT_SHAPES[top];
  if (
    shape !== undefined &&
    issue.path.length === 1 &&
    value !== undefined &&
    (value === null || typeof value !== "object" || Array.isArray(value))
  ) {
    return `${top} must be an object, ${shape}, got ${describeType(value)}`;
  }
  const message = issue.message.startsWith("Invalid input") ? `${field} has the wrong type` : issue.message;
  // The schema's messages name the innermost field; say where it sits.
  const where = dotted.includes(".") || dotted.includes("[") ? `${dotted}: ` : "";
  if (issue.code === "invalid_type" && issue.path.length === 1) {
    if (value === undefined) return `${top} is required (${requiredWhat(top)})`;
    // Never the value itself: env values are secrets, and the engine prints nested values whole.
    return `${message}, got ${describeType(value)}`;
  }
  return `${where}${message}`;
}

/** The object arguments whose wrong-typed value gets "must be an object", with the shape they take. */
const OBJECT_SHAPES: Record<string, string> = {
  scaling: '{ type: "QUEUE_DELAY", queueDelay } or { type: "REQUEST_COUNT", requestCount }',
  smokeTest: "JobRun's job arguments (input or http, expect, ...) plus runs, maxFailures and onFailure",
  workers: "{ min, max, idleTimeout }",
};

/** What a required argument takes, for "X is required". */
function requiredWhat(field: string): string {
  switch (field) {
    case "name":
      return "a non-empty string";
    case "type":
      return "QUEUE or LOAD_BALANCER";
    case "scaling":
      return '{ type: "QUEUE_DELAY", queueDelay } or { type: "REQUEST_COUNT", requestCount }';
    default:
      return "see the RunPod REST v2 document";
  }
}

/** The stored or checked arguments with `__provider` and absent values left out. */
export function plainInputs(raw: Record<string, unknown>): ServerlessEndpointInputs {
  const inputs: Record<string, unknown> = {};
  for (const key of ARG_NAMES) {
    const value = raw[key];
    if (value !== undefined && value !== null) inputs[key] = value;
  }
  return inputs as ServerlessEndpointInputs;
}

/** The create body of the inputs: the endpoint's own fields, without the rollout settings. */
export function bodyOf(inputs: ServerlessEndpointInputs): EndpointBody {
  const {
    rollout: _rollout,
    rolloutTimeoutMs: _timeout,
    smokeTest: _smokeTest,
    maxHourlyUsd: _budget,
    ...body
  } = inputs;
  return body;
}

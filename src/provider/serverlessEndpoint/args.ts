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
import { givenArgs, unknownArgFailures } from "../common/checkArgs";
import { containsUnknown } from "../common/unknown";
import { describeType } from "../common/wording";
import { outputSchemaFailure } from "../release/jobArgs";
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
const ROLLOUT_TIMEOUT_RANGE = `${ROLLOUT_TIMEOUT_MIN_MS} .. ${ROLLOUT_TIMEOUT_MAX_MS} ms (30 s .. 24 h)`;

/** Strict schema of the arguments: the create body plus the rollout settings. */
export const ServerlessEndpointArgsSchema = ServerlessEndpointCreateInputSchema.safeExtend({
  rollout: z.enum(["wait", "ignore"], { error: 'rollout must be "wait" or "ignore"' }).optional(),
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
    .optional(),
  smokeTest: SmokeTestSchema.optional(),
  maxHourlyUsd: z
    .number({ error: "maxHourlyUsd must be a number of US dollars an hour, at least 0" })
    .min(0, { error: "maxHourlyUsd must be a number of US dollars an hour, at least 0" })
    .optional(),
});

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

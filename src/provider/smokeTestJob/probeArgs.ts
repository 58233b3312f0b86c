/**
 * The HTTP probe of a `type: "LOAD_BALANCER"` endpoint as a JobRun argument (`http`, also taken by
 * `ServerlessEndpoint.smokeTest`): its schema, and the rules between it and the queue-job
 * arguments that mean nothing to a probe. The rest of the JobRun arguments are in `jobArgs.ts`.
 */
import { z } from "zod";
import { checkLoadBalancerHeaders, checkLoadBalancerPath, LOAD_BALANCER_METHODS, MB } from "../../client";

/** Largest `http.body` of a probe, as JSON: 1 MB (1,000,000 bytes); a smoke test sends a small request. */
export const PROBE_BODY_LIMIT_BYTES = 1 * MB;

/** The JSON size of a probe body, or undefined when it is not JSON (the schema says so elsewhere). */
function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : Buffer.byteLength(text, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * A refinement from one of the client's own checks (which throw `ValidationError`), so `check`
 * and the client refuse the same values with the same words. The error's path below the checked
 * field (`["headers", "Authorization"]`) becomes the issue's path.
 */
function clientRule(rule: (value: unknown) => unknown) {
  return (value: unknown, ctx: z.core.$RefinementCtx) => {
    try {
      rule(value);
    } catch (error) {
      const below = ((error as { path?: PropertyKey[] }).path ?? []).slice(1);
      const message = (error as Error).message.replace(/^headers: /, "");
      ctx.addIssue({ code: "custom", path: below, message });
    }
  };
}

/**
 * An HTTP probe of a `type: "LOAD_BALANCER"` endpoint (`http`): one request to the endpoint's own
 * path at its `requestUrls.base`, judged by status and then by `expect` on the answer.
 */
export const HttpProbeSchema = z.strictObject(
  {
    method: z
      .enum(LOAD_BALANCER_METHODS, { error: `method must be one of ${LOAD_BALANCER_METHODS.join(", ")}` })
      .optional()
      .meta({
        description: "HTTP method: GET, POST, PUT, PATCH or DELETE.",
        default: '"POST" when `body` is given, else "GET"',
      }),
    path: z
      .string({ error: 'path is required: the path on the endpoint, starting with "/"' })
      .superRefine(clientRule(checkLoadBalancerPath))
      .meta({
        description:
          'Path on the endpoint, starting with "/" (a query string may follow `?`), e.g. `/v1/chat/completions`.',
      }),
    body: z
      .unknown()
      .refine((value) => value === undefined || (jsonBytes(value) ?? 0) <= PROBE_BODY_LIMIT_BYTES, {
        error: (issue) =>
          `body must be at most ${PROBE_BODY_LIMIT_BYTES} bytes (1 MB) as JSON, got ${String(jsonBytes(issue.input))}`,
      })
      .optional()
      .meta({
        description: "A JSON value sent as the request body (`application/json`), at most 1 MB as JSON.",
      }),
    headers: z
      .record(z.string(), z.string({ error: "header values must be strings" }), {
        error: "headers must be an object of header names to string values",
      })
      .superRefine(clientRule(checkLoadBalancerHeaders))
      .optional()
      .meta({
        description:
          "More request headers (a map of names to strings). Stored as a secret with the rest of\n" +
          "`http`, and every value is kept out of the outputs, messages and logs. `Authorization` may\n" +
          "not be set: the provider sends `Bearer <runpod:apiKey>`, as the load balancer requires.",
      }),
    expectStatus: z
      .int({ error: "expectStatus must be an integer HTTP status" })
      .min(100, { error: "expectStatus must be at least 100" })
      .max(599, { error: "expectStatus must be at most 599" })
      .default(200)
      .meta({ description: "The HTTP status the answer must have (100 .. 599).", default: "200" }),
  },
  { error: "http must be an object with path and optional method, body, headers and expectStatus" },
);

/** The arguments that mean nothing to an HTTP probe, with why (a check failure names them). */
const NOT_FOR_PROBES: readonly [string, (a: Record<string, unknown>) => boolean, string][] = [
  ["input", (a) => a.input !== undefined, ""],
  ["webhook", (a) => a.webhook !== undefined, "a load balancer calls no webhook"],
  ["policy", (a) => a.policy !== undefined, "the execution policy is a queue job's"],
  ["s3Config", (a) => a.s3Config !== undefined, "storage settings are passed to queue jobs only"],
  ["mode", (a) => a.mode === "runsync", 'mode "runsync" is a way to submit a queue job'],
  ["collectStream", (a) => a.collectStream === true, "a probe has no job stream"],
  [
    "retries",
    (a) => typeof a.retries === "number" && a.retries > 0,
    "it re-queues a FAILED job with the service's /retry, and a probe is sent once (once more only when another release answered)",
  ],
];

/**
 * The rules between an `http` probe and the other JobRun arguments: the queue-job arguments, and
 * `expect.status` / `expect.maxDelayMs`, do not apply to a probe.
 */
export function probeCrossChecks(
  args: { expect?: { status?: string; maxDelayMs?: number } },
  ctx: z.core.$RefinementCtx,
): void {
  for (const [name, given, why] of NOT_FOR_PROBES) {
    if (!given(args as Record<string, unknown>)) continue;
    ctx.addIssue({
      code: "custom",
      path: [name],
      message:
        name === "input"
          ? "input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one"
          : `${name} does not apply to an http probe: ${why}; leave it out`,
    });
  }
  if (args.expect?.status !== undefined && args.expect.status !== "COMPLETED") {
    ctx.addIssue({
      code: "custom",
      path: ["expect", "status"],
      message: `status (${args.expect.status}) does not apply to an http probe: set http.expectStatus, the HTTP status the answer must have`,
    });
  }
  if (args.expect?.maxDelayMs !== undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["expect", "maxDelayMs"],
      message:
        "maxDelayMs does not apply to an http probe (a load balancer reports no queue time): " +
        "expect.maxExecutionMs bounds the request's latency",
    });
  }
}

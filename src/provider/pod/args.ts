/**
 * The arguments of a `Pod` as the provider sees them (plain values; values not known yet in a
 * preview are Pulumi's unknown sentinel), and `check`'s field-level validation. No network.
 *
 * Two schemas make the arguments: the client's own create body (`PodCreateInputSchema`, the v2
 * document's `CreatePodRequest`: every field, its bounds and cross-field rules), and what only the
 * provider adds (`fallbackGpuIds`, `desiredStatus`, `waitFor`, `waitTimeoutMs`, `maxHourlyUsd`). The create body is
 * strict, so a name that is neither fails as unknown.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { POD_PORT, PodCreateInputSchema, resolveRestUrl, secretEnvValues } from "../../client";
import { redact } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import { describeType } from "../common/wording";
import type { RunpodSettings } from "../config";

/** What a pod waits for before create, update and start return. */
export type PodWaitFor = "none" | "running" | "ssh" | { port: number; path?: string; expectStatus?: number };

/** Default wait bound: 10 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

const portNumber = z
  .int({ error: "waitFor.port must be an integer" })
  .min(1, { error: "waitFor.port must be 1..65535" })
  .max(65535, { error: "waitFor.port must be 1..65535" });

/** The arguments only the provider has (never sent to the service). */
export const PodExtraArgsSchema = z.strictObject({
  fallbackGpuIds: z
    .array(z.string().min(1, { error: "fallbackGpuIds entries must be non-empty GPU type ids" }), {
      error: "fallbackGpuIds must be an array of GPU type ids",
    })
    .optional(),
  desiredStatus: z
    .enum(["RUNNING", "EXITED"], { error: 'desiredStatus must be "RUNNING" or "EXITED"' })
    .optional(),
  waitFor: z
    .union(
      [
        z.enum(["none", "running", "ssh"]),
        z.strictObject({
          port: portNumber,
          path: z.string().startsWith("/", { error: 'waitFor.path must start with "/"' }).optional(),
          expectStatus: z
            .int({ error: "waitFor.expectStatus must be an integer" })
            .min(100, { error: "waitFor.expectStatus must be an HTTP status, 100..599" })
            .max(599, { error: "waitFor.expectStatus must be an HTTP status, 100..599" })
            .optional(),
        }),
      ],
      { error: 'waitFor must be "none", "running", "ssh" or { port, path?, expectStatus? }' },
    )
    .optional(),
  /** `UpdatePodRequest`'s `locked`: not in the create body, so set by a PATCH right after create. */
  locked: z.boolean({ error: "locked must be true or false" }).optional(),
  waitTimeoutMs: z
    .int({ error: "waitTimeoutMs must be an integer (milliseconds)" })
    .min(1000, { error: "waitTimeoutMs must be at least 1000 ms" })
    .optional(),
  maxHourlyUsd: z
    .number({ error: "maxHourlyUsd must be a number of US dollars an hour, at least 0" })
    .min(0, { error: "maxHourlyUsd must be a number of US dollars an hour, at least 0" })
    .optional(),
});

/** Arguments outside the create body: the provider's own and `locked`. */
const OUTSIDE_BODY = Object.keys(PodExtraArgsSchema.shape);
/** The provider-only argument names (never sent to the service). */
export const EXTRA_NAMES = OUTSIDE_BODY.filter((k) => k !== "locked") as (
  | "fallbackGpuIds"
  | "desiredStatus"
  | "waitFor"
  | "waitTimeoutMs"
  | "maxHourlyUsd"
)[];
/** The create body's argument names (the v2 document's `CreatePodRequest`). */
export const BODY_NAMES = Object.keys(PodCreateInputSchema.shape);
/** Every argument name: `name` first, then the body's, then the provider's own. */
export const ARG_NAMES = ["name", ...BODY_NAMES.filter((k) => k !== "name"), ...OUTSIDE_BODY];

/** Fields whose cross-field rules depend on each other: an unknown one leaves the rules unjudged. */
const CROSS_FIELDS = ["gpu", "cpu", "mounts", "image", "templateId", "ports", "waitFor", "startSsh"];

/** The message of a v1 `restUrl`: pods are managed only through the REST v2 interface. */
function v1RestUrlReason(settings: RunpodSettings | undefined): string | undefined {
  const raw = settings?.restUrl;
  if (raw === undefined) return undefined;
  try {
    if (resolveRestUrl(raw).dialect === "v2") return undefined;
  } catch {
    return undefined; // a malformed URL fails when the client is built, naming where it was set
  }
  const where = settings?.sources?.restUrl === "env" ? "RUNPOD_REST_API_URL" : "runpod:restUrl";
  return `Pod needs the REST v2 interface, but ${where} is ${raw} (REST v1). Set ${where} to a URL ending in /v2.`;
}

/**
 * `check`'s validation: every failure found, naming the field and what is allowed. `null` counts
 * as not given. Values unknown in a preview are not judged. No reason carries a value of `env`.
 */
export function checkPodArgs(
  settings: RunpodSettings | undefined,
  news: Record<string, unknown>,
): pulumi.dynamic.CheckResult {
  const { __provider: _provider, ...given } = news;
  const args: Record<string, unknown> = Object.fromEntries(
    Object.entries(given).filter(([, value]) => value !== undefined && value !== null),
  );
  const inputs = Object.fromEntries(Object.entries(args));
  const body = Object.fromEntries(Object.entries(args).filter(([k]) => !OUTSIDE_BODY.includes(k)));
  const extra = Object.fromEntries(Object.entries(args).filter(([k]) => OUTSIDE_BODY.includes(k)));
  const crossUnknown = CROSS_FIELDS.some((k) => containsUnknown(args[k]));
  const failures: { field: string; reason: string }[] = [];
  const seen = new Set<string>();
  const issues = [
    ...(PodCreateInputSchema.safeParse(body).error?.issues ?? []),
    ...(PodExtraArgsSchema.safeParse(extra).error?.issues ?? []),
  ];
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys" && issue.path.length === 0) {
      for (const key of issue.keys) {
        failures.push({ field: "", reason: `unknown property ${key}; allowed: ${ARG_NAMES.join(", ")}` });
      }
      continue;
    }
    const field = String(issue.path[0]);
    if (containsUnknown(args[field]) || (issue.code === "custom" && crossUnknown)) continue;
    const where = issue.path.map(String).join(".");
    if (seen.has(where)) continue;
    seen.add(where);
    failures.push({ field: where, reason: reasonFor(issue, field, where, args[field]) });
  }
  if (!crossUnknown) failures.push(...waitForFailures(args));
  const v1 = v1RestUrlReason(settings);
  if (v1) failures.unshift({ field: "", reason: v1 });
  const envValues = secretEnvValues(args.env);
  return {
    inputs,
    failures: failures.map((f) => ({ property: f.field, reason: redact(f.reason, envValues) })),
  };
}

/** `waitFor` against the rest: a port it waits on must be an exposed `/http` port; ssh needs `startSsh`. */
function waitForFailures(args: Record<string, unknown>): { field: string; reason: string }[] {
  const waitFor = args.waitFor;
  const ports = Array.isArray(args.ports)
    ? (args.ports as unknown[]).filter((p) => typeof p === "string")
    : [];
  if (waitFor === "ssh" && args.startSsh !== true) {
    return [
      {
        field: "waitFor",
        reason:
          'waitFor: "ssh" needs startSsh: true (the service gives the pod an SSH endpoint only then); ' +
          'set startSsh: true or wait for "running"',
      },
    ];
  }
  if (
    waitFor !== null &&
    typeof waitFor === "object" &&
    typeof (waitFor as { port?: unknown }).port === "number"
  ) {
    const port = (waitFor as { port: number }).port;
    if (!ports.includes(`${port}/http`)) {
      const http = ports.filter((p) => POD_PORT.exec(p as string)?.[2] === "http");
      return [
        {
          field: "waitFor.port",
          reason:
            `waitFor.port ${port} is not an HTTP port of the pod: add "${port}/http" to ports` +
            (http.length > 0 ? ` or wait on one of ${http.join(", ")}` : ""),
        },
      ];
    }
  }
  return [];
}

/** The failure's wording: the field (dotted path inside a nested value) and what is allowed. */
function reasonFor(issue: z.core.$ZodIssue, field: string, where: string, value: unknown): string {
  if (issue.code === "unrecognized_keys") return `${where}: unknown key ${issue.keys.join(", ")}`;
  const message = issue.message.startsWith(where) ? issue.message : `${where}: ${issue.message}`;
  if (issue.code !== "invalid_type") return message;
  if (value === undefined && field === "name") return "name is required: a non-empty string";
  return issue.path.length === 1 ? `${message}, got ${describeType(value)}` : message;
}

/** Inputs after check, typed loosely: every argument as given. */
export interface PodInputs {
  name: string;
  gpu?: { id: string; count?: number; allowedCudaVersions?: string[]; minCudaVersion?: string };
  cpu?: { id: string; vcpuCount: number };
  env?: Record<string, string>;
  ports?: string[];
  mounts?: { persistent?: { size: number; path: string }; network?: { volumeId: string; path: string }[] };
  cloud?: string;
  dataCenterIds?: string[];
  startSsh?: boolean;
  startJupyter?: boolean;
  locked?: boolean;
  fallbackGpuIds?: string[];
  desiredStatus?: "RUNNING" | "EXITED";
  waitFor?: PodWaitFor;
  waitTimeoutMs?: number;
  maxHourlyUsd?: number;
  [key: string]: unknown;
}

/** The stored or checked arguments: the fields given (not null), as given. */
export function plainInputs(raw: Record<string, unknown>): PodInputs {
  const inputs: Record<string, unknown> = {};
  for (const key of ARG_NAMES) if (raw[key] !== undefined && raw[key] !== null) inputs[key] = raw[key];
  return inputs as PodInputs;
}

/** The create body of `inputs`: the document's fields only. */
export function createBodyOf(inputs: PodInputs): Record<string, unknown> {
  return Object.fromEntries(Object.entries(inputs).filter(([k]) => BODY_NAMES.includes(k)));
}

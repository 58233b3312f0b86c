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
import { POD_PORT, PodCreateInputSchema, secretEnvValues } from "../../client";
import { documented } from "../common/argDocs";
import { absolutePath, boundedName, checkedEnvNames, describeNestedArgIssue } from "../common/checkArgs";
import { v1RestUrlReason } from "../common/needsV2";
import { redact } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { MaxHourlyUsdSchema } from "../cost/budget";

/** What a pod waits for before create, update and start return. */
export type PodWaitFor = "none" | "running" | "ssh" | { port: number; path?: string; expectStatus?: number };

/** Default wait bound: 10 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000;

/** Longest wait bound `waitTimeoutMs` accepts: 24 hours, in ms. */
export const MAX_WAIT_TIMEOUT_MS = 86_400_000;

/**
 * Most GPUs `gpu.count` accepts without the catalog: twice the largest machine the service's
 * document describes (8 GPUs). Where the catalog can be read, `check` bounds it further by the
 * GPU type's `maxCount` for the pod's cloud (`../catalog/gpuCountCheck.ts`).
 */
export const MAX_GPUS_PER_POD = 16;

/**
 * `waitFor.path`: a path on the pod's own host, as the wait appends it to the pod's address. One
 * leading `/` (`//host/x` reads as another host, a protocol-relative URL), no backslash (some
 * parsers read `\` as `/`), no whitespace or control character, no `.` or `..` segment (a
 * normalised path); a query string is allowed.
 */
const waitPath = z
  .string({ error: "waitFor.path must be a string" })
  .refine((path) => path.startsWith("/") && !path.startsWith("//"), {
    error:
      'waitFor.path must be a path on the pod starting with one "/", e.g. "/health" ("//" starts another host)',
  })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  .refine((path) => !/[\\\s\u0000-\u001f\u007f-\u009f]/.test(path), {
    error: "waitFor.path must not contain a backslash, whitespace or control characters",
  })
  .refine((path) => !/(^|\/)\.{1,2}(\/|$)/.test(path.split(/[?#]/)[0] as string), {
    error: 'waitFor.path must be a normalised path, with no "." or ".." segment',
  });

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
          path: waitPath.optional(),
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
    .max(MAX_WAIT_TIMEOUT_MS, { error: "waitTimeoutMs must be at most 86400000 ms (24 hours)" })
    .optional(),
  maxHourlyUsd: MaxHourlyUsdSchema,
});

const body = PodCreateInputSchema.shape;
const gpuShape = body.gpu.unwrap().shape;
const cpuShape = body.cpu.unwrap().shape;
const mountsShape = body.mounts.unwrap().shape;
const persistentShape = mountsShape.persistent.unwrap().shape;
const networkShape = mountsShape.network.unwrap().element.shape;
const extra = PodExtraArgsSchema.shape;
const waitForObject = extra.waitFor.unwrap().options[1].shape;
/** The create body's fields and the provider's own, each as its schema above has it. */
const fields = { ...body, ...extra };

/**
 * Every argument with its documentation: the create body's fields and the provider's own, as one
 * object. The program's argument type (`PodArgs`) and the reference facts come from it; `check`
 * validates with the two schemas above, which add the body's cross-field rules.
 */
export const PodArgsSchema = z.strictObject({
  ...documented(fields, {
    name: "Name of the pod. Changes in place.",
    image:
      "Docker image reference (required unless `templateId`). Changes in place (restarts the container).",
    args: "Arguments passed to the container entrypoint. Changes in place.",
    disk: "Container disk in GB. Changes in place.",
    env:
      "Environment variables. Stored as ONE secret (with what the service adds: `PUBLIC_KEY`, a\n" +
      "generated `JUPYTER_PASSWORD`); no value appears in any other output, error or log. Changes in\n" +
      "place, always sent whole.",
    ports: "Exposed ports as `<port>/http` or `<port>/tcp`. Changes in place.",
    registry:
      "Container registry credential id (a `ContainerRegistryAuth`'s id) for a private image. Changes in place.",
  }),
  gpu: z
    .strictObject(
      documented(gpuShape, {
        id: "GPU type id (`getGpuTypes`), e.g. `NVIDIA GeForce RTX 4090`, tried first.",
        count: {
          description:
            "GPUs on the pod's one machine: each GPU type it may land on (`gpu.id`, `fallbackGpuIds`)\n" +
            "must hold that many (its `maxCount` in the catalog for the pod's cloud); at most 16 when the\n" +
            "catalog cannot be read.",
          default: "1",
        },
        allowedCudaVersions: "Acceptable CUDA versions (`major.minor`); not with `minCudaVersion`.",
        minCudaVersion: "Lowest acceptable CUDA version (`major.minor`); not with `allowedCudaVersions`.",
      }),
    )
    .optional()
    .meta({
      description: "A GPU pod (`CreateGpuConfig`): exactly one of `gpu` or `cpu`.",
      replaces: "its type (unless to the type the pod landed on), its count or its CUDA constraint changes",
    }),
  cpu: z
    .strictObject(
      documented(cpuShape, {
        id: "CPU flavour id (`getCpuTypes`).",
        vcpuCount: "vCPUs: a power of two, at least 2.",
      }),
    )
    .optional()
    .meta({ description: "A CPU pod (`CreateCpuConfig`): exactly one of `gpu` or `cpu`.", replaces: true }),
  ...documented(fields, {
    cloud: { description: "`SECURE` or `COMMUNITY`.", default: '"SECURE"', replaces: true },
    dataCenterIds: {
      description:
        "Preferred data centers (empty: the scheduler chooses). Over REST v2, `check` refuses an id the\n" +
        "catalog does not list (compared in any letter case), naming the ids it has; when the catalog\n" +
        "cannot be read, the service decides.",
      replaces: "the pod is no longer in one of them",
    },
  }),
  mounts: z
    .strictObject({
      persistent: z
        .strictObject(
          documented(persistentShape, {
            size: "Size in GB, at least 10. Changes in place.",
            path: "Mount path inside the container. Changes in place.",
          }),
        )
        .optional()
        .meta({ description: "Host-local persistent disk (GPU pods only)." }),
      network: z
        .array(
          z.strictObject(
            documented(networkShape, {
              volumeId: "The `NetworkVolume`'s id.",
              path: "Mount path inside the container, e.g. `/workspace`.",
            }),
          ),
        )
        .optional()
        .meta({ description: "One network volume at `path`; the pod lands in its data center." }),
    })
    .optional()
    .meta({
      description: "Storage: a persistent disk (GPU pods only) or one network volume, never both.",
      replaces: "the kind of storage or the network volume changes",
    }),
  ...documented(fields, {
    globalNetworking: { description: "Global networking. Changes in place.", default: "false" },
    locked: "Refuse stop and terminate while true (set it false before deleting). Changes in place.",
    startSsh: {
      description: "Inject the account's SSH keys as `PUBLIC_KEY`. Create-only.",
      default: "false",
      replaces: true,
    },
    startJupyter: {
      description: "Start JupyterLab with a generated `JUPYTER_PASSWORD` (secret). Create-only.",
      default: "false",
      replaces: true,
    },
    templateId: { description: "A pod template's id whose settings the body overrides.", replaces: true },
    fallbackGpuIds:
      "GPU type ids tried in order after `gpu.id` when the service has no capacity for it (or no\n" +
      "access). GPU pods only. A change reads the pod and changes nothing on it.",
    desiredStatus: {
      description: "`RUNNING` or `EXITED` (stopped, disk kept). A change is a stop or start, not a replace.",
      default: '"RUNNING"',
    },
  }),
  waitFor: z
    .union([
      z.enum(["none", "running", "ssh"]),
      z.strictObject(
        documented(waitForObject, {
          port: "A port exposed as `<port>/http` in `ports`.",
          path: {
            description:
              "Path requested on the pod's own address: one leading `/`, normalised (no `.` or `..`\n" +
              "segment, no backslash or whitespace); a query string is allowed.",
            default: '"/"',
          },
          expectStatus: { description: "Status that counts as ready.", default: "200" },
        }),
      ),
    ])
    .optional()
    .meta({
      description:
        'What create, update and start wait for before returning: `"none"`, `"running"`, `"ssh"` or an\n' +
        "HTTP port answering.",
      default: '"running"',
    }),
  ...documented(fields, {
    waitTimeoutMs: {
      description:
        "Bound of that wait, in ms (1000 to 86400000, 24 hours); past it the step fails and the pod\n" +
        "stays in the stack.",
      default: "600000",
    },
    maxHourlyUsd:
      "Budget of this pod, in US dollars an hour: a change whose `hourlyCost.ceilingUsd` (the\n" +
      "dearest of `gpu.id` and `fallbackGpuIds` at the pod price of its `cloud`, × GPUs) is over it\n" +
      "fails `check`, before anything is created or changed. The stack config `runpod:maxHourlyUsd`\n" +
      "bounds the sum of every resource's ceiling. List prices: negotiated discounts are not in them.",
  }),
} satisfies Record<keyof typeof body | keyof typeof extra, z.ZodType>);

/** The arguments as a program gives them; the generated `PodArgs` derives from it. */
export type PodArgsInput = z.input<typeof PodArgsSchema>;

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

/**
 * What the pod's body schema does not bound and every resource does (shared rules): the name's
 * length and characters, env names, absolute mount paths. Checked beside the body schema.
 */
const PodBoundsSchema = z.object({
  name: boundedName(z.string()).optional(),
  gpu: z
    .object({
      count: z
        .number()
        .max(MAX_GPUS_PER_POD, {
          error:
            `gpu.count must be at most ${MAX_GPUS_PER_POD}: no RunPod machine holds more GPUs (the catalog's ` +
            "maxCount of the GPU type bounds it further when it can be read)",
        })
        .optional(),
    })
    .optional(),
  env: checkedEnvNames(z.record(z.string(), z.string()).optional()),
  mounts: z
    .object({
      persistent: z.object({ path: absolutePath(z.string(), "mounts.persistent.path") }).optional(),
      network: z.array(z.object({ path: absolutePath(z.string(), "mounts.network.path") })).optional(),
    })
    .optional(),
});

/** Fields whose cross-field rules depend on each other: an unknown one leaves the rules unjudged. */
const CROSS_FIELDS = ["gpu", "cpu", "mounts", "image", "templateId", "ports", "waitFor", "startSsh"];

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
  // The shared bounds (a wrong type, told by the body's schema first, is told once: see `seen`).
  issues.push(...(PodBoundsSchema.safeParse(body).error?.issues ?? []));
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
    failures.push({
      field: where,
      reason: describeNestedArgIssue(issue, field, where, args[field], ["name"]),
    });
  }
  if (!crossUnknown) failures.push(...waitForFailures(args), ...fallbackFailures(args));
  const v1 = v1RestUrlReason(settings, "Pod");
  if (v1) failures.unshift({ field: "", reason: v1 });
  const envValues = secretEnvValues(args.env);
  return {
    inputs,
    failures: failures.map((f) => ({ property: f.field, reason: redact(f.reason, envValues) })),
  };
}

/** `fallbackGpuIds` against the compute: GPU types mean nothing to a CPU pod. */
function fallbackFailures(args: Record<string, unknown>): { field: string; reason: string }[] {
  if (args.cpu === undefined || args.fallbackGpuIds === undefined || containsUnknown(args.fallbackGpuIds)) {
    return [];
  }
  return [
    {
      field: "fallbackGpuIds",
      reason:
        "fallbackGpuIds applies to GPU pods only (gpu), and this pod runs on cpu: remove fallbackGpuIds, " +
        "or give gpu instead of cpu",
    },
  ];
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

/**
 * The arguments of a `Cluster` (plain values; values not known yet in a preview are Pulumi's
 * unknown sentinel), their one schema, and `check`'s field-level validation built on it. No
 * network. The schema is the client's create body (`CreateClusterRequest` of the REST v2 document,
 * under its names) plus what only the provider has: `waitFor`, `waitTimeoutMs` (bounded as a
 * `Pod`'s) and `maxHourlyUsd`. Only `name` changes in place (the document's PATCH is a rename).
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { ClusterCreateInputSchema, secretEnvValues } from "../../client";
import { documented } from "../common/argDocs";
import { absolutePath, boundedName, checkedEnvNames, describeNestedArgIssue } from "../common/checkArgs";
import { v1RestUrlReason } from "../common/needsV2";
import { redact } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import { MaxHourlyUsdSchema } from "../cost/budget";
import { PodExtraArgsSchema } from "../pod/args";

/** What a cluster's create and update wait for before returning: every member pod per `waitFor`. */
export type ClusterWaitFor = "none" | "running" | "ssh";

const body = ClusterCreateInputSchema.shape;
const computeShape = body.compute.shape;
const mountsShape = body.mounts.unwrap().shape;
const persistentShape = mountsShape.persistent.unwrap().shape;
const networkShape = mountsShape.network.unwrap().element.shape;

/** The arguments only the provider has (never sent to the service). */
export const ClusterExtraArgsSchema = z.strictObject({
  waitFor: z
    .enum(["none", "running", "ssh"], { error: 'waitFor must be "none", "running" or "ssh"' })
    .optional(),
  waitTimeoutMs: PodExtraArgsSchema.shape.waitTimeoutMs,
  maxHourlyUsd: MaxHourlyUsdSchema,
});
const extra = ClusterExtraArgsSchema.shape;
const fields = { ...body, ...extra };

/** A change of this field replaces the cluster (the service changes nothing but its name). */
const REPLACES = true as const;
/** A nested field's doc: `description`, and a change replaces the cluster. */
const replacing = (description: string) => ({ description, replaces: REPLACES });

/**
 * Every argument with its documentation: the create body's fields and the provider's own, as one
 * object. The program's argument type (`ClusterArgs`) and the reference facts come from it.
 */
export const ClusterArgsSchema = z.strictObject({
  ...documented(fields, {
    name: "Name of the cluster (need not be unique). Changes in place (a rename; the members keep theirs).",
    type: {
      description:
        "`APPLICATION`, `TRAINING`, `SLURM` or `RAY`. SLURM and RAY members get a `role`\n" +
        "(`SLURM_CONTROLLER`/`SLURM_COMPUTE`, `RAY_HEAD`/`RAY_WORKER`).",
      replaces: REPLACES,
    },
  }),
  compute: z
    .strictObject(
      documented(computeShape, {
        gpuTypeId: replacing("GPU type of every pod (`getGpuTypes`), e.g. `NVIDIA H100 80GB HBM3`."),
        gpuCountPerPod: replacing(
          "GPUs on each pod, at least 1 (at most the type's `maxCount`: `check` refuses more).",
        ),
        podCount: replacing("Pods (nodes) of the cluster, 2 to 250."),
      }),
    )
    .meta({
      description:
        "`ClusterCompute`: `podCount` identical pods of `gpuCountPerPod` GPUs of `gpuTypeId`, placed\n" +
        "together in one data centre from the catalog's cluster stock. Priced as `podCount` ×\n" +
        "`gpuCountPerPod` × the GPU type's secure pod price.",
      replaces: REPLACES,
    }),
  ...documented(fields, {
    dataCenterIds: {
      description:
        "Preferred data centres (empty: the scheduler chooses). A cluster is in one data centre: a new list\n" +
        "that still holds it (in any order) changes nothing.",
      replaces: REPLACES,
    },
    image: { description: "Docker image reference of every member pod.", replaces: REPLACES },
    args: { description: "Arguments passed to the container entrypoint.", replaces: REPLACES },
    disk: { description: "Container disk of each member pod, in GB.", replaces: REPLACES },
    env: {
      description:
        "Environment variables of every member pod. Stored as ONE secret; no value appears in any\n" +
        "other output, error or log.",
      replaces: REPLACES,
    },
    ports: {
      description: "Exposed ports as `<port>/http` or `<port>/tcp` (`22/tcp` for SSH).",
      replaces: REPLACES,
    },
  }),
  mounts: z
    .strictObject({
      persistent: z
        .strictObject(
          documented(persistentShape, {
            size: replacing("Size in GB, at least 10."),
            path: replacing("Mount path inside the container."),
          }),
        )
        .optional()
        .meta(replacing("Host-local persistent disk of each member.")),
      network: z
        .array(
          z.strictObject(
            documented(networkShape, {
              volumeId: replacing("The `NetworkVolume`'s id."),
              path: replacing("Mount path inside the container, e.g. `/workspace`."),
            }),
          ),
        )
        .optional()
        .meta(
          replacing("One network volume at `path` on every member; the cluster lands in its data centre."),
        ),
    })
    .optional()
    .meta({
      description: "Storage of each member: a persistent disk or one network volume, never both.",
      replaces: REPLACES,
    }),
  ...documented(fields, {
    startJupyter: {
      description: "JupyterLab on every member pod. Create-only.",
      default: "false",
      replaces: REPLACES,
    },
    startSsh: {
      description: "The account's SSH keys as `PUBLIC_KEY` on every member pod. Create-only.",
      default: "false",
      replaces: REPLACES,
    },
    waitFor: {
      description:
        'What create and update wait for before returning, on every member pod: `"none"`, `"running"`\n' +
        '(status RUNNING) or `"ssh"` (its SSH endpoint answers a banner; needs `startSsh: true` and a key in the account). A\n' +
        "change changes nothing on the cluster.",
      default: '"running"',
    },
    waitTimeoutMs: {
      description:
        "Bound of that wait, in ms (1000 to 86400000, 24 hours); past it the step fails naming the members\n" +
        "not usable with their status, and the cluster stays in the stack.",
      default: "600000",
    },
    maxHourlyUsd:
      "Budget of this cluster, in US dollars an hour: a cluster whose `hourlyCost.ceilingUsd`\n" +
      "(`podCount` × `gpuCountPerPod` × the GPU type's secure pod price) is over it fails `check`,\n" +
      "before anything is created. The stack config `runpod:maxHourlyUsd` bounds the sum of every\n" +
      "resource's ceiling. List prices: negotiated discounts are not in them.",
  }),
} satisfies Record<keyof typeof body | keyof typeof extra, z.ZodType>);

/** The arguments as a program gives them; the generated `ClusterArgs` derives from it. */
export type ClusterArgsInput = z.input<typeof ClusterArgsSchema>;

/** Inputs after check: every argument as given. */
export interface ClusterInputs {
  name: string;
  type: string;
  compute: { gpuTypeId: string; gpuCountPerPod: number; podCount: number };
  dataCenterIds?: string[];
  image?: string;
  args?: string;
  disk?: number;
  env?: Record<string, string>;
  ports?: string[];
  mounts?: Record<string, unknown>;
  startJupyter?: boolean;
  startSsh?: boolean;
  waitFor?: ClusterWaitFor;
  waitTimeoutMs?: number;
  maxHourlyUsd?: number;
}

/** The provider's own argument names (never sent to the service). */
export const EXTRA_NAMES = Object.keys(extra) as ("waitFor" | "waitTimeoutMs" | "maxHourlyUsd")[];
/** The create body's argument names (`CreateClusterRequest`). */
export const BODY_NAMES = Object.keys(ClusterCreateInputSchema.shape);
/** Every argument name, in the schema's order. */
export const ARG_NAMES = Object.keys(ClusterArgsSchema.shape);

/** What the body schema does not bound and every resource does: the name, env names, mount paths. */
const ClusterBoundsSchema = z.object({
  name: boundedName(z.string()).optional(),
  env: checkedEnvNames(z.record(z.string(), z.string()).optional()),
  mounts: z
    .object({
      persistent: z.object({ path: absolutePath(z.string(), "mounts.persistent.path") }).optional(),
      network: z.array(z.object({ path: absolutePath(z.string(), "mounts.network.path") })).optional(),
    })
    .optional(),
});

/**
 * `check`'s validation: a v1 `restUrl` first (clusters are REST v2 only), then every failure found,
 * naming the field and what is allowed. `null` counts as not given; values unknown in a preview
 * are not judged. No reason carries a value of `env`.
 */
export function checkClusterArgs(
  settings: RunpodSettings | undefined,
  news: Record<string, unknown>,
): pulumi.dynamic.CheckResult {
  const { __provider: _provider, ...given } = news;
  const args = Object.fromEntries(
    Object.entries(given).filter(([, value]) => value !== undefined && value !== null),
  );
  const bodyArgs = Object.fromEntries(
    Object.entries(args).filter(([k]) => !EXTRA_NAMES.includes(k as never)),
  );
  const extraArgs = Object.fromEntries(
    Object.entries(args).filter(([k]) => EXTRA_NAMES.includes(k as never)),
  );
  const issues = [
    ...(ClusterCreateInputSchema.safeParse(bodyArgs).error?.issues ?? []),
    ...(ClusterExtraArgsSchema.safeParse(extraArgs).error?.issues ?? []),
    ...(ClusterBoundsSchema.safeParse(bodyArgs).error?.issues ?? []),
  ];
  const failures: { property: string; reason: string }[] = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    if (issue.code === "unrecognized_keys" && issue.path.length === 0) {
      for (const key of issue.keys)
        failures.push({ property: "", reason: `unknown property ${key}; allowed: ${ARG_NAMES.join(", ")}` });
      continue;
    }
    const field = String(issue.path[0]);
    if (containsUnknown(args[field])) continue;
    const where = issue.path.map(String).join(".");
    if (seen.has(where)) continue;
    seen.add(where);
    const required = issue.code === "invalid_type" && args[field] === undefined;
    // A nested path or a secret is no property the engine may print whole.
    failures.push({
      property: where === field && field !== "env" ? field : "",
      reason: required
        ? `${field} is required: ${REQUIRED[field] ?? "a value"}`
        : describeNestedArgIssue(issue, field, where, args[field], []),
    });
  }
  if (args.waitFor === "ssh" && args.startSsh !== true && !containsUnknown(args.startSsh)) {
    failures.push({
      property: "waitFor",
      reason:
        'waitFor: "ssh" needs startSsh: true (the service gives the members an SSH endpoint only then); ' +
        'set startSsh: true or wait for "running"',
    });
  }
  const v1 = v1RestUrlReason(settings, "Cluster", "Instant Clusters");
  if (v1) failures.unshift({ property: "", reason: v1 });
  const inputs = Object.fromEntries(ARG_NAMES.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
  const envValues = secretEnvValues(args.env);
  return { inputs, failures: failures.map((f) => ({ ...f, reason: redact(f.reason, envValues) })) };
}

/** What a missing required argument takes. */
const REQUIRED: Record<string, string> = {
  name: "a non-empty string",
  type: "APPLICATION, TRAINING, SLURM or RAY",
  compute: "{ gpuTypeId, gpuCountPerPod, podCount }",
};

/** The stored or checked arguments: the fields given (not null), as given. */
export function plainInputs(raw: Record<string, unknown>): ClusterInputs {
  const inputs: Record<string, unknown> = {};
  for (const key of ARG_NAMES) if (raw[key] !== undefined && raw[key] !== null) inputs[key] = raw[key];
  return inputs as unknown as ClusterInputs;
}

/** The create body of `inputs`: the document's fields only. */
export function createBodyOf(inputs: ClusterInputs): Record<string, unknown> {
  return Object.fromEntries(Object.entries(inputs).filter(([k]) => BODY_NAMES.includes(k)));
}

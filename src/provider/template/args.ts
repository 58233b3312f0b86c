/**
 * The arguments of a `Template` as the provider sees them (plain values; values not known yet in
 * a preview are Pulumi's unknown sentinel), their one schema, and `check`'s field-level
 * validation built on it. No network.
 *
 * The schema is the client's own body of a template create (`TemplateCreateInputSchema`, the v2
 * document's `CreateTemplateRequest`: every field, its bounds and messages), so the argument
 * names are the document's. What only the provider adds: a blank `name` or `image` fails too,
 * and a v1 `runpod:restUrl` fails (templates exist only in REST v2).
 *
 * Also here: what an omitted argument means for an update ({@link OMITTED_MEANS}). A template is
 * created with the document's default for each field the body omits; an argument removed from
 * the program later is brought back to that value by the PATCH (`env: {}`, `ports: []`, ...), so
 * the template always looks like one created from the program as it is now.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { secretEnvValues, TemplateCreateInputSchema } from "../../client";
import { containerFields, documented } from "../common/argDocs";
import {
  absolutePath,
  boundedName,
  describeNestedArgIssue,
  givenArgs,
  notBlank,
  unknownArgFailures,
} from "../common/checkArgs";
import { v1RestUrlReason } from "../common/needsV2";
import { redact } from "../common/redaction";
import { containsUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";

const body = TemplateCreateInputSchema.shape;

/** Strict schema of the arguments (an unknown key is a typo and fails). */
export const TemplateArgsSchema = TemplateCreateInputSchema.extend({
  name: notBlank(boundedName(body.name), "name").meta({
    description: "Name of the template (need not be unique). Changes in place.",
  }),
  image: notBlank(body.image, "image").meta({
    description:
      "Docker image reference, e.g. `me/worker:1.4`. Changes in place, but reaches only endpoints\n" +
      "created afterwards: pass it to the endpoint too (`image: template.image`) to roll one out.",
  }),
  disk: z
    .number({ error: "disk must be a whole number of GB, at least 1" })
    .refine(Number.isInteger, { error: "disk must be a whole number of GB (at least 1), not a fraction" })
    .refine((gb) => gb >= 1, { error: "disk must be at least 1 GB" })
    .optional()
    .meta({
      description:
        "Container disk in GB (ephemeral), at least 1. Changes in place; left out, the service's value stays.",
    }),
  ...containerFields(body, {
    args: "Arguments passed to the container entrypoint. Changes in place.",
    env:
      "Environment variables. Always stored as ONE secret (the whole map), in state and outputs;\n" +
      "no value of it appears in any other output, error or log. Changes in place; removed from\n" +
      "the program, the template's variables are removed (`env: {}`).",
    ports: 'Exposed ports as `port/protocol`, e.g. `["8000/http", "22/tcp"]`. Changes in place.',
    registry:
      "Container registry credential id for a private image (a `ContainerRegistryAuth`'s id), or\n" +
      "`null` for none. Changes in place.",
  }),
  mounts: z
    .strictObject({
      persistent: z
        .strictObject({
          size: body.mounts.unwrap().shape.persistent.unwrap().shape.size.meta({
            description: "Size in GB, at least 10. Changes in place.",
          }),
          path: absolutePath(
            body.mounts.unwrap().shape.persistent.unwrap().shape.path,
            "mounts.persistent.path",
          ).meta({
            description: "Mount path inside the container, e.g. `/workspace`. Changes in place.",
          }),
        })
        .optional()
        .meta({
          description: "The one persistent mount (host-local storage; network mounts are not allowed).",
          replaces: "it is removed (a PATCH cannot remove a mount)",
        }),
    })
    .optional()
    .meta({
      description: "Storage mounts: at most one persistent mount. Its size and path change in place.",
      replaces: "the persistent mount is removed (a PATCH cannot remove a mount)",
    }),
  ...documented(body, {
    allowedCudaVersions:
      "Acceptable CUDA versions (`major.minor`); empty or left out means any. Changes in place.",
    category: {
      description:
        "How the console groups the template: `CPU`, `NVIDIA` or `AMD` (no effect on hardware).\n" +
        "Changes in place.",
      default: '"NVIDIA"',
    },
    public: { description: "Visible to other RunPod users. Changes in place.", default: "false" },
    serverless: {
      description:
        "For serverless workers (`true`) or pods (`false`): endpoints take serverless templates.\n" +
        "Changes in place.",
      default: "false",
    },
    startJupyter: {
      description:
        "Start JupyterLab in containers made from it (`JUPYTER_PASSWORD` injection). Changes in place.",
      default: "true",
    },
    startSsh: {
      description:
        "Provision SSH access in containers made from it (`PUBLIC_KEY` injection). Changes in place.",
      default: "true",
    },
  }),
});

/** The arguments as a program gives them (before `check`); the generated `TemplateArgs` derives from it. */
export type TemplateArgsInput = z.input<typeof TemplateArgsSchema>;

/** Inputs as the provider sees them after `check`: the create body. */
export type TemplateInputs = z.infer<typeof TemplateArgsSchema>;

/** Every argument name: `name` and `image` (required) first, then the schema's order. */
export const ARG_NAMES = [
  "name",
  "image",
  ...Object.keys(TemplateArgsSchema.shape).filter((key) => key !== "name" && key !== "image"),
] as (keyof TemplateInputs)[];

/**
 * What an argument left out of the program stands for: the value the service gives a template
 * created without it (the v2 document's `default`, or the empty value of a list, map or string),
 * which a PATCH can set. An update whose program dropped such an argument sends this value, so
 * the service really drops what the program no longer says: `env: {}` removes every variable,
 * `registry: null` the credential, `allowedCudaVersions: []` the constraint (the document: "an
 * explicit [] clears the constraint").
 *
 * Not here: `name` and `image` (required), `disk` (the document states no default: a template
 * created without it gets the service's choice, so leaving `disk` out keeps the current size)
 * and `mounts` (a PATCH with `mounts: {}` "leaves the existing mount unchanged", per the
 * document; removing the persistent mount from the program therefore replaces the template, see
 * {@link MOUNT_REMOVAL}).
 */
export const OMITTED_MEANS = {
  args: "",
  env: {},
  ports: [],
  registry: null,
  allowedCudaVersions: [],
  category: "NVIDIA",
  public: false,
  serverless: false,
  startJupyter: true,
  startSsh: true,
} as const satisfies Partial<Record<keyof TemplateInputs, unknown>>;

/** The field whose removal replaces the template: a PATCH cannot remove a persistent mount. */
export const MOUNT_REMOVAL = "mounts";

/** Arguments a template cannot be made without. */
const REQUIRED = ["name", "image"];

/** Arguments whose check failure leaves `property` empty: secret or nested values the engine would print whole. */
const WHOLE_VALUE_FIELDS = new Set(["env", "mounts", "ports", "allowedCudaVersions"]);

/**
 * `check`'s validation: every failure found, one per argument, naming the field and what is
 * allowed. `null` counts as not given. Values unknown in a preview are not judged; an unknown
 * argument name fails whatever its value. No failure reason carries a value of `env`.
 */
export function checkTemplateArgs(
  settings: RunpodSettings | undefined,
  news: Record<string, unknown>,
): pulumi.dynamic.CheckResult {
  const { args, inputs } = givenArgs(news, ARG_NAMES);
  const byField: { field: string; failure: pulumi.dynamic.CheckFailure }[] = [];
  const unknownKeys: pulumi.dynamic.CheckFailure[] = [];
  const result = TemplateArgsSchema.safeParse(args);
  const seen = new Set<string>();
  for (const issue of result.success ? [] : result.error.issues) {
    const unknownNames = unknownArgFailures(issue, ARG_NAMES);
    if (unknownNames) {
      unknownKeys.push(...unknownNames);
      continue;
    }
    const field = String(issue.path[0]);
    if (containsUnknown(args[field]) || seen.has(field)) continue;
    seen.add(field);
    const where = issue.path.map(String).join(".");
    const reason = describeNestedArgIssue(issue, field, where, args[field], REQUIRED);
    byField.push({ field, failure: { property: WHOLE_VALUE_FIELDS.has(field) ? "" : field, reason } });
  }
  // The restUrl first, then the arguments in their order, then the names that are no argument.
  const order = (field: string) => ARG_NAMES.indexOf(field as keyof TemplateInputs);
  const v1 = v1RestUrlReason(settings, "Template", "templates");
  const failures = [
    ...(v1 ? [{ property: "", reason: v1 }] : []),
    ...byField.sort((a, b) => order(a.field) - order(b.field)).map((f) => f.failure),
    ...unknownKeys,
  ];
  const envValues = secretEnvValues(args.env);
  return {
    inputs,
    failures: failures.map((f) => ({ property: f.property, reason: redact(f.reason, envValues) })),
  };
}

/** The stored or checked arguments as the create body: the fields given, as given. */
export function plainInputs(raw: Record<string, unknown>): TemplateInputs {
  const inputs: Record<string, unknown> = {};
  for (const key of ARG_NAMES) if (raw[key] !== undefined && raw[key] !== null) inputs[key] = raw[key];
  // `registry: null` is "no credential", a value of its own.
  if (raw.registry === null) inputs.registry = null;
  return inputs as TemplateInputs;
}

/**
 * The arguments of an `EcrDelegation` (plain values; values not known yet in a preview are Pulumi's
 * unknown sentinel), their one schema, and `check`'s field-level validation built on it. No
 * network. The schema is the client's body of a delegation create (`CreateDelegationRequest`):
 * `resource`, the ECR repository ARN, and an optional `name`. Nothing in it is a credential.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { ECR_REPOSITORY_ARN_RULE, EcrDelegationCreateInputSchema } from "../../client";
import { boundedName, checkFlatArgs, describeArgIssue, notBlank } from "../common/checkArgs";
import { v1RestUrlReason } from "../common/needsV2";
import type { RunpodSettings } from "../config";

const body = EcrDelegationCreateInputSchema.shape;

/** Strict schema of the arguments (an unknown key is a typo and fails). */
export const EcrDelegationArgsSchema = EcrDelegationCreateInputSchema.extend({
  resource: body.resource.meta({
    description:
      "The ECR repository to delegate, by its ARN: `arn:aws:ecr:<region>:<12-digit account>:repository/<name>`,\n" +
      "e.g. `arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment`; a `:<tag>` after the name\n" +
      "names the image tag (the service answers `latest` without one). Checked in the preview. The\n" +
      "service cannot change a delegation: another ARN makes a new one, then revokes this one.",
    replaces: true,
  }),
  name: boundedName(notBlank(z.string({ error: "name must be a string" }), "name"))
    .optional()
    .meta({
      description:
        "Name of the delegation (need not be unique). When omitted the delegation has none. The\n" +
        "service cannot rename one: another name makes a new delegation, then revokes this one.",
      replaces: true,
    }),
});

/** The arguments as a program gives them; the generated `EcrDelegationArgs` derives from it. */
export type EcrDelegationArgsInput = z.input<typeof EcrDelegationArgsSchema>;

/** Inputs as the provider sees them after `check`. */
export type EcrDelegationInputs = z.infer<typeof EcrDelegationArgsSchema>;

/** Every argument name, in the schema's order. */
export const ARG_NAMES = Object.keys(EcrDelegationArgsSchema.shape) as (keyof EcrDelegationInputs)[];

/**
 * `check`'s validation: a v1 `restUrl` first (delegations are REST v2 only), then one failure per
 * argument, naming the field and what is allowed. Values unknown in a preview are not judged.
 */
export function checkEcrDelegationArgs(
  settings: RunpodSettings | undefined,
  news: Record<string, unknown>,
): pulumi.dynamic.CheckResult {
  const { inputs, failures } = checkFlatArgs(
    EcrDelegationArgsSchema,
    news,
    ARG_NAMES,
    (issue, property, value) =>
      describeArgIssue(
        issue,
        property,
        value,
        property === "resource" ? ECR_REPOSITORY_ARN_RULE : "a non-empty string",
      ),
  );
  const v1 = v1RestUrlReason(settings, "EcrDelegation", "ECR delegations");
  return { inputs, failures: v1 ? [{ property: "", reason: v1 }, ...failures] : failures };
}

/** The stored or checked arguments as plain values (create sends them). */
export function plainInputs(raw: Record<string, unknown>): EcrDelegationInputs {
  return {
    resource: String(raw.resource ?? ""),
    ...(typeof raw.name === "string" ? { name: raw.name } : {}),
  };
}

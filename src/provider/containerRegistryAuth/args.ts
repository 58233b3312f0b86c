/**
 * The arguments of a `ContainerRegistryAuth` as the provider sees them (plain values; values not
 * known yet in a preview are Pulumi's unknown sentinel), their one schema, and `check`'s
 * field-level validation built on it. No network.
 *
 * The schema is the client's own body of a registry-auth create (`ContainerRegistryAuthCreateInputSchema`:
 * the field names and their "must be a string" / "must not be empty" rules) plus what only the
 * provider has: a blank value (whitespace only) fails too, and `adoptExisting`. The argument names,
 * the inputs' type and the fields whose change replaces the credential all come from it.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import { ContainerRegistryAuthCreateInputSchema } from "../../client";
import { boundedName, checkFlatArgs, describeArgIssue, notBlank, optInFlag } from "../common/checkArgs";

const body = ContainerRegistryAuthCreateInputSchema.shape;
type BodyField = keyof typeof body;

/** A field of the create body that must also not be blank: a name or login of spaces is a typo. */
const filled = (field: BodyField) => notBlank(body[field], field);

/** Strict schema of the arguments (an unknown key is a typo and fails). */
export const RegistryAuthArgsSchema = ContainerRegistryAuthCreateInputSchema.extend({
  name: boundedName(filled("name")).meta({
    description:
      "Name of the credential, unique within the RunPod account; templates and endpoints refer to\n" +
      "the credential by its id, the console shows this name. A change creates the new credential\n" +
      "first, then deletes the old one.",
    replaces: true,
  }),
  username: filled("username").meta({
    description:
      "Registry username. The service never returns it, so refresh cannot detect a change made\n" +
      "outside Pulumi. On a change the old credential is deleted first (names are unique; with\n" +
      "`retainOnDelete: true` the old one stays and the create fails naming it).",
    replaces: true,
  }),
  password: filled("password").meta({
    description:
      "Registry password or access token. Always stored as a secret, even when given as a plain\n" +
      "string. Write-only on the service. On a change the old credential is deleted first.",
    replaces: true,
  }),
  adoptExisting: optInFlag(
    "adoptExisting must be a boolean (true or false)",
    "When a credential with this `name` exists and this stack did not create it: `false` fails the\n" +
      "create naming its id; `true` takes it over (the stack owns it from then on; `pulumi destroy`\n" +
      "deletes it). Its stored username and password cannot be checked (the service never returns\n" +
      "them): change `password` afterwards to set known values. Consulted only on create.",
  ),
});

/** The arguments as a program gives them (before `check`); the generated `ContainerRegistryAuthArgs` derives from it. */
export type RegistryAuthArgsInput = z.input<typeof RegistryAuthArgsSchema>;

/** Inputs as the provider sees them after `check`. */
export type RegistryAuthInputs = z.infer<typeof RegistryAuthArgsSchema>;

/**
 * Outputs stored in state: the inputs echoed (the service returns only `id` and `name`), and,
 * when a create that failed ambiguously recorded a credential it found by name afterwards, that
 * fact (`adoptedAfterAmbiguousCreate`, `adoptionNote`).
 */
export type RegistryAuthOutputs = RegistryAuthInputs & {
  adoptedAfterAmbiguousCreate?: boolean;
  adoptionNote?: string;
};

/** Every argument name, in the schema's order. */
export const ARG_NAMES = Object.keys(RegistryAuthArgsSchema.shape) as (keyof RegistryAuthInputs)[];

/** The fields the service stores at create: it has no update, so a change of any replaces the credential. */
export const REPLACING_FIELDS = Object.keys(body) as BodyField[];

/**
 * `check`'s validation: every failure found, one per argument, naming the field and what is
 * allowed. `null` counts as not given. Values unknown in a preview are not judged; an unknown
 * argument name fails whatever its value. `inputs` are the given arguments, as given.
 */
export function checkRegistryAuthArgs(news: Record<string, unknown>): pulumi.dynamic.CheckResult {
  const { inputs, failures } = checkFlatArgs(RegistryAuthArgsSchema, news, ARG_NAMES, reasonFor);
  return { inputs, failures };
}

/** The failure's wording: the schema's message, with what was given for a wrong type. */
function reasonFor(issue: z.core.$ZodIssue, property: string, value: unknown): string {
  // Only the create body's fields are required, and each is a string.
  return describeArgIssue(issue, property, value, "a non-empty string");
}

/** The stored or checked arguments as plain values (create and update echo them into the outputs). */
export function plainInputs(raw: Record<string, unknown>): RegistryAuthInputs {
  const inputs: RegistryAuthInputs = {
    name: String(raw.name ?? ""),
    username: String(raw.username ?? ""),
    password: String(raw.password ?? ""),
  };
  if (typeof raw.adoptExisting === "boolean") inputs.adoptExisting = raw.adoptExisting;
  return inputs;
}

/**
 * The arguments of a `ContainerRegistryAuth` as the provider sees them (plain values; values not
 * known yet in a preview are Pulumi's unknown sentinel), and `check`'s field-level validation.
 * No network.
 */
import type * as pulumi from "@pulumi/pulumi";
import { describeType, isUnknown } from "../values";

/** Inputs as the provider sees them after `check` (plain values; unknowns are the sentinel). */
export interface RegistryAuthInputs {
  name: string;
  username: string;
  password: string;
  adoptExisting?: boolean;
}

/**
 * Outputs stored in state: the inputs echoed (the service returns only `id` and `name`), and,
 * when a create that failed ambiguously recorded a credential it found by name afterwards, that
 * fact (`adoptedAfterAmbiguousCreate`, `adoptionNote`).
 */
export type RegistryAuthOutputs = RegistryAuthInputs & {
  adoptedAfterAmbiguousCreate?: boolean;
  adoptionNote?: string;
};

/** The fields the service stores at create: it has no update, so a change of any replaces the credential. */
export const REPLACING_FIELDS = ["name", "username", "password"] as const;

/** `check`'s validation: field-level failures; unknown values (preview) pass through untouched. */
export function checkRegistryAuthArgs(news: Record<string, unknown>): pulumi.dynamic.CheckResult {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  const inputs: Record<string, unknown> = {};
  for (const field of REPLACING_FIELDS) {
    const value = news[field];
    if (value !== undefined && value !== null) inputs[field] = value;
    if (isUnknown(value)) continue;
    if (value === undefined || value === null) {
      failures.push({ property: field, reason: `${field} is required: a non-empty string` });
    } else if (typeof value !== "string") {
      failures.push({ property: field, reason: `${field} must be a string, got ${describeType(value)}` });
    } else if (value.trim() === "") {
      failures.push({ property: field, reason: `${field} must not be empty` });
    }
  }
  const adopt = news.adoptExisting;
  if (adopt !== undefined && adopt !== null) {
    inputs.adoptExisting = adopt;
    if (!isUnknown(adopt) && typeof adopt !== "boolean") {
      failures.push({
        property: "adoptExisting",
        reason: `adoptExisting must be a boolean (true or false), got ${describeType(adopt)}`,
      });
    }
  }
  for (const key of Object.keys(news)) {
    if (
      key !== "__provider" &&
      !(REPLACING_FIELDS as readonly string[]).includes(key) &&
      key !== "adoptExisting"
    ) {
      failures.push({
        property: key,
        reason: `unknown property ${key}; allowed: name, username, password, adoptExisting`,
      });
    }
  }
  return { inputs, failures };
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

/**
 * `expect.outputSchema`: a JSON Schema (draft 2020-12) the job's output must satisfy, checked with
 * ajv. This module is small and import-free; ajv itself is required only when a JobRun has an
 * `outputSchema` (in check and in the verdict): every module the provider loads costs every
 * deploy, and most JobRuns have no schema.
 */
import type Ajv2020 from "ajv/dist/2020";

/** Most violations listed in a failure; the message says how many more there were. */
export const MAX_SCHEMA_VIOLATIONS = 20;

/** A fresh validator (a fresh instance, so two schemas with the same `$id` never collide). */
function newAjv(): Ajv2020 {
  const { default: Ajv }: typeof import("ajv/dist/2020") = require("ajv/dist/2020");
  return new Ajv({ allErrors: true, strict: false });
}

/** Why `schema` is not a usable JSON Schema 2020-12, or undefined when it is. */
export function outputSchemaProblem(schema: unknown): string | undefined {
  if (
    typeof schema !== "boolean" &&
    (schema === null || typeof schema !== "object" || Array.isArray(schema))
  ) {
    return "expect.outputSchema must be a JSON Schema (draft 2020-12): an object or a boolean";
  }
  const ajv = newAjv();
  try {
    ajv.compile(schema as object);
    return undefined;
  } catch (error) {
    return `expect.outputSchema is not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`;
  }
}

/** One place where the output breaks the schema: its instance path (`/choices/0/text`, `/` for the root). */
export interface SchemaViolation {
  path: string;
  message: string;
}

/** Every place where `output` breaks `schema` (empty when it satisfies it). */
export function outputSchemaViolations(schema: unknown, output: unknown): SchemaViolation[] {
  const validate = newAjv().compile(schema as object);
  if (validate(output)) return [];
  return (validate.errors ?? []).map((e) => ({
    path: e.instancePath === "" ? "/" : e.instancePath,
    message: e.message ?? e.keyword,
  }));
}

/** The violations as the failure lists them: one line each, capped at `MAX_SCHEMA_VIOLATIONS`. */
export function formatViolations(violations: readonly SchemaViolation[]): string {
  const lines = violations.slice(0, MAX_SCHEMA_VIOLATIONS).map((v) => `  ${v.path}: ${v.message}`);
  if (violations.length > MAX_SCHEMA_VIOLATIONS) {
    lines.push(`  ... and ${violations.length - MAX_SCHEMA_VIOLATIONS} more`);
  }
  return lines.join("\n");
}

/**
 * `expect.outputSchema`: a JSON Schema (draft 2020-12) the job's output must satisfy, checked with
 * ajv. This module is small and import-free; ajv (with `ajv-formats` and `re2js`) is required only
 * when a JobRun has an `outputSchema` (in check and in the verdict): every module the provider
 * loads costs every deploy, and most JobRuns have no schema.
 *
 * - `format` is enforced (`email`, `uri`, `date-time`, ... as `ajv-formats` defines them); a format
 *   it does not know fails `check`, rather than pass every output silently.
 * - `pattern` (and `patternProperties`) run on RE2 (`re2js`), whose matching time is linear in the
 *   input: a catastrophic pattern such as `^(a+)+$` cannot stall the provider host, which serves
 *   every resource of the deploy. RE2 has no lookaround and no backreferences; a pattern using them
 *   fails `check` saying so.
 */
import type Ajv2020 from "ajv/dist/2020";

/** Most violations listed in a failure; the message says how many more there were. */
export const MAX_SCHEMA_VIOLATIONS = 20;

/** ajv's regular-expression engine: RE2 (linear time), in ajv's `code.regExp` shape. */
function re2Engine() {
  const { RE2JS }: typeof import("re2js") = require("re2js");
  const engine = (pattern: string, flags: string) => {
    const compiled = RE2JS.compile(pattern, flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0);
    // ajv keys its cache of compiled patterns by `toString()`: it must differ per pattern.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/${flags}` };
  };
  // ajv writes this into standalone code only; this package never generates standalone code.
  return Object.assign(engine, { code: 'require("re2js").RE2JS' });
}

/**
 * A fresh validator (a fresh instance, so two schemas with the same `$id` never collide).
 * `warnings` collects what ajv would log (an unknown format), instead of printing it to the
 * provider host's stderr.
 */
function newAjv(warnings: string[] = []): Ajv2020 {
  const { default: Ajv }: typeof import("ajv/dist/2020") = require("ajv/dist/2020");
  const { default: addFormats }: typeof import("ajv-formats") = require("ajv-formats");
  const note = (...parts: unknown[]) => {
    warnings.push(parts.map(String).join(" "));
  };
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    code: { regExp: re2Engine() },
    logger: { log: () => {}, warn: note, error: note },
  });
  addFormats(ajv);
  return ajv;
}

/** Why `schema` is not a usable JSON Schema 2020-12, or undefined when it is. */
export function outputSchemaProblem(schema: unknown): string | undefined {
  if (
    typeof schema !== "boolean" &&
    (schema === null || typeof schema !== "object" || Array.isArray(schema))
  ) {
    return "expect.outputSchema must be a JSON Schema (draft 2020-12): an object or a boolean";
  }
  const warnings: string[] = [];
  const ajv = newAjv(warnings);
  try {
    const validate = ajv.compile(schema as object);
    // A schema that refers to itself with nothing in between (`$ref: "#"`, a `$dynamicRef` loop)
    // compiles, then recurses without end on any value: try one of each JSON type.
    for (const sample of [null, true, 0, "", [], {}]) validate(sample);
  } catch (error) {
    const message = (error as Error).message;
    if (error instanceof RangeError) {
      return (
        "expect.outputSchema refers to itself without end (a $ref or $dynamicRef loop that never reaches a " +
        "keyword that checks something): validating any output would never finish"
      );
    }
    if (/regexp|Perl syntax/i.test(message)) {
      return (
        `expect.outputSchema has a pattern the linear-time engine (RE2) cannot run: ${message}. ` +
        "Lookaround ((?=, (?!, (?<=) and backreferences (\\1) are not supported; rewrite the pattern without them"
      );
    }
    const ours = /^schema is invalid/.test(message) ? metaSchemaProblem(ajv.errors) : undefined;
    if (ours !== undefined) return ours;
    const ref = /can't resolve reference (\S+)/.exec(message)?.[1];
    if (ref !== undefined) {
      return `expect.outputSchema has a $ref to ${ref}, which names no part of the schema: point it at a $defs entry (e.g. "#/$defs/item")`;
    }
    return `expect.outputSchema is not a valid JSON Schema (draft 2020-12): ${message}`;
  }
  const unknownFormat = warnings
    .map((w) => /unknown format "([^"]*)"/.exec(w)?.[1])
    .find((f) => f !== undefined);
  if (unknownFormat !== undefined) {
    const known = Object.keys((ajv as unknown as { formats: Record<string, unknown> }).formats ?? {}).join(
      ", ",
    );
    return (
      `expect.outputSchema uses format "${unknownFormat}", which cannot be checked, so every output would ` +
      `pass it. Use one of ${known}, or a pattern`
    );
  }
  return undefined;
}

/** One place where the output breaks the schema: its instance path (`/choices/0/text`, `/` for the root). */
export interface SchemaViolation {
  path: string;
  message: string;
}

/**
 * Every place where `output` breaks `schema` (empty when it satisfies it). With `hideOutput` (a
 * JobRun with `secretOutput`) each violation is placed by its schema location (`#/properties/text/type`)
 * instead of its instance path, which would print the secret output's own keys.
 */
export function outputSchemaViolations(
  schema: unknown,
  output: unknown,
  options: { hideOutput?: boolean } = {},
): SchemaViolation[] {
  const validate = newAjv().compile(schema as object);
  try {
    if (validate(output)) return [];
  } catch (error) {
    // A loop that only this output's shape reaches (check tried one value of each type).
    if (!(error instanceof RangeError)) throw error;
    return [{ path: "/", message: "could not be checked: the schema recurses without end on this output" }];
  }
  return (validate.errors ?? []).map((e) => ({
    path: options.hideOutput ? e.schemaPath : e.instancePath === "" ? "/" : e.instancePath,
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

/** One complaint of ajv about the schema itself (checked against the 2020-12 meta-schema). */
interface MetaSchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * An invalid schema in our words: the keyword's place in the schema (`properties.n.type`) and what
 * it allows, from ajv's errors against the meta-schema (the most telling one: an allowed list
 * first). Undefined when ajv gave no such errors.
 */
function metaSchemaProblem(given: unknown): string | undefined {
  const errors = given as MetaSchemaError[] | null | undefined;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  const chosen = errors.find((e) => e.keyword === "enum") ?? errors[0]!;
  const where = chosen.instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
  const at = where === "" ? "the schema" : where;
  return `expect.outputSchema: ${at} ${allowedBy(chosen)} (JSON Schema draft 2020-12)`;
}

/** What a meta-schema keyword allows, in words. */
function allowedBy(error: MetaSchemaError): string {
  const { keyword, params } = error;
  switch (keyword) {
    case "enum": {
      const allowed = (params.allowedValues as unknown[]) ?? [];
      return `must be one of ${allowed.map((v) => String(v)).join(", ")} (or an array of them)`;
    }
    case "type": {
      const type = String(params.type);
      const article = /^[aeiou]/.test(type) ? "an" : "a";
      return `must be ${type.includes(",") ? `one of ${type.replace(/,/g, ", ")}` : `${article} ${type}`}`;
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(params.comparison)} ${String(params.limit)}`;
    default:
      return error.message ?? `breaks the ${keyword} rule of the meta-schema`;
  }
}

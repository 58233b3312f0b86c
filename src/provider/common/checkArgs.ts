/**
 * What every resource's `check` does the same way with its arguments: the given values (without
 * `__provider`, `null` as not given), and one failure per argument name the schema does not know.
 */
import type * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { POD_PORT } from "../../client";
import { isUnknown } from "./unknown";
import { describeType } from "./wording";

/**
 * The arguments `news` gives, `__provider` left out and `null` read as not given (`args`), and
 * those of them that are arguments of the resource (`inputs`, in the order of `names`).
 */
export function givenArgs(
  news: Record<string, unknown>,
  names: readonly string[],
): { args: Record<string, unknown>; inputs: Record<string, unknown> } {
  const { __provider: _provider, ...given } = news;
  const args = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, value ?? undefined]));
  const inputs = Object.fromEntries(names.filter((key) => args[key] !== undefined).map((k) => [k, args[k]]));
  return { args, inputs };
}

/** The wording most resources use: `unknown property colour; allowed: name, size`. */
export const unknownProperty = (key: string, allowed: readonly string[]): string =>
  `unknown property ${key}; allowed: ${allowed.join(", ")}`;

/**
 * The failures for names that are no argument of the resource, one per name, when `issue` is the
 * schema's complaint about top-level names it does not know; `undefined` for any other issue.
 * The failures have no property: the engine would print the value whole, and it may be a secret.
 */
export function unknownArgFailures(
  issue: z.core.$ZodIssue,
  allowed: readonly string[],
  reason: (key: string, allowed: readonly string[]) => string = unknownProperty,
): pulumi.dynamic.CheckFailure[] | undefined {
  if (issue.code !== "unrecognized_keys" || issue.path.length !== 0) return undefined;
  return issue.keys.map((key) => ({ property: "", reason: reason(key, allowed) }));
}

/**
 * `check`'s failures of a flat schema (every argument a top-level value): one per name that is no
 * argument, then one per argument, its first issue worded by `reasonFor`. Values unknown in a
 * preview are not judged.
 */
export function flatArgFailures(
  issues: readonly z.core.$ZodIssue[],
  args: Record<string, unknown>,
  allowed: readonly string[],
  reasonFor: (issue: z.core.$ZodIssue, property: string, value: unknown) => string,
): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  for (const issue of issues) {
    const unknownNames = unknownArgFailures(issue, allowed);
    if (unknownNames) {
      failures.push(...unknownNames);
      continue;
    }
    const property = String(issue.path[0]);
    const value = args[property];
    if (isUnknown(value) || failures.some((f) => f.property === property)) continue;
    failures.push({ property, reason: reasonFor(issue, property, value) });
  }
  return failures;
}

/**
 * `check` of a flat schema in one step: the given arguments ({@link givenArgs}) parsed by `schema`,
 * and its failures worded by `reasonFor` ({@link flatArgFailures}).
 */
export function checkFlatArgs(
  schema: z.ZodType,
  news: Record<string, unknown>,
  names: readonly string[],
  reasonFor: (issue: z.core.$ZodIssue, property: string, value: unknown) => string,
): {
  args: Record<string, unknown>;
  inputs: Record<string, unknown>;
  failures: pulumi.dynamic.CheckFailure[];
} {
  const { args, inputs } = givenArgs(news, names);
  const result = schema.safeParse(args);
  return { args, inputs, failures: flatArgFailures(result.error?.issues ?? [], args, names, reasonFor) };
}

/**
 * A flat argument's failure worded for the program: the schema's message, and for a wrong type
 * what was given (`got a number`), or when the argument is missing, that it is required and what
 * it takes (`required`, e.g. `a non-empty string`).
 */
export function describeArgIssue(
  issue: z.core.$ZodIssue,
  property: string,
  value: unknown,
  required: string,
): string {
  if (issue.code !== "invalid_type") return issue.message;
  if (value === undefined) return `${property} is required: ${required}`;
  return `${issue.message}, got ${describeType(value)}`;
}

/**
 * An argument's failure worded for the program where arguments nest (`env.HF_TOKEN`,
 * `mounts.persistent.size`): `where` (the dotted path) first, then the schema's message; for a
 * missing argument of `required`, that it is required (a non-empty string); for a wrong type at
 * the top level, what was given. Never a value: env values are secrets.
 */
export function describeNestedArgIssue(
  issue: z.core.$ZodIssue,
  property: string,
  where: string,
  value: unknown,
  required: readonly string[],
): string {
  if (issue.code === "unrecognized_keys") return `${where}: unknown key ${issue.keys.join(", ")}`;
  const message = issue.message.startsWith(where) ? issue.message : `${where}: ${issue.message}`;
  if (issue.code !== "invalid_type") return message;
  if (value === undefined && required.includes(property))
    return `${property} is required: a non-empty string`;
  return issue.path.length === 1 ? `${message}, got ${describeType(value)}` : message;
}

/**
 * An opt-in argument: `true` turns on what the resource does not do by itself, and leaving it out
 * is `false` (documented so). `error` is the failure for a value that is no boolean.
 */
export function optInFlag(error: string, description: string) {
  return z.boolean({ error }).optional().meta({ description, default: "false" });
}

/** `schema` refusing a blank value too (whitespace only): a name or login of spaces is a typo. */
export function notBlank<S extends z.ZodString>(schema: S, field: string): S {
  return schema.refine((value) => value.trim() !== "", { error: `${field} must not be empty` }) as S;
}

/**
 * Longest name of a RunPod object (endpoint, template, volume, pod, registry credential), in
 * characters: the service's own bound (`maxLength: 191` on names in its REST v1 document; the v2
 * document states none and the service keeps the same store).
 */
export const NAME_MAX_LENGTH = 191;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * `name` bounded as the service bounds it: at most {@link NAME_MAX_LENGTH} characters, and no
 * control character (a NUL or a newline would forge lines of the console and of `pulumi up`).
 */
export function boundedName<S extends z.ZodString>(schema: S, field = "name"): S {
  return schema
    .max(NAME_MAX_LENGTH, {
      error: (issue) =>
        `${field} must be at most ${NAME_MAX_LENGTH} characters, got ${String((issue.input as string).length)}`,
    })
    .refine((value) => !CONTROL_CHARACTER.test(value), {
      error: `${field} must not contain control characters (NUL, newline, tab, ...)`,
    }) as S;
}

/**
 * The rule of an environment variable name, as a container's environment takes it (`NAME=value`
 * lines): not empty, no `=`, no control character.
 */
export const ENV_NAME_RULE = 'env names must be non-empty, without "=" or control characters, e.g. MODEL_ID';

/** True when `name` can name an environment variable ({@link ENV_NAME_RULE}). */
export const isEnvName = (name: string): boolean =>
  name !== "" && !name.includes("=") && !CONTROL_CHARACTER.test(name);

/**
 * `env` with its names checked ({@link ENV_NAME_RULE}). The failure tells which name by its
 * position, never the name or a value: a typo may have pasted a secret into a name.
 */
export function checkedEnvNames<S extends z.ZodType<Record<string, string> | undefined>>(schema: S): S {
  return schema.superRefine((env, ctx) => {
    if (env === undefined || env === null || typeof env !== "object") return;
    const names = Object.keys(env);
    const bad = names.flatMap((name, i) => (isEnvName(name) ? [] : [i + 1]));
    if (bad.length === 0) return;
    const which =
      bad.length === 1
        ? `name ${bad[0]}`
        : `names ${bad.slice(0, 5).join(", ")}${bad.length > 5 ? ", ..." : ""}`;
    ctx.addIssue({ code: "custom", message: `${ENV_NAME_RULE} (${which} of ${names.length} is not)` });
  }) as unknown as S;
}

/** The rule of a port entry, shared by pods, templates and endpoints. */
export const PORT_RULE = 'ports entries must be "<port>/http" or "<port>/tcp", e.g. "8000/http"';

/** `ports` with each entry checked against {@link PORT_RULE}. */
export function checkedPorts<S extends z.ZodType<string[] | undefined>>(schema: S): S {
  return schema.superRefine((ports, ctx) => {
    if (!Array.isArray(ports)) return;
    ports.forEach((port, i) => {
      if (typeof port === "string" && !POD_PORT.test(port)) {
        ctx.addIssue({ code: "custom", path: [i], message: PORT_RULE });
      }
    });
  }) as unknown as S;
}

/** A mount path: absolute, as a container mounts at (`/workspace`). */
export function absolutePath<S extends z.ZodString>(schema: S, field = "path"): S {
  return schema.refine((value) => value.startsWith("/"), {
    error: `${field} must be an absolute path inside the container, starting with "/", e.g. "/workspace"`,
  }) as S;
}

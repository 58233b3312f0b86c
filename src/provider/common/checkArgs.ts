/**
 * What every resource's `check` does the same way with its arguments: the given values (without
 * `__provider`, `null` as not given), and one failure per argument name the schema does not know.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";

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

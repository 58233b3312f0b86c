/**
 * The `expect.output` check of a JobRun: a deep subset match of a JSON value against the job's
 * output, and the readable diff printed when it fails.
 *
 * Rules (the same as Jest's `toMatchObject`, which many readers know):
 * - an expected object matches an object that has every expected key, each matching in turn;
 *   extra keys in the output are ignored;
 * - an expected array matches an array of the same length whose items match item by item;
 * - any other expected value (string, number, boolean, null) must be equal (`===`).
 */

import { describeType } from "../common/wording";

/** One place where the output does not contain what was expected. */
export interface Mismatch {
  /** Dotted path from the root, e.g. `output.choices[0].text`. */
  path: string;
  /** What was expected there (JSON text, shortened). */
  expected: string;
  /** What the output holds there, or `missing` / a type description (shortened). */
  actual: string;
}

/** Longest rendering of one value in a mismatch line, in characters. */
export const MAX_VALUE_CHARS = 200;
/** Most mismatches collected; the diff says how many more there were. */
export const MAX_MISMATCHES = 20;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** JSON text of a value, shortened to `MAX_VALUE_CHARS`. */
export function shortJson(value: unknown): string {
  if (value === undefined) return "missing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

function keyPath(parent: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/**
 * Lists where `actual` fails to contain `expected` (empty when it matches). At most
 * `MAX_MISMATCHES` entries are returned; `total` counts them all.
 * @param root  name of the root in paths. @default "output"
 */
export function findMismatches(
  expected: unknown,
  actual: unknown,
  root = "output",
): { mismatches: Mismatch[]; total: number } {
  const mismatches: Mismatch[] = [];
  let total = 0;
  const report = (path: string, exp: unknown, act: unknown, sameShape: boolean) => {
    total += 1;
    if (mismatches.length < MAX_MISMATCHES) {
      mismatches.push({
        path,
        expected: shortJson(exp),
        actual:
          act === undefined
            ? "missing"
            : sameShape
              ? shortJson(act)
              : `${describeType(act)}: ${shortJson(act)}`,
      });
    }
  };
  const walk = (path: string, exp: unknown, act: unknown): void => {
    if (isPlainObject(exp)) {
      if (!isPlainObject(act)) {
        report(path, exp, act, false);
        return;
      }
      for (const [key, value] of Object.entries(exp)) {
        const child = keyPath(path, key);
        if (!Object.hasOwn(act, key)) report(child, value, undefined, false);
        else walk(child, value, act[key]);
      }
      return;
    }
    if (Array.isArray(exp)) {
      if (!Array.isArray(act)) {
        report(path, exp, act, false);
        return;
      }
      if (act.length !== exp.length) {
        total += 1;
        if (mismatches.length < MAX_MISMATCHES) {
          mismatches.push({ path, expected: describeType(exp), actual: describeType(act) });
        }
        return;
      }
      for (const [index, item] of exp.entries()) walk(`${path}[${index}]`, item, act[index]);
      return;
    }
    if (exp !== act) report(path, exp, act, typeof exp === typeof act && exp !== null && act !== null);
  };
  walk(root, expected, actual);
  return { mismatches, total };
}

/** True when `actual` contains `expected` under the rules above. */
export function matchesSubset(expected: unknown, actual: unknown): boolean {
  return findMismatches(expected, actual).total === 0;
}

/**
 * The diff shown when `expect.output` does not match: one line per mismatch, `path: expected X,
 * got Y`. With `hideValues` (the JobRun has `secretOutput`) only the paths and value types are
 * shown, so a secret output never reaches an error message.
 */
export function formatMismatches(
  result: { mismatches: Mismatch[]; total: number },
  options: { hideValues?: boolean } = {},
): string {
  const lines = result.mismatches.map((m) =>
    options.hideValues
      ? `  ${m.path}: ${m.actual === "missing" ? "missing" : "differs"} (values hidden: secretOutput is set)`
      : `  ${m.path}: expected ${m.expected}, got ${m.actual}`,
  );
  if (result.total > result.mismatches.length) {
    lines.push(`  ... and ${result.total - result.mismatches.length} more`);
  }
  return lines.join("\n");
}

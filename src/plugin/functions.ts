/**
 * The functions the plugin serves through `Invoke`: every lookup of the package's one table
 * (`LOOKUPS`, `../provider/resources.ts`), under `runpod-native:index:<fn>`, each calling the very
 * function a TypeScript program calls (`getGpuTypes(args, { settings })`), with the settings
 * `Configure` resolved. Their schemas (`./functions.generated.ts`) come from the same functions'
 * declarations (`scripts/functionSchemas.mts`).
 */
import * as path from "node:path";
import type { RunpodSettings } from "../provider/config";
import { LOOKUPS, type LookupRow } from "../provider/resources";
import { PACKAGE_NAME } from "./config";
import { FUNCTIONS } from "./functions.generated";

/** A served function: its token, its table row, the names of its arguments, and how to call it. */
export interface ServedFunction {
  /** `runpod-native:index:<fn>`. */
  token: string;
  row: LookupRow;
  /** The arguments it takes (its schema's `inputs`). */
  argumentNames: readonly string[];
  /**
   * Calls the lookup with plain arguments; resolves with the `Invoke` result (a list result under
   * its row's `listResult.property`). Rejects as the lookup does: a `ValidationError` naming the
   * argument (its `path`) for bad arguments, the service's error otherwise.
   */
  invoke(args: Record<string, unknown>, settings: RunpodSettings): Promise<Record<string, unknown>>;
}

/** `runpod-native:index:<fn>`. */
export const functionToken = (fn: string) => `${PACKAGE_NAME}:index:${fn}`;

type Lookup = (args: unknown, opts: { settings: RunpodSettings }) => Promise<unknown>;

/** Every lookup of the table, served. */
export function servedFunctions(rows: readonly LookupRow[] = LOOKUPS): ServedFunction[] {
  return rows.map((row) => {
    const token = functionToken(row.fn);
    const inputs = FUNCTIONS[token]?.inputs as { properties?: Record<string, unknown> } | undefined;
    // Beside this file in dist/ (or src/ under a TypeScript loader): ../provider/<module>. Loaded on
    // first call: the lookups' modules load the SDK's root, which starting the plugin does not need.
    const modulePath = path.join(__dirname, "..", "provider", row.module);
    return {
      token,
      row,
      argumentNames: Object.keys(inputs?.properties ?? {}),
      async invoke(args, settings) {
        const lookup = (require(modulePath) as Record<string, Lookup>)[row.fn] as Lookup;
        const result = await lookup(args, { settings });
        return row.listResult
          ? { [row.listResult.property]: result }
          : ({ ...(result as Record<string, unknown>) } as Record<string, unknown>);
      },
    };
  });
}

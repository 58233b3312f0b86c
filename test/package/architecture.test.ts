/**
 * The layout's rules, checked on the sources: the providers reach the client only
 * through its public surface, and no module of `src/` needs itself through its imports.
 *
 * "Runtime" imports are the ones the compiled CommonJS keeps as `require` calls: `import type`,
 * `export type` and imports whose every binding is `type` are erased, so they cannot form a cycle
 * or load a module.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = path.resolve(__dirname, "..", "..", "src");

/** Every `.ts` file under `dir`, absolute. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

interface Import {
  /** The file the specifier resolves to (relative specifiers only). */
  target: string;
  specifier: string;
  /** False when the import is erased by the compiler. */
  runtime: boolean;
}

/**
 * A relative specifier resolved to its `.ts` file (`./x` → `x.ts` or `x/index.ts`), or to the data
 * file it names (`./gpuTypes.json`: data, which imports nothing).
 */
function resolve(from: string, specifier: string): string {
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ""));
  const candidates = specifier.endsWith(".json") ? [base] : [`${base}.ts`, path.join(base, "index.ts")];
  for (const candidate of candidates) {
    try {
      readFileSync(candidate);
      return candidate;
    } catch {}
  }
  throw new Error(`${path.relative(SRC, from)}: cannot resolve ${specifier}`);
}

/** The relative imports and re-exports of a file, each marked runtime or erased. */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const found: Import[] = [];
  for (const statement of source.statements) {
    let specifier: string | undefined;
    let runtime = true;
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifier = statement.moduleSpecifier.text;
      const clause = statement.importClause;
      if (clause?.isTypeOnly) runtime = false;
      else if (clause && !clause.name && clause.namedBindings && ts.isNamedImports(clause.namedBindings)) {
        const elements = clause.namedBindings.elements;
        if (elements.length > 0 && elements.every((e) => e.isTypeOnly)) runtime = false;
      }
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifier = statement.moduleSpecifier.text;
      const clause = statement.exportClause;
      if (statement.isTypeOnly) runtime = false;
      else if (clause && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly))
        runtime = false;
    }
    if (specifier?.startsWith(".")) found.push({ target: resolve(file, specifier), specifier, runtime });
  }
  return found;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (file: string) => path.relative(SRC, file);

/**
 * Client modules a provider may import at run time besides the client's index: light, public
 * (re-exported by the index and the package root), and free of zod and undici, for the modules the
 * package root loads (the lookups' entry points and `config.ts`), which must not load the client.
 */
const LIGHT_CLIENT_MODULES = [
  "client/errors.ts",
  "client/endpointId.ts",
  "client/settingText.ts",
  "client/printable.ts",
];

describe("the providers", () => {
  it("import the client only through its public surface: its index, or a light public module", () => {
    const offending: string[] = [];
    for (const [file, imports] of graph) {
      if (!rel(file).startsWith("provider/")) continue;
      for (const imp of imports) {
        const target = rel(imp.target);
        if (!target.startsWith("client/") || target === "client/index.ts") continue;
        if (imp.runtime && LIGHT_CLIENT_MODULES.includes(target)) continue;
        offending.push(`${rel(file)} imports ${imp.specifier}${imp.runtime ? "" : " (types)"}`);
      }
    }
    expect(offending).toEqual([]);
  });
});

describe("src/", () => {
  it("has no cycle of runtime imports", () => {
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "visiting");
      stack.push(file);
      for (const { target, runtime } of graph.get(file) ?? []) {
        if (!runtime) continue;
        if (state.get(target) === "visiting") {
          cycles.push([...stack.slice(stack.indexOf(target)), target].map(rel).join(" -> "));
        } else if (!state.has(target)) {
          visit(target);
        }
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it("is read whole by this test (a file the walk missed would hide a cycle)", () => {
    expect(files.length).toBeGreaterThan(60);
    expect(files.map(rel)).toContain("provider/jobRun/operations.ts");
  });
});

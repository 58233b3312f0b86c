/**
 * Hover docs as users get them: the shipped `.d.ts` of the packed package (installed into a temp
 * project, see test/support/globalSetup.ts) documents every argument and output of each resource,
 * nested fields to depth 2 included. Read with the TypeScript checker, as an editor does.
 */
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, inject, it } from "vitest";
import { RESOURCE_ROWS } from "../../src/provider/resources";

/** Members of `type` (and of the objects its members hold, to `depth`) with no doc comment. */
function undocumented(checker: ts.TypeChecker, type: ts.Type, prefix: string, depth: number): string[] {
  const missing: string[] = [];
  for (const member of checker.getPropertiesOfType(checker.getApparentType(type))) {
    const name = `${prefix}.${member.name}`;
    if (ts.displayPartsToString(member.getDocumentationComment(checker)).trim() === "") missing.push(name);
    if (depth <= 1) continue;
    for (const nested of objectsIn(checker, checker.getTypeOfSymbol(member))) {
      missing.push(...undocumented(checker, nested, name, depth - 1));
    }
  }
  return [...new Set(missing)];
}

/**
 * The plain object types a member accepts or holds: `Input<{...}>` and `Output<{...}>` unwrapped
 * (their `{...}` arm), array items, with primitives, promises, outputs and functions left out.
 */
function objectsIn(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const found: ts.Type[] = [];
  const seen = new Set<ts.Type>();
  const visit = (t: ts.Type) => {
    if (seen.has(t)) return;
    seen.add(t);
    if (t.isUnion()) return t.types.forEach(visit);
    if (!(t.flags & ts.TypeFlags.Object)) return;
    const name = t.getSymbol()?.name ?? "";
    if (checker.isArrayType(t)) return checker.getTypeArguments(t as ts.TypeReference).forEach(visit);
    if (name === "Promise" || name === "OutputInstance" || name === "Output") {
      const args = checker.getTypeArguments(t as ts.TypeReference);
      return args.forEach(visit);
    }
    if (t.getCallSignatures().length > 0 || name === "Record" || checker.getIndexInfosOfType(t).length > 0)
      return;
    if (
      name === "__type" ||
      name === "__object" ||
      ((t.getSymbol()?.flags ?? 0) & ts.SymbolFlags.Interface) !== 0
    )
      found.push(t);
  };
  visit(type);
  return found;
}

/**
 * One program per declaration file, made once: building one reads the whole of @pulumi/pulumi's
 * declarations (about a second of CPU), and every resource's check reads the same `index.d.ts`.
 * A new file's program reuses the last one's unchanged source files (the default libs).
 */
const programs = new Map<string, ts.Program>();
let lastProgram: ts.Program | undefined;
function programOf(file: string): ts.Program {
  let program = programs.get(file);
  if (!program) {
    program = ts.createProgram(
      [file],
      { strict: true, skipLibCheck: true, types: [] },
      undefined,
      lastProgram,
    );
    programs.set(file, program);
    lastProgram = program;
  }
  return program;
}

/** A checker over `file`, and the export named `name` in it. */
function exportOf(file: string, name: string) {
  const program = programOf(file);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const symbol = checker
    .getExportsOfModule(checker.getSymbolAtLocation(source)!)
    .find((s) => s.name === name);
  if (!symbol) throw new Error(`${file} exports no ${name}`);
  const resolved = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return { checker, symbol: resolved };
}

/** The undocumented arguments and outputs of resource `name` in the package's `index.d.ts`. */
function undocumentedOfResource(indexFile: string, name: string): string[] {
  const args = exportOf(indexFile, `${name}Args`);
  const argsType = args.checker.getDeclaredTypeOfSymbol(args.symbol);
  const cls = exportOf(indexFile, name);
  const instance = cls.checker.getDeclaredTypeOfSymbol(cls.symbol);
  const base = new Set(["urn", "id", "getProvider"]);
  const outputs = cls.checker
    .getPropertiesOfType(instance)
    .filter(
      (p) =>
        !base.has(p.name) &&
        !p.name.startsWith("__") &&
        !p.valueDeclaration?.getSourceFile().fileName.includes("@pulumi"),
    )
    .filter((p) => ts.displayPartsToString(p.getDocumentationComment(cls.checker)).trim() === "")
    .map((p) => `${name}.${p.name}`);
  return [...undocumented(args.checker, argsType, `${name}Args`, 2), ...outputs];
}

/** The resources whose every argument and output is documented from their one source: all of the table's. */
const DOCUMENTED_RESOURCES = RESOURCE_ROWS.map((row) => row.className);

describe("the shipped declarations", () => {
  const projectDir = inject("installedProjectDir");
  const indexFile = path.join(projectDir, "node_modules", "pulumi-runpod-dynamic", "dist", "index.d.ts");

  for (const name of DOCUMENTED_RESOURCES) {
    it(`document every argument (to depth 2) and every output of ${name}`, () => {
      expect(undocumentedOfResource(indexFile, name)).toEqual([]);
    }, 60_000);
  }

  it("this check finds an argument, a nested argument and an output without a doc comment", async () => {
    const fs = await import("node:fs/promises");
    const os = await import("node:os");
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runpod-docs-"));
    try {
      const file = path.join(dir, "index.d.ts");
      await fs.writeFile(
        file,
        [
          "/** Args. */ export interface DemoArgs {",
          "  /** Documented. */ a: string;",
          "  b?: number;",
          "  /** Documented. */ c: C | Promise<C>;",
          "}",
          "type C = {",
          "  /** Documented. */",
          "  d: string;",
          "  e: boolean;",
          "};",
          "/** Demo. */ export declare class Demo {",
          "  /** Documented. */ readonly x: string;",
          "  readonly y: number;",
          "}",
        ].join("\n"),
      );
      const found = undocumentedOfResource(file, "Demo");
      expect(found.sort()).toEqual(["Demo.y", "DemoArgs.b", "DemoArgs.c.e"]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

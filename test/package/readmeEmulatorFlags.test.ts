/**
 * docs/emulator.md's flag table lists exactly the flags `runpod-emulator` parses: the flags are read
 * from the `parseArgs({ options })` object in src/emulator/cli.ts (with the TypeScript compiler, so
 * formatting does not matter), the in-process option names from `EmulatorOptions` in
 * src/emulator/options.ts. A flag added to the CLI without a row, a row for a flag that does not
 * exist, or an option column naming no option fails here.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(__dirname, "..", "..");
const read = (file: string) => readFileSync(path.join(REPO, file), "utf8");

function sourceOf(file: string): ts.SourceFile {
  return ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);
}

function propertyName(name: ts.PropertyName): string {
  return ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : name.getText();
}

/** `--name` (and `-x` shorts) of every entry of the `options` object passed to `parseArgs`. */
function cliFlags(): string[] {
  const flags: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.getText() === "parseArgs") {
      const arg = node.arguments[0];
      const options =
        arg && ts.isObjectLiteralExpression(arg)
          ? arg.properties.find((p) => p.name && propertyName(p.name) === "options")
          : undefined;
      if (options && ts.isPropertyAssignment(options) && ts.isObjectLiteralExpression(options.initializer)) {
        for (const entry of options.initializer.properties) {
          if (!entry.name) continue;
          flags.push(`--${propertyName(entry.name)}`);
          if (ts.isPropertyAssignment(entry) && ts.isObjectLiteralExpression(entry.initializer)) {
            const short = entry.initializer.properties.find(
              (p) => p.name && propertyName(p.name) === "short",
            );
            if (short && ts.isPropertyAssignment(short) && ts.isStringLiteral(short.initializer))
              flags.push(`-${short.initializer.text}`);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceOf("src/emulator/cli.ts"));
  return flags;
}

/** Property names of `export interface EmulatorOptions`. */
function emulatorOptions(): string[] {
  const names: string[] = [];
  ts.forEachChild(sourceOf("src/emulator/options.ts"), (node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === "EmulatorOptions")
      for (const member of node.members) if (member.name) names.push(propertyName(member.name));
  });
  return names;
}

/** The rows of the first table under `## Flags` in docs/emulator.md: its flags and option cells. */
function flagTable(): { flags: string[]; options: string[]; text: string } {
  const page = read("docs/emulator.md");
  const section = page.slice(page.indexOf("\n## Flags\n"));
  const rows = section
    .split("\n")
    .slice(1)
    .filter((l) => l.startsWith("| `-"));
  const cells = rows.map((r) => r.split(" | ").map((c) => c.replace(/^\| |\s*\|$/g, "")));
  return {
    flags: cells.flatMap((c) =>
      [...(c[0] as string).matchAll(/`(-{1,2}[\w-]+)`/g)].map((m) => m[1] as string),
    ),
    options: cells.flatMap((c) => [...(c[4] ?? "").matchAll(/`([\w.]+)`/g)].map((m) => m[1] as string)),
    text: section,
  };
}

describe("docs/emulator.md flag table", () => {
  const table = flagTable();

  it("finds the CLI's flags and the table's rows", () => {
    expect(cliFlags()).toEqual(
      expect.arrayContaining(["--port", "--api-key", "--rollout-ms", "--help", "-h"]),
    );
    expect(table.flags.length).toBeGreaterThan(10);
  });

  it("has a row for every flag the CLI parses", () => {
    const missing = cliFlags().filter((f) => !table.flags.includes(f));
    expect(missing, "flags runpod-emulator takes that docs/emulator.md does not list").toEqual([]);
  });

  it("names no flag the CLI does not parse", () => {
    const real = new Set(cliFlags());
    expect(table.flags.filter((f) => !real.has(f))).toEqual([]);
    expect(new Set(table.flags).size).toBe(table.flags.length);
  });

  it("maps flags to startEmulator options that exist, and mentions every option", () => {
    const options = emulatorOptions();
    expect(options.length).toBeGreaterThan(5);
    expect(table.options.filter((o) => !options.includes(o.split(".")[0] as string))).toEqual([]);
    const mentioned = options.filter((o) => !table.text.includes(`\`${o}\``));
    expect(mentioned, "startEmulator options docs/emulator.md does not name").toEqual([]);
  });
});

/**
 * The README's "Use it in a stack" is a project a user can copy: its four blocks marked
 * `<!-- stack-file: NAME -->` (Pulumi.yaml, package.json, tsconfig.json, index.ts) are written into
 * an empty temp directory, the packed package is installed next to the other dependencies the
 * package.json names, and the project's own `tsc` (from its node_modules, as `npm run typecheck`
 * there would run it) checks `index.ts`. The README test (`readme.test.ts`) runs the same
 * `index.ts` against the emulator; this one proves that the files around it compile.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const execFileAsync = promisify(execFile);
const REPO = path.resolve(__dirname, "..", "..");
const installedProjectDir = inject("installedProjectDir");

/** The code of each fenced block that has `<!-- stack-file: NAME -->` on the line above its fence. */
function stackFiles(markdown: string): Map<string, string> {
  const lines = markdown.split("\n");
  const files = new Map<string, string>();
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*stack-file:\s*(\S+)\s*-->\s*$/.exec(lines[i] as string);
    if (!marker) continue;
    if (!/^```\w*\s*$/.test(lines[i + 1] ?? ""))
      throw new Error(`README line ${i + 1}: no code block under the marker`);
    const end = lines.findIndex((l, j) => j > i + 1 && /^```\s*$/.test(l));
    files.set(marker[1] as string, `${lines.slice(i + 2, end).join("\n")}\n`);
    i = end;
  }
  return files;
}

const FILES = stackFiles(readFileSync(path.join(REPO, "README.md"), "utf8"));
let stackDir: string;

/** Runs the project's own TypeScript compiler in `dir`; resolves to its exit code and output. */
async function tsc(dir: string): Promise<{ code: number; output: string }> {
  const bin = path.join(dir, "node_modules", "typescript", "bin", "tsc");
  try {
    const { stdout } = await execFileAsync(process.execPath, [bin, "-p", dir], {
      cwd: dir,
      timeout: 120_000,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

beforeAll(async () => {
  stackDir = await mkdtemp(path.join(os.tmpdir(), "runpod-readme-stack-"));
  for (const [name, text] of FILES) await writeFile(path.join(stackDir, name), text);
  // "npm install" without the network: the packed package as extracted for the test run, and every
  // other dependency linked from the same installed project (they are the repo's own installs).
  const modules = path.join(stackDir, "node_modules");
  await mkdir(modules);
  const from = path.join(installedProjectDir, "node_modules");
  for (const name of await readdir(from)) {
    await symlink(
      path.join(from, name),
      path.join(modules, name),
      process.platform === "win32" ? "junction" : "dir",
    );
  }
}, 60_000);
afterAll(async () => {
  if (stackDir) await rm(stackDir, { recursive: true, force: true });
});

describe("README stack skeleton", () => {
  it("says how to set every config key index.ts requires", () => {
    const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
    const required = [
      ...(FILES.get("index.ts") as string).matchAll(/cfg\.require(?:Secret)?\("(\w+)"\)/g),
    ].map((m) => m[1] as string);
    expect(required).toEqual(["ghcrToken"]);
    const unset = required.filter(
      (key) => !new RegExp(`^pulumi config set (--secret )?${key} `, "m").test(readme),
    );
    expect(unset).toEqual([]);
  });

  it("gives the four files of a stack", () => {
    expect([...FILES.keys()].sort()).toEqual(["Pulumi.yaml", "index.ts", "package.json", "tsconfig.json"]);
    const project = FILES.get("Pulumi.yaml") as string;
    expect(project).toMatch(/^runtime:\n\s+name: nodejs$/m);
    expect(project).toMatch(/^main: index\.ts$/m);
  });

  it("names in package.json the tarball npm pack writes, and only dependencies that get installed", async () => {
    const manifest = JSON.parse(FILES.get("package.json") as string) as {
      type?: string;
      dependencies: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const pkg = JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")) as {
      name: string;
      version: string;
    };
    expect(manifest.dependencies[pkg.name]).toMatch(
      new RegExp(`/${pkg.name}-${pkg.version.replace(/\./g, "\\.")}\\.tgz$`),
    );
    const names = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies ?? {})];
    for (const name of names)
      expect(existsSync(path.join(stackDir, "node_modules", name, "package.json")), name).toBe(true);
    expect(names).toEqual(expect.arrayContaining(["@pulumi/pulumi", "typescript"]));
  });

  it("type-checks index.ts with the project's TypeScript and tsconfig.json", async () => {
    const { code, output } = await tsc(stackDir);
    expect(output).toBe("");
    expect(code).toBe(0);
  }, 120_000);

  it("type-checks against the package's real types: an argument that does not exist is an error", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "runpod-readme-stack-bad-"));
    try {
      for (const [name, text] of FILES) await writeFile(path.join(dir, name), text);
      await symlink(path.join(stackDir, "node_modules"), path.join(dir, "node_modules"), "dir");
      const index = FILES.get("index.ts") as string;
      expect(index).toContain("registry: ghcr.id");
      await writeFile(
        path.join(dir, "index.ts"),
        index.replace("registry: ghcr.id", "containerRegistryAuthId: ghcr.id"),
      );
      const { code, output } = await tsc(dir);
      expect(code).not.toBe(0);
      expect(output).toContain("containerRegistryAuthId");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

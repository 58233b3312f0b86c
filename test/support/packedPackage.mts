/**
 * The package as users get it: `npm pack` of this repo, extracted into a temp project whose other
 * dependencies are the repo's installed `node_modules`, linked (no network, after `npm ci`).
 *
 * ```ts
 * import { installPackedPackage } from "../test/support/packedPackage.mts";
 * const { projectDir, cleanup } = await installPackedPackage();   // builds dist/ first if stale
 * // projectDir/node_modules/pulumi-runpod-dynamic  = the extracted tarball (a real copy)
 * // projectDir/node_modules/<every other dep>      = symlink into <repo>/node_modules
 * await cleanup();
 * ```
 *
 * Tests do not call this: `test/support/globalSetup.ts` does it once per `vitest run` and hands the
 * directory out as `inject("installedProjectDir")`. Scripts (demo, bench) call it themselves; the
 * module needs only `node:` builtins, `npm` and `tar` on PATH, and runs under Node 24 directly.
 *
 * Why links work: Node resolves a symlink to its real path, so `@pulumi/pulumi` required from the
 * extracted package and from a program in `projectDir` is the one copy in `<repo>/node_modules`,
 * and that copy finds its own dependencies there. The extracted package is a real directory, so
 * its `require("@pulumi/pulumi")` walks up to `projectDir/node_modules`, as in a user's project.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The repository root (two levels above this file). */
export const REPO_DIR: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The package name, as in package.json. */
export const PACKAGE_NAME = "pulumi-runpod-dynamic";

/** A temp project with the packed package installed. */
export interface InstalledPackage {
  /** The temp project (`os.tmpdir()/runpod-pkg-XXXX`): has package.json and node_modules. */
  projectDir: string;
  /** `projectDir/node_modules/pulumi-runpod-dynamic`, the extracted tarball. */
  packageDir: string;
  /** The tarball `npm pack` wrote (inside `projectDir/.pack`). */
  tarball: string;
  /** Removes `projectDir` and everything in it. Safe to call twice. */
  cleanup(): Promise<void>;
}

export interface InstallOptions {
  /** Repository to pack. @default REPO_DIR */
  repoDir?: string;
  /** Build `dist/` first when it is missing or older than `src/`. @default true */
  build?: boolean;
}

/** Records into `out` the mtime (ms) of every file under `dir` whose name passes `keep`. */
async function walkMtimes(dir: string, keep: (name: string) => boolean, out: Map<string, number>) {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await walkMtimes(full, keep, out);
    else if (keep(entry.name)) out.set(full, (await fs.stat(full)).mtimeMs);
  }
}

/**
 * Whether `dist/` must be rebuilt: `dist/index.js` is missing, or some `src/**.ts` file has no
 * emitted `.js` twin in `dist/` or is newer than it.
 */
export async function distIsStale(repoDir: string = REPO_DIR): Promise<boolean> {
  const srcDir = path.join(repoDir, "src");
  const distDir = path.join(repoDir, "dist");
  if (!existsSync(path.join(distDir, "index.js"))) return true;
  const sources = new Map<string, number>();
  await walkMtimes(srcDir, (n) => n.endsWith(".ts") && !n.endsWith(".d.ts"), sources);
  for (const [file, mtime] of sources) {
    const emitted = path.join(distDir, path.relative(srcDir, file)).replace(/\.ts$/, ".js");
    try {
      if ((await fs.stat(emitted)).mtimeMs < mtime) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * Builds `dist/` with `tsc -p tsconfig.build.json` when {@link distIsStale}. Type errors are
 * tolerated (other people's work in progress) as long as `dist/index.js` was emitted; they are
 * reported on stderr in one line. Throws when nothing usable was emitted.
 */
export async function ensureBuilt(repoDir: string = REPO_DIR): Promise<{ built: boolean }> {
  if (!(await distIsStale(repoDir))) return { built: false };
  const tsc = path.join(repoDir, "node_modules", "typescript", "bin", "tsc");
  try {
    await execFileAsync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
      cwd: repoDir,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const output = String((err as { stdout?: string }).stdout ?? "");
    const errors = output.split("\n").filter((l) => l.includes("error TS")).length;
    if (!existsSync(path.join(repoDir, "dist", "index.js"))) {
      throw new Error(`Building dist/ failed and emitted no dist/index.js:\n${output.slice(0, 4000)}`);
    }
    process.stderr.write(`[packedPackage] tsc reported ${errors} type error(s); dist/ was emitted anyway.\n`);
  }
  return { built: true };
}

/** Entries of the repo's node_modules that are not packages (or are this package itself). */
const NOT_LINKED = new Set([".bin", ".cache", ".package-lock.json", ".vite", ".vitest", PACKAGE_NAME]);

/**
 * Packs the repo once (`npm pack --ignore-scripts`), extracts the tarball into a new temp project
 * and links every other dependency from the repo's `node_modules`. No network is used.
 */
export async function installPackedPackage(options: InstallOptions = {}): Promise<InstalledPackage> {
  const repoDir = options.repoDir ?? REPO_DIR;
  if (options.build !== false) await ensureBuilt(repoDir);

  const projectDir = await fs.mkdtemp(path.join(os.tmpdir(), "runpod-pkg-"));
  const cleanup = () => fs.rm(projectDir, { recursive: true, force: true });
  try {
    const packDir = path.join(projectDir, ".pack");
    await fs.mkdir(packDir);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const { stdout } = await execFileAsync(
      npm,
      ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir],
      { cwd: repoDir, maxBuffer: 64 * 1024 * 1024, shell: process.platform === "win32" },
    );
    const packed = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string }>;
    const tarball = path.join(packDir, path.basename(packed[0]!.filename));

    const nodeModules = path.join(projectDir, "node_modules");
    const packageDir = path.join(nodeModules, PACKAGE_NAME);
    await fs.mkdir(packageDir, { recursive: true });
    await execFileAsync("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"]);

    const repoModules = path.join(repoDir, "node_modules");
    const linkType = process.platform === "win32" ? "junction" : "dir";
    for (const name of await fs.readdir(repoModules)) {
      if (NOT_LINKED.has(name)) continue;
      await fs.symlink(path.join(repoModules, name), path.join(nodeModules, name), linkType);
    }
    await fs.writeFile(
      path.join(projectDir, "package.json"),
      `${JSON.stringify(
        {
          name: "runpod-pkg-project",
          version: "0.0.0",
          private: true,
          description: "Temp project with the packed pulumi-runpod-dynamic installed (test support).",
          dependencies: { [PACKAGE_NAME]: `file:${path.relative(projectDir, tarball)}` },
        },
        null,
        2,
      )}\n`,
    );
    return { projectDir, packageDir, tarball, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * `npm run plugin:archive`: the native plugin as a release archive,
 * `pulumi-resource-runpod-native-v<version>-<os>-<arch>.tar.gz`, the shape
 * `pulumi plugin install resource runpod-native <version> --file <archive>` installs (the engine then
 * runs `~/.pulumi/plugins/resource-runpod-native-v<version>/pulumi-resource-runpod-native`, with a
 * `.cmd` suffix on Windows: `getPluginPath` in pulumi/pulumi's `sdk/go/common/workspace/plugins.go`;
 * the archive name is that file's `pulumi-<kind>-<name>-v<version>-<os>-<arch>.tar.gz`).
 *
 * The archive holds, at its root, the launcher `pulumi-resource-runpod-native` (a POSIX shell script;
 * `pulumi-resource-runpod-native.cmd` for windows) that runs `dist/plugin/main.js` of the packed
 * package with the `node` on PATH (22 or 24), and `node_modules/` with the packed package and its
 * production dependencies only, at the versions package-lock.json pins (with `@pulumi/pulumi`, a
 * peer of the package, at the version the repository develops against). The code is JavaScript throughout, so the os and arch in the name
 * choose only the launcher; one archive per platform is what `pulumi plugin install` looks for.
 *
 * ```sh
 * npm run plugin:archive                                  # this machine's os and arch, into dist-archives/
 * npm run plugin:archive -- --os darwin --arch arm64      # another platform's
 * npm run plugin:archive -- --tarball x.tgz --out dir --offline   # a packed package, npm's cache only (tests)
 * npm run plugin:archive -- --keep tree/                 # also leaves the archived tree in tree/
 * ```
 * Prints the archive's path on the last line of stdout.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";

const run = promisify(execFile);
const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const {
  name: PACKAGE,
  version: VERSION,
  bin,
} = JSON.parse(readFileSync(path.join(REPO_DIR, "package.json"), "utf8"));

/** The plugin's executable name, from package.json `bin` (the one named `pulumi-resource-*`). */
const PLUGIN = Object.keys(bin).find((b) => b.startsWith("pulumi-resource-"));
if (PLUGIN === undefined) throw new Error("package.json bin names no pulumi-resource-* executable");
const MAIN = bin[PLUGIN] as string;

/** Pulumi's names for Node's platforms and architectures (the ones Pulumi publishes plugins for). */
const OS: Record<string, string> = { linux: "linux", darwin: "darwin", win32: "windows" };
const ARCH: Record<string, string> = { x64: "amd64", arm64: "arm64" };

const { values } = parseArgs({
  options: {
    os: { type: "string", default: OS[process.platform] },
    arch: { type: "string", default: ARCH[process.arch] },
    out: { type: "string", default: path.join(REPO_DIR, "dist-archives") },
    tarball: { type: "string" },
    offline: { type: "boolean", default: false },
    keep: { type: "string" },
  },
});
const targetOs = values.os ?? "";
const targetArch = values.arch ?? "";
if (!Object.values(OS).includes(targetOs))
  throw new Error(`--os must be one of ${Object.values(OS).join(", ")} (got ${JSON.stringify(targetOs)})`);
if (!Object.values(ARCH).includes(targetArch))
  throw new Error(
    `--arch must be one of ${Object.values(ARCH).join(", ")} (got ${JSON.stringify(targetArch)})`,
  );

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const stage = mkdtempSync(path.join(os.tmpdir(), "runpod-plugin-archive-"));
try {
  // The package as npm publishes it (prepack builds dist/), unless a packed one is given.
  let tarball = values.tarball && path.resolve(values.tarball);
  if (!tarball) {
    const { stdout } = await run(npm, ["pack", "--silent", "--pack-destination", stage], { cwd: REPO_DIR });
    tarball = path.join(stage, stdout.trim().split("\n").pop() ?? "");
  }
  if (!existsSync(tarball)) throw new Error(`no packed package at ${tarball}`);

  // Its production dependencies at the versions this repository's lockfile pins (so an archive is
  // reproducible, and `--offline` works from the cache `npm ci` filled), with the `@pulumi/pulumi`
  // that a program's project would bring as the peer: the plugin runs without one.
  const root = values.keep ? path.resolve(values.keep) : path.join(stage, "root");
  if (existsSync(root) && readdirSync(root).length > 0)
    throw new Error(`--keep ${root} must be a new or empty directory`);
  mkdirSync(root, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(REPO_DIR, "package.json"), "utf8"));
  const peers: Record<string, string> = manifest.peerDependencies ?? {};
  const optionalPeers = new Set(Object.keys(manifest.peerDependenciesMeta ?? {}));
  const needed = Object.fromEntries(
    Object.keys(peers)
      .filter((peer) => !optionalPeers.has(peer))
      .map((peer) => [peer, manifest.devDependencies?.[peer] ?? peers[peer]]),
  );
  writeFileSync(
    path.join(root, "package.json"),
    JSON.stringify({
      name: manifest.name,
      version: VERSION,
      private: true,
      dependencies: { ...manifest.dependencies, ...needed },
    }),
  );
  writeFileSync(path.join(root, "package-lock.json"), readFileSync(path.join(REPO_DIR, "package-lock.json")));
  await run(
    npm,
    [
      "install",
      "--omit=dev",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      ...(values.offline ? ["--offline"] : []),
    ],
    { cwd: root },
  );
  for (const file of ["package.json", "package-lock.json", "node_modules/.package-lock.json"])
    rmSync(path.join(root, file), { force: true });
  const packageDir = path.join(root, "node_modules", PACKAGE);
  mkdirSync(packageDir);
  await run("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"]);

  const main = `node_modules/${PACKAGE}/${MAIN}`;
  if (targetOs === "windows") {
    writeFileSync(path.join(root, `${PLUGIN}.cmd`), `@node "%~dp0${main.replaceAll("/", "\\")}" %*\r\n`);
  } else {
    const launcher = path.join(root, PLUGIN);
    writeFileSync(
      launcher,
      "#!/bin/sh\n" +
        `# ${PLUGIN} ${VERSION}: the Pulumi plugin, run with the node on PATH (Node.js 22 or 24).\n` +
        'dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)\n' +
        `exec node "$dir/${main}" "$@"\n`,
    );
    chmodSync(launcher, 0o755);
  }

  mkdirSync(values.out ?? "", { recursive: true });
  const archive = path.resolve(values.out ?? "", `${PLUGIN}-v${VERSION}-${targetOs}-${targetArch}.tar.gz`);
  await run("tar", ["-czf", archive, "-C", root, "."]);
  console.log(archive);
} finally {
  rmSync(stage, { recursive: true, force: true });
}

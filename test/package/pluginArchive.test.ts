/**
 * `npm run plugin:archive` (scripts/plugin-archive.mts) from the packed package: the archive has the
 * name `pulumi plugin install resource runpod-native <version> --file` takes, holds the launcher at
 * its root and only production dependencies, and the tree it archives (`--keep`: the same files,
 * without the cost of extracting ten thousand of them again), in the directory the engine installs
 * plugins to (`~/.pulumi/plugins/resource-runpod-native-v<version>/`), starts as the engine starts a
 * plugin and answers with its version and its schema.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Empty, pb, providerClient, startPluginProcess, startStubEngine } from "../plugin/pluginKit";

const run = promisify(execFile);
const REPO = path.resolve(__dirname, "..", "..");
const { version } = require("../../package.json") as { version: string };
const PLATFORM = { linux: "linux", darwin: "darwin", win32: "windows" }[process.platform as string];
const ARCH = { x64: "amd64", arm64: "arm64" }[process.arch as string];

describe.skipIf(PLATFORM === undefined || ARCH === undefined || PLATFORM === "windows")(
  "the plugin's release archive",
  { timeout: 180_000 },
  () => {
    let work: string;
    let pluginDir: string;
    let archive: string;
    let entries: string[];
    beforeAll(async () => {
      work = mkdtempSync(path.join(os.tmpdir(), "runpod-archive-test-"));
      pluginDir = path.join(work, "plugins", `resource-runpod-native-v${version}`);
      const packDir = path.join(inject("installedProjectDir"), ".pack");
      const tarball = path.join(packDir, readdirSync(packDir).find((f) => f.endsWith(".tgz")) ?? "");
      // npm's cache only (filled by `npm ci`): the test needs no network.
      const { stdout } = await run(
        process.execPath,
        ["scripts/plugin-archive.mts", "--tarball", tarball, "--out", work, "--offline", "--keep", pluginDir],
        { cwd: REPO, maxBuffer: 16 * 1024 * 1024 },
      );
      archive = stdout.trim().split("\n").pop() ?? "";
      entries = (await run("tar", ["-tzf", archive], { maxBuffer: 64 * 1024 * 1024 })).stdout
        .split("\n")
        .filter(Boolean)
        .map((e) => e.replace(/^\.\//, ""));
    });
    afterAll(() => {
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it("is named as `pulumi plugin install --file` expects and holds the launcher and production dependencies only", () => {
      expect(path.basename(archive)).toBe(
        `pulumi-resource-runpod-native-v${version}-${PLATFORM}-${ARCH}.tar.gz`,
      );
      expect(entries).toContain("pulumi-resource-runpod-native");
      expect(entries).toContain("node_modules/pulumi-runpod-dynamic/dist/plugin/main.js");
      expect(entries).toContain("node_modules/@pulumi/pulumi/package.json");
      const packages = new Set(entries.map((e) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(e)?.[1]));
      for (const devOnly of [
        "vitest",
        "typescript",
        "@biomejs/biome",
        "fastify",
        "node",
        "runpod-sdk",
        "yaml",
      ])
        expect(packages.has(devOnly), `${devOnly} is a development dependency`).toBe(false);
      expect(entries.filter((e) => e.endsWith(".map") && e.includes("pulumi-runpod-dynamic/"))).toEqual([]);
      // The install's own bookkeeping stays out.
      for (const file of ["package.json", "package-lock.json", "node_modules/.package-lock.json"])
        expect(entries).not.toContain(file);
    });

    it("in the engine's plugin directory, starts as the engine starts it and serves its version and schema", async () => {
      const tree = readdirSync(pluginDir, { recursive: true, encoding: "utf8" }).map((e) =>
        e.split(path.sep).join("/"),
      );
      expect(tree.sort()).toEqual(
        entries
          .filter((e) => e !== "")
          .map((e) => e.replace(/\/$/, ""))
          .sort(),
      );
      const launcher = path.join(pluginDir, "pulumi-resource-runpod-native");
      expect(statSync(launcher).mode & 0o111).not.toBe(0);
      expect(existsSync(path.join(pluginDir, "node_modules", "undici"))).toBe(true);

      const engine = await startStubEngine();
      // The launcher runs the `node` on PATH: this Node first, as a user's would be.
      const plugin = await startPluginProcess(engine.address, {}, launcher);
      const rpc = providerClient(plugin.port);
      try {
        const info = await rpc.call("getPluginInfo", new Empty());
        expect(info.getVersion()).toBe(version);
        const schema = JSON.parse((await rpc.call("getSchema", new pb.GetSchemaRequest())).getSchema());
        expect(schema.name).toBe("runpod-native");
        expect(schema.version).toBe(version);
        expect(Object.keys(schema.resources)).toContain("runpod-native:index:Pod");
      } finally {
        rpc.close();
        await plugin.close();
        engine.close();
      }
      expect(plugin.stderr()).toBe("");
    });
  },
);

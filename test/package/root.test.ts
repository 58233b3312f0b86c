/**
 * The package root as users load it: from the packed package installed into a temp project
 * (`inject("installedProjectDir")`, see test/support/globalSetup.ts), in fresh Node processes.
 */
import { execFile, execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";

const execFileAsync = promisify(execFile);
const projectDir = inject("installedProjectDir");

/** Runs `script` with this Node (24) in the temp project; resolves to its parsed JSON stdout. */
async function inProject<T>(script: string, args: string[] = []): Promise<T> {
  const { stdout } = await execFileAsync(process.execPath, [...args, "-e", script], { cwd: projectDir });
  return JSON.parse(stdout) as T;
}

describe("the package root", () => {
  it("loads neither the client, zod nor undici until the client is used", async () => {
    const seen = await inProject<{ atLoad: string[]; afterUse: string[]; client: string }>(`
      const loaded = () => Object.keys(require.cache).filter((f) => /[\\\\/](zod|undici)[\\\\/]|dist[\\\\/]client[\\\\/]client\\.js$/.test(f));
      const pkg = require("pulumi-runpod-dynamic");
      void pkg.ContainerRegistryAuth; void pkg.JobRun; void pkg.getNetworkVolume; void pkg.ValidationError;
      const atLoad = loaded();
      const client = typeof pkg.RunpodClient;
      process.stdout.write(JSON.stringify({ atLoad, afterUse: loaded(), client }));
    `);
    expect(seen.atLoad).toEqual([]);
    expect(seen.client).toBe("function");
    expect(seen.afterUse.some((f) => /dist[\\/]client[\\/]client\.js$/.test(f))).toBe(true);
    expect(seen.afterUse.some((f) => /[\\/]undici[\\/]/.test(f))).toBe(true);
  });

  it("exposes every runtime export of the client's public modules, as the same values", async () => {
    const missing = await inProject<string[]>(`
      const pkg = require("pulumi-runpod-dynamic");
      const modules = ["client/errors", "client/limits", "client/schemas"].map((m) => require("pulumi-runpod-dynamic/dist/" + m + ".js"));
      const client = require("pulumi-runpod-dynamic/dist/client/client.js");
      const wanted = [
        ...modules.flatMap((m) => Object.entries(m)),
        ...["RunpodClient", "DEFAULT_MAX_RETRIES", "DEFAULT_REST_URL", "DEFAULT_SERVERLESS_URL", "DEFAULT_TIMEOUT_MS"].map((k) => [k, client[k]]),
        ["Endpoint", require("pulumi-runpod-dynamic/dist/client/endpoint.js").Endpoint],
      ];
      process.stdout.write(JSON.stringify(wanted.filter(([k, v]) => k !== "__esModule" && pkg[k] !== v).map(([k]) => k)));
    `);
    expect(missing).toEqual([]);
  });

  it("gives ES modules the same named exports (Node's CommonJS export detection sees the lazy ones)", async () => {
    const names = await inProject<Record<string, string>>(
      `import { RunpodClient, NetworkVolumeSchema, JobRun, ContainerRegistryAuth, NotFoundError, startEmulator } from "pulumi-runpod-dynamic";
       process.stdout.write(JSON.stringify({ RunpodClient: typeof RunpodClient, NetworkVolumeSchema: typeof NetworkVolumeSchema.parse,
         JobRun: typeof JobRun, ContainerRegistryAuth: typeof ContainerRegistryAuth, NotFoundError: typeof NotFoundError, startEmulator: typeof startEmulator }));`,
      ["--input-type=module"],
    );
    expect(Object.values(names)).toEqual(Array(6).fill("function"));
  });

  it("names the Node it needs, and the one it got, on a Node older than engines.node", async (ctx) => {
    const engines: string = createRequire(path.join(projectDir, "package.json"))(
      "pulumi-runpod-dynamic/package.json",
    ).engines.node;
    const [needMajor = 0, needMinor = 0] = (/(\d+)\.(\d+)/.exec(engines) ?? []).slice(1).map(Number);
    const older = findOlderNode(needMajor, needMinor);
    if (!older) {
      ctx.skip(`no Node older than ${engines} on PATH or at /usr/bin/node to run the package with`);
      return;
    }
    const failure = await execFileAsync(older.bin, ["-e", 'require("pulumi-runpod-dynamic")'], {
      cwd: projectDir,
    }).then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain(`pulumi-runpod-dynamic needs Node ${needMajor}.${needMinor} or newer`);
    expect(failure?.stderr).toContain(`this is Node ${older.version}`);
    expect(failure?.stderr).not.toMatch(/TypeError/);
  });
});

/** A `node` binary older than `major.minor` (the machine's system Node is 20), if there is one. */
function findOlderNode(major: number, minor: number): { bin: string; version: string } | undefined {
  let candidates: string[] = ["/usr/bin/node", "/usr/local/bin/node"];
  try {
    candidates = [...execFileSync("which", ["-a", "node"], { encoding: "utf8" }).split("\n"), ...candidates];
  } catch {}
  for (const bin of new Set(candidates.filter(Boolean))) {
    try {
      const version = execFileSync(bin, ["-p", "process.versions.node"], { encoding: "utf8" }).trim();
      const [a = 0, b = 0] = version.split(".").map(Number);
      if (a < major || (a === major && b < minor)) return { bin, version };
    } catch {}
  }
  return undefined;
}

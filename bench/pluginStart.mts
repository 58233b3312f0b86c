/**
 * The native plugin (`pulumi-resource-runpod-native`, `dist/plugin/main.js`) as the engine meets it:
 *
 * - Start: from spawn to the port line on stdout (what the engine waits for, `newPlugin` in
 *   pulumi/pulumi pkg/resource/plugin/plugin.go), median of {@link START_RUNS} fresh processes,
 *   beside Pulumi's dynamic-provider host started the same way. Target: under 500 ms (issue 41).
 * - Per-call overhead: a ContainerRegistryAuth `Check` over gRPC to the running plugin (marshal,
 *   secret unwrap and wrap, dispatch) vs `operations.check` called directly in this process with
 *   the same values, medians of {@link CALLS} calls each, after a warm-up.
 * - Install size: the package as `npm pack` ships it (unpacked bytes, from `npm pack --dry-run
 *   --json --ignore-scripts` over the current `dist/`), beside the same files without the plugin's
 *   (`dist/plugin/`): what the plugin adds to every install.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { median, progress, REPO_DIR, type ResultRow } from "./lib.mts";

/** Fresh processes per contender for the start rows. */
export const START_RUNS = 9;
/** Calls per contender for the overhead rows. */
export const CALLS = 300;
/** The target (issue 41). */
export const START_TARGET_MS = 500;

const require = createRequire(import.meta.url);
const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
const PLUGIN = path.join(REPO_DIR, "dist", "plugin", "main.js");
const HOST = fromSdk.resolve("./cmd/dynamic-provider");

/** Spawns `args` and resolves with the child and the ms to its first stdout line. */
async function startTimed(
  command: string,
  args: string[],
): Promise<{ child: ChildProcess; ms: number; port: number }> {
  const started = performance.now();
  const child = spawn(command, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` },
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("exit", (code) => reject(new Error(`${command} exited ${code} before its port`)));
  });
  return { child, ms: performance.now() - started, port: Number(line.trim()) };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once("exit", r));
  child.kill();
  await exited;
}

export async function benchPluginStart(): Promise<ResultRow[]> {
  const plugin: number[] = [];
  const host: number[] = [];
  for (let i = 0; i < START_RUNS; i++) {
    for (const [list, cmd, args] of [
      [plugin, PLUGIN, ["127.0.0.1:1"]],
      [host, process.execPath, [HOST, "127.0.0.1:1"]],
    ] as const) {
      const started = await startTimed(cmd, [...args]);
      list.push(started.ms);
      await stop(started.child);
    }
  }
  progress(
    `plugin start: median ${median(plugin).toFixed(0)} ms (dynamic host ${median(host).toFixed(0)} ms)`,
  );

  const grpc = fromSdk("@grpc/grpc-js");
  const pb = fromSdk("./proto/provider_pb");
  const { ResourceProviderClient } = fromSdk("./proto/provider_grpc_pb");
  const { Struct } = fromSdk("google-protobuf/google/protobuf/struct_pb");
  const { operations } = require(
    path.join(REPO_DIR, "dist", "provider", "containerRegistryAuth", "operations.js"),
  );
  const type = "runpod-native:index:ContainerRegistryAuth";
  const secret = (value: unknown) => ({
    "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    value,
  });
  const news = { name: "bench", username: "bot", password: "pw-bench" };
  const running = await startTimed(PLUGIN, ["127.0.0.1:1"]);
  const client = new ResourceProviderClient(`127.0.0.1:${running.port}`, grpc.credentials.createInsecure());
  const overGrpc = () =>
    new Promise<void>((resolve, reject) => {
      const req = new pb.CheckRequest()
        .setUrn(`urn:pulumi:dev::bench::${type}::c`)
        .setType(type)
        .setOlds(Struct.fromJavaScript({}))
        .setNews(Struct.fromJavaScript({ ...news, password: secret(news.password) }));
      client.check(req, (e: unknown) => (e ? reject(e) : resolve()));
    });
  const direct = () => operations.check(undefined, {}, { ...news });
  const timeEach = async (fn: () => Promise<unknown>) => {
    for (let i = 0; i < 30; i++) await fn();
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      await fn();
      times.push(performance.now() - t);
    }
    return median(times);
  };
  const grpcMs = await timeEach(overGrpc);
  const directMs = await timeEach(direct);
  client.close();
  await stop(running.child);
  progress(`plugin Check: ${grpcMs.toFixed(3)} ms over gRPC, ${directMs.toFixed(3)} ms direct`);

  const { total, plugin: pluginBytes } = installSize();
  progress(`install size: ${total} bytes unpacked, ${pluginBytes} of them the plugin's`);

  const startMs = median(plugin);
  return [
    {
      name: "native plugin start (spawn to port line), ours",
      value: startMs,
      unit: "ms",
      peer: "dynamic-provider host",
      peerValue: median(host),
      ratio: startMs / median(host),
      target: `< ${START_TARGET_MS} ms`,
      meetsTarget: startMs < START_TARGET_MS,
    },
    {
      name: "native plugin Check over gRPC (ContainerRegistryAuth), median",
      value: grpcMs,
      unit: "ms",
      peer: "operations.check called directly",
      peerValue: directMs,
      ratio: grpcMs / directMs,
    },
    {
      name: "package install size (unpacked), with the native plugin",
      value: total / 1024,
      unit: "KiB",
      peer: "the same without dist/plugin/",
      peerValue: (total - pluginBytes) / 1024,
      ratio: total / (total - pluginBytes),
    },
  ];
}

/** The packed package's unpacked bytes, and those of its files under `dist/plugin/`. */
function installSize(): { total: number; plugin: number } {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const [packed] = JSON.parse(
    execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: REPO_DIR,
      encoding: "utf8",
    }),
  ) as Array<{ unpackedSize: number; files: Array<{ path: string; size: number }> }>;
  const plugin = packed.files
    .filter((f) => f.path.startsWith("dist/plugin/"))
    .reduce((sum, f) => sum + f.size, 0);
  return { total: packed.unpackedSize, plugin };
}

/** `node bench/pluginStart.mts` runs this section alone and prints its rows (after `npm run build`). */
if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchPluginStart())}\n`);
}

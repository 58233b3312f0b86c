/**
 * Drives the built plugin (`dist/plugin/main.js`) as the engine does: started as a child process
 * with the address of a stub engine as its argument (the stub serves the Engine service's `Log`,
 * so the plugin's logs have a target), its port read from the first line of its stdout, then
 * called with the SDK's generated client stubs. Values go in and come out as the engine marshals
 * them with `acceptSecrets` (secret wrappers, the unknown sentinel).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator";

const fromSdk = createRequire(require.resolve("@pulumi/pulumi/package.json"));
export const grpc: typeof import("@grpc/grpc-js") = fromSdk("@grpc/grpc-js");
export const pb: typeof import("@pulumi/pulumi/proto/provider_pb.js") = fromSdk("./proto/provider_pb");
export const pluginPb: typeof import("@pulumi/pulumi/proto/plugin_pb.js") = fromSdk("./proto/plugin_pb");
const providerGrpc: typeof import("@pulumi/pulumi/proto/provider_grpc_pb.js") =
  fromSdk("./proto/provider_grpc_pb");
const enginePb: typeof import("@pulumi/pulumi/proto/engine_pb.js") = fromSdk("./proto/engine_pb");
const engineGrpc: typeof import("@pulumi/pulumi/proto/engine_grpc_pb.js") = fromSdk("./proto/engine_grpc_pb");
const statusPb: typeof import("@pulumi/pulumi/proto/status_pb.js") = fromSdk("./proto/status_pb");
export const Struct: { fromJavaScript(v: object): any } = fromSdk(
  "google-protobuf/google/protobuf/struct_pb",
).Struct;
export const Empty: new () => any = fromSdk("google-protobuf/google/protobuf/empty_pb").Empty;

export const PLUGIN_BIN = path.join(__dirname, "..", "..", "dist", "plugin", "main.js");
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const secret = (value: unknown) => ({ [SECRET_SIG_KEY]: "1b47061264138c4ac30d75fd1eb44270", value });

/** A log line the stub engine received. */
export interface EngineLog {
  severity: number;
  message: string;
  urn: string;
}

/** A stub engine: records `Log` calls; every other method is unimplemented. */
export async function startStubEngine(): Promise<{ address: string; logs: EngineLog[]; close(): void }> {
  const logs: EngineLog[] = [];
  const server = new grpc.Server();
  server.addService(engineGrpc.EngineService, {
    log(call: { request: InstanceType<typeof enginePb.LogRequest> }, cb: (e: null, v: unknown) => void) {
      logs.push({
        severity: call.request.getSeverity(),
        message: call.request.getMessage(),
        urn: call.request.getUrn(),
      });
      cb(null, new Empty());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { address: `127.0.0.1:${port}`, logs, close: () => server.forceShutdown() };
}

/** An error the plugin answered, with an `ErrorResourceInitFailed` detail's fields when it had one. */
export interface PluginError {
  code: number;
  message: string;
  init?: { id: string; properties: Record<string, unknown>; reasons: string[] };
}

/** A client of a provider server, each method promisified; rejects with a {@link PluginError}. */
export function providerClient(port: number) {
  const client = new providerGrpc.ResourceProviderClient(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  const call = <T = any>(method: string, req: unknown): Promise<T> =>
    new Promise((resolve, reject) =>
      (client as any)[method](req, (err: any, res: T) => (err ? reject(toPluginError(err)) : resolve(res))),
    );
  return { call, close: () => client.close() };
}

function toPluginError(err: any): PluginError {
  const error: PluginError = { code: err.code, message: String(err.details ?? err.message) };
  const raw = err.metadata?.get?.("grpc-status-details-bin")?.[0];
  if (raw) {
    const status = statusPb.Status.deserializeBinary(new Uint8Array(raw as Buffer));
    for (const any of status.getDetailsList()) {
      if (any.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
      const d = pb.ErrorResourceInitFailed.deserializeBinary(any.getValue_asU8());
      error.init = {
        id: d.getId(),
        properties: d.getProperties()?.toJavaScript() ?? {},
        reasons: d.getReasonsList(),
      };
    }
  }
  return error;
}

/** Runs `fn` expecting a rejection; returns it. */
export async function failure(fn: () => Promise<unknown>): Promise<PluginError> {
  const result = await fn().then(
    () => undefined,
    (e: PluginError) => e,
  );
  if (result === undefined) throw new Error("expected the call to fail");
  return result;
}

/** The started plugin. */
export interface PluginProcess {
  port: number;
  /** Milliseconds from spawn to the port line (a figure, not asserted). */
  startMs: number;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Starts the built plugin (or the executable `bin`, e.g. a release archive's launcher) as the engine
 * does; `env` without any RUNPOD_* variable unless given.
 */
export async function startPluginProcess(
  engineAddress: string,
  env: NodeJS.ProcessEnv = {},
  bin: string = PLUGIN_BIN,
): Promise<PluginProcess> {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("RUNPOD_")) base[k] = v;
  // The bin runs on `node` from PATH (its shebang), as the engine would run it: this Node first.
  base.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`;
  const started = performance.now();
  const child: ChildProcess = spawn(bin, [engineAddress], {
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(Number(out.slice(0, nl).trim()));
    });
    child.once("exit", (code) =>
      reject(new Error(`plugin exited (${code}) before printing its port:\n${stderr}`)),
    );
  });
  const startMs = performance.now() - started;
  return {
    port,
    startMs,
    stderr: () => stderr,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill();
      await exited;
    },
  };
}

/** The emulator, a stub engine, the plugin started against that engine, and a client of the plugin. */
export interface PluginRig {
  emu: RunningEmulator;
  engine: Awaited<ReturnType<typeof startStubEngine>>;
  plugin: PluginProcess;
  rpc: ReturnType<typeof providerClient>;
  /** Configure as the engine sends it (`acceptSecrets` on); `args` as plain JavaScript. */
  configure(args: object): Promise<unknown>;
  /** Stops all four; resolves with what the plugin wrote to stderr and the logs the engine received. */
  close(): Promise<{ stderr: string; logs: EngineLog[] }>;
}

/** Starts the emulator with `options`, a stub engine and the built plugin; nothing configured yet. */
export async function startPluginRig(options: EmulatorOptions): Promise<PluginRig> {
  const emu = await startEmulator(options);
  let engine: PluginRig["engine"] | undefined;
  try {
    engine = await startStubEngine();
    const plugin = await startPluginProcess(engine.address);
    const rpc = providerClient(plugin.port);
    const started = engine;
    return {
      emu,
      engine: started,
      plugin,
      rpc,
      configure: (args) =>
        rpc.call(
          "configure",
          new pb.ConfigureRequest().setArgs(Struct.fromJavaScript(args)).setAcceptsecrets(true),
        ),
      close: async () => {
        rpc.close();
        const stderr = plugin.stderr();
        await plugin.close();
        started.close();
        await emu.close();
        return { stderr, logs: started.logs };
      },
    };
  } catch (e) {
    engine?.close();
    await emu.close();
    throw e;
  }
}

/** `urn:pulumi:dev::proj::<type>::<name>`. */
export const urnOf = (type: string, name: string) => `urn:pulumi:dev::proj::${type}::${name}`;

/**
 * The resource calls of one resource (`type`, `name`) as the engine makes them, values in and out
 * as plain JavaScript (secret wrappers and the unknown sentinel kept).
 */
export function resourceCalls(rpc: ReturnType<typeof providerClient>, type: string, name: string) {
  const urn = urnOf(type, name);
  const js = (s: any): Record<string, any> => s?.toJavaScript() ?? {};
  return {
    urn,
    async check(news: object, olds: object = {}) {
      const req = new pb.CheckRequest()
        .setUrn(urn)
        .setType(type)
        .setName(name)
        .setOlds(Struct.fromJavaScript(olds))
        .setNews(Struct.fromJavaScript(news));
      const res = await rpc.call("check", req);
      return {
        inputs: js(res.getInputs()),
        failures: res
          .getFailuresList()
          .map((f: any) => ({ property: f.getProperty(), reason: f.getReason() })),
      };
    },
    async diff(id: string, olds: object, news: object, oldInputs: object = olds) {
      const req = new pb.DiffRequest()
        .setId(id)
        .setUrn(urn)
        .setType(type)
        .setOlds(Struct.fromJavaScript(olds))
        .setOldInputs(Struct.fromJavaScript(oldInputs))
        .setNews(Struct.fromJavaScript(news));
      const res = await rpc.call("diff", req);
      const detailed: Record<string, number> = {};
      res.getDetaileddiffMap().forEach((v: any, k: string) => {
        detailed[k] = v.getKind();
      });
      return {
        changes: res.getChanges(),
        replaces: res.getReplacesList(),
        deleteBeforeReplace: res.getDeletebeforereplace(),
        hasDetailedDiff: res.getHasdetaileddiff(),
        detailed,
      };
    },
    async create(props: object, preview = false) {
      const req = new pb.CreateRequest()
        .setUrn(urn)
        .setType(type)
        .setProperties(Struct.fromJavaScript(props))
        .setPreview(preview);
      const res = await rpc.call("create", req);
      return { id: res.getId() as string, outs: js(res.getProperties()) };
    },
    async read(id: string, state: object, inputs: object = state) {
      const req = new pb.ReadRequest()
        .setId(id)
        .setUrn(urn)
        .setType(type)
        .setProperties(Struct.fromJavaScript(state))
        .setInputs(Struct.fromJavaScript(inputs));
      const res = await rpc.call("read", req);
      return { id: res.getId() as string, props: js(res.getProperties()) };
    },
    async update(id: string, olds: object, news: object, preview = false) {
      const req = new pb.UpdateRequest()
        .setId(id)
        .setUrn(urn)
        .setType(type)
        .setOlds(Struct.fromJavaScript(olds))
        .setOldInputs(Struct.fromJavaScript(olds))
        .setNews(Struct.fromJavaScript(news))
        .setPreview(preview);
      return js((await rpc.call("update", req)).getProperties());
    },
    delete: (id: string, props: object) =>
      rpc.call(
        "delete",
        new pb.DeleteRequest()
          .setId(id)
          .setUrn(urn)
          .setType(type)
          .setProperties(Struct.fromJavaScript(props))
          .setOldInputs(Struct.fromJavaScript(props)),
      ),
  };
}

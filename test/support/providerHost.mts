/**
 * Drives Pulumi's own dynamic-provider host (`@pulumi/pulumi/cmd/dynamic-provider`) over gRPC, as
 * the engine does, so provider tests run the real deserialization, configure and CRUD paths.
 *
 * ```ts
 * import { inject } from "vitest";
 * import { startProviderHost, urnFor, HostError } from "../support/providerHost.mts";
 * const host = await startProviderHost({ projectDir: inject("installedProjectDir") });
 * await host.configure({ "runpod:apiKey": emu.apiKey, "runpod:restUrl": emu.restUrl });
 * const urn = urnFor("ContainerRegistryAuth", "creds");
 * const { inputs, failures } = await host.check(urn, {}, { name: "n", username: "u", password: "p" });
 * const { id, outs } = await host.create(urn, inputs);
 * await host.delete(id, urn, outs);
 * expect(host.stderr()).not.toContain("p");
 * await host.close();
 * ```
 *
 * Behaviour, matching the engine and the host (checked on @pulumi/pulumi 3.270):
 * - The host runs `process.execPath` with cwd = `projectDir`, so the serialized provider's
 *   `require(...)` calls resolve the installed package there. `env` defaults to this process's
 *   environment without any `RUNPOD_*` variable (so a developer's real key never leaks in); when
 *   given it is used as is.
 * - `__provider`: for this package's types (`pulumi-nodejs:dynamic/runpod:<Kind>`), the program's
 *   inputs of check, diff, create and update (`news`) without `__provider` get
 *   `serializedProvider(projectDir, kind)` added, as `pulumi.dynamic.Resource` adds it to the inputs
 *   it registers. Olds, and the properties of read and delete, are sent as given: the engine
 *   passes the stored outputs, exactly (`RefreshStep.Apply` and `DeleteStep.Apply` in
 *   pkg/resource/deploy/step.go send `s.old.Outputs`; `provider.Read`/`Delete` in
 *   pkg/resource/plugin/provider_plugin.go marshal them as `properties`), and the host loads the
 *   provider from `__provider` in them (`getProvider(props)` in `read` and `delete` of
 *   cmd/dynamic-provider). Outputs without it (a partial failure's properties that left it out)
 *   fail there as under the real engine. Empty read props stand for `Resource.get`, which the engine
 *   reads with the program's inputs (`ReadStep.Apply`: `State: s.new.Inputs`): `__provider` is added.
 * - Values: `undefined` object fields are dropped; Pulumi's secret wrappers (`secretValue(x)`, or
 *   `{ [specialSigKey]: specialSecretSig, value }`) are unwrapped, because the host declares
 *   `acceptSecrets=false` and the engine then sends plaintext; `UNKNOWN` (the engine's unknown
 *   sentinel string) is passed through.
 * - Configure only stores the config in the host; the provider's own `configure` runs on the first
 *   CRUD call for each distinct `__provider` string, once per host process. Call `configure` first.
 * - Results include `__provider` as the engine would store it (outs and read props).
 * - Errors: every failed call rejects with {@link HostError} (`grpcCode`, message = the provider's
 *   error message). A create/update that threw an error with `.id` (a partial failure) carries
 *   `id`, `properties` and `reasons` from the host's `ErrorResourceInitFailed` detail.
 * - `diff` maps DIFF_SOME to `changes: true`, DIFF_NONE and DIFF_UNKNOWN to `false`, and says which
 *   in `changesReported` (the engine falls back to comparing inputs on "unknown").
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { type ProviderKind, serializedProvider } from "./serializedProvider.mts";

type GrpcModule = typeof import("@grpc/grpc-js");
type ProviderPb = typeof import("@pulumi/pulumi/proto/provider_pb.js");
type ProviderGrpcPb = typeof import("@pulumi/pulumi/proto/provider_grpc_pb.js");
type StatusPb = typeof import("@pulumi/pulumi/proto/status_pb.js");
/** The part of google-protobuf's Struct we use (the package ships no types). */
interface StructPb {
  Struct: { fromJavaScript(value: Record<string, unknown>): any };
}

/** The engine's sentinel for an unknown (not yet computed) value, as the host sees it in check/diff. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** Key and value marking a Pulumi RPC secret wrapper `{ [SECRET_SIG_KEY]: SECRET_SIG, value }`. */
export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** Wraps a value the way the engine marks a secret on the wire; the host wrapper unwraps it. */
export function secretValue<T>(value: T): { [SECRET_SIG_KEY]: string; value: T } {
  return { [SECRET_SIG_KEY]: SECRET_SIG, value };
}

export interface CheckFailure {
  property: string;
  reason: string;
}

export interface DiffResult {
  /** True when the provider reported DIFF_SOME. */
  changes: boolean;
  /** What the provider reported: "some", "none", or "unknown" (it returned no `changes`). */
  changesReported: "some" | "none" | "unknown";
  replaces: string[];
  deleteBeforeReplace: boolean;
  /** Detailed diff entries when the host sends any (the dynamic host currently never does). */
  detailedDiff?: Record<string, unknown>;
}

export interface ProviderHost {
  /** Sends ConfigureRequest with these stack config values (keys like "runpod:apiKey"). */
  configure(config: Record<string, string>): Promise<void>;
  check(urn: string, olds: object, news: object): Promise<{ inputs: any; failures: CheckFailure[] }>;
  diff(id: string, urn: string, olds: object, news: object): Promise<DiffResult>;
  create(urn: string, props: object): Promise<{ id: string; outs: any }>;
  /**
   * Refresh: `props` are the old outputs, sent as they are; an empty `id` in the result means the
   * resource is gone. Empty `props` read as `Resource.get` does (the program's inputs, `__provider` added).
   */
  read(
    id: string,
    urn: string,
    props: object,
    inputs?: object,
  ): Promise<{ id: string; props: any; inputs?: any }>;
  update(id: string, urn: string, olds: object, news: object, oldInputs?: object): Promise<{ outs: any }>;
  delete(id: string, urn: string, props: object): Promise<void>;
  /** Everything the host wrote to stderr so far (scan it for secrets). */
  stderr(): string;
  /** Everything the host wrote to stdout after its port line. */
  stdout(): string;
  /** The host's process id. */
  readonly pid: number;
  /** Closes the channel and stops the host; resolves once it exited. Safe to call twice. */
  close(): Promise<void>;
}

/** A failed host call. Partial failures (create/update errors with an id) carry id + properties. */
export class HostError extends Error {
  override name = "HostError";
  /** The gRPC status code (2 = UNKNOWN for provider errors, 14 = UNAVAILABLE when the host died). */
  grpcCode: number;
  /** Set for a partial failure: the resource exists with this id. */
  id?: string;
  /** Set for a partial failure: the outputs the provider attached to its error. */
  properties?: any;
  /** Set for a partial failure: the `reasons` the provider attached, if any. */
  reasons?: string[];
  constructor(message: string, grpcCode: number) {
    super(message);
    this.grpcCode = grpcCode;
  }
}

/** `urn:pulumi:test::proj::pulumi-nodejs:dynamic/runpod:<type>::<name>`. */
export function urnFor(type: ProviderKind | (string & {}), name: string): string {
  return `urn:pulumi:test::proj::${typeTokenFor(type)}::${name}`;
}

/** `pulumi-nodejs:dynamic/runpod:<type>`; a full token (containing ":") is returned unchanged. */
export function typeTokenFor(type: string): string {
  return type.includes(":") ? type : `pulumi-nodejs:dynamic/runpod:${type}`;
}

const KINDS: Record<string, ProviderKind> = {
  "pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth": "ContainerRegistryAuth",
  "pulumi-nodejs:dynamic/runpod:JobRun": "JobRun",
  "pulumi-nodejs:dynamic/runpod:NetworkVolume": "NetworkVolume",
  "pulumi-nodejs:dynamic/runpod:ServerlessEndpoint": "ServerlessEndpoint",
  "pulumi-nodejs:dynamic/runpod:SshKey": "SshKey",
  "pulumi-nodejs:dynamic/runpod:Template": "Template",
  "pulumi-nodejs:dynamic/runpod:Pod": "Pod",
  "pulumi-nodejs:dynamic/runpod:EcrDelegation": "EcrDelegation",
  "pulumi-nodejs:dynamic/runpod:Cluster": "Cluster",
};

/** Parses `urn:pulumi:<stack>::<project>::<type>::<name>`; throws naming the field on bad input. */
export function parseUrn(urn: string): { type: string; name: string } {
  const parts = urn.split("::");
  if (!urn.startsWith("urn:pulumi:") || parts.length < 4) {
    throw new Error(
      `urn must look like urn:pulumi:<stack>::<project>::<type>::<name>; got ${JSON.stringify(urn)}`,
    );
  }
  const qualified = parts[2]!;
  return { type: qualified.slice(qualified.lastIndexOf("$") + 1), name: parts.slice(3).join("::") };
}

/** Converts a JS value to what the engine would send: secrets unwrapped, undefined fields dropped. */
export function toWire(value: unknown, where = "props"): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${where}: numbers must be finite; got ${value}`);
    return value;
  }
  if (Array.isArray(value))
    return value.map((v, i) => (v === undefined ? null : toWire(v, `${where}[${i}]`)));
  if (typeof value === "object") {
    const obj = value as Record<string, unknown>;
    if (obj[SECRET_SIG_KEY] === SECRET_SIG) return toWire(obj.value, where);
    if (SECRET_SIG_KEY in obj)
      throw new Error(`${where}: assets, archives and resource references are not supported`);
    if (typeof (obj as { apply?: unknown }).apply === "function") {
      throw new Error(`${where}: a pulumi.Output cannot be sent to the host; resolve it first`);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = toWire(v, `${where}.${k}`);
    return out;
  }
  throw new Error(`${where}: ${typeof value} values cannot be sent to the host`);
}

interface Loaded {
  grpc: GrpcModule;
  pb: ProviderPb;
  rpc: ProviderGrpcPb;
  status: StatusPb;
  struct: StructPb;
  hostPath: string;
}

/** Loads grpc and the protos from the same @pulumi/pulumi copy the project uses. */
function load(projectDir: string): Loaded {
  const fromProject = createRequire(path.join(projectDir, "package.json"));
  const pulumiPkg = fromProject.resolve("@pulumi/pulumi/package.json");
  const fromPulumi = createRequire(pulumiPkg);
  return {
    grpc: fromPulumi("@grpc/grpc-js"),
    pb: fromPulumi("./proto/provider_pb"),
    rpc: fromPulumi("./proto/provider_grpc_pb"),
    status: fromPulumi("./proto/status_pb"),
    struct: fromPulumi("google-protobuf/google/protobuf/struct_pb"),
    hostPath: fromPulumi.resolve("./cmd/dynamic-provider"),
  };
}

/** This process's environment minus RUNPOD_* variables. */
function defaultEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("RUNPOD_")) env[k] = v;
  return env;
}

/** The preload that shortens the provider's polls and the client's backoff (`fastWaits.cjs`). */
const FAST_WAITS = path.join(path.dirname(fileURLToPath(import.meta.url)), "fastWaits.cjs");

/** `env` with `fastWaits.cjs` preloaded (after whatever `NODE_OPTIONS` it has) for the waits given. */
function withFastWaits(
  env: NodeJS.ProcessEnv,
  waits: { pollMs?: number; retryBackoffMs?: number; createPauseMs?: number },
) {
  if (waits.pollMs === undefined && waits.retryBackoffMs === undefined && waits.createPauseMs === undefined)
    return env;
  const preload = `--require ${JSON.stringify(FAST_WAITS)}`;
  return {
    ...env,
    NODE_OPTIONS: env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ${preload}` : preload,
    ...(waits.pollMs !== undefined ? { PROVIDER_HOST_POLL_MS: String(waits.pollMs) } : {}),
    ...(waits.retryBackoffMs !== undefined ? { PROVIDER_HOST_BACKOFF_MS: String(waits.retryBackoffMs) } : {}),
    ...(waits.createPauseMs !== undefined
      ? { PROVIDER_HOST_CREATE_PAUSE_MS: String(waits.createPauseMs) }
      : {}),
  };
}

/**
 * Starts a host process in `projectDir` (usually `inject("installedProjectDir")`) and connects to
 * it. Rejects with the host's stderr if it exits before printing its port.
 */
export async function startProviderHost(opts: {
  projectDir: string;
  env?: NodeJS.ProcessEnv;
  /**
   * The provider's wait polls (a rollout's, a pod's readiness: 1 s) read this often, ms, for an
   * emulator whose rollouts and pod starts are short (`fastWaits.cjs`); bounds and deadlines keep
   * their time. @default the provider's own
   */
  pollMs?: number;
  /**
   * The client's retry backoff in the host starts at this step, ms, instead of 0.5 s (its longest
   * step 16 of them instead of 8 s), so a test of the retry policy does not wait out real backoff;
   * a server's `Retry-After` is still waited in full (`fastWaits.cjs`). @default the client's own
   */
  retryBackoffMs?: number;
  /**
   * After a create answered 429 or 503, the provider in the host pauses this long, ms, before
   * listing to see whether it landed, instead of 1 s (doubling as it does), for a test of the
   * outcome, not the pause (`fastWaits.cjs`). @default the provider's own
   */
  createPauseMs?: number;
}): Promise<ProviderHost> {
  if (!opts || typeof opts.projectDir !== "string" || opts.projectDir === "") {
    throw new Error(
      "startProviderHost: projectDir must be the path of a temp project with the package installed",
    );
  }
  const { projectDir } = opts;
  const L = load(projectDir);
  const child: ChildProcess = spawn(process.execPath, [L.hostPath, "127.0.0.1:1"], {
    cwd: projectDir,
    env: withFastWaits(opts.env ?? defaultEnv(), opts),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const exited = once(child, "exit");
  let portLine: string | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      if (portLine !== undefined) return;
      const nl = stdout.indexOf("\n");
      if (nl < 0) return;
      portLine = stdout.slice(0, nl).trim();
      stdout = stdout.slice(nl + 1);
      const p = Number(portLine);
      if (Number.isInteger(p) && p > 0) resolve(p);
      else reject(new Error(`dynamic-provider host printed ${JSON.stringify(portLine)} instead of its port`));
    });
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(
        new Error(
          `dynamic-provider host exited (code ${code}, signal ${signal}) before listening:\n${stderr}`,
        ),
      ),
    );
  });

  const client = new L.rpc.ResourceProviderClient(`127.0.0.1:${port}`, L.grpc.credentials.createInsecure());
  const Struct = L.struct.Struct;
  const toStruct = (v: object, where: string) => Struct.fromJavaScript(toWire(v, where) as any);

  const call = <Req, Res>(method: string, req: Req): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      (client as any)[method](req, (err: any, res: Res) => {
        if (err) reject(toHostError(L, err));
        else resolve(res);
      });
    });

  /** The program's inputs as `pulumi.dynamic.Resource` registers them: with `__provider` (see the module comment). */
  const withProvider = async (urn: string, props: object): Promise<object> => {
    if ((props as Record<string, unknown>).__provider !== undefined) return props;
    const kind = KINDS[parseUrn(urn).type];
    if (!kind) return props;
    return { ...props, __provider: await serializedProvider(projectDir, kind) };
  };
  const named = <T extends { setUrn(u: string): T; setName(n: string): T; setType(t: string): T }>(
    m: T,
    urn: string,
  ) => {
    const { type, name } = parseUrn(urn);
    return m.setUrn(urn).setName(name).setType(type);
  };

  let closed: Promise<void> | undefined;
  return {
    pid: child.pid!,
    async configure(config) {
      const req = new L.pb.ConfigureRequest();
      const vars = req.getVariablesMap();
      for (const [k, v] of Object.entries(config)) {
        if (typeof v !== "string")
          throw new Error(`configure: config["${k}"] must be a string; got ${typeof v}`);
        vars.set(k, v);
      }
      req.setArgs(Struct.fromJavaScript(config));
      req.setAcceptsecrets(true).setAcceptresources(true);
      await call("configure", req);
    },
    async check(urn, olds, news) {
      const req = named(new L.pb.CheckRequest(), urn)
        .setOlds(toStruct(olds, "olds"))
        .setNews(toStruct(await withProvider(urn, news), "news"));
      const res = await call<unknown, import("@pulumi/pulumi/proto/provider_pb.js").CheckResponse>(
        "check",
        req,
      );
      return {
        inputs: res.getInputs()?.toJavaScript() ?? {},
        failures: res.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
      };
    },
    async diff(id, urn, olds, news) {
      const req = named(new L.pb.DiffRequest(), urn)
        .setId(id)
        .setOlds(toStruct(olds, "olds"))
        .setNews(toStruct(await withProvider(urn, news), "news"));
      const res = await call<unknown, import("@pulumi/pulumi/proto/provider_pb.js").DiffResponse>(
        "diff",
        req,
      );
      const C = L.pb.DiffResponse.DiffChanges;
      const changes = res.getChanges();
      const changesReported = changes === C.DIFF_SOME ? "some" : changes === C.DIFF_NONE ? "none" : "unknown";
      const result: DiffResult = {
        changes: changesReported === "some",
        changesReported,
        replaces: res.getReplacesList(),
        deleteBeforeReplace: res.getDeletebeforereplace(),
      };
      const detailed = res.getDetaileddiffMap();
      if (res.getHasdetaileddiff() || detailed.getLength() > 0) {
        result.detailedDiff = Object.fromEntries(
          detailed.getEntryList().map(([k, v]: [string, any]) => [k, v?.toObject ? v.toObject() : v]),
        );
      }
      return result;
    },
    async create(urn, props) {
      const req = named(new L.pb.CreateRequest(), urn)
        .setProperties(toStruct(await withProvider(urn, props), "props"))
        .setPreview(false);
      const res = await call<unknown, import("@pulumi/pulumi/proto/provider_pb.js").CreateResponse>(
        "create",
        req,
      );
      return { id: res.getId(), outs: res.getProperties()?.toJavaScript() ?? {} };
    },
    async read(id, urn, props, inputs) {
      // A refresh sends the stored outputs as they are, no `__provider` added (`RefreshStep.Apply`,
      // step.go: `State: s.old.Outputs`). Empty props stand for a `Resource.get`, whose read the
      // engine sends with the program's inputs, `__provider` among them (`ReadStep.Apply`:
      // `State: s.new.Inputs`).
      const empty = Object.keys(props).length === 0;
      const req = named(new L.pb.ReadRequest(), urn)
        .setId(id)
        .setProperties(toStruct(empty ? await withProvider(urn, props) : props, "props"));
      if (inputs) req.setInputs(toStruct(inputs, "inputs"));
      const res = await call<unknown, import("@pulumi/pulumi/proto/provider_pb.js").ReadResponse>(
        "read",
        req,
      );
      const out: { id: string; props: any; inputs?: any } = {
        id: res.getId(),
        props: res.getProperties()?.toJavaScript() ?? {},
      };
      if (res.getInputs()) out.inputs = res.getInputs()!.toJavaScript();
      return out;
    },
    async update(id, urn, olds, news, oldInputs) {
      const req = named(new L.pb.UpdateRequest(), urn)
        .setId(id)
        .setOlds(toStruct(olds, "olds"))
        .setNews(toStruct(await withProvider(urn, news), "news"))
        .setPreview(false);
      if (oldInputs) req.setOldInputs(toStruct(oldInputs, "oldInputs"));
      const res = await call<unknown, import("@pulumi/pulumi/proto/provider_pb.js").UpdateResponse>(
        "update",
        req,
      );
      return { outs: res.getProperties()?.toJavaScript() ?? {} };
    },
    async delete(id, urn, props) {
      // The stored outputs as they are: no `__provider` added (DeleteStep.Apply, step.go).
      const req = named(new L.pb.DeleteRequest(), urn).setId(id).setProperties(toStruct(props, "props"));
      await call("delete", req);
    },
    stderr: () => stderr,
    stdout: () => stdout,
    close() {
      closed ??= (async () => {
        client.close();
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await exited;
      })();
      return closed;
    },
  };
}

/** Converts a grpc-js error into a HostError, unpacking ErrorResourceInitFailed details. */
function toHostError(L: Loaded, err: any): HostError {
  const error = new HostError(String(err.details ?? err.message ?? err), Number(err.code ?? 2));
  const raw = err.metadata?.get?.("grpc-status-details-bin")?.[0];
  if (raw) {
    const status = L.status.Status.deserializeBinary(new Uint8Array(raw as Buffer));
    for (const any of status.getDetailsList()) {
      if (!any.getTypeName().endsWith("pulumirpc.ErrorResourceInitFailed")) continue;
      const detail = L.pb.ErrorResourceInitFailed.deserializeBinary(any.getValue_asU8());
      error.id = detail.getId();
      error.properties = detail.getProperties()?.toJavaScript() ?? {};
      error.reasons = detail.getReasonsList();
    }
  }
  return error;
}

/**
 * The deploy harness's language host: the user's program in its own process, as the engine keeps
 * it (the Node language host, sdk/nodejs/cmd/run, runs the program and talks to the engine over the
 * resource monitor, pkg/resource/deploy/source_eval.go). `deployRunner.mts` forks this file with an
 * IPC channel; the program runs under `pulumi.runtime.setMocks`, and each registration the mocks see
 * goes to the runner as one `register` message (the resource monitor's `RegisterResource`), which
 * runs Check/Diff and the step and answers the resource's id and outputs. The program's own work
 * (its code, the SDK's serialization, output resolution) no longer shares an event loop with the
 * step generator. Not run by hand.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { inspect } from "node:util";
import { UNKNOWN } from "./providerHost.mts";

/** What the runner sends first. */
export interface ProgramStart {
  main: string;
  project: string;
  stack: string;
  preview: boolean;
}

/** Options read through the stack transformation, keyed by `type::name`. */
export interface RegOptions {
  additionalSecretOutputs?: string[];
  deleteBeforeReplace?: boolean;
  protect?: boolean;
  retainOnDelete?: boolean;
  ignoreChanges?: string[];
  /** The parent's qualified type (`a$b`), "" under the root stack. */
  parentType: string;
  /** URNs this resource may have had before (`aliases`). */
  aliases: string[];
}

/** One registration as the mocks saw it, inputs with the engine's unknown sentinel. */
export interface Registration {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  custom?: boolean;
  id?: string;
}

/** Messages from the program's process to the runner. */
export type ProgramMessage =
  | { kind: "register"; seq: number; args: Registration; opts: RegOptions }
  | {
      kind: "done";
      /** Program errors as the language host prints them ({@link programErrorText}). */
      programErrors: Array<{ text: string; resource?: { type: string; name: string } }>;
      /** The stack's exports, resolved (only when the run had no error and is no preview). */
      outputs: Record<string, unknown>;
      secretOutputs: string[];
      /** What the SDK sent as each resource's dependencies, `type::name` keys. */
      dependencies: Array<[string, string[]]>;
    };

/** The runner's answer to one `register`. */
export type RegisterReply =
  | { kind: "registered"; seq: number; result: { id?: string; state: Record<string, unknown> } }
  | {
      kind: "registered";
      seq: number;
      /** `step`: the runner reported it as a failed step; `skipped`: never stepped (after a failure). */
      error: { message: string; step: boolean; skipped: boolean };
    };

const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

/** Thrown into the program for a registration the engine never stepped (after a failure). */
class Skipped extends Error {}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function main(): Promise<void> {
  const send = (m: ProgramMessage) => process.send!(m);
  // The SDK loads before the start message (it depends on the cwd and the environment only), so a
  // process the runner forked in advance waits with it loaded. A runner that goes away before it
  // sends the start leaves nothing to do.
  const requireHere = createRequire(path.join(process.cwd(), "package.json"));
  const pulumi: typeof import("@pulumi/pulumi") = requireHere("@pulumi/pulumi");
  const settings = requireHere("@pulumi/pulumi/runtime/settings");
  const sdkUnknown = requireHere("@pulumi/pulumi/output").unknown;
  const exitUnstarted = () => process.exit(0);
  process.once("disconnect", exitUnstarted);
  const start = await new Promise<ProgramStart>((resolve) =>
    process.once("message", (m) => resolve(m as ProgramStart)),
  );
  process.off("disconnect", exitUnstarted);
  const waiting = new Map<number, (r: RegisterReply) => void>();
  process.on("message", (m: RegisterReply) => {
    if (m?.kind !== "registered") return;
    const w = waiting.get(m.seq);
    waiting.delete(m.seq);
    w?.(m);
  });
  let seq = 0;

  const options = new Map<string, RegOptions>();
  /** The lines the runner reported as failed steps (the SDK reports each error once). */
  const stepErrors: string[] = [];
  const programErrors: Array<{ text: string; resource?: { type: string; name: string } }> = [];
  const printed = () => [
    ...stepErrors,
    ...programErrors.map((p) => (p.resource ? `${p.resource.type} ${p.resource.name}: ${p.text}` : p.text)),
  ];
  let sawSkipped = false;

  const register = async (args: any): Promise<{ id: string; state: Record<string, unknown> }> => {
    const reg: Registration = {
      type: args.type,
      name: args.name,
      // Unknowns first, as on the wire; secrets stay marked (plain objects, they cross as JSON).
      inputs: toSentinels(args.inputs, sdkUnknown) as Record<string, unknown>,
      ...(args.custom !== undefined ? { custom: args.custom } : {}),
      ...(args.id ? { id: args.id } : {}),
    };
    const opts = options.get(`${args.type}::${args.name}`) ?? { parentType: "", aliases: [] };
    const n = seq++;
    const reply = await new Promise<RegisterReply>((resolve) => {
      waiting.set(n, resolve);
      send({ kind: "register", seq: n, args: reg, opts });
    });
    if ("error" in reply) {
      if (reply.error.skipped) {
        sawSkipped = true;
        throw new Skipped(reply.error.message);
      }
      if (reply.error.step) stepErrors.push(reply.error.message);
      throw new Error(reply.error.message);
    }
    return reply.result as { id: string; state: Record<string, unknown> };
  };

  // The SDK reports a failed registration as an uncaught error; the engine would fail the step
  // and the deployment, not crash: collect them (until this process ends).
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => {
    if (!(e instanceof Skipped) && !unhandled.includes(e)) unhandled.push(e);
  };
  const reported = new Set<unknown>();
  const entryPoint = entryPointOf(start.main);
  const programError = (e: unknown) => {
    programErrors.push(programErrorText(e, entryPoint, pulumi));
  };
  process.on("unhandledRejection", onUnhandled);
  process.on("uncaughtException", onUnhandled);

  await pulumi.runtime.setMocks(
    {
      newResource: register,
      call: async (args: any) => {
        throw new Error(
          `deploy harness: invokes are not supported (${args.token}); lookups run in the program`,
        );
      },
    },
    start.project,
    start.stack,
    start.preview,
  );

  /** The qualified type of a resource's parent chain (`resource.NewURN`), "" for the root stack. */
  const qualifiedType = (r: any): string => {
    if (!r || r.__pulumiType === ROOT_STACK_TYPE || r.__pulumiType === undefined) return "";
    const up = qualifiedType(r.__parentResource);
    return up ? `${up}$${r.__pulumiType}` : r.__pulumiType;
  };
  /** An alias as the Node SDK sends it (`resource.ts` `collapseAliasToUrn`), resolved synchronously. */
  const aliasUrn = (a: any, type: string, name: string, parentType: string): string | undefined => {
    if (typeof a === "string") return a;
    if (!a || typeof a !== "object") return undefined;
    let pType = parentType;
    // `{ parent: undefined }` (`pulumi.rootStackResource` is undefined) means no parent: the SDK
    // sends `noParent` for an own `parent` key that is undefined (runtime/resource.ts).
    if (Object.hasOwn(a, "parent")) pType = a.parent === undefined ? "" : qualifiedType(a.parent);
    const t = typeof a.type === "string" ? a.type : type;
    const n = typeof a.name === "string" ? a.name : name;
    const stack = typeof a.stack === "string" ? a.stack : start.stack;
    const project = typeof a.project === "string" ? a.project : start.project;
    return `urn:pulumi:${stack}::${project}::${pType ? `${pType}$` : ""}${t}::${n}`;
  };

  const registeredDependencies = captureDependencies(settings);
  let raw: Record<string, unknown> = {};
  try {
    await pulumi.runtime.runInPulumiStack(async () => {
      pulumi.runtime.registerStackTransformation((t) => {
        const o = t.opts as import("@pulumi/pulumi").CustomResourceOptions;
        const parentType = qualifiedType(o.parent);
        options.set(`${t.type}::${t.name}`, {
          additionalSecretOutputs: o.additionalSecretOutputs,
          deleteBeforeReplace: o.deleteBeforeReplace,
          protect: o.protect,
          retainOnDelete: o.retainOnDelete,
          ignoreChanges: o.ignoreChanges,
          parentType,
          aliases: (o.aliases ?? [])
            .map((a) => aliasUrn(a, t.type, t.name, parentType))
            .filter((a): a is string => a !== undefined),
        });
        return undefined;
      });
      const mod = await import(pathToFileURL(start.main).href);
      const named = Object.fromEntries(
        Object.entries(mod).filter(([k]) => k !== "default" && k !== "module.exports"),
      );
      if (typeof mod.default === "function") raw = (await mod.default()) ?? {};
      else if (Object.keys(named).length === 0 && mod.default && typeof mod.default === "object")
        raw = mod.default;
      else raw = named;
      return raw;
    });
  } catch (e) {
    const msg = messageOf(e);
    // The SDK reports each error once (`isErrorReported` in cmd/run/run.js).
    if (!(e instanceof Skipped) && !stepErrors.some((s) => msg.includes(s))) programError(e);
    reported.add(e);
  }
  await settings.waitForRPCs().catch((e: unknown) => onUnhandled(e));
  for (const e of unhandled) {
    if (reported.has(e)) continue;
    const msg = messageOf(e);
    if (/not stepped: the deployment stopped/.test(msg)) continue;
    if (!stepErrors.some((s) => msg.includes(s)) && !printed().some((s) => s.includes(msg))) programError(e);
  }

  const outputs: Record<string, unknown> = {};
  const secretOutputs: string[] = [];
  if (stepErrors.length === 0 && programErrors.length === 0 && !sawSkipped) {
    // In a preview too: the stack's outputs reach the engine with what is known then, an export
    // whose value is not known yet as the unknown sentinel (the display prints `[unknown]`).
    for (const [k, v] of Object.entries(raw ?? {})) {
      const o = pulumi.output(v as any) as any;
      const [known, value, secret] = await Promise.all([o.isKnown, o.promise(), o.isSecret]);
      if (!known) {
        outputs[k] = UNKNOWN;
        continue;
      }
      if (value === undefined) continue;
      outputs[k] = value;
      if (secret) secretOutputs.push(k);
    }
  }
  send({
    kind: "done",
    programErrors,
    outputs,
    secretOutputs,
    dependencies: [...registeredDependencies.entries()],
  });
  process.disconnect();
}

/**
 * Wraps the mock monitor's RegisterResource to keep what the SDK sends the engine as a resource's
 * dependencies: `dependencies` (dependsOn and inputs' resources), `propertyDependencies` and the
 * `parent`, as `type::name` keys (the mock monitor's URNs keep only the last parent type).
 */
function captureDependencies(settings: any): Map<string, string[]> {
  const captured = new Map<string, string[]>();
  const monitor = settings.getMonitor();
  const register = monitor.registerResource.bind(monitor);
  const key = (urn: string) => {
    const parts = urn.split("::");
    return `${(parts[2] ?? "").split("$").pop()}::${parts.slice(3).join("::")}`;
  };
  monitor.registerResource = (req: any, callback: unknown) => {
    const urns = new Set<string>(req.getDependenciesList());
    req.getPropertydependenciesMap().forEach((deps: any) => {
      for (const u of deps.getUrnsList()) urns.add(u);
    });
    if (req.getParent()) urns.add(req.getParent());
    captured.set(`${req.getType()}::${req.getName()}`, [...urns].map(key));
    return register(req, callback);
  };
  return captured;
}

/** The classes of the program's `@pulumi/pulumi` that the SDK's uncaught-error handler tells apart. */
export interface ProgramSdk {
  RunError: { isInstance(x: unknown): boolean };
  ResourceError: { isInstance(x: unknown): boolean };
}

/**
 * What the Node language host prints for an error the program throws (a failing lookup, a missing
 * config value), read from the uncaught-error handler of `run` in @pulumi/pulumi's cmd/run/run.js
 * (3.270, the version we depend on): a `RunError` (e.g. `pulumi.Config.require`) prints its message
 * alone; a `ResourceError` its message (whole `util.inspect` unless `hideStack`) under its resource;
 * anything else `Running program '<entry>' failed with an unhandled exception:\n` and the error as
 * `defaultErrorMessage` (cmd/run/error.js) prints it: `util.inspect(err)`, the stack included. The
 * SDK asks for colours there; the text is the same without them. `entryPoint` is what the engine
 * passes as the program (`getPwdMain`, pkg/engine/project.go): "." unless Pulumi.yaml names a file.
 */
export function programErrorText(
  err: unknown,
  entryPoint: string,
  sdk: ProgramSdk,
): { text: string; resource?: { type: string; name: string } } {
  const e = err as { name?: string; message?: string; stack?: string; hideStack?: boolean; resource?: any };
  const defaultErrorMessage = (x: any): string => {
    if (x?.stack) return inspect(x);
    if (x?.message) return x.message;
    return `${x}`;
  };
  if (sdk.RunError.isInstance(err)) return { text: String(e.message) };
  const prefix = `Running program '${entryPoint}' failed with an unhandled exception:\n`;
  if (e && (e.name === "TSError" || e.name === "SyntaxError")) {
    const parts = String(e.stack ?? "").split(String(e.message));
    return { text: prefix + (parts.length === 2 ? parts[0] + e.message : e.message) };
  }
  if (sdk.ResourceError.isInstance(err)) {
    const text = e.hideStack ? String(e.message) : defaultErrorMessage(err);
    const r = e.resource;
    return r ? { text, resource: { type: r.__pulumiType, name: r.__name } } : { text };
  }
  return { text: prefix + defaultErrorMessage(err) };
}

/** The program argument the engine gives the language host (`getPwdMain`, pkg/engine/project.go). */
function entryPointOf(main: string): string {
  const yaml = path.join(process.cwd(), "Pulumi.yaml");
  if (!existsSync(yaml)) return path.basename(main);
  const declared = readFileSync(yaml, "utf8").match(/^main:\s*["']?([^"'\n#]+?)["']?\s*(#.*)?$/m)?.[1];
  if (!declared) return ".";
  return statSync(path.resolve(process.cwd(), declared), { throwIfNoEntry: false })?.isDirectory()
    ? "."
    : path.basename(declared);
}

/** The SDK's `unknown` (an object) becomes the engine's sentinel string, as on the wire. */
function toSentinels(v: unknown, unknown: unknown): unknown {
  if (v === unknown) return UNKNOWN;
  if (Array.isArray(v)) return v.map((x) => toSentinels(x, unknown));
  if (typeof v === "object" && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toSentinels(x, unknown)]));
  return v;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(
      `deploy harness program host crashed: ${e instanceof Error ? e.stack : String(e)}\n`,
    );
    process.exit(1);
  });
}

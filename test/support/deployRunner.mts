/**
 * Child-process side of the deploy harness (see `deployHarness.mts`, which spawns it; do not run it
 * by hand). One process = one `up`, `refresh` or `destroy`: it reads a JSON request on stdin, plays
 * the engine's part against Pulumi's real dynamic-provider host, saves the state file after every
 * step, and writes a JSON result to `request.resultFile`.
 *
 * cwd is the program's copy inside the temp project, so `@pulumi/pulumi` and
 * `pulumi-runpod-dynamic` resolve there, exactly as for a user's program.
 */

import { writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { type HarnessState, loadState, type ResourceState, saveState } from "./harnessState.mts";
import {
  HostError,
  type ProviderHost,
  SECRET_SIG,
  SECRET_SIG_KEY,
  startProviderHost,
} from "./providerHost.mts";

export type Operation = "up" | "refresh" | "destroy";

/** What the parent sends on stdin. */
export interface RunnerRequest {
  op: Operation;
  /** Absolute path of the program's entry module (for `up`). */
  main: string;
  stateFile: string;
  resultFile: string;
  passphrase: string;
  project: string;
  stack: string;
  /** Stack config, plaintext, with the secret keys listed. */
  config: Record<string, string>;
  secretConfigKeys: string[];
  /** Environment of the provider host. */
  hostEnv: NodeJS.ProcessEnv;
}

export type StepOp = "create" | "update" | "replace" | "same" | "delete" | "failed";

export interface RunnerResult {
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  resources: Array<{ urn: string; id: string; op: StepOp; error?: string }>;
  errors: string[];
  logs: string[];
}

const DYNAMIC_PREFIX = "pulumi-nodejs:dynamic";

function containsSecret(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(containsSecret);
  if (typeof v === "object" && v !== null) {
    if ((v as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG) return true;
    return Object.values(v).some(containsSecret);
  }
  return false;
}

function unwrapSecrets(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unwrapSecrets);
  if (typeof v === "object" && v !== null) {
    const obj = v as Record<string, unknown>;
    if (obj[SECRET_SIG_KEY] === SECRET_SIG) return unwrapSecrets(obj.value);
    return Object.fromEntries(Object.entries(obj).map(([k, x]) => [k, unwrapSecrets(x)]));
  }
  return v;
}

const wrapSecret = (value: unknown) => ({ [SECRET_SIG_KEY]: SECRET_SIG, value });
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

async function readStdin(): Promise<string> {
  let data = "";
  for await (const chunk of process.stdin) data += chunk;
  return data;
}

async function main(): Promise<void> {
  const req = JSON.parse(await readStdin()) as RunnerRequest;
  const logs: string[] = [];
  const errors: string[] = [];
  const resources: RunnerResult["resources"] = [];
  const log = (line: string) => logs.push(line);

  const { state, crypter } = await loadState(req.stateFile, req.passphrase, req.project, req.stack);
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    const snapshot: HarnessState = structuredClone(state);
    saving = saving.then(() => saveState(req.stateFile, snapshot, crypter));
    return saving;
  };

  let host: ProviderHost | undefined;
  let hostStarting: Promise<ProviderHost> | undefined;
  const getHost = () => {
    hostStarting ??= (async () => {
      const h = await startProviderHost({ projectDir: process.cwd(), env: req.hostEnv });
      await h.configure(req.config);
      host = h;
      return h;
    })();
    return hostStarting;
  };

  const deleteResource = async (r: ResourceState, list: ResourceState[]): Promise<boolean> => {
    const h = await getHost();
    try {
      await h.delete(r.id, r.urn, r.outputs);
      list.splice(list.indexOf(r), 1);
      resources.push({ urn: r.urn, id: r.id, op: "delete" });
      log(`- delete ${r.urn} (${r.id})`);
      await save();
      return true;
    } catch (e) {
      const msg = `${r.type} ${r.name}: delete failed: ${messageOf(e)}`;
      errors.push(msg);
      resources.push({ urn: r.urn, id: r.id, op: "failed", error: msg });
      return false;
    }
  };

  let outputs: Record<string, unknown> = {};
  let secretOutputs: string[] = [];

  try {
    if (req.op === "up") {
      ({ outputs, secretOutputs } = await runUp());
    } else if (req.op === "refresh") {
      await runRefresh();
    } else if (req.op === "destroy") {
      for (const r of [...state.pendingDeletes].reverse()) await deleteResource(r, state.pendingDeletes);
      for (const r of [...state.resources].reverse()) await deleteResource(r, state.resources);
      if (errors.length === 0) {
        state.outputs = {};
        state.secretOutputs = [];
        await save();
      }
    } else {
      throw new Error(`op must be "up", "refresh" or "destroy"; got ${JSON.stringify(req.op)}`);
    }
  } catch (e) {
    errors.push(messageOf(e));
  } finally {
    await saving.catch((e) => errors.push(`saving state failed: ${messageOf(e)}`));
    if (host) {
      await host.close();
      for (const line of host.stderr().split("\n")) if (line.trim()) logs.push(`[host] ${line}`);
    }
  }
  const result: RunnerResult = { outputs, secretOutputs, resources, errors, logs };
  await writeFile(req.resultFile, JSON.stringify(result), { mode: 0o600 });

  async function runRefresh(): Promise<void> {
    for (const r of [...state.resources]) {
      const h = await getHost();
      try {
        const read = await h.read(r.id, r.urn, r.outputs, r.inputs);
        if (!read.id) {
          state.resources.splice(state.resources.indexOf(r), 1);
          resources.push({ urn: r.urn, id: r.id, op: "delete" });
          log(`- refresh: ${r.urn} (${r.id}) is gone`);
        } else {
          const changed = !same(read.props, r.outputs) || read.id !== r.id;
          r.id = read.id;
          r.outputs = read.props;
          if (read.inputs) r.inputs = read.inputs;
          resources.push({ urn: r.urn, id: r.id, op: changed ? "update" : "same" });
        }
        await save();
      } catch (e) {
        const msg = `${r.type} ${r.name}: read failed: ${messageOf(e)}`;
        errors.push(msg);
        resources.push({ urn: r.urn, id: r.id, op: "failed", error: msg });
      }
    }
  }

  async function runUp(): Promise<{ outputs: Record<string, unknown>; secretOutputs: string[] }> {
    const requireHere = createRequire(path.join(process.cwd(), "package.json"));
    const pulumi: typeof import("@pulumi/pulumi") = requireHere("@pulumi/pulumi");
    const settings = requireHere("@pulumi/pulumi/runtime/settings");

    const options = new Map<string, { additionalSecretOutputs?: string[]; deleteBeforeReplace?: boolean }>();
    const seen = new Set<string>();
    const stepErrors: string[] = [];

    const fail = (urn: string, id: string, msg: string): never => {
      stepErrors.push(msg);
      errors.push(msg);
      resources.push({ urn, id, op: "failed", error: msg });
      throw new Error(msg);
    };

    const register = async (args: {
      type: string;
      name: string;
      inputs: Record<string, unknown>;
      custom?: boolean;
    }): Promise<{ id?: string; state: Record<string, unknown> }> => {
      const { type, name } = args;
      if (!type.startsWith(DYNAMIC_PREFIX)) {
        if (!args.custom) return { id: undefined, state: args.inputs };
        throw new Error(
          `deploy harness: only dynamic resources (${DYNAMIC_PREFIX}/...) are deployed; ${name} is a ${type}`,
        );
      }
      const urn = `urn:pulumi:${req.stack}::${req.project}::${type}::${name}`;
      if (seen.has(urn))
        fail(urn, "", `${type} ${name}: registered twice (the harness keys state by type and name)`);
      seen.add(urn);
      const opts = options.get(`${type}::${name}`) ?? {};
      const secretInputs = Object.keys(args.inputs).filter((k) => containsSecret(args.inputs[k]));
      const news = unwrapSecrets(args.inputs) as Record<string, unknown>;
      const old = state.resources.find((r) => r.urn === urn);
      const h = await getHost();

      const checked = await h
        .check(urn, old?.inputs ?? {}, news)
        .catch((e) => fail(urn, old?.id ?? "", `${type} ${name}: check failed: ${messageOf(e)}`));
      if (checked.failures.length > 0) {
        const list = checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ");
        fail(urn, old?.id ?? "", `${type} ${name}: invalid inputs: ${list}`);
      }
      const inputs = checked.inputs as Record<string, unknown>;
      const record = (id: string, outs: Record<string, unknown>, initErrors?: string[]): ResourceState => {
        const secretOutputs = Object.keys(outs).filter(
          (k) => secretInputs.includes(k) || (opts.additionalSecretOutputs ?? []).includes(k),
        );
        const entry: ResourceState = {
          urn,
          type,
          name,
          id,
          inputs,
          outputs: outs,
          secretInputs,
          secretOutputs,
        };
        if (opts.additionalSecretOutputs) entry.additionalSecretOutputs = opts.additionalSecretOutputs;
        if (initErrors) entry.initErrors = initErrors;
        const at = state.resources.findIndex((r) => r.urn === urn);
        if (at >= 0) state.resources[at] = entry;
        else state.resources.push(entry);
        return entry;
      };
      const toProgram = (entry: ResourceState) => ({
        id: entry.id,
        state: Object.fromEntries(
          Object.entries(entry.outputs).map(([k, v]) => [
            k,
            entry.secretOutputs.includes(k) ? wrapSecret(v) : v,
          ]),
        ),
      });
      const partial = async (e: unknown, op: "create" | "update", fallbackId: string) => {
        if (e instanceof HostError && e.id) {
          if (e.properties && !("__provider" in e.properties)) {
            log(
              `warning: ${type} ${name}: the partial failure's properties carry no __provider; ` +
                "a later delete of this resource would fail in the real host",
            );
          }
          record(e.id, e.properties ?? {}, [e.message]);
          await save();
          fail(
            urn,
            e.id,
            `${type} ${name}: ${op} failed after the resource was created (id ${e.id}): ${e.message}`,
          );
        }
        fail(urn, fallbackId, `${type} ${name}: ${op} failed: ${messageOf(e)}`);
      };

      if (!old) {
        const created = await h.create(urn, inputs).catch((e) => partial(e, "create", ""));
        const entry = record(created!.id, created!.outs);
        await save();
        resources.push({ urn, id: entry.id, op: "create" });
        log(`+ create ${urn} (${entry.id})`);
        return toProgram(entry);
      }

      const diff = await h
        .diff(old.id, urn, old.outputs, inputs)
        .catch((e) => fail(urn, old.id, `${type} ${name}: diff failed: ${messageOf(e)}`));
      const changed =
        diff.changesReported === "some" ||
        (diff.changesReported === "unknown" && !same(stripProvider(old.inputs), stripProvider(inputs)));

      if (diff.replaces.length > 0) {
        const deleteFirst = diff.deleteBeforeReplace || opts.deleteBeforeReplace === true;
        if (deleteFirst) {
          try {
            await h.delete(old.id, urn, old.outputs);
          } catch (e) {
            fail(urn, old.id, `${type} ${name}: delete before replace failed: ${messageOf(e)}`);
          }
          state.resources.splice(state.resources.indexOf(old), 1);
          await save();
        }
        // Create-before-delete: the old resource waits in pendingDeletes until the end of the run.
        if (!deleteFirst) state.pendingDeletes.push(old);
        const created = await h.create(urn, inputs).catch((e) => {
          if (!deleteFirst && !(e instanceof HostError && e.id)) state.pendingDeletes.pop();
          return partial(e, "create", deleteFirst ? "" : old.id);
        });
        const entry = record(created!.id, created!.outs);
        await save();
        resources.push({ urn, id: entry.id, op: "replace" });
        log(
          `+- replace ${urn} (${old.id} -> ${entry.id}; ${deleteFirst ? "deleted first" : "old deleted last"}; replaces: ${diff.replaces.join(", ")})`,
        );
        return toProgram(entry);
      }

      if (changed || old.initErrors) {
        const updated = await h
          .update(old.id, urn, old.outputs, inputs, old.inputs)
          .catch((e) => partial(e, "update", old.id));
        const entry = record(old.id, updated!.outs);
        await save();
        resources.push({ urn, id: entry.id, op: "update" });
        log(`~ update ${urn} (${entry.id})${changed ? "" : " (re-run: last create/update failed)"}`);
        return toProgram(entry);
      }

      // No change: the engine keeps the old outputs and refreshes the stored inputs.
      const entry = record(old.id, old.outputs);
      await save();
      resources.push({ urn, id: entry.id, op: "same" });
      return toProgram(entry);
    };

    // The SDK reports a failed registration as an uncaught error; the engine would fail the step
    // and the deployment, not crash: collect them (until this process ends).
    const unhandled: string[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(messageOf(e));
    process.on("unhandledRejection", onUnhandled);
    process.on("uncaughtException", onUnhandled);

    await pulumi.runtime.setMocks(
      {
        newResource: async (args: any) =>
          (await register(args)) as { id: string; state: Record<string, unknown> },
        call: async (args: any) => {
          throw new Error(
            `deploy harness: invokes are not supported (${args.token}); lookups run in the program`,
          );
        },
      },
      req.project,
      req.stack,
      false,
    );

    let raw: Record<string, unknown> = {};
    try {
      await pulumi.runtime.runInPulumiStack(async () => {
        pulumi.runtime.registerStackTransformation((t) => {
          const o = t.opts as import("@pulumi/pulumi").CustomResourceOptions;
          options.set(`${t.type}::${t.name}`, {
            additionalSecretOutputs: o.additionalSecretOutputs,
            deleteBeforeReplace: o.deleteBeforeReplace,
          });
          return undefined;
        });
        const mod = await import(pathToFileURL(req.main).href);
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
      if (!stepErrors.some((s) => msg.includes(s))) errors.push(`program failed: ${msg}`);
    }
    await settings.waitForRPCs().catch((e: unknown) => unhandled.push(messageOf(e)));
    for (const msg of unhandled) {
      if (!stepErrors.some((s) => msg.includes(s)) && !errors.some((s) => s.includes(msg))) errors.push(msg);
    }

    const outputs: Record<string, unknown> = {};
    const secretOutputs: string[] = [];
    if (errors.length === 0) {
      for (const [k, v] of Object.entries(raw ?? {})) {
        const o = pulumi.output(v as any) as any;
        const [value, secret] = await Promise.all([o.promise(), o.isSecret]);
        if (value === undefined) continue;
        outputs[k] = value;
        if (secret) secretOutputs.push(k);
      }
      state.outputs = outputs;
      state.secretOutputs = secretOutputs;
      // Resources that left the program, then the old halves of replacements, newest first.
      for (const r of [...state.resources].reverse())
        if (!seen.has(r.urn)) await deleteResource(r, state.resources);
      for (const r of [...state.pendingDeletes].reverse()) await deleteResource(r, state.pendingDeletes);
      await save();
    }
    // The result shows secret exports as "[secret]", like `pulumi stack output`; the state has them.
    const shown = Object.fromEntries(
      Object.entries(outputs).map(([k, v]) => [k, secretOutputs.includes(k) ? "[secret]" : v]),
    );
    return { outputs: shown, secretOutputs };
  }
}

function stripProvider(o: Record<string, unknown>): Record<string, unknown> {
  const { __provider: _p, ...rest } = o;
  return rest;
}

main().catch((e) => {
  process.stderr.write(`deploy runner crashed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

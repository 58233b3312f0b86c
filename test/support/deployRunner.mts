/**
 * Child-process side of the deploy harness (see `deployHarness.mts`, which spawns it; do not run it
 * by hand). One process = one `up`, `preview`, `refresh` or `destroy`: it reads a JSON request on
 * stdin, plays the engine's part against Pulumi's real dynamic-provider host, saves the state file
 * after every step (never in a preview), and writes a JSON result to `request.resultFile`.
 *
 * cwd is the program's copy inside the temp project, so `@pulumi/pulumi` and
 * `pulumi-runpod-dynamic` resolve there, exactly as for a user's program.
 *
 * Every engine rule it follows is listed, with the engine function it comes from, in
 * `test/support/README.md`; the comments below cite the same functions.
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
  UNKNOWN,
} from "./providerHost.mts";

export type Operation = "up" | "preview" | "refresh" | "destroy";

/** What the parent sends on stdin. */
export interface RunnerRequest {
  op: Operation;
  /** Absolute path of the program's entry module (for `up` and `preview`). */
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
  /** At most this many resource steps at once (`pulumi up --parallel`). */
  parallel: number;
}

/** `read` = `Resource.get`; in a preview the ops are the plan. */
export type StepOp = "create" | "update" | "replace" | "same" | "delete" | "read" | "failed";

export interface RunnerResult {
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  /** `error`: the text the engine prints under the resource in Diagnostics. */
  resources: Array<{ urn: string; id: string; op: StepOp; error?: string }>;
  /** Diagnostics: one `<type> <name>: <text>` per failed step, and program errors. */
  errors: string[];
  /** Warnings the engine prints (e.g. a refresh that found the resource unhealthy). */
  warnings: string[];
  logs: string[];
  /**
   * What the provider host wrote to stderr, then to stdout after its port: the CLI shows it to the
   * user under the stack in `Diagnostics:` ({@link hostOutputLines}).
   */
  hostOutput: string[];
  /** Most steps that ran at the same time. */
  maxConcurrentSteps: number;
  /** From the first step's start to the last step's end, ms (0 without steps). */
  stepsMs: number;
  /** Total time of the Check calls, which the engine's step generator makes one at a time, ms. */
  checkMs: number;
}

const DYNAMIC_PREFIX = "pulumi-nodejs:dynamic";

/**
 * The provider host's output as the CLI shows it. The engine does not hide a dynamic provider's
 * output (`newPlugin` in pkg/resource/plugin/plugin.go hides only non-dynamic resource plugins'):
 * `runtrace` reads stderr and, after the port line, stdout line by line and logs each line that
 * is not blank as an info diagnostic with no URN (`ctx.Diag.Infoerrf`/`Infof` of
 * `diag.StreamMessage("", msg, streamID)`, no `error:`/`warning:` prefix: `StringifyDiag` in
 * pkg/engine/eventsink.go). The display attaches a diagnostic without URN to the stack's row
 * (`processNormalEvent` in pkg/backend/display/progress.go) and `printDiagnostics` prints each
 * stream's lines as one block under `pulumi:pulumi:Stack (<project>-<stack>):`, trailing spaces
 * trimmed (`renderProgressDiagEvent`). One block per stream; stderr first here (the display's
 * order of two streams is a Go map's).
 */
export function hostOutputLines(stderr: string, stdout: string): string[] {
  const lines = (text: string) =>
    text
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.trimEnd());
  return [...lines(stderr), ...lines(stdout)];
}
const ROOT_STACK_TYPE = "pulumi:pulumi:Stack";

/**
 * What the engine prints for a partial failure: `plugin.InitError.Error()` (provider_plugin.go)
 * joins the `reasons` with go-multierror's ListFormatFunc, or says "resource init failed" when
 * there are none. The trailing blank line is dropped as the display does.
 */
export function initErrorText(reasons: string[]): string {
  if (reasons.length === 0) return "resource init failed";
  if (reasons.length === 1) return `1 error occurred:\n\t* ${reasons[0]}`;
  return `${reasons.length} errors occurred:\n\t${reasons.map((r) => `* ${r}`).join("\n\t")}`;
}

/**
 * What the engine prints for one check failure (`issueCheckFailures`, pkg/resource/deploy/
 * step_generator.go; diag 2003 and 2002 in sdk/go/common/diag/errors.go):
 * `<type> resource '<name>': property <p> value <v> has a problem: <reason>`, or, with no property,
 * `<type> resource '<name>' has a problem: <reason>`. `<v>` is the program's input under that
 * top-level key, printed whole as Go's `%v` prints a `resource.PropertyValue` ({@link goPropertyValue}):
 * a nested path (`expect.timeoutMs`) is no key, so it prints `{<nil>}`; a secret prints its value.
 */
export function checkFailureText(
  type: string,
  name: string,
  programInputs: Record<string, unknown>,
  failure: { property: string; reason: string },
): string {
  if (failure.property === "") return `${type} resource '${name}' has a problem: ${failure.reason}`;
  const value = goPropertyValue(programInputs[failure.property]);
  return `${type} resource '${name}': property ${failure.property} value ${value} has a problem: ${failure.reason}`;
}

/**
 * A property value as Go's `%v` prints it: `PropertyValue.String()` (sdk/go/common/resource/
 * properties.go) is `{%v}` of the underlying value; maps print `map[k:v ...]` sorted by key, arrays
 * `[a b]`, a secret (`*Secret`) `&{<element>}`, an unknown `output<string>{}`, a missing key `{<nil>}`.
 */
export function goPropertyValue(v: unknown): string {
  if (v === UNKNOWN) return "output<string>{}";
  if (v === undefined || v === null) return "{<nil>}";
  if (typeof v === "object" && (v as Record<string, unknown>)[SECRET_SIG_KEY] === SECRET_SIG) {
    return `{&{${goPropertyValue((v as { value: unknown }).value)}}}`;
  }
  if (Array.isArray(v)) return `{[${v.map(goPropertyValue).join(" ")}]}`;
  if (typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{map[${entries.map(([k, x]) => `${k}:${goPropertyValue(x)}`).join(" ")}]}`;
  }
  if (typeof v === "number") return `{${goFloat(v)}}`;
  return `{${String(v)}}`;
}

/** A float64 as Go's `%v` writes it: shortest digits, an exponent below 1e-4 and from 1e21. */
function goFloat(n: number): string {
  const abs = Math.abs(n);
  if (n === 0 || (abs >= 1e-4 && abs < 1e21)) return String(n);
  const [mantissa, exponent] = n.toExponential().split("e") as [string, string];
  const sign = exponent.startsWith("-") ? "-" : "+";
  return `${mantissa}e${sign}${exponent.replace(/^[+-]/, "").padStart(2, "0")}`;
}

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

/** The SDK's `unknown` (an object) becomes the engine's sentinel string, as on the wire. */
function toSentinels(v: unknown, unknown: unknown): unknown {
  if (v === unknown) return UNKNOWN;
  if (Array.isArray(v)) return v.map((x) => toSentinels(x, unknown));
  if (typeof v === "object" && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toSentinels(x, unknown)]));
  return v;
}

const wrapSecret = (value: unknown) => ({ [SECRET_SIG_KEY]: SECRET_SIG, value });
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A counting semaphore: the engine's step executor has `parallel` workers (step_executor.go). */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  running = 0;
  max = 0;
  /** performance.now() when the first step started and when the last one ended. */
  firstStart?: number;
  lastEnd?: number;
  constructor(n: number) {
    this.free = Math.max(1, n);
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    this.max = Math.max(this.max, this.running);
    this.firstStart ??= performance.now();
    try {
      return await fn();
    } finally {
      this.lastEnd = performance.now();
      this.running--;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

/** Thrown into the program for a registration the engine never stepped (after a failure). */
class Skipped extends Error {}

async function readStdin(): Promise<string> {
  let data = "";
  for await (const chunk of process.stdin) data += chunk;
  return data;
}

/** Options read through the stack transformation, keyed by `type::name`. */
interface RegOptions {
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

async function main(): Promise<void> {
  const req = JSON.parse(await readStdin()) as RunnerRequest;
  const preview = req.op === "preview";
  const logs: string[] = [];
  const errors: string[] = [];
  const warnings: string[] = [];
  const resources: RunnerResult["resources"] = [];
  const log = (line: string) => logs.push(line);
  const slots = new Slots(req.parallel);
  /** Set at the first failed step: the executor cancels, nothing new is scheduled (`cancelDueToError`). */
  let cancelled = false;
  /** Time spent in the serial step generator's Check calls, ms. */
  let checkMs = 0;

  const { state, crypter } = await loadState(req.stateFile, req.passphrase, req.project, req.stack);
  let saving: Promise<void> = Promise.resolve();
  const save = () => {
    if (preview) return saving;
    const snapshot: HarnessState = structuredClone(state);
    saving = saving.then(() => saveState(req.stateFile, snapshot, crypter));
    return saving;
  };

  // Rule 4: `up` and `preview` configure the host from the current config; refresh and destroy
  // from the default provider's inputs stored at the last `up` (the old snapshot's provider state,
  // loaded by `providers.Registry` in `deploy.NewDeployment`), falling back to the current config
  // for a state written before the harness stored it.
  const hostConfig =
    req.op === "up" || req.op === "preview" ? req.config : (state.providerConfig ?? req.config);

  let host: ProviderHost | undefined;
  let hostStarting: Promise<ProviderHost> | undefined;
  const getHost = () => {
    hostStarting ??= (async () => {
      const h = await startProviderHost({ projectDir: process.cwd(), env: req.hostEnv });
      await h.configure(hostConfig);
      host = h;
      return h;
    })();
    return hostStarting;
  };

  const stepFailed = (urn: string, id: string, r: { type: string; name: string }, text: string) => {
    cancelled = true;
    const line = `${r.type} ${r.name}: ${text}`;
    errors.push(line);
    resources.push({ urn, id, op: "failed", error: text });
    return line;
  };

  /** DeleteStep.Apply (step.go): protect refuses; external and retainOnDelete skip the provider. */
  const deleteResource = async (r: ResourceState, list: ResourceState[]): Promise<boolean> => {
    if (r.protect) {
      // deleteProtectedError: the executor continues past it (`cancelDueToError`).
      stepFailed(
        r.urn,
        r.id,
        r,
        `unable to delete resource "${r.urn}"\nas it is currently marked for protection. To unprotect the resource, ` +
          "remove the `protect` flag from the resource in your Pulumi program and run `pulumi up`",
      );
      return false;
    }
    if (preview) {
      resources.push({ urn: r.urn, id: r.id, op: "delete" });
      return true;
    }
    try {
      if (!r.external && !r.retainOnDelete && !r.pendingReplacement) {
        const h = await getHost();
        await slots.run(() => h.delete(r.id, r.urn, r.outputs));
      }
      list.splice(list.indexOf(r), 1);
      resources.push({ urn: r.urn, id: r.id, op: "delete" });
      log(
        `- delete ${r.urn} (${r.id})${r.retainOnDelete ? " (retainOnDelete: left in the service)" : ""}${r.external ? " (read-only: not deleted)" : ""}`,
      );
      await save();
      return true;
    } catch (e) {
      stepFailed(r.urn, r.id, r, messageOf(e));
      return false;
    }
  };

  let outputs: Record<string, unknown> = {};
  let secretOutputs: string[] = [];
  let hostOutput: string[] = [];

  try {
    if (req.op === "up" || req.op === "preview") {
      ({ outputs, secretOutputs } = await runProgram());
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
      throw new Error(`op must be "up", "preview", "refresh" or "destroy"; got ${JSON.stringify(req.op)}`);
    }
  } catch (e) {
    errors.push(messageOf(e));
  } finally {
    await saving.catch((e) => errors.push(`saving state failed: ${messageOf(e)}`));
    if (host) {
      await host.close();
      for (const line of host.stderr().split("\n")) if (line.trim()) logs.push(`[host] ${line}`);
      hostOutput = hostOutputLines(host.stderr(), host.stdout());
    }
  }
  const result: RunnerResult = {
    outputs,
    secretOutputs,
    resources,
    errors,
    warnings,
    logs,
    hostOutput,
    maxConcurrentSteps: slots.max,
    stepsMs: slots.firstStart === undefined ? 0 : (slots.lastEnd ?? slots.firstStart) - slots.firstStart,
    checkMs,
  };
  await writeFile(req.resultFile, JSON.stringify(result), { mode: 0o600 });

  /**
   * RefreshStep.Apply (step.go): Read with the old inputs and outputs; an empty id removes the
   * resource; returned inputs replace the stored ones; init errors are replaced by the read's (a
   * successful read clears them); then Diff(new outputs as olds, old inputs as news) decides
   * whether the step shows as an update. External resources are refreshed too.
   */
  async function runRefresh(): Promise<void> {
    const h = await getHost();
    await Promise.all(
      [...state.resources].map((r) =>
        slots.run(async () => {
          try {
            const read = await h.read(r.id, r.urn, r.outputs, r.inputs);
            if (!read.id) {
              state.resources.splice(state.resources.indexOf(r), 1);
              resources.push({ urn: r.urn, id: r.id, op: "delete" });
              log(`- refresh: ${r.urn} (${r.id}) is gone`);
              await save();
              return;
            }
            const oldInputs = r.inputs;
            const outputsChanged = !same(read.props, r.outputs);
            r.id = read.id;
            r.outputs = read.props;
            if (read.inputs) r.inputs = read.inputs;
            delete r.initErrors;
            let changed = outputsChanged;
            if (!r.external) {
              const diff = await h.diff(r.id, r.urn, r.outputs, oldInputs);
              changed =
                diff.changesReported === "some" ||
                (diff.changesReported === "unknown" &&
                  !same(stripProvider(r.inputs), stripProvider(oldInputs)));
            }
            resources.push({ urn: r.urn, id: r.id, op: changed ? "update" : "same" });
            await save();
          } catch (e) {
            stepFailed(r.urn, r.id, r, messageOf(e));
          }
        }),
      ),
    );
  }

  async function runProgram(): Promise<{ outputs: Record<string, unknown>; secretOutputs: string[] }> {
    const requireHere = createRequire(path.join(process.cwd(), "package.json"));
    const pulumi: typeof import("@pulumi/pulumi") = requireHere("@pulumi/pulumi");
    const settings = requireHere("@pulumi/pulumi/runtime/settings");
    const sdkUnknown = requireHere("@pulumi/pulumi/output").unknown;

    const options = new Map<string, RegOptions>();
    const seen = new Set<string>();
    /** Old entries claimed by an alias: not deleted at the end. */
    const claimed = new Set<ResourceState>();
    const stepErrors: string[] = [];
    /** The step generator is serial: Check and Diff run one registration at a time. */
    let generator: Promise<unknown> = Promise.resolve();
    const serially = <T,>(fn: () => Promise<T>): Promise<T> => {
      const next = generator.then(fn, fn);
      generator = next.catch(() => {});
      return next;
    };

    const fail = (urn: string, id: string, r: { type: string; name: string }, text: string): never => {
      stepErrors.push(stepFailed(urn, id, r, text));
      throw new Error(`${r.type} ${r.name}: ${text}`);
    };
    /** The text the engine prints for a failed create/update (rule 1). */
    const failureText = (e: unknown) =>
      e instanceof HostError && e.id ? initErrorText(e.reasons ?? []) : messageOf(e);

    const urnOf = (parentType: string, type: string, name: string) =>
      `urn:pulumi:${req.stack}::${req.project}::${parentType ? `${parentType}$` : ""}${type}::${name}`;

    const register = async (args: {
      type: string;
      name: string;
      inputs: Record<string, unknown>;
      custom?: boolean;
      id?: string;
    }): Promise<{ id?: string; state: Record<string, unknown> }> => {
      const { type, name } = args;
      const opts: RegOptions = options.get(`${type}::${name}`) ?? { parentType: "", aliases: [] };
      const urn = urnOf(opts.parentType, type, name);
      if (!type.startsWith(DYNAMIC_PREFIX)) {
        if (!args.custom) return { id: undefined, state: args.inputs };
        throw new Error(
          `deploy harness: only dynamic resources (${DYNAMIC_PREFIX}/...) are deployed; ${name} is a ${type}`,
        );
      }
      const who = { type, name };
      if (cancelled) throw new Skipped(`${type} ${name}: not stepped: the deployment stopped at a failure`);
      if (seen.has(urn)) fail(urn, "", who, `registered twice (duplicate URN ${urn})`);
      seen.add(urn);
      const secretInputs = Object.keys(args.inputs).filter((k) => containsSecret(args.inputs[k]));
      // Unknowns first: unwrapSecrets copies objects, which would turn the SDK's `unknown` into {}.
      // As the program registered them (secrets still marked): what a check failure prints.
      const programInputs = toSentinels(args.inputs, sdkUnknown) as Record<string, unknown>;
      let news = unwrapSecrets(programInputs) as Record<string, unknown>;
      const h = await getHost();
      const toProgram = (entry: ResourceState) => ({
        id: entry.id,
        state: Object.fromEntries(
          Object.entries(entry.outputs).map(([k, v]) => [
            k,
            entry.secretOutputs.includes(k) ? wrapSecret(v) : v,
          ]),
        ),
      });

      // Resource.get: a read step (step_generator.go `GenerateReadSteps`); never creates.
      if (args.id) {
        const read = await slots
          .run(() => h.read(args.id!, urn, news, {}))
          .catch((e) => fail(urn, args.id!, who, messageOf(e)));
        if (!read.id) fail(urn, args.id, who, `resource '${args.id}' does not exist`);
        const entry: ResourceState = {
          urn,
          type,
          name,
          id: read.id,
          inputs: read.inputs ?? {},
          outputs: read.props,
          secretInputs: [],
          secretOutputs: (opts.additionalSecretOutputs ?? []).filter((k) => k in read.props),
          external: true,
        };
        if (!preview) {
          const at = state.resources.findIndex((r) => r.urn === urn);
          if (at >= 0) state.resources[at] = entry;
          else state.resources.push(entry);
          await save();
        }
        resources.push({ urn, id: entry.id, op: "read" });
        return toProgram(entry);
      }

      // Aliases (step_generator.go `generateSteps`: the old state is looked up by the new URN,
      // then by each alias; one found through an alias is this resource, not a delete).
      let old = state.resources.find((r) => r.urn === urn);
      if (!old) {
        for (const alias of opts.aliases) {
          old = state.resources.find((r) => r.urn === alias && !seen.has(r.urn));
          if (old) break;
        }
      }
      if (old && old.urn !== urn) claimed.add(old);
      const hasInitErrors = (old?.initErrors?.length ?? 0) > 0;

      // ignoreChanges (step_generator.go `processIgnoreChanges`): ignored keys keep their old input.
      if (old && opts.ignoreChanges?.length) {
        news = { ...news };
        for (const k of opts.ignoreChanges) {
          if (k in old.inputs) news[k] = old.inputs[k];
          else delete news[k];
        }
      }

      const planned = await serially(async () => {
        if (cancelled) throw new Skipped(`${type} ${name}: not stepped: the deployment stopped at a failure`);
        const checkStarted = performance.now();
        const checked = await h
          .check(urn, old?.inputs ?? {}, news)
          .catch((e) => fail(urn, old?.id ?? "", who, `check failed: ${messageOf(e)}`));
        checkMs += performance.now() - checkStarted;
        if (checked.failures.length > 0) {
          const lines = checked.failures.map((f) => checkFailureText(type, name, programInputs, f));
          fail(urn, old?.id ?? "", who, lines.join("\n"));
        }
        const inputs = checked.inputs as Record<string, unknown>;
        if (!old) return { inputs, kind: "create" as const };
        const diff = await h
          .diff(old.id, urn, old.outputs, inputs)
          .catch((e) => fail(urn, old!.id, who, `diff failed: ${messageOf(e)}`));
        const changed =
          diff.changesReported === "some" ||
          (diff.changesReported === "unknown" && !same(stripProvider(old.inputs), stripProvider(inputs)));
        // generateStepsFromDiff: a replacement when the diff asks or a DBR left it pending.
        if (diff.replaces.length > 0 || old.pendingReplacement) {
          if (old.protect && opts.protect) {
            fail(
              urn,
              old.id,
              who,
              `unable to replace resource "${urn}"\nas it is currently marked for protection. To unprotect the resource, ` +
                "remove the `protect` flag from the resource in your Pulumi program and run `pulumi up`",
            );
          }
          // An explicit `deleteBeforeReplace` (true or false) wins over the provider's answer.
          // A pending replacement was deleted already: only its create remains.
          const deleteFirst =
            old.pendingReplacement === true || (opts.deleteBeforeReplace ?? diff.deleteBeforeReplace);
          return { inputs, kind: "replace" as const, deleteFirst, replaces: diff.replaces };
        }
        // Unchanged but with init errors: an update step that "continues" initialisation.
        if (changed || hasInitErrors) return { inputs, kind: "update" as const, changed };
        return { inputs, kind: "same" as const };
      });

      const record = (
        id: string,
        inputs: Record<string, unknown>,
        outs: Record<string, unknown>,
        initErrors?: string[],
      ): ResourceState => {
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
        if (initErrors && initErrors.length > 0) entry.initErrors = initErrors;
        if (opts.protect) entry.protect = true;
        if (opts.retainOnDelete) entry.retainOnDelete = true;
        const at = state.resources.findIndex((r) => r.urn === urn || r === old);
        if (at >= 0) state.resources[at] = entry;
        else state.resources.push(entry);
        return entry;
      };

      if (preview) {
        // No Create/Update/Delete in a preview. The program sees the known inputs; outputs the
        // provider would compute stay unknown (the SDK treats a missing key as unknown in a dry run).
        resources.push({ urn, id: old?.id ?? "", op: planned.kind });
        if (planned.kind === "same") return toProgram(old!);
        return {
          id: planned.kind === "create" || planned.kind === "replace" ? undefined : old!.id,
          state: planned.inputs,
        };
      }

      return slots.run(async () => {
        if (cancelled) throw new Skipped(`${type} ${name}: not stepped: the deployment stopped at a failure`);
        // A partial failure keeps the resource with its `reasons` as init errors (CreateStep/UpdateStep.Apply).
        const partial = async (e: unknown, inputs: Record<string, unknown>): Promise<never> => {
          if (e instanceof HostError && e.id) {
            if (e.properties && !("__provider" in e.properties)) {
              log(
                `warning: ${type} ${name}: the partial failure's properties carry no __provider; ` +
                  "a later delete of this resource would fail in the real host",
              );
            }
            record(e.id, inputs, e.properties ?? {}, e.reasons ?? []);
            await save();
            return fail(urn, e.id, who, initErrorText(e.reasons ?? []));
          }
          return fail(urn, old?.id ?? "", who, failureText(e));
        };

        if (planned.kind === "create") {
          const created = await h.create(urn, planned.inputs).catch((e) => partial(e, planned.inputs));
          const entry = record(created.id, planned.inputs, created.outs);
          await save();
          resources.push({ urn, id: entry.id, op: "create" });
          log(`+ create ${urn} (${entry.id})`);
          return toProgram(entry);
        }

        if (planned.kind === "replace") {
          const o = old!;
          // generateStepsFromDiff re-runs Check with no olds before the replacement's Create.
          const rechecked = await h
            .check(urn, {}, news)
            .catch((e) => fail(urn, o.id, who, `check failed: ${messageOf(e)}`));
          if (rechecked.failures.length > 0) {
            const lines = rechecked.failures.map((f) => checkFailureText(type, name, programInputs, f));
            fail(urn, o.id, who, lines.join("\n"));
          }
          const inputs = rechecked.inputs as Record<string, unknown>;
          if (planned.deleteFirst && !o.pendingReplacement) {
            try {
              await h.delete(o.id, o.urn, o.outputs);
            } catch (e) {
              fail(urn, o.id, who, messageOf(e));
            }
            // DeleteStep.Apply sets PendingReplacement after the delete succeeded and
            // deleteSnapshotMutation.End keeps such an entry: the old resource stays in the state
            // until the replacement's create succeeds (createSnapshotMutation.End marks it done).
            o.pendingReplacement = true;
            await save();
          }
          if (!planned.deleteFirst) state.pendingDeletes.push(o);
          const created = await h.create(urn, inputs).catch((e) => {
            if (!planned.deleteFirst && !(e instanceof HostError && e.id)) state.pendingDeletes.pop();
            return partial(e, inputs);
          });
          const entry = record(created.id, inputs, created.outs);
          await save();
          resources.push({ urn, id: entry.id, op: "replace" });
          log(
            `+- replace ${urn} (${o.id} -> ${entry.id}; ${planned.deleteFirst ? "deleted first" : "old deleted last"}; replaces: ${planned.replaces.join(", ")})`,
          );
          return toProgram(entry);
        }

        if (planned.kind === "update") {
          const o = old!;
          const updated = await h.update(o.id, urn, o.outputs, planned.inputs, o.inputs).catch((e) =>
            // engine/update.go `OnResourceStepPost`: a partially failed update stores the OLD
            // inputs with the new outputs.
            partial(e, o.inputs),
          );
          const entry = record(o.id, planned.inputs, updated.outs);
          await save();
          resources.push({ urn, id: entry.id, op: "update" });
          log(`~ update ${urn} (${entry.id})${planned.changed ? "" : " (re-run: init errors recorded)"}`);
          return toProgram(entry);
        }

        // No change: the engine keeps the old outputs and refreshes the stored inputs.
        const entry = record(old!.id, planned.inputs, old!.outputs);
        await save();
        resources.push({ urn, id: entry.id, op: "same" });
        return toProgram(entry);
      });
    };

    // The SDK reports a failed registration as an uncaught error; the engine would fail the step
    // and the deployment, not crash: collect them (until this process ends).
    const unhandled: string[] = [];
    const onUnhandled = (e: unknown) => {
      if (!(e instanceof Skipped)) unhandled.push(messageOf(e));
    };
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
      preview,
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
      const stack = typeof a.stack === "string" ? a.stack : req.stack;
      const project = typeof a.project === "string" ? a.project : req.project;
      return `urn:pulumi:${stack}::${project}::${pType ? `${pType}$` : ""}${t}::${n}`;
    };

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
      if (!(e instanceof Skipped) && !stepErrors.some((s) => msg.includes(s)))
        errors.push(`program failed: ${msg}`);
    }
    await settings.waitForRPCs().catch((e: unknown) => onUnhandled(e));
    await generator;
    for (const msg of unhandled) {
      if (/not stepped: the deployment stopped/.test(msg)) continue;
      if (!stepErrors.some((s) => msg.includes(s)) && !errors.some((s) => s.includes(msg))) errors.push(msg);
    }

    const outputs: Record<string, unknown> = {};
    const secretOutputs: string[] = [];
    if (errors.length === 0 && !preview) {
      for (const [k, v] of Object.entries(raw ?? {})) {
        const o = pulumi.output(v as any) as any;
        const [value, secret] = await Promise.all([o.promise(), o.isSecret]);
        if (value === undefined) continue;
        outputs[k] = value;
        if (secret) secretOutputs.push(k);
      }
      state.outputs = outputs;
      state.secretOutputs = secretOutputs;
    }
    if (errors.length === 0) {
      // Resources that left the program, then the old halves of replacements, newest first.
      for (const r of [...state.resources].reverse())
        if (!seen.has(r.urn) && !claimed.has(r)) await deleteResource(r, state.resources);
      for (const r of [...state.pendingDeletes].reverse()) await deleteResource(r, state.pendingDeletes);
    }
    if (!preview) {
      // An old entry claimed through an alias is now stored under the new URN (record() replaced it).
      // The default provider's inputs: the whole config, secrets marked (`Target.GetPackageConfig`).
      state.providerConfig = { ...req.config };
      state.providerSecretKeys = [...req.secretConfigKeys];
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

/**
 * Child-process side of the deploy harness (see `deployHarness.mts`, which spawns it; do not run it
 * by hand). One process = one `up`, `preview`, `refresh` or `destroy`: it reads a JSON request on
 * stdin, plays the engine's part against Pulumi's real dynamic-provider host, saves the state file
 * after every step (never in a preview), and writes a JSON result to `request.resultFile`.
 *
 * Started in advance: the harness starts the next run's runner while a test runs or waits, and
 * writes it one {@link RunnerBoot} line at once. The runner then starts its provider host and forks
 * its program's process right away, so they have loaded when the request (the rest of stdin)
 * comes. They are still this run's alone: a fresh host per deployment, as the engine starts one
 * (module state in the providers starts empty every run). Stdin closed with no request: the
 * runner stops what it started and exits.
 *
 * cwd is the program's copy inside the temp project, so `@pulumi/pulumi` and
 * `pulumi-runpod-dynamic` resolve there, exactly as for a user's program.
 *
 * Every engine rule it follows is listed, with the engine function it comes from, in
 * `test/support/README.md`; the comments below cite the same functions.
 */
import { type ChildProcess, fork } from "node:child_process";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { CheckpointWriter, loadState, type ResourceState, rememberKeys } from "./harnessState.mts";
import type {
  ProgramMessage,
  ProgramStart,
  RegisterReply,
  Registration,
  RegOptions,
} from "./programHost.mts";
import { ignoreChangesInfo, processIgnoreChanges } from "./propertyPath.mts";
import {
  HostError,
  type ProviderHost,
  SECRET_SIG,
  SECRET_SIG_KEY,
  startProviderHost,
  UNKNOWN,
} from "./providerHost.mts";

export type Operation = "up" | "preview" | "refresh" | "destroy";

/** What the parent writes first on stdin, one JSON line, when it starts the runner. */
export interface RunnerBoot {
  /** Environment of the provider host. */
  hostEnv: NodeJS.ProcessEnv;
  /** The provider's wait polls, ms (`HarnessOptions.pollMs`). */
  pollMs?: number;
  /** Fork the program's process in advance (false with `HarnessOptions.registrations`). */
  program: boolean;
  /**
   * Start the provider host in advance: false for a `destroy`'s preview, which asks the provider
   * nothing (`DeleteStep.Apply` returns before Delete in a dry run), so no host of it would serve.
   */
  host: boolean;
}

/** What the parent sends on stdin after the {@link RunnerBoot} line, then it closes stdin. */
export interface RunnerRequest {
  op: Operation;
  /** Absolute path of the program's entry module (for `up` and `preview`). */
  main: string;
  stateFile: string;
  resultFile: string;
  passphrase: string;
  /** The state keys the harness derived from `passphrase` (`knownKeys` in harnessState.mts): no run derives them again. */
  stateKeys?: { keys: Array<[string, string]>; newStateSalt?: string };
  project: string;
  stack: string;
  /** Stack config, plaintext, with the secret keys listed. */
  config: Record<string, string>;
  secretConfigKeys: string[];
  /** At most this many resource steps at once (`pulumi up --parallel`). */
  parallel: number;
  /**
   * The preview a `destroy` or `refresh` runs first (`PreviewThenPromptThenExecute`,
   * pkg/backend/apply.go): the same steps with `DryRun`, nothing written to the state.
   */
  dryRun?: boolean;
  /** Registered at once instead of running the program (`HarnessOptions.registrations`). */
  registrations?: Registration[];
}

/** `read` = `Resource.get`; in a preview the ops are the plan. */
export type StepOp = "create" | "update" | "replace" | "same" | "delete" | "read" | "failed";

export interface RunnerResult {
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  /** `error`: the text the engine prints under the resource in Diagnostics. */
  resources: Array<{ urn: string; id: string; op: StepOp; error?: string }>;
  /** Diagnostics: one `<type> <name>: <text>` per failed step, program errors, and `update failed` / `preview failed` ({@link runSummary}). */
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
  /** The provider host's process id, when the run used a host. */
  hostPid?: number;
  /** The program's process id, when the program ran. */
  programPid?: number;
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
/** The program's process: the language host's part (`programHost.mts`). */
const PROGRAM_HOST = path.join(path.dirname(fileURLToPath(import.meta.url)), "programHost.mts");

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

/**
 * A float64 as Go's `%v` writes it. fmt/print.go `(*pp).fmtFloat` sends `%v` to
 * `fmt.fmtFloat(v, size, 'g', -1)`, and strconv/ftoa.go `formatDigits` decides `%e` against `%f`
 * for 'g': "%e is used if the exponent from the conversion is less than -4 or greater than or equal
 * to the precision. if precision was the shortest possible, use precision 6 for this decision"
 * (`if shortest { eprec = 6 }`). So: the shortest digits that read back exactly (as JavaScript's
 * own), in exponent form when the decimal exponent is below -4 or 6 and above (`1e+06`,
 * `8.6400001e+07`, `1e-05`), with at least two exponent digits; else plain (`123456`, `0.0001`).
 * fmt/format.go's 21 applies only under `%#v` (the sharp flag); `{%v}` has none. JavaScript's
 * `String(n)` switches at 1e21, which is not what the engine prints.
 */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const [mantissa, exponentText] = n.toExponential().split("e") as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  // -4 <= exponent < 6: JavaScript writes these plainly with the same shortest digits.
  return String(n);
}

/**
 * The line the engine prints under the stack when a run failed: `update failed` (`preview failed` in
 * a preview) from `deploymentExecutor.reportExecResult("failed")` (pkg/resource/deploy/
 * deployment_executor.go). `Execute` reaches it only when a step the executor applied failed: an
 * error of the step generator (a check failure, a Check or Diff error) or of the program is a bail,
 * and `Execute` returns before the summary. `pulumi destroy` and `pulumi refresh` print `update
 * failed` too (the kind is "preview" only in a dry run).
 */
export function runSummary(preview: boolean, stepErrored: boolean, bailed: boolean): string | undefined {
  if (!stepErrored || bailed) return undefined;
  return `${preview ? "preview" : "update"} failed`;
}

/**
 * `annotateSecrets` (pkg/resource/plugin/provider_plugin.go): the host does not accept secrets, so
 * the engine marks a checked input secret where the program's input under that key held a secret.
 */
function annotateSecrets(
  outs: Record<string, unknown>,
  ins: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...outs };
  for (const [k, inValue] of Object.entries(ins)) {
    if (!(k in result)) continue;
    const outValue = result[k];
    const isPlainObject = (v: unknown) =>
      typeof v === "object" && v !== null && !Array.isArray(v) && (v as any)[SECRET_SIG_KEY] !== SECRET_SIG;
    if (isPlainObject(outValue) && isPlainObject(inValue)) {
      result[k] = annotateSecrets(outValue as Record<string, unknown>, inValue as Record<string, unknown>);
    } else if (containsSecret(inValue)) {
      result[k] = wrapSecret(outValue);
    }
  }
  return result;
}

/**
 * `deleteProtectedError.Error()` (pkg/resource/deploy/step.go): what `DeleteStep.Apply` returns for a
 * protected resource, in a preview too. `URN.Quote` uses single quotes (double on Windows).
 */
export function deleteProtectedText(urn: string): string {
  return (
    `resource "${urn}" cannot be deleted\n` +
    "because it is protected. To unprotect the resource, either remove the `protect` flag from the " +
    "resource in your Pulumi program and run `pulumi up`, or use the command:\n" +
    `\`pulumi state unprotect ${process.platform === "win32" ? `"${urn}"` : `'${urn}'`}\``
  );
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
  /**
   * Waits for a free worker and holds it: the returned function runs one step in it and frees it
   * when the step ends. Call it exactly once.
   */
  async take(): Promise<<T>(step: () => Promise<T>) => Promise<T>> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    this.max = Math.max(this.max, this.running);
    this.firstStart ??= performance.now();
    return async (step) => {
      try {
        return await step();
      } finally {
        this.lastEnd = performance.now();
        this.running--;
        const next = this.waiting.shift();
        if (next) next();
        else this.free++;
      }
    };
  }
  async run<T>(step: () => Promise<T>): Promise<T> {
    return (await this.take())(step);
  }
}

/** Thrown into the program for a registration the engine never stepped (after a failure). */
class Skipped extends Error {}

/** The program's process, forked (`programHost.mts`), with its exit. */
interface ProgramProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Forks the program's process; it loads the SDK and waits for its {@link ProgramStart}. */
function forkProgram(): ProgramProcess {
  const child = fork(PROGRAM_HOST, [], {
    cwd: process.cwd(),
    env: process.env,
    // The language host runs with node's defaults: not the runner's young generation.
    execArgv: process.execArgv.filter((a) => !a.startsWith("--max-semi-space-size")),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "advanced",
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited };
}

/**
 * The processes a run needs, started before its request comes ({@link RunnerBoot}); each serves
 * this run only and `take`n once. `discard` stops whatever was not taken and resolves once it exited.
 */
class StartedInAdvance {
  private host: Promise<ProviderHost> | undefined;
  private hostTaken = false;
  private program: ProgramProcess | undefined;
  private readonly boot: RunnerBoot;
  constructor(boot: RunnerBoot) {
    this.boot = boot;
    if (boot.host) this.host = this.startHost();
    if (boot.program) this.program = forkProgram();
  }
  private startHost(): Promise<ProviderHost> {
    const host = startProviderHost({
      projectDir: process.cwd(),
      env: this.boot.hostEnv,
      ...(this.boot.pollMs !== undefined ? { pollMs: this.boot.pollMs } : {}),
    });
    // A host that fails to start fails the run that takes it, with its message.
    host.catch(() => {});
    return host;
  }
  /** The host started in advance, or one started now when none was. */
  takeHost(): Promise<ProviderHost> {
    if (this.hostTaken) throw new Error("deploy runner: the provider host was taken twice");
    this.hostTaken = true;
    const host = this.host ?? this.startHost();
    this.host = undefined;
    return host;
  }
  takeProgram(): ProgramProcess {
    const program = this.program ?? forkProgram();
    this.program = undefined;
    return program;
  }
  async discard(): Promise<void> {
    const host = this.host;
    const program = this.program;
    this.host = this.program = undefined;
    if (program) {
      if (program.child.exitCode === null && program.child.signalCode === null) program.child.kill();
      await program.exited;
    }
    await host?.then((h) => h.close()).catch(() => {});
  }
}

/** Reads stdin: the first line, then everything after it once stdin ends. */
function stdinParts(): { firstLine: Promise<string>; rest: Promise<string> } {
  let data = "";
  let resolveFirst!: (line: string) => void;
  const firstLine = new Promise<string>((resolve) => (resolveFirst = resolve));
  const rest = (async () => {
    let gotFirst = false;
    for await (const chunk of process.stdin.setEncoding("utf8")) {
      data += chunk;
      const nl = data.indexOf("\n");
      if (!gotFirst && nl >= 0) {
        gotFirst = true;
        resolveFirst(data.slice(0, nl));
        data = data.slice(nl + 1);
      }
    }
    if (!gotFirst) {
      resolveFirst(data);
      return "";
    }
    return data;
  })();
  return { firstLine, rest };
}

async function runner(): Promise<void> {
  const input = stdinParts();
  const boot = JSON.parse(await input.firstLine) as RunnerBoot;
  const started = new StartedInAdvance(boot);
  try {
    const request = await input.rest;
    // A runner the harness let go unused (its config changed, or it was disposed).
    if (request.trim() === "") return;
    await main(JSON.parse(request) as RunnerRequest, started);
  } finally {
    await started.discard();
  }
}

async function main(req: RunnerRequest, started: StartedInAdvance): Promise<void> {
  const preview = req.op === "preview" || req.dryRun === true;
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
  /** A step the executor applied failed (not the step generator nor the program): see {@link runSummary}. */
  let stepErrored = false;
  /** The step generator or the program stopped the run (a bail): the engine prints no summary then. */
  let bailed = false;

  if (req.stateKeys) rememberKeys(req.passphrase, req.stateKeys);
  const { state, crypter } = await loadState(req.stateFile, req.passphrase, req.project, req.stack);
  // A step is reported done once a checkpoint holding its change is written (CheckpointWriter).
  const checkpoints = new CheckpointWriter(req.stateFile, state, crypter);
  const save = () => (preview ? Promise.resolve() : checkpoints.save());

  // Rule 4: `up` and `preview` configure the host from the current config; refresh and destroy
  // from the default provider's inputs stored at the last `up` (the old snapshot's provider state,
  // loaded through `Deployment.EnsureProvider` for each delete and refresh), falling back to the current config
  // for a state written before the harness stored it.
  const hostConfig =
    req.op === "up" || req.op === "preview" ? req.config : (state.providerConfig ?? req.config);

  let host: ProviderHost | undefined;
  let hostStarting: Promise<ProviderHost> | undefined;
  /** The host started with the runner; configured on first use, as the engine loads a provider. */
  const getHost = () => {
    hostStarting ??= (async () => {
      const h = await started.takeHost();
      await h.configure(hostConfig);
      host = h;
      return h;
    })();
    return hostStarting;
  };

  /**
   * A failed step. `from`: "step" for a step the executor applied (create, update, delete, read,
   * refresh): in a preview the engine prints it as `Preview failed: <text>` (`previewActions.
   * OnResourceStepPost`, pkg/engine/update.go; diag 2005 in sdk/go/common/diag/errors.go), and the
   * run ends with `update failed` / `preview failed` ({@link runSummary}). "generator" for the step
   * generator's errors (Check, Diff, check failures): printed as they are (`reportError`).
   */
  const stepFailed = (
    urn: string,
    id: string,
    r: { type: string; name: string },
    message: string,
    from: "step" | "generator" = "step",
  ) => {
    cancelled = true;
    if (from === "step") stepErrored = true;
    const text = from === "step" && preview ? `Preview failed: ${message}` : message;
    const line = `${r.type} ${r.name}: ${text}`;
    errors.push(line);
    resources.push({ urn, id, op: "failed", error: text });
    return line;
  };

  /**
   * DeleteStep.Apply (step.go): protect refuses; external and retainOnDelete skip the provider. A
   * step not started when the deployment was cancelled never runs (`executeChain` checks the
   * context before each step): "skipped".
   */
  const deleteResource = async (
    r: ResourceState,
    list: ResourceState[],
  ): Promise<"deleted" | "failed" | "protected" | "skipped"> => {
    if (cancelled) return "skipped";
    if (r.protect) {
      // deleteProtectedError: `cancelDueToError` continues past it (the one error that does not cancel).
      stepFailed(r.urn, r.id, r, deleteProtectedText(r.urn));
      cancelled = false;
      return "protected";
    }
    if (preview) {
      resources.push({ urn: r.urn, id: r.id, op: "delete" });
      return "deleted";
    }
    try {
      if (!r.external && !r.retainOnDelete && !r.pendingReplacement) {
        const h = await getHost();
        await slots.run(async () => {
          if (cancelled)
            throw new Skipped(`${r.type} ${r.name}: not stepped: the deployment stopped at a failure`);
          await h.delete(r.id, r.urn, r.outputs);
        });
      }
      list.splice(list.indexOf(r), 1);
      resources.push({ urn: r.urn, id: r.id, op: "delete" });
      log(
        `- delete ${r.urn} (${r.id})${r.retainOnDelete ? " (retainOnDelete: left in the service)" : ""}${r.external ? " (read-only: not deleted)" : ""}`,
      );
      await save();
      return "deleted";
    } catch (e) {
      if (e instanceof Skipped) return "skipped";
      stepFailed(r.urn, r.id, r, messageOf(e));
      return "failed";
    }
  };

  /**
   * Deletes `condemned` as the engine schedules deletes (`performPostSteps`, deployment_executor.go):
   * `ScheduleDeletes` (step_generator.go) cuts them into antichains, dependents before what they
   * depend on; each antichain's steps run in parallel (`ExecuteParallel`, at most `parallel` at
   * once) and the next antichain starts when it is done. After a failed delete nothing new is
   * scheduled (`cancelDueToError`); past a protected one the executor goes on, leaving out what the
   * protected resource depends on (`erroredDeps`, `TransitiveDependenciesOf`).
   */
  const deleteScheduled = async (condemned: Array<{ r: ResourceState; list: ResourceState[] }>) => {
    const listOf = new Map(condemned.map((c) => [c.r, c.list]));
    const graph = dependencyGraph(condemned.map((c) => c.r));
    const erroredDeps = new Set<ResourceState>();
    for (const antichain of scheduleDeletes(graph)) {
      if (cancelled) break;
      const steps = antichain.filter((r) => !erroredDeps.has(r));
      const outcomes = await Promise.all(steps.map((r) => deleteResource(r, listOf.get(r)!)));
      steps.forEach((r, i) => {
        if (outcomes[i] === "protected") for (const d of transitiveDependencies(graph, r)) erroredDeps.add(d);
      });
    }
  };

  let outputs: Record<string, unknown> = {};
  let secretOutputs: string[] = [];
  let hostOutput: string[] = [];
  let programPid: number | undefined;

  try {
    if (req.op === "up" || req.op === "preview") {
      ({ outputs, secretOutputs } = await runProgram());
    } else if (req.op === "refresh") {
      await runRefresh();
    } else if (req.op === "destroy") {
      await deleteScheduled([
        ...state.pendingDeletes.map((r) => ({ r, list: state.pendingDeletes })),
        ...state.resources.map((r) => ({ r, list: state.resources })),
      ]);
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
    const summary = runSummary(preview, stepErrored, bailed);
    if (summary) errors.push(summary);
    await checkpoints.written().catch((e) => errors.push(`saving state failed: ${messageOf(e)}`));
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
    ...(host ? { hostPid: host.pid } : {}),
    ...(programPid !== undefined ? { programPid } : {}),
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
    // deploymentExecutor.refresh: one RefreshStep per resource of the old snapshot (pending deletes
    // included), run by a step executor with ignoreErrors: a failed read cancels nothing, every
    // other resource is still read. RefreshStep.Apply returns a pending replacement unchanged.
    const steps = [
      ...state.pendingDeletes.map((r) => ({ r, list: state.pendingDeletes })),
      ...state.resources.map((r) => ({ r, list: state.resources })),
    ].filter(({ r }) => !r.pendingReplacement);
    await Promise.all(
      steps.map(({ r, list }) =>
        slots.run(async () => {
          try {
            const read = await h.read(r.id, r.urn, r.outputs, r.inputs);
            if (!read.id) {
              list.splice(list.indexOf(r), 1);
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

    const fail = (
      urn: string,
      id: string,
      r: { type: string; name: string },
      text: string,
      from: "step" | "generator" = "step",
    ): never => {
      if (from === "generator") bailed = true;
      const line = stepFailed(urn, id, r, text, from);
      stepErrors.push(line);
      throw new Error(line);
    };
    /** The text the engine prints for a failed create/update (rule 1). */
    const failureText = (e: unknown) =>
      e instanceof HostError && e.id ? initErrorText(e.reasons ?? []) : messageOf(e);

    const urnOf = (parentType: string, type: string, name: string) =>
      `urn:pulumi:${req.stack}::${req.project}::${parentType ? `${parentType}$` : ""}${type}::${name}`;

    const register = async (
      args: Registration,
      opts: RegOptions,
    ): Promise<{ id?: string; state: Record<string, unknown> }> => {
      const { type, name } = args;
      const urn = urnOf(opts.parentType, type, name);
      if (!type.startsWith(DYNAMIC_PREFIX)) {
        if (!args.custom) return { id: undefined, state: args.inputs };
        throw new Error(
          `deploy harness: only dynamic resources (${DYNAMIC_PREFIX}/...) are deployed; ${name} is a ${type}`,
        );
      }
      const who = { type, name };
      if (cancelled) throw new Skipped(`${type} ${name}: not stepped: the deployment stopped at a failure`);
      if (seen.has(urn)) fail(urn, "", who, `registered twice (duplicate URN ${urn})`, "generator");
      seen.add(urn);
      const secretInputs = Object.keys(args.inputs).filter((k) => containsSecret(args.inputs[k]));
      // As the program registered them (unknowns as the sentinel, secrets still marked): what a
      // check failure prints.
      const programInputs = args.inputs;
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
        // Handed to the executor from the serial event loop too (see `inSlot` below).
        const inReadSlot = await serially(() => slots.take());
        // `ReadStep.Apply` (step.go) reads with the program's inputs as both state and inputs.
        const read = await inReadSlot(() => h.read(args.id!, urn, news, news)).catch((e) =>
          fail(urn, args.id!, who, messageOf(e)),
        );
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

      // The program's inputs as registered (the goal's properties): what a replacement's second
      // Check gets (`continueStepsFromDiff`), ignoreChanges not applied.
      const rawNews = news;
      // ignoreChanges (step_generator.go `processIgnoreChanges`): each entry is a property path
      // (`expect.timeoutMs`, `triggers[0]`) whose old input is kept; a path through an added or
      // removed element is reported as an info diagnostic (propertyPath.mts).
      const ignoring = (inputs: Record<string, unknown>, oldInputs: Record<string, unknown>) => {
        const ignored = processIgnoreChanges(inputs, oldInputs, opts.ignoreChanges ?? []);
        if (ignored.invalidPaths.length > 0)
          log(`info: ${type} ${name}: ${ignoreChangesInfo(ignored.invalidPaths)}`);
        return ignored.inputs;
      };
      if (old && opts.ignoreChanges?.length) news = ignoring(news, old.inputs);

      const plan = async () => {
        if (cancelled) throw new Skipped(`${type} ${name}: not stepped: the deployment stopped at a failure`);
        const checkStarted = performance.now();
        const checked = await h
          .check(urn, old?.inputs ?? {}, news)
          // A Check error is the host's message as is (`rpcerror.Error`), reported by
          // `deploymentExecutor.Execute` (`reportError`): the engine adds no prefix.
          .catch((e) => fail(urn, old?.id ?? "", who, messageOf(e), "generator"));
        checkMs += performance.now() - checkStarted;
        if (checked.failures.length > 0) {
          const lines = checked.failures.map((f) => checkFailureText(type, name, programInputs, f));
          fail(urn, old?.id ?? "", who, lines.join("\n"), "generator");
        }
        const inputs = checked.inputs as Record<string, unknown>;
        if (!old) return { inputs, kind: "create" as const };
        const diff = await h
          .diff(old.id, urn, old.outputs, inputs)
          .catch((e) => fail(urn, old!.id, who, messageOf(e), "generator"));
        // diffResource: an unknown diff compares the inputs, the ignored paths reset first.
        const compared = opts.ignoreChanges?.length
          ? processIgnoreChanges(inputs, old.inputs, opts.ignoreChanges).inputs
          : inputs;
        const changed =
          diff.changesReported === "some" ||
          (diff.changesReported === "unknown" && !same(stripProvider(old.inputs), stripProvider(compared)));
        // continueStepsFromDiff: a replacement when the diff asks or a DBR left it pending.
        if (diff.replaces.length > 0 || old.pendingReplacement) {
          if (old.protect && opts.protect) {
            fail(
              urn,
              old.id,
              who,
              `unable to replace resource "${urn}"\nas it is currently marked for protection. To unprotect the resource, ` +
                "remove the `protect` flag from the resource in your Pulumi program and run `pulumi up`",
              "generator",
            );
          }
          // continueStepsFromDiff re-runs Check with no olds on the program's raw inputs (the goal's
          // properties: ignoreChanges not applied) here in the serial step generator, in a preview
          // too; its inputs are the replacement's. A failure prints the first Check's inputs
          // (`issueCheckErrors` reads `new.Inputs`, secrets re-marked by `annotateSecrets`).
          const recheckStarted = performance.now();
          const rechecked = await h
            .check(urn, {}, rawNews)
            .catch((e) => fail(urn, old!.id, who, messageOf(e), "generator"));
          checkMs += performance.now() - recheckStarted;
          if (rechecked.failures.length > 0) {
            const shown = annotateSecrets(inputs, programInputs);
            const lines = rechecked.failures.map((f) => checkFailureText(type, name, shown, f));
            fail(urn, old.id, who, lines.join("\n"), "generator");
          }
          // An explicit `deleteBeforeReplace` (true or false) wins over the provider's answer.
          // A pending replacement was deleted already: only its create remains.
          const deleteFirst =
            old.pendingReplacement === true || (opts.deleteBeforeReplace ?? diff.deleteBeforeReplace);
          return {
            inputs: rechecked.inputs as Record<string, unknown>,
            kind: "replace" as const,
            deleteFirst,
            replaces: diff.replaces,
          };
        }
        // Unchanged but with init errors: an update step that "continues" initialisation.
        if (changed || hasInitErrors) return { inputs, kind: "update" as const, changed };
        return { inputs, kind: "same" as const };
      };
      // The engine's event loop hands a registration's steps to the step executor before it takes the
      // next registration (`deploymentExecutor.handleSingleEvent` → `stepExecutor.ExecuteSerial`, a
      // send on the unbuffered `incomingChains` that a free worker receives): with all `parallel`
      // workers busy the step generator waits, and the next Check with it. A preview's steps apply
      // at once, so it takes no worker here.
      const { planned, inSlot } = await serially(async () => {
        const planned = await plan();
        return { planned, inSlot: preview ? undefined : await slots.take() };
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
        // The checked inputs stand in for the outputs, secret where the program's input was or
        // where `additionalSecretOutputs` says (the engine keeps the marks in a preview too).
        const secret = (k: string) =>
          secretInputs.includes(k) || (opts.additionalSecretOutputs ?? []).includes(k);
        return {
          id: planned.kind === "create" || planned.kind === "replace" ? undefined : old!.id,
          state: Object.fromEntries(
            Object.entries(planned.inputs).map(([k, v]) => [k, secret(k) ? wrapSecret(v) : v]),
          ),
        };
      }

      return inSlot!(async () => {
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
          // The second Check ran in the step generator (above): these are its inputs.
          const inputs = planned.inputs;
          if (planned.deleteFirst && !o.pendingReplacement) {
            try {
              // DeleteStep.Apply (step.go): the delete half of a delete-before-replace skips the
              // provider for a retainOnDelete (or read-only) resource too: the old object stays.
              if (!o.retainOnDelete && !o.external) await h.delete(o.id, o.urn, o.outputs);
              else log(`- ${o.urn} (${o.id}) left in the service (retainOnDelete) before its replacement`);
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

    type Done = Extract<ProgramMessage, { kind: "done" }>;
    let exitedEarly = "";
    /** The program in its own process (the language host); undefined when it exited before its end. */
    const languageHost = async (): Promise<Done | undefined> => {
      // Each registration arrives as a message (the resource monitor's RegisterResource) and is
      // answered with the id and outputs.
      const { child, exited } = started.takeProgram();
      programPid = child.pid;
      const done = await new Promise<Done | undefined>((resolve) => {
        child.on("message", (m: ProgramMessage) => {
          if (m.kind === "done") return resolve(m);
          register(m.args, m.opts).then(
            (result) =>
              child.connected &&
              child.send({ kind: "registered", seq: m.seq, result } satisfies RegisterReply),
            (e: unknown) => {
              const message = messageOf(e);
              const error = { message, step: stepErrors.includes(message), skipped: e instanceof Skipped };
              if (child.connected)
                child.send({ kind: "registered", seq: m.seq, error } satisfies RegisterReply);
            },
          );
        });
        void exited.then(() => resolve(undefined));
        child.send({
          main: req.main,
          project: req.project,
          stack: req.stack,
          preview,
        } satisfies ProgramStart);
      });
      // A program that leaves a timer or socket open would keep its process alive; the language host
      // exits once the program's work is done, so after `done` it gets a moment and is then stopped.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill();
      if (!done) exitedEarly = `the program's process exited with code ${child.exitCode} before it finished`;
      return done;
    };
    /** `HarnessOptions.registrations`: registered at once, no language host. */
    const registerAll = async (registrations: Registration[]): Promise<Done> => {
      const programErrors: Done["programErrors"] = [];
      await Promise.all(
        registrations.map((r) =>
          register({ ...r, custom: true }, { parentType: "", aliases: [] }).catch((e: unknown) => {
            // A failed step is reported by `fail` and a skipped one is no failure; any other refusal
            // (a type the harness does not deploy) is the registration's error, as the program's.
            const text = messageOf(e);
            if (!(e instanceof Skipped) && !stepErrors.includes(text))
              programErrors.push({ text, resource: { type: r.type, name: r.name } });
          }),
        ),
      );
      return { kind: "done", programErrors, outputs: {}, secretOutputs: [], dependencies: [] };
    };
    const done = req.registrations ? await registerAll(req.registrations) : await languageHost();
    await generator;
    if (!done) {
      bailed = true;
      errors.push(exitedEarly);
    }
    for (const p of done?.programErrors ?? []) {
      bailed = true;
      errors.push(p.resource ? `${p.resource.type} ${p.resource.name}: ${p.text}` : p.text);
    }

    const outputs: Record<string, unknown> = {};
    const secretOutputs: string[] = [];
    if (errors.length === 0 && done) {
      // A preview's outputs are shown (the display's Outputs section), never stored.
      Object.assign(outputs, done.outputs);
      secretOutputs.push(...done.secretOutputs);
      if (!preview) {
        state.outputs = outputs;
        state.secretOutputs = secretOutputs;
      }
    }
    if (errors.length === 0) {
      // Resources that left the program and the old halves of replacements, in the engine's antichains.
      await deleteScheduled([
        ...state.pendingDeletes.map((r) => ({ r, list: state.pendingDeletes })),
        ...state.resources
          .filter((r) => !seen.has(r.urn) && !claimed.has(r))
          .map((r) => ({ r, list: state.resources })),
      ]);
    }
    recordDependencies(state.resources, seen, new Map(done?.dependencies ?? []));
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

/** Stores each registered resource's dependencies (`State.Dependencies`) as URNs of the state. */
function recordDependencies(
  resources: ResourceState[],
  seen: Set<string>,
  captured: Map<string, string[]>,
): void {
  const urnOf = new Map(resources.map((r) => [`${r.type}::${r.name}`, r.urn]));
  for (const r of resources) {
    if (!seen.has(r.urn)) continue;
    const deps = (captured.get(`${r.type}::${r.name}`) ?? [])
      .map((k) => urnOf.get(k))
      .filter((u): u is string => u !== undefined && u !== r.urn);
    if (deps.length > 0) r.dependencies = [...new Set(deps)];
    else delete r.dependencies;
  }
}

/**
 * `DependencyGraph.DependenciesOf` (pkg/resource/graph/dependency_graph.go): a resource depends on
 * the resources BEFORE it in the list whose URN it names (so an old and a new resource under one
 * URN both count). The list is the pending deletes, then the resources, in state order.
 */
function dependencyGraph(list: ResourceState[]): Map<ResourceState, Set<ResourceState>> {
  const graph = new Map<ResourceState, Set<ResourceState>>();
  list.forEach((r, i) => {
    const names = new Set(r.dependencies ?? []);
    graph.set(r, new Set(list.slice(0, i).filter((c) => names.has(c.urn))));
  });
  return graph;
}

/**
 * `ScheduleDeletes` (step_generator.go): repeatedly take every condemned resource none of whose
 * dependencies is still condemned, then reverse the list of rounds: dependents are deleted first.
 */
function scheduleDeletes(graph: Map<ResourceState, Set<ResourceState>>): ResourceState[][] {
  const condemned = new Set(graph.keys());
  const antichains: ResourceState[][] = [];
  while (condemned.size > 0) {
    const round = [...condemned].filter((r) => ![...graph.get(r)!].some((d) => condemned.has(d)));
    for (const r of round) condemned.delete(r);
    antichains.push(round);
  }
  return antichains.reverse();
}

/** `TransitiveDependenciesOf`: everything `r` depends on, directly or not. */
function transitiveDependencies(
  graph: Map<ResourceState, Set<ResourceState>>,
  r: ResourceState,
): Set<ResourceState> {
  const out = new Set<ResourceState>();
  const walk = (x: ResourceState) => {
    for (const d of graph.get(x) ?? []) {
      if (out.has(d)) continue;
      out.add(d);
      walk(d);
    }
  };
  walk(r);
  return out;
}

function stripProvider(o: Record<string, unknown>): Record<string, unknown> {
  const { __provider: _p, ...rest } = o;
  return rest;
}

// Only as the harness's child: the tests import this module for its text functions.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runner().catch((e) => {
    process.stderr.write(`deploy runner crashed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  });
}

/**
 * Deploy harness: runs a Pulumi program the way `pulumi up` would, without the Pulumi CLI. The
 * program runs under `pulumi.runtime.setMocks`, and every dynamic resource it declares
 * (`pulumi-nodejs:dynamic/...`) goes to Pulumi's REAL dynamic-provider host over gRPC
 * (`providerHost.mts`). State is carried between runs in a JSON file with secrets encrypted.
 *
 * ```ts
 * import { createDeployHarness } from "../support/deployHarness.mts";
 * const harness = await createDeployHarness({
 *   projectDir: inject("installedProjectDir"),        // temp project with the packed package
 *   program: "examples/registry-auth",                 // a Pulumi project dir, or one .ts/.mts/.js file
 *   passphrase: "test",                                // or env PULUMI_CONFIG_PASSPHRASE
 *   config: { "runpod:apiKey": { secret: emu.apiKey }, "runpod:restUrl": emu.restUrl },
 * });
 * const first = await harness.up();      // preview, then update: { ok, outputs, resources: [{urn,id,op,error?}], errors, preview, ... }
 * const plan = await harness.preview();  // Check and Diff only; nothing created, state untouched
 * harness.setConfig("registry-auth:password", { secret: "new" });
 * const second = await harness.up();     // ops: "create" | "update" | "replace" | "same" | "delete" | "read" | "failed"
 * await harness.refresh();               // preview, then read() each resource; gone ones leave the state
 * await harness.destroy();               // preview, then deletes everything (dependents first)
 * await harness.dispose();               // removes the program copy (and the state, unless stateFile was given)
 * ```
 *
 * What it does, per run, in a fresh child process (`deployRunner.mts`) whose cwd is a copy of the
 * program inside `projectDir`, so `import ... from "pulumi-runpod-dynamic"` resolves to the packed
 * package and `@pulumi/pulumi` is the one copy the package uses. Each run gets its own runner,
 * program process and provider host, none of them used before (the engine starts a fresh host per
 * deployment), the host and the program's process started together. A run known to come next
 * gets them started in advance, with exactly the environment it will have (a config change
 * discards them): the first run's while the test prepares it, the update of `up` (and the second
 * half of `refresh` and `destroy`) while its preview runs. `dispose` stops the ones left over. The program's entry is the
 * Pulumi.yaml `main` (default `index.ts`, then `index.js`) or the given file; its named exports, or
 * the result of its default-exported function, are the stack outputs.
 *
 * It follows Pulumi's engine rule by rule; `README.md` beside this file lists each rule with the
 * engine function it comes from (init errors only from `reasons`, old inputs kept on a partially
 * failed update, refresh with Diff, `up` = preview then update, destroy/refresh with the config
 * stored at the last `up`, `parallel`, replacements, protect, retainOnDelete, ignoreChanges,
 * `Resource.get`, parents in URNs, aliases, deletes in dependency antichains). `test/harness/engineRules.test.ts` checks each one.
 *
 * - Secrets (the engine's rules): an output is secret when its top-level key was a secret input or
 *   is listed in `additionalSecretOutputs` (read through `registerStackTransformation` inside
 *   `runInPulumiStack`); the program sees those outputs as secret. In the state file secrets are
 *   encrypted (AES-256-GCM, scrypt key; see `harnessState.mts`), never plaintext nor redacted.
 *   `result.outputs` shows secret stack outputs as "[secret]" (`stackOutputs({ showSecrets: true })`
 *   reads the real values).
 * - Stack config reaches the program as Pulumi's `PULUMI_CONFIG`/`PULUMI_CONFIG_SECRET_KEYS` env and
 *   the host through Configure (plaintext, as the engine sends it with `acceptSecrets=false`).
 * - `logs` holds the harness's step lines, the program's stdout/stderr and the host's stderr
 *   (prefixed `[host]`); `errors` one `<type> <name>: <text the engine prints>` per failed step,
 *   or a program error. `ok` = no errors. `hostOutput` is the host's output as the CLI shows it
 *   to the user, under the stack in `Diagnostics:` (README rule 10).
 *
 * Limits (see the README): no targets, `replaceOnChanges`, `deletedWith`, hooks or `import`;
 * options are matched to registrations by type and name.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import * as fs from "node:fs/promises";
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { Operation, RunnerBoot, RunnerRequest, RunnerResult, StepOp } from "./deployRunner.mts";
import { knownKeys, loadState, newStateSalt } from "./harnessState.mts";
import type { Registration } from "./programHost.mts";

/** A stack config value: plaintext, or `{ secret }` for `pulumi config set --secret`. */
export type ConfigValue = string | { secret: string };

export interface HarnessOptions {
  /** Temp project with the packed package installed (`inject("installedProjectDir")`). */
  projectDir: string;
  /** A Pulumi project directory (copied without node_modules), or a single program file (copied alone). */
  program: string;
  /** Encrypts secrets in the state. @default env PULUMI_CONFIG_PASSPHRASE (one of the two is required) */
  passphrase?: string;
  /** @default "<program copy>/.harness/state.json" */
  stateFile?: string;
  /** Stack name. @default "dev" */
  stack?: string;
  /** Project name. @default Pulumi.yaml `name`, else "harness" */
  project?: string;
  /** Stack config, keys namespaced ("runpod:apiKey"). */
  config?: Record<string, ConfigValue>;
  /** Environment of the program and the host. @default this process's, without RUNPOD_* variables */
  env?: NodeJS.ProcessEnv;
  /**
   * At most this many resource steps at once, as `pulumi up --parallel`.
   * @default `PULUMI_PARALLEL`, else 4 × CPU count ({@link defaultParallel}, read from `env`)
   */
  parallel?: number;
  /** `up`, `refresh` and `destroy` without the preview first, as `--skip-preview`. @default false */
  skipPreview?: boolean;
  /**
   * Instead of running the program: these dynamic resources, registered at once at the root with
   * no options, as a program of `new` calls would (a benchmark measures the engine's part without
   * the language host this way). `program` is still copied for its Pulumi.yaml. @default the program
   */
  registrations?: Registration[];
  /**
   * The provider's wait polls (an endpoint's rollout, a pod's readiness: 1 s) read this often in
   * the provider host, ms, for an emulator with short rollouts and pod starts (`startProviderHost`'s
   * `pollMs`). Bounds and deadlines keep their time. @default the provider's own
   */
  pollMs?: number;
}

const MAX_INT32 = 2 ** 31 - 1;

/**
 * The default of `--parallel` for `pulumi up`, `preview`, `refresh` and `destroy`: `defaultParallel`
 * (pkg/cmd/pulumi/operations/up.go). `PULUMI_PARALLEL` (`env.Parallel`, sdk/go/common/env/env.go)
 * wins when it is a positive integer as `strconv.ParseInt(v, 10, 64)` reads it (`IntValue.Value`:
 * 0 when unset or unparsable), capped at 2³¹−1; else `GOMAXPROCS × 4`, where Go's runtime takes
 * GOMAXPROCS from the variable of that name when it is a positive integer, else the CPUs the
 * process may use (`availableParallelism`).
 */
export function defaultParallel(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PULUMI_PARALLEL;
  if (raw !== undefined && /^[+-]?[0-9]+$/.test(raw)) {
    const n = BigInt(raw);
    if (n > 0n && n < 2n ** 63n) return n > BigInt(MAX_INT32) ? MAX_INT32 : Number(n);
  }
  const procs = env.GOMAXPROCS;
  const gomaxprocs = procs !== undefined && /^[0-9]+$/.test(procs) && Number(procs) > 0 ? Number(procs) : 0;
  return (gomaxprocs || availableParallelism()) * 4;
}

export interface DeployResult {
  ok: boolean;
  /** Stack exports; secret ones shown as "[secret]". */
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  /** Per resource; in a preview, the plan. `error` is the text the engine prints for it. */
  resources: Array<{ urn: string; id: string; op: StepOp; error?: string }>;
  /** One `<type> <name>: <engine text>` per failed step, program errors, and the run's `update failed` / `preview failed` (README rule 9). */
  errors: string[];
  warnings: string[];
  logs: string[];
  /**
   * The provider host's output (its warnings, JobRun's progress lines, what it prints for a failed
   * check, diff, read or delete), line by line: the CLI prints it under
   * `pulumi:pulumi:Stack (<project>-<stack>):` in `Diagnostics:` (`hostOutputLines` in
   * deployRunner.mts cites the engine); `render.mts` prints it there from `StepView.hostOutput`.
   */
  hostOutput: string[];
  /** Most resource steps that ran at once. */
  maxConcurrentSteps: number;
  /** From the first step's start to the last step's end, ms. */
  stepsMs: number;
  /** Total time of the (serial) Check calls, ms. */
  checkMs: number;
  /** The provider host's process id, when the run used a host (a fresh one every run). */
  hostPid?: number;
  /** The program's process id, when the program ran (a fresh one every run). */
  programPid?: number;
  /** For `up`, `refresh` and `destroy` without `skipPreview`: the preview that ran first (the operation is not run when it failed). */
  preview?: DeployResult;
}

const RUNNER = path.join(path.dirname(fileURLToPath(import.meta.url)), "deployRunner.mts");
/** The runner's young generation, MB per semi-space (see `run`). */
const RUNNER_HEAP = "--max-semi-space-size=32";

/**
 * A runner process, started with the environment and {@link RunnerBoot} of a run (`key`) and
 * waiting for its request; the harness keeps one as the next run's while nothing is asked of it.
 */
interface StartedRunner {
  child: ChildProcessWithoutNullStreams;
  key: string;
  /** What it wrote to stdout and stderr (the program's output among it). */
  output: () => string;
  closed: Promise<number | null>;
  /** Whether it keeps this process alive: not while it waits as a spare. */
  ref(on: boolean): void;
}

function startRunner(cwd: string, env: NodeJS.ProcessEnv, boot: RunnerBoot, key: string): StartedRunner {
  // The runner stands in for the engine, a Go process: a 32 MB young generation keeps node's
  // scavenger from pausing the serial Checks every few steps while 128 resources' outputs
  // (a 4.5 KB `__provider` in inputs and outputs each) churn through it (--parallel 64: about 7%
  // off the steps' span).
  const child = spawn(process.execPath, [RUNNER_HEAP, RUNNER], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    output += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    output += d;
  });
  const closed = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (c) => resolve(c));
  });
  closed.catch(() => {});
  // A runner that died at its start fails its run ("exited ... before writing a result"), not this process.
  child.stdin.on("error", () => {});
  child.stdin.write(`${JSON.stringify(boot)}\n`);
  return {
    child,
    key,
    output: () => output,
    closed,
    ref(on) {
      // The stdio pipes are sockets: each holds the event loop on its own.
      const pipes = [child.stdin, child.stdout, child.stderr] as unknown as Array<{
        ref(): void;
        unref(): void;
      }>;
      for (const handle of [child, ...pipes]) on ? handle.ref() : handle.unref();
    },
  };
}

/** Lets a runner go unused: its stdin ends with no request, so it stops what it started and exits. */
async function discardRunner(runner: StartedRunner): Promise<void> {
  runner.child.stdin.end();
  await runner.closed.catch(() => {});
}

function defaultEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RUNPOD_")));
}

/** Reads `name:` and `main:` from a Pulumi.yaml (top-level scalar keys only). */
function readPulumiYaml(dir: string): { name?: string; main?: string } {
  const file = path.join(dir, "Pulumi.yaml");
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  const pick = (key: string) =>
    text.match(new RegExp(`^${key}:\\s*["']?([^"'\\n#]+?)["']?\\s*(#.*)?$`, "m"))?.[1];
  return { name: pick("name"), main: pick("main") };
}

export class DeployHarness {
  /** The program's copy inside the temp project (the child's cwd). */
  readonly workDir: string;
  readonly stateFile: string;
  readonly stack: string;
  readonly project: string;
  private readonly main: string;
  private readonly passphrase: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly ownsState: boolean;
  private config: Record<string, ConfigValue>;
  /** Steps at once for the following runs (`--parallel`). */
  parallel: number;
  /** When true, `up`, `refresh` and `destroy` skip their preview (`--skip-preview`). */
  skipPreview: boolean;
  private readonly registrations: Registration[] | undefined;
  private readonly pollMs: number | undefined;
  /** The next run's runner, started in advance (see the module comment). */
  private spare: StartedRunner | undefined;
  /** Spares let go, until they exited. */
  private readonly discarding: Array<Promise<void>> = [];
  private disposed = false;

  private constructor(init: {
    workDir: string;
    main: string;
    stateFile: string;
    ownsState: boolean;
    stack: string;
    project: string;
    passphrase: string;
    env: NodeJS.ProcessEnv;
    config: Record<string, ConfigValue>;
    parallel: number;
    skipPreview: boolean;
    registrations?: Registration[];
    pollMs?: number;
  }) {
    this.workDir = init.workDir;
    this.main = init.main;
    this.stateFile = init.stateFile;
    this.ownsState = init.ownsState;
    this.stack = init.stack;
    this.project = init.project;
    this.passphrase = init.passphrase;
    this.env = init.env;
    this.config = { ...init.config };
    this.parallel = init.parallel;
    this.skipPreview = init.skipPreview;
    this.registrations = init.registrations;
    this.pollMs = init.pollMs;
  }

  /** Copies the program into `projectDir/programs/<name>-XXXX` and prepares a harness for it. */
  static async create(opts: HarnessOptions): Promise<DeployHarness> {
    if (
      !opts ||
      typeof opts.projectDir !== "string" ||
      !existsSync(path.join(opts.projectDir, "node_modules"))
    ) {
      throw new Error('projectDir must be a temp project with node_modules (inject("installedProjectDir"))');
    }
    if (typeof opts.program !== "string" || !existsSync(opts.program)) {
      throw new Error(
        `program must be an existing Pulumi project directory or program file; got ${JSON.stringify(opts.program)}`,
      );
    }
    const passphrase = opts.passphrase ?? process.env.PULUMI_CONFIG_PASSPHRASE;
    if (!passphrase)
      throw new Error("passphrase is required: pass options.passphrase or set PULUMI_CONFIG_PASSPHRASE");

    const source = path.resolve(opts.program);
    const isDir = statSync(source).isDirectory();
    const programs = path.join(opts.projectDir, "programs");
    await fs.mkdir(programs, { recursive: true });
    const workDir = await fs.mkdtemp(path.join(programs, `${path.basename(source).replace(/\W+/g, "-")}-`));
    let main: string;
    let yaml: { name?: string; main?: string } = {};
    if (isDir) {
      await fs.cp(source, workDir, {
        recursive: true,
        filter: (src) => !/[\\/](node_modules|\.harness|\.pulumi)([\\/]|$)/.test(src.slice(source.length)),
      });
      yaml = readPulumiYaml(workDir);
      const base = path.resolve(workDir, yaml.main ?? ".");
      const candidates = statSync(base, { throwIfNoEntry: false })?.isFile()
        ? [base]
        : ["index.ts", "index.mts", "index.js", "index.mjs", "index.cjs"].map((f) => path.join(base, f));
      const found = candidates.find((f) => existsSync(f));
      if (!found)
        throw new Error(
          `program ${source}: no entry point (looked for ${candidates.map((c) => path.relative(workDir, c)).join(", ")})`,
        );
      main = found;
    } else {
      main = path.join(workDir, path.basename(source));
      await fs.copyFile(source, main);
    }
    const stateFile = opts.stateFile
      ? path.resolve(opts.stateFile)
      : path.join(workDir, ".harness", "state.json");
    const harness = new DeployHarness({
      workDir,
      main,
      stateFile,
      ownsState: !opts.stateFile,
      stack: opts.stack ?? "dev",
      project: opts.project ?? yaml.name ?? "harness",
      passphrase,
      env: opts.env ?? defaultEnv(),
      config: opts.config ?? {},
      // The CLI reads PULUMI_PARALLEL from its own environment, which the program inherits.
      parallel: opts.parallel ?? defaultParallel(opts.env ?? process.env),
      skipPreview: opts.skipPreview ?? false,
      ...(opts.registrations ? { registrations: opts.registrations } : {}),
      ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    });
    // The first run's runner starts while the test prepares it.
    harness.spare = harness.startSpare("up");
    return harness;
  }

  /** Sets (or with `undefined`, removes) one stack config value for the following runs. */
  setConfig(key: string, value: ConfigValue | undefined): void {
    if (!key.includes(":"))
      throw new Error(`config key must be namespaced like "runpod:apiKey"; got ${JSON.stringify(key)}`);
    if (value === undefined) delete this.config[key];
    else this.config[key] = value;
  }

  /**
   * Deploys the program: see the module comment. As `pulumi up`, it previews first (result in
   * `preview`) and stops there when the preview fails, unless `skipPreview`. Never throws for
   * deployment errors: see `errors`.
   */
  async up(opts: { skipPreview?: boolean } = {}): Promise<DeployResult> {
    if (opts.skipPreview ?? this.skipPreview) return this.run("up");
    const preview = await this.run("preview", { next: "up" });
    if (!preview.ok) return { ...preview, preview };
    return { ...(await this.run("up")), preview };
  }

  /** `pulumi preview`: Check (unknowns as the sentinel) and Diff only; the state is not written. */
  preview(): Promise<DeployResult> {
    return this.run("preview");
  }

  /**
   * Reads every resource through the provider; gone ones leave the state. As `pulumi refresh`, it
   * previews first (the same reads, nothing written; result in `preview`) and stops there when the
   * preview fails, unless `skipPreview` (`PreviewThenPromptThenExecute`, pkg/backend/apply.go).
   */
  refresh(opts: { skipPreview?: boolean } = {}): Promise<DeployResult> {
    return this.previewThen("refresh", opts.skipPreview);
  }

  /**
   * Deletes every resource in the state. As `pulumi destroy`, it previews first (a protected
   * resource fails the preview, so nothing is deleted; result in `preview`), unless `skipPreview`.
   */
  destroy(opts: { skipPreview?: boolean } = {}): Promise<DeployResult> {
    return this.previewThen("destroy", opts.skipPreview);
  }

  private async previewThen(op: "refresh" | "destroy", skipPreview?: boolean): Promise<DeployResult> {
    if (skipPreview ?? this.skipPreview) return this.run(op);
    const preview = await this.run(op, { dryRun: true, next: op });
    if (!preview.ok) return { ...preview, preview };
    return { ...(await this.run(op)), preview };
  }

  /** The decrypted state (plaintext secrets: for assertions only, never print it). */
  async state() {
    return (await loadState(this.stateFile, this.passphrase, this.project, this.stack)).state;
  }

  /** The state file as stored (encrypted secrets): what to scan for leaked plaintext. */
  async rawState(): Promise<string> {
    return existsSync(this.stateFile) ? fs.readFile(this.stateFile, "utf8") : "";
  }

  /** Stack exports of the last successful `up`; secret ones as "[secret]" unless showSecrets. */
  async stackOutputs(opts: { showSecrets?: boolean } = {}): Promise<Record<string, unknown>> {
    const st = await this.state();
    return Object.fromEntries(
      Object.entries(st.outputs).map(([k, v]) => [
        k,
        st.secretOutputs.includes(k) && !opts.showSecrets ? "[secret]" : v,
      ]),
    );
  }

  /**
   * Stops the runner started in advance for a next run (and its host and program processes), then
   * removes the program copy (and the state file when the harness chose its location).
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    const spare = this.spare;
    this.spare = undefined;
    if (spare) this.discarding.push(discardRunner(spare));
    await Promise.all(this.discarding.splice(0));
    await fs.rm(this.workDir, { recursive: true, force: true });
    if (!this.ownsState) return;
    await fs.rm(this.stateFile, { force: true });
  }

  /**
   * A run's runner as the harness starts it now: its environment (the stack config reaches the
   * program through it), its boot line, and the two as one key.
   */
  private runnerSpec(
    op: Operation,
    dryRun = false,
  ): { env: NodeJS.ProcessEnv; boot: RunnerBoot; key: string } {
    const { plain, secretKeys } = this.plainConfig();
    const env: NodeJS.ProcessEnv = {
      ...this.env,
      PULUMI_CONFIG: JSON.stringify(plain),
      PULUMI_CONFIG_SECRET_KEYS: JSON.stringify(secretKeys),
      PULUMI_NODEJS_PROJECT: this.project,
      PULUMI_NODEJS_STACK: this.stack,
    };
    delete env.PULUMI_CONFIG_PASSPHRASE;
    const boot: RunnerBoot = {
      hostEnv: this.env,
      program: !this.registrations && (op === "up" || op === "preview"),
      host: !(op === "destroy" && dryRun),
      ...(this.pollMs !== undefined ? { pollMs: this.pollMs } : {}),
    };
    return { env, boot, key: JSON.stringify([env, boot]) };
  }

  /** Starts a runner for a coming `op` with what it would have now; it waits unreferenced. */
  private startSpare(op: Operation): StartedRunner {
    const { env, boot, key } = this.runnerSpec(op);
    const runner = startRunner(this.workDir, env, boot, key);
    runner.ref(false);
    return runner;
  }

  /** The stack config as plaintext, and the keys set as secrets. */
  private plainConfig(): { plain: Record<string, string>; secretKeys: string[] } {
    const plain: Record<string, string> = {};
    const secretKeys: string[] = [];
    for (const [k, v] of Object.entries(this.config)) {
      if (typeof v === "string") plain[k] = v;
      else {
        plain[k] = v.secret;
        secretKeys.push(k);
      }
    }
    return { plain, secretKeys };
  }

  /** One run in its runner; `next`: the operation that follows when this one succeeds. */
  private async run(
    op: Operation,
    runOpts: { dryRun?: boolean; next?: Operation } = {},
  ): Promise<DeployResult> {
    if (this.disposed) throw new Error("deploy harness: disposed; create a new one");
    const { plain, secretKeys } = this.plainConfig();
    const resultFile = path.join(this.workDir, `.harness-result-${process.pid}-${Date.now()}.json`);
    // The state's key, derived once in this process rather than once per run (harnessState.mts).
    await newStateSalt(this.passphrase);
    const request: RunnerRequest = {
      op,
      main: this.main,
      stateFile: this.stateFile,
      resultFile,
      passphrase: this.passphrase,
      stateKeys: knownKeys(this.passphrase),
      project: this.project,
      stack: this.stack,
      config: plain,
      secretConfigKeys: secretKeys,
      parallel: this.parallel,
      ...(runOpts.dryRun ? { dryRun: true } : {}),
      ...(this.registrations ? { registrations: this.registrations } : {}),
    };
    const { env, boot, key } = this.runnerSpec(op, runOpts.dryRun);
    let runner = this.spare;
    this.spare = undefined;
    if (runner?.key !== key) {
      // Started for other config or another kind of run (or none was): correctness first, a fresh one.
      if (runner) this.discarding.push(discardRunner(runner));
      runner = startRunner(this.workDir, env, boot, key);
    }
    runner.ref(true);
    // The run that follows this one when it succeeds starts now.
    if (runOpts.next) this.spare = this.startSpare(runOpts.next);
    runner.child.stdin.end(JSON.stringify(request));
    const code = await runner.closed;
    const output = runner.output();
    const programLogs = output.split("\n").filter((l) => l.trim() !== "");
    let result: RunnerResult;
    try {
      result = JSON.parse(await fs.readFile(resultFile, "utf8"));
      await fs.rm(resultFile, { force: true });
    } catch {
      return {
        ok: false,
        outputs: {},
        secretOutputs: [],
        resources: [],
        errors: [`deploy runner exited with code ${code} before writing a result`],
        warnings: [],
        logs: programLogs,
        hostOutput: [],
        maxConcurrentSteps: 0,
        stepsMs: 0,
        checkMs: 0,
      };
    }
    return { ok: result.errors.length === 0, ...result, logs: [...result.logs, ...programLogs] };
  }
}

/** Same as `DeployHarness.create(opts)`. */
export function createDeployHarness(opts: HarnessOptions): Promise<DeployHarness> {
  return DeployHarness.create(opts);
}

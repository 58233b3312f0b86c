/**
 * Drives the real `pulumi` CLI with a local file backend, with the same surface as the deploy
 * harness (`test/support/deployHarness.mts`), so the demo and the end-to-end scenarios run
 * through either one.
 *
 * ```ts
 * const pulumi = findPulumi();                       // absolute path, or undefined when not on PATH
 * const stack = await CliStack.create({ projectDir, program: "examples/demo", passphrase, config });
 * const result = await stack.up();                    // { ok, outputs, secretOutputs, resources, errors, logs }
 * await stack.setConfig("runpod-demo:registryAuthName", "demo-registry-2");
 * await stack.refresh(); await stack.destroy(); await stack.dispose();
 * ```
 *
 * What it runs (documented CLI behaviour), with cwd = a copy of the program inside `projectDir`
 * (so `pulumi-runpod-dynamic` resolves to the packed package in `projectDir/node_modules`):
 * - env: `PULUMI_BACKEND_URL=file://<copy>/.backend`, `PULUMI_CONFIG_PASSPHRASE`,
 *   `PULUMI_SKIP_UPDATE_CHECK=true`, `PULUMI_SKIP_CONFIRMATIONS=true`, no `RUNPOD_*` variables,
 *   and this Node's directory first on PATH (the language host runs `node`: Node 24 here).
 * - `pulumi stack init <stack> --secrets-provider passphrase --non-interactive`;
 * - `pulumi config set [--secret] <key>` with the value on stdin (secrets never on a command line);
 * - `pulumi up --yes --skip-preview --non-interactive --event-log <file>` (also `refresh`,
 *   `destroy`); the engine events give each resource's op, id and errors;
 * - `pulumi stack output --json [--show-secrets]` for the outputs (secrets as "[secret]").
 *
 * `echo: true` streams the CLI's own output to this process's stdout/stderr as it runs (the demo).
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";

/** A stack config value: plaintext, or `{ secret }` for `pulumi config set --secret`. */
export type ConfigValue = string | { secret: string };

/** Per-resource op, as the deploy harness reports them. */
export type ResourceOp = "create" | "update" | "replace" | "same" | "delete" | "failed";

/** Result of one `up`, `refresh` or `destroy`; the same shape as the deploy harness's. */
export interface CliResult {
  ok: boolean;
  /** Stack outputs after the step; secret ones as "[secret]". */
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  resources: Array<{ urn: string; id: string; op: ResourceOp; error?: string }>;
  /** Error diagnostics of the step, plus the CLI's exit status when it failed. */
  errors: string[];
  /** The CLI's stdout and stderr, line by line. */
  logs: string[];
}

export interface CliStackOptions {
  /** Temp project with the packed package installed (its node_modules is what the program uses). */
  projectDir: string;
  /** A Pulumi project directory; copied (without node_modules) into `projectDir/programs`. */
  program: string;
  /** Passphrase of the stack's secrets provider. */
  passphrase: string;
  /** Stack config, keys namespaced (`runpod:apiKey`). */
  config?: Record<string, ConfigValue>;
  /** @default "dev" */
  stack?: string;
  /** Stream the CLI's output to this process as it runs. @default false */
  echo?: boolean;
  /** Base environment. @default this process's, without RUNPOD_* variables */
  env?: NodeJS.ProcessEnv;
  /** The CLI to run. @default findPulumi() */
  pulumi?: string;
}

/** The `pulumi` executable on PATH, or undefined. */
export function findPulumi(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const names = process.platform === "win32" ? ["pulumi.exe", "pulumi.cmd"] : ["pulumi"];
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        if (statSync(file).isFile()) return file;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** Pulumi's colour directives (`<{%fg 1%}>`) and ANSI escapes, removed from messages. */
const stripColours = (s: string) => stripVTControlCharacters(s.replace(/<\{%[^%]*%\}>/g, ""));

/** One line of `--event-log` (the engine events the Automation API reads), the fields used here. */
interface EngineEvent {
  resOutputsEvent?: { metadata: StepMetadata };
  resOpFailedEvent?: { metadata: StepMetadata };
  diagnosticEvent?: { urn?: string; message?: string; severity?: string };
}
interface StepMetadata {
  op: string;
  urn: string;
  type: string;
  old?: { id?: string; outputs?: Record<string, unknown> };
  new?: { id?: string; outputs?: Record<string, unknown> };
}

/** Maps engine step ops to the harness's per-resource ops. */
function classify(meta: StepMetadata): ResourceOp {
  switch (meta.op) {
    case "create":
      return "create";
    case "update":
      return "update";
    case "delete":
    case "discard":
      return "delete";
    case "replace":
    case "create-replacement":
    case "delete-replaced":
    case "discard-replaced":
      return "replace";
    case "refresh":
      if (!meta.new) return "delete";
      return JSON.stringify(meta.old?.outputs) === JSON.stringify(meta.new.outputs) ? "same" : "update";
    default:
      return "same";
  }
}

/** A Pulumi stack on a local file backend, driven through the CLI. */
export class CliStack {
  readonly workDir: string;
  readonly backendDir: string;
  readonly stack: string;
  private readonly pulumi: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly echo: boolean;

  private constructor(init: {
    workDir: string;
    backendDir: string;
    stack: string;
    pulumi: string;
    env: NodeJS.ProcessEnv;
    echo: boolean;
  }) {
    this.workDir = init.workDir;
    this.backendDir = init.backendDir;
    this.stack = init.stack;
    this.pulumi = init.pulumi;
    this.env = init.env;
    this.echo = init.echo;
  }

  /** Copies the program, creates the stack on a new file backend and sets its config. */
  static async create(opts: CliStackOptions): Promise<CliStack> {
    const pulumi = opts.pulumi ?? findPulumi();
    if (!pulumi) throw new Error("the pulumi CLI is not on PATH (https://www.pulumi.com/docs/install/)");
    if (!existsSync(path.join(opts.projectDir, "node_modules")))
      throw new Error("projectDir must be a temp project with node_modules (installPackedPackage())");
    if (!opts.passphrase) throw new Error("passphrase is required (the stack's secrets provider)");
    const source = path.resolve(opts.program);
    if (!existsSync(path.join(source, "Pulumi.yaml")))
      throw new Error(`program must be a Pulumi project directory (with Pulumi.yaml); got ${source}`);

    const programs = path.join(opts.projectDir, "programs");
    await fs.mkdir(programs, { recursive: true });
    const workDir = await fs.mkdtemp(path.join(programs, `${path.basename(source)}-cli-`));
    await fs.cp(source, workDir, {
      recursive: true,
      filter: (src) =>
        !/[\\/](node_modules|\.harness|\.pulumi|\.backend)([\\/]|$)/.test(src.slice(source.length)),
    });
    const backendDir = path.join(workDir, ".backend");
    await fs.mkdir(backendDir);
    const base = opts.env ?? process.env;
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(Object.entries(base).filter(([k]) => !k.startsWith("RUNPOD_"))),
      PATH: [path.dirname(process.execPath), base.PATH ?? ""].join(path.delimiter),
      PULUMI_BACKEND_URL: pathToFileURL(backendDir).href,
      PULUMI_CONFIG_PASSPHRASE: opts.passphrase,
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_SKIP_CONFIRMATIONS: "true",
    };
    delete env.PULUMI_CONFIG_PASSPHRASE_FILE;
    delete env.PULUMI_ACCESS_TOKEN;
    const stack = new CliStack({
      workDir,
      backendDir,
      stack: opts.stack ?? "dev",
      pulumi,
      env,
      echo: opts.echo ?? false,
    });
    await stack.cli(["stack", "init", stack.stack, "--secrets-provider", "passphrase", "--non-interactive"]);
    for (const [key, value] of Object.entries(opts.config ?? {})) await stack.setConfig(key, value);
    return stack;
  }

  /** `pulumi config set` (or `config rm` for undefined); secret values go through stdin. */
  async setConfig(key: string, value: ConfigValue | undefined): Promise<void> {
    if (!key.includes(":"))
      throw new Error(`config key must be namespaced like "runpod:apiKey"; got ${JSON.stringify(key)}`);
    const s = ["--stack", this.stack];
    if (value === undefined) await this.cli(["config", "rm", key, ...s]);
    else if (typeof value === "string") await this.cli(["config", "set", key, value, ...s]);
    else await this.cli(["config", "set", "--secret", key, ...s], value.secret);
  }

  /**
   * `pulumi up --yes`: previews first, as a user's `pulumi up` does (`--skip-preview` with
   * `{ skipPreview: true }`). Never throws for deployment errors: see `errors`.
   */
  up(opts: { skipPreview?: boolean } = {}): Promise<CliResult> {
    return this.step(opts.skipPreview ? ["up", "--yes", "--skip-preview"] : ["up", "--yes"]);
  }

  /** `pulumi preview`. */
  preview(): Promise<CliResult> {
    return this.step(["preview"]);
  }

  /** `pulumi refresh --yes --skip-preview`. */
  refresh(): Promise<CliResult> {
    return this.step(["refresh", "--yes", "--skip-preview"]);
  }

  /** `pulumi destroy --yes --skip-preview`. */
  destroy(): Promise<CliResult> {
    return this.step(["destroy", "--yes", "--skip-preview"]);
  }

  /** `pulumi stack output --json`; secret values as "[secret]" unless showSecrets. */
  async stackOutputs(opts: { showSecrets?: boolean } = {}): Promise<Record<string, unknown>> {
    const args = ["stack", "output", "--json", "--stack", this.stack];
    if (opts.showSecrets) args.push("--show-secrets");
    const { stdout } = await this.cli(args);
    return JSON.parse(stdout || "{}");
  }

  /**
   * Everything Pulumi stored for this stack, as stored: every file of the backend (checkpoints,
   * history, backups) and the stack's config file `Pulumi.<stack>.yaml`. What to scan for leaks.
   */
  async rawState(): Promise<string> {
    const texts: string[] = [];
    const walk = async (dir: string) => {
      for (const e of await fs.readdir(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full);
        else texts.push(await fs.readFile(full, "utf8"));
      }
    };
    await walk(this.backendDir);
    const config = path.join(this.workDir, `Pulumi.${this.stack}.yaml`);
    if (existsSync(config)) texts.push(await fs.readFile(config, "utf8"));
    return texts.join("\n");
  }

  /** Removes the program copy and its backend. */
  async dispose(): Promise<void> {
    await fs.rm(this.workDir, { recursive: true, force: true });
  }

  private async step(args: string[]): Promise<CliResult> {
    const eventLog = path.join(this.workDir, `.events-${Date.now()}.jsonl`);
    const run = await this.cli(
      [...args, "--non-interactive", "--stack", this.stack, "--event-log", eventLog],
      "",
      {
        check: false,
      },
    );
    const events: EngineEvent[] = existsSync(eventLog)
      ? (await fs.readFile(eventLog, "utf8"))
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as EngineEvent)
      : [];
    await fs.rm(eventLog, { force: true });

    const byUrn = new Map<string, { urn: string; id: string; op: ResourceOp; error?: string }>();
    const errors: string[] = [];
    for (const ev of events) {
      const meta = ev.resOutputsEvent?.metadata ?? ev.resOpFailedEvent?.metadata;
      if (meta && !meta.type.startsWith("pulumi:pulumi:") && !meta.type.startsWith("pulumi:providers:")) {
        const prior = byUrn.get(meta.urn);
        const op: ResourceOp = ev.resOpFailedEvent ? "failed" : classify(meta);
        const id = meta.new?.id ?? meta.old?.id ?? prior?.id ?? "";
        // A replacement is several steps (create-replacement, replace, delete-replaced): keep "replace".
        const keep = prior && (prior.op === "failed" || (prior.op === "replace" && op !== "failed"));
        if (!keep) byUrn.set(meta.urn, { urn: meta.urn, id: op === "delete" && prior ? prior.id : id, op });
      }
      const diag = ev.diagnosticEvent;
      if (diag?.severity === "error" && diag.message) {
        const message = stripColours(diag.message).trim();
        if (!message) continue;
        errors.push(message);
        const r = diag.urn ? byUrn.get(diag.urn) : undefined;
        if (r) r.error = r.error ? `${r.error}\n${message}` : message;
      }
    }
    if (run.code !== 0 && errors.length === 0)
      errors.push(`pulumi ${args[0]} exited with code ${run.code}: ${lastLines(run.stderr || run.stdout)}`);

    let outputs: Record<string, unknown> = {};
    let secretOutputs: string[] = [];
    if (args[0] !== "destroy") {
      outputs = await this.stackOutputs().catch(() => ({}));
      secretOutputs = Object.keys(outputs).filter((k) => outputs[k] === "[secret]");
    }
    const logs = `${run.stdout}\n${run.stderr}`.split("\n").filter((l) => l.trim() !== "");
    return { ok: errors.length === 0, outputs, secretOutputs, resources: [...byUrn.values()], errors, logs };
  }

  /** Runs the CLI in the program copy; rejects on a non-zero exit unless `check: false`. */
  private cli(
    args: string[],
    stdin = "",
    opts: { check?: boolean } = {},
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.pulumi, args, {
        cwd: this.workDir,
        env: this.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      const streamed = this.echo && ["up", "preview", "refresh", "destroy"].includes(args[0]!);
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
        if (streamed) process.stdout.write(d);
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
        if (streamed) process.stderr.write(d);
      });
      child.once("error", reject);
      child.once("close", (code) => {
        if (code !== 0 && opts.check !== false) {
          const shown = args.includes("--secret") ? [...args.slice(0, 4), "<value from stdin>"] : args;
          reject(
            new Error(`pulumi ${shown.join(" ")} exited with code ${code}: ${lastLines(stderr || stdout)}`),
          );
        } else resolve({ code, stdout, stderr });
      });
      child.stdin.end(stdin);
    });
  }
}

/** The last few non-empty lines of a CLI's output, for an error message. */
function lastLines(text: string, n = 8): string {
  return stripColours(text)
    .split("\n")
    .filter((l) => l.trim())
    .slice(-n)
    .join("\n");
}

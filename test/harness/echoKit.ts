/**
 * The harness tests' kit over the echo fixture (test/support/fixtures): a deploy harness per test
 * over the echo program, or over `code` as its index.mjs, whose provider logs every call it gets
 * (env ECHO_LOG: one JSON line per check, diff, create, read, update and delete in the host). Call
 * it inside a `describe`: it installs the fixture once and disposes of every harness after each test.
 */
import { existsSync, readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeAll, inject } from "vitest";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";

/** One provider call as the echo fixture logs it. */
export interface EchoLogLine {
  op: string;
  id: string;
  value?: unknown;
  olds?: unknown;
  news?: unknown;
  greeting?: string;
}

export interface EchoHarnessOptions {
  /** Stack config (`project:key` → value). */
  config?: Record<string, string>;
  /** The program's body (after `const { Echo } = fixture;`); the echo program when absent. */
  code?: string;
  /** `--parallel`. @default the harness's default */
  parallel?: number;
  /** Added to the environment of the program, the runner and the host. */
  env?: NodeJS.ProcessEnv;
}

/** Registers the kit's hooks in the enclosing `describe`; `label` names its log files. */
export function echoHarnessKit(label: string) {
  const projectDir = inject("installedProjectDir");
  const program = path.join(__dirname, "programs", "echo");
  const cleanups: Array<() => Promise<void>> = [];
  let n = 0;

  beforeAll(async () => {
    await installEchoFixture(projectDir);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  /** Writes `body` as the harness's program (index.mjs, with the fixture's `Echo` in scope). */
  const setProgram = (h: DeployHarness, body: string) =>
    writeFile(
      path.join(h.workDir, "index.mjs"),
      `import * as pulumi from "@pulumi/pulumi";\nimport fixture from "runpod-echo-fixture";\nconst { Echo } = fixture;\n${body}\n`,
    );

  /** A harness (skipping previews unless the test turns them on) and the provider calls it made. */
  const make = async (opts: EchoHarnessOptions = {}) => {
    const log = path.join(projectDir, `echo-${label}-${process.pid}-${n++}.jsonl`);
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: label,
      config: opts.config ?? {},
      env: { ...process.env, ...opts.env, ECHO_LOG: log },
      skipPreview: true,
      ...(opts.parallel ? { parallel: opts.parallel } : {}),
    });
    if (opts.code !== undefined) await setProgram(h, opts.code);
    cleanups.push(async () => {
      await h.dispose();
      await rm(log, { force: true });
    });
    const lines = (): EchoLogLine[] =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
        : [];
    const clearLog = () => rm(log, { force: true });
    return { h, lines, clearLog };
  };

  /** A file that exists until the test ends (the fixture's `fail...WhileExists` flags watch one). */
  const flagFile = async () => {
    const f = path.join(projectDir, `flag-${label}-${process.pid}-${n++}`);
    await writeFile(f, "x");
    cleanups.push(() => rm(f, { force: true }));
    return f;
  };

  return { projectDir, make, setProgram, flagFile };
}

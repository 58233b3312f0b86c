/**
 * The `runpod-emulator` bin, as users run it: the compiled dist/emulator/cli.js under this Node.
 * (vitest's globalSetup rebuilds dist/ when src/ is newer.)
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import {
  PARENT_CHECK_ENV,
  PARENT_CHECK_INTERVAL_MS,
  parentCheckIntervalMs,
  parseCli,
  parseCommand,
  startFailureExitCode,
} from "../../src/emulator/cli";

const CLI = resolve(__dirname, "../../dist/emulator/cli.js");
const running: ChildProcessWithoutNullStreams[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "emu-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

interface Ready {
  restUrl: string;
  restUrlV1: string;
  restUrlV2: string;
  serverlessUrl: string;
  apiKey: string;
  port: number;
}

/** Starts the CLI and resolves with its ready line. */
async function start(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; ready: Ready }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: "pipe" });
  running.push(child);
  let stderr = "";
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise<string>((resolveLine, reject) => {
    lines.once("line", resolveLine);
    child.once("exit", (code) => reject(new Error(`cli exited ${code} before ready: ${stderr}`)));
  });
  return { child, ready: JSON.parse(line) as Ready };
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolveExit) => child.once("exit", (code) => resolveExit(code)));
}

async function call(
  ready: Ready,
  method: string,
  url: string,
  body?: unknown,
  auth = `Bearer ${ready.apiKey}`,
) {
  const res = await request(url, {
    method: method as "GET",
    headers: { authorization: auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
}

describe("runpod-emulator CLI", () => {
  it("prints one ready line, serves both interfaces, and exits 0 on SIGTERM", async () => {
    const { child, ready } = await start(["--port", "0", "--api-key", "dev", "--endpoint", "gpu:2"]);
    expect(ready).toEqual({
      restUrl: `http://127.0.0.1:${ready.port}/v2`,
      restUrlV1: `http://127.0.0.1:${ready.port}/v1`,
      restUrlV2: `http://127.0.0.1:${ready.port}/v2`,
      serverlessUrl: `http://127.0.0.1:${ready.port}`,
      apiKey: "dev",
      port: ready.port,
    });
    const sync = await call(
      ready,
      "POST",
      `${ready.serverlessUrl}/v2/gpu/runsync`,
      { input: { prompt: "hi" } },
      "dev",
    );
    expect(sync.body).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
    expect((await call(ready, "GET", `${ready.restUrlV1}/networkvolumes`)).body).toEqual([]);
    child.kill("SIGTERM");
    expect(await exitOf(child)).toBe(0);
  });

  it("--help lists every flag and the reserved endpoint ids", () => {
    const out = spawnSync(process.execPath, [CLI, "--help"], { encoding: "utf8" });
    expect(out.status).toBe(0);
    for (const flag of [
      "--port",
      "--host",
      "--api-key",
      "--endpoint",
      "--volumes",
      "--state-file",
      "--handlers",
      "--webhook-retry-delay-ms",
      "--retention",
      "--retention-run-ms",
      "--retention-runsync-ms",
      "--retention-max-jobs",
      "--faults",
      "--fault-seed",
      "--rate-limits",
      "--cold-start-ms",
      "--rollout-ms",
      "--load-balancer-request-wait-ms",
      "--pod-start-ms",
      "--balance-usd",
      "--no-parent-watch",
      "--version",
      "--help",
    ]) {
      expect(out.stdout).toContain(`  ${flag} `);
    }
    expect(out.stdout).toMatch(/Reserved, as the first\s+path segments of REST v2 management/);
    for (const id of ["registries", "network-volumes", "pods", "serverless", "templates"]) {
      expect(out.stdout).toContain(`"${id}"`);
    }
  });

  it("--retention sets both retention periods; the specific flags override it", () => {
    expect(parseCli(["--retention", "run=1000,runsync=2000"])?.retention).toEqual({
      runMs: 1000,
      runsyncMs: 2000,
    });
    expect(parseCli(["--retention", "run=1000", "--retention-run-ms", "5"])?.retention).toEqual({
      runMs: 5,
      runsyncMs: undefined,
    });
  });

  it("--balance-usd sets the account's balance in US dollars and refuses anything but a number", () => {
    expect(parseCli(["--balance-usd", "12.5"])?.balanceUsd).toBe(12.5);
    expect(() => parseCli(["--balance-usd=-1"])).toThrow(
      /--balance-usd must be a number of US dollars >= 0, got "-1"/,
    );
    expect(() => parseCli(["--balance-usd", "lots"])).toThrow(/--balance-usd/);
  });

  it("--rate-limits FILE reads a table of rows, including rows the service does not publish", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emu-limits-"));
    try {
      const file = join(dir, "limits.json");
      await writeFile(file, JSON.stringify({ health: { requests: 2, windowMs: 10_000 } }));
      expect(parseCli(["--rate-limits", file])?.rateLimits).toEqual({
        health: { requests: 2, windowMs: 10_000 },
      });
      expect(parseCli(["--rate-limits", "off"])?.rateLimits).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("exits 2 with a message naming a bad flag", () => {
    const out = spawnSync(process.execPath, [CLI, "--bogus"], { encoding: "utf8" });
    expect(out.status).toBe(2);
    expect(out.stderr).toBe(
      "runpod-emulator: Unknown option '--bogus'\nRun runpod-emulator --help for the flags.\n",
    );
    expect(out.stdout).toBe("");
  });

  // In process: the CLI prints what these throw and exits 2 (the flag above; a start's usage error
  // is the --volumes test's, in a process too).
  it("refuses a bad flag value while reading the flags, naming the flag", () => {
    const cases: [string[], RegExp][] = [
      [
        ["--rate-limits", "maybe"],
        /--rate-limits must be on, off or a JSON file of limits; cannot read "maybe"/,
      ],
      [["--retention", "runs=5"], /--retention takes "run=MS,runsync=MS", got "runs=5"/],
      [["--retention", "run=soon"], /--retention run must be a non-negative integer/],
      [["--port", "abc"], /--port must be a non-negative integer/],
    ];
    for (const [args, message] of cases) expect(() => parseCommand(args), args.join(" ")).toThrow(message);
  });

  it("refuses a reserved endpoint id and a bad fault spec on start, as a usage error (exit 2)", async () => {
    const cases: [string[], RegExp][] = [
      [["--endpoint", "registries"], /endpoint id "registries" is reserved/],
      [["--faults", "429=5"], /faults: 429 must be a probability/],
    ];
    for (const [args, message] of cases) {
      const options = parseCli([...args, "--port", "0"]);
      expect(options, args.join(" ")).toBeDefined();
      const error = await startEmulator(options!).then(
        async (emu) => {
          await emu.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error, args.join(" ")).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(message);
      expect(startFailureExitCode(error)).toBe(2);
    }
    expect(startFailureExitCode(Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE" }))).toBe(
      1,
    );
  });

  it(`reads the parent check's interval from ${PARENT_CHECK_ENV}, 1 s when unset`, () => {
    expect(PARENT_CHECK_INTERVAL_MS).toBe(1000);
    expect(parentCheckIntervalMs({})).toBe(1000);
    expect(parentCheckIntervalMs({ [PARENT_CHECK_ENV]: "50" })).toBe(50);
    for (const bad of ["0", "-5", "1.5", "soon"]) {
      expect(() => parentCheckIntervalMs({ [PARENT_CHECK_ENV]: bad })).toThrow(
        `${PARENT_CHECK_ENV} must be a whole number of ms from 1; got "${bad}"`,
      );
    }
  });

  it("keeps management data in --state-file across restarts and loads --volumes and --handlers", async () => {
    const stateFile = join(dir, "state.json");
    const volumes = join(dir, "volumes.json");
    const handlers = join(dir, "handlers.mjs");
    await writeFile(
      volumes,
      JSON.stringify([{ id: "vol1", name: "models", size: 100, dataCenterId: "EU-RO-1" }]),
    );
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the module source contains a template literal
    await writeFile(handlers, "export default async (job) => `hello ${job.input.name}`;\n");
    const args = ["--state-file", stateFile, "--volumes", volumes, "--handlers", handlers, "--api-key", "k"];
    const first = await start(args);
    const reg = await call(first.ready, "POST", `${first.ready.restUrlV2}/registries`, {
      name: "r",
      username: "u",
      password: "p",
    });
    expect(reg.status).toBe(201);
    const out = await call(first.ready, "POST", `${first.ready.serverlessUrl}/v2/echo/runsync`, {
      input: { name: "you" },
    });
    expect(out.body.output).toBe("hello you");
    first.child.kill("SIGINT");
    expect(await exitOf(first.child)).toBe(0);

    const second = await start(args);
    expect((await call(second.ready, "GET", `${second.ready.restUrlV1}/containerregistryauth`)).body).toEqual(
      [reg.body],
    );
    expect((await call(second.ready, "GET", `${second.ready.restUrlV1}/networkvolumes/vol1`)).body.name).toBe(
      "models",
    );
    second.child.kill("SIGTERM");
    expect(await exitOf(second.child)).toBe(0);
  });
});

/** True while `pid` runs (a zombie waiting for a reaper counts as gone). */
function alive(pid: number): boolean {
  if (existsSync("/proc")) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return !/^\d+ \(.*\) Z /.test(stat);
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` every 100 ms; fails after `tries`. */
async function eventually(condition: () => boolean, what: string, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (condition()) return;
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  throw new Error(`never happened: ${what}`);
}

describe("runpod-emulator and its parent process", () => {
  /** The parent check's interval in these tests, ms (the CLI's own is 1 s). */
  const CHECK_MS = 50;
  /**
   * Starts the CLI through an intermediate process, as npm's exec runs it (`npx runpod-emulator`),
   * with its output in a file that outlives the intermediate. Resolves with both pids and the log.
   */
  async function startThroughParent(args: string[]) {
    const log = join(dir, `emu-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
    const parentScript = `
      const { spawn } = require("node:child_process");
      const { openSync } = require("node:fs");
      const fd = openSync(${JSON.stringify(log)}, "a");
      const child = spawn(process.execPath, [${JSON.stringify(CLI)}, ...${JSON.stringify(args)}], {
        stdio: ["ignore", fd, fd],
      });
      console.log(child.pid);
      setInterval(() => {}, 1000); // stays until killed, forwarding nothing`;
    const parent = spawn(process.execPath, ["-e", parentScript], {
      stdio: "pipe",
      env: { ...process.env, [PARENT_CHECK_ENV]: String(CHECK_MS) },
    });
    running.push(parent);
    const lines = createInterface({ input: parent.stdout });
    const pid = Number(await new Promise<string>((resolveLine) => lines.once("line", resolveLine)));
    const text = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
    await eventually(() => text().includes('"serverlessUrl"'), "the ready line");
    const ready = JSON.parse(
      text()
        .split("\n")
        .find((l) => l.startsWith("{")) as string,
    ) as Ready;
    return { parent, pid, ready, text };
  }

  it("exits 2 naming the field and the range for a --volumes entry v2 could not show", async () => {
    const file = join(dir, "small-volumes.json");
    await writeFile(file, JSON.stringify([{ id: "v", name: "n", size: 5, dataCenterId: "EU" }]));
    const out = spawnSync(process.execPath, [CLI, "--volumes", file], { encoding: "utf8" });
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(
      /^runpod-emulator: volumes\[0\]\.size must be an integer from 10 to 4096 GB, got 5/,
    );
  });

  it("--version prints the package's version", () => {
    const out = spawnSync(process.execPath, [CLI, "--version"], { encoding: "utf8" });
    const pkg = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8"));
    expect(out.status).toBe(0);
    expect(out.stdout).toBe(`${pkg.version}\n`);
  });

  it("closes when its parent exits without passing a signal on (npx ... & then kill %1)", async () => {
    const { parent, pid, ready, text } = await startThroughParent(["--port", "0", "--api-key", "k"]);
    expect((await call(ready, "GET", `${ready.serverlessUrl}/v2/echo/health`, undefined, "k")).status).toBe(
      200,
    );
    parent.kill("SIGKILL"); // the parent dies at once: no signal reaches the emulator
    await eventually(() => !alive(pid), `emulator ${pid} to exit`);
    expect(text()).toContain("runpod-emulator: parent process exited, closing");
    await expect(request(`${ready.serverlessUrl}/v2/echo/health`)).rejects.toThrow();
  });

  it("keeps serving without its parent with --no-parent-watch", async () => {
    const { parent, pid, ready } = await startThroughParent([
      "--port",
      "0",
      "--api-key",
      "k",
      "--no-parent-watch",
    ]);
    parent.kill("SIGKILL");
    // Ten parent checks' worth of waiting (a watching one closes within one), then it must still answer.
    await new Promise((resolveWait) => setTimeout(resolveWait, 10 * CHECK_MS));
    try {
      expect(alive(pid)).toBe(true);
      expect((await call(ready, "GET", `${ready.serverlessUrl}/v2/echo/health`, undefined, "k")).status).toBe(
        200,
      );
    } finally {
      process.kill(pid, "SIGTERM");
    }
    await eventually(() => !alive(pid), `emulator ${pid} to exit on SIGTERM`);
  });
});

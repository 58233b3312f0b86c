#!/usr/bin/env node
/**
 * `runpod-emulator`: runs the local emulator until SIGINT/SIGTERM, or until its parent process
 * exits. When ready it prints one JSON line on stdout (`{"restUrl","restUrlV1","restUrlV2",
 * "serverlessUrl","apiKey","port"}`; `restUrl` is the REST v2 base, the default dialect);
 * everything else goes to stderr. Bad flags print a message naming the flag and exit with
 * status 2.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { RateLimitTable } from "../wire/limits";
import { type EmulatorOptions, RESERVED_ENDPOINT_IDS } from "./options";

/** Oldest Node the emulator runs on (undici 8's minimum). */
const MIN_NODE = [22, 19] as const;

/** How often the parent process is checked for, ms. */
export const PARENT_CHECK_INTERVAL_MS = 1000;
/**
 * Environment variable that sets the parent check's interval, ms (a whole number from 1), for
 * tests that would otherwise wait out whole seconds; unset, {@link PARENT_CHECK_INTERVAL_MS}.
 */
export const PARENT_CHECK_ENV = "RUNPOD_EMULATOR_PARENT_CHECK_MS";

/** The parent check's interval, ms: {@link PARENT_CHECK_ENV} when set, else the default. */
export function parentCheckIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[PARENT_CHECK_ENV];
  if (text === undefined || text === "") return PARENT_CHECK_INTERVAL_MS;
  const ms = Number(text);
  if (!(Number.isInteger(ms) && ms > 0)) {
    throw new Error(`${PARENT_CHECK_ENV} must be a whole number of ms from 1; got "${text}"`);
  }
  return ms;
}

/**
 * The exit code for an error `startEmulator` threw: 1 for a system error (a port in use:
 * EADDRINUSE, a module not installed), 2 for a usage error (a bad endpoint id, fault spec or
 * volumes entry, unreadable handlers).
 */
export function startFailureExitCode(err: unknown): 1 | 2 {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && (/^E[A-Z]+$/.test(code) || code === "MODULE_NOT_FOUND") ? 1 : 2;
}

const RESERVED_LIST = wrap(
  RESERVED_ENDPOINT_IDS.map((id) => `"${id}"`).join(", "),
  62,
  "                              ",
);
const PARENT_CHECK_INTERVAL_S = PARENT_CHECK_INTERVAL_MS / 1000;

/** Wraps `text` at spaces to lines of at most `width`, indenting the lines after the first. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}

const HELP = `Usage: runpod-emulator [flags]

A local emulator of the RunPod REST management API (v1 and v2) and the serverless job API,
all on one port. When ready it prints one JSON line on stdout:
  {"restUrl":"http://127.0.0.1:PORT/v2","restUrlV1":"http://127.0.0.1:PORT/v1","restUrlV2":"http://127.0.0.1:PORT/v2","serverlessUrl":"http://127.0.0.1:PORT","apiKey":"KEY","port":PORT}
and serves until SIGINT or SIGTERM, or until its parent process exits (see Stopping).

Flags:
  --port N                    TCP port; 0 picks a free one (default 0)
  --host HOST                 interface to bind (default 127.0.0.1)
  --api-key KEY               accepted API key; repeatable; the ready line shows the first
                              (default: one random key)
  --endpoint ID[:N]           a serverless endpoint with N workers (workersMax, default 3);
                              repeatable (default: one endpoint "echo"). Reserved, as the first
                              path segments of REST v2 management (/v2/registries, ...):
                              ${RESERVED_LIST}
  --volumes FILE              JSON array of network volumes that exist at start
                              ({id, name, size, dataCenterId}); size 10..4096 GB, the bounds of
                              REST v2, so that both dialects can show every volume
  --state-file FILE           keep registry auths, volumes, ECR delegations, templates and the
                              endpoints made over REST v2 (with their releases) in FILE across
                              restarts (written atomically; passwords only as salted hashes)
  --handlers FILE             worker code: a CommonJS or ES module whose default export is one
                              handler for all endpoints or an object of handlers by image (a
                              worker's release image, "acme/model:2") or by endpoint id;
                              a handler is async (job, { signal, log, worker }) => output, or an
                              async generator whose yields are stream chunks; log(line) writes
                              to the worker's log (default: built-in worker)
  --webhook-retry-delay-ms MS delay between webhook attempts (default 10000)
  --retention SPEC            how long results stay readable after completion, in ms:
                              "run=1800000,runsync=60000" (the defaults; either key may be left out)
  --retention-run-ms MS       the same for /run results alone (default 1800000)
  --retention-runsync-ms MS   the same for /runsync results alone (default 60000)
  --retention-max-bytes N     most bytes of finished jobs' outputs kept; past it the oldest are
                              evicted early and their /status answers 404 saying so (default 256000000)
  --retention-max-jobs N      most finished jobs kept, all endpoints together; past it the oldest
                              are forgotten early, as past --retention-max-bytes (default 100000)
  --faults SPEC               inject faults, e.g. "429=0.05,503=0.05,500=0.05,reset=0.05,latency=0-200":
                              429/503 before acting (with Retry-After), 500 after acting on a
                              POST, reset before or after at random, latency in ms (default none)
  --fault-seed N              seed of the fault sequence, for reproducible runs (default random)
  --rate-limits on|off|FILE   the service's rate and concurrency limits (default on; management
                              calls: 3000 a minute, the emulator's choice, as the service
                              publishes none), or a JSON table of your own:
                              {"run":{"requests":1000,"windowMs":10000,"concurrent":200},
                              "management":{...}}; operations without a row are not limited.
                              REST v2 answers carry RateLimit / RateLimit-Policy for the
                              management row in force
  --cold-start-ms MS          workers start cold and take MS to warm up; lowPriority jobs run
                              only on warm workers (default: workers are warm). Load-balancer
                              endpoints always keep workers.min warm and start the others on
                              demand, in MS (default 500)
  --load-balancer-request-wait-ms MS
                              how long a request to a load-balancer endpoint waits for a ready
                              worker before answering 503 (default 60000)
  --rollout-ms MS             rolling updates: after a new release of an endpoint (a PATCH of
                              /v2/serverless/{id} changing image, env, templateId, ...), its
                              older workers keep serving, isStale, for MS, then are replaced one
                              at a time, each new worker initializing for the cold start or
                              500 ms (default 3000)
  --pod-start-ms MS           pods: time from create (or start) to RUNNING, half PROVISIONING and
                              half STARTING, on the emulator clock (default 2000)
  --balance-usd USD           the account's balance: a pod create or start whose pod costs more
                              an hour, or a cluster create whose pods together do, answers 402
                              (default: no limit)
  --no-parent-watch           keep serving when the parent process exits (see below)
  --version                   print the version
  --help                      print this help

Stopping: SIGINT or SIGTERM close the emulator cleanly. It also closes when the process that
started it exits: every ${PARENT_CHECK_INTERVAL_S} s it reads its parent process id, which changes once the parent
is gone. So "npx runpod-emulator ... &" then "kill %1" stops it, although npm's exec does not
pass the signal on. To keep it running without its parent (nohup, a double-forking service
manager), pass --no-parent-watch.

In process, startEmulator() takes the same options in camel case, plus an injectable clock
(\`clock\`) for tests.

Built-in worker input: sleepMs (wait first), stream (array: each item a chunk),
fail (string: the job ends FAILED with it), output (the output); otherwise the input is echoed.
A job's input may nest at most 512 levels (400 past it), a handler's output 4096 (the job then
ends FAILED saying so): bounds of the emulator, so one deep request cannot overflow its stack.

REST v2 ECR delegations: GET and POST /v2/registries/delegations, DELETE .../{id} (revoke);
the repository ARN is answered in parts (tag: the :<tag> after the name, else latest).

REST v2 serverless: /v2/serverless and /v2/templates CRUD; /v2/serverless/{id}/releases,
/workers and /workers/{workerId}/logs (Server-Sent Events with tail, since, source and
Last-Event-ID). Endpoints given with --endpoint are listed there too (image
runpod-emulator/builtin:latest). Job status answers carry workerId.

Load-balancer endpoints (type LOAD_BALANCER): requestUrls.base is <origin>/lb/<id> (the service's
https://<id>.api.runpod.ai), every request needs Authorization: Bearer <key>. Health at
HEALTH_CHECK_PATH (env) or /ping: 200 a worker is ready, 204 one is starting, 503 none can.
Workers run a built-in model server: GET|POST /echo, GET /v1/models (env MODEL_NAME),
POST /v1/chat/completions (answers "echo: <last user message>"); each request is a line of the
serving worker's log. RUNPOD_EMULATOR_FAIL=<message> answers 500 {"error": <message>};
RUNPOD_EMULATOR_LATENCY_MS=<n> delays each answer n ms.

REST v2 catalog: /v2/catalog/gpus, /cpus, /datacenters, /templates answer a fixed catalog with stock;
an endpoint's gpu.pools must name one of its pools, or EMULATOR (the pool of --endpoint endpoints).

A broken release, for demos and tests: an endpoint env of
  RUNPOD_EMULATOR_FAIL=<message>          every job on that release's workers ends FAILED
                                          with <message> (logged on the worker)
  RUNPOD_EMULATOR_ERROR_OUTPUT=<message>  every job ends COMPLETED with output {"error": <message>}
Workers of older releases keep their own env, so until the rollout replaces them they still pass.

A release whose workers never become healthy (a stalled rollout): an image whose reference
contains "unpullable" (e.g. ghcr.io/acme/app:unpullable; logged as "failed to pull image ...:
manifest unknown"), or an endpoint env setting RUNPOD_EMULATOR_UNHEALTHY (any value). The first
replacement worker goes UNHEALTHY, no further stale worker is replaced (they keep serving the
previous release), and the rollout never completes until a new release arrives.
`;

/** Thrown for bad command-line input (exit status 2). */
class UsageError extends Error {}

function int(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

/** Reads `--rate-limits FILE`: a JSON object of rows (`startEmulator` validates each row). */
function rateLimitFile(file: string): RateLimitTable {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new UsageError(
      `--rate-limits must be on, off or a JSON file of limits; cannot read "${file}" (${(err as Error).message})`,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new UsageError(
      `--rate-limits ${file}: must hold a JSON object of rows, e.g. {"run":{"requests":1000,"windowMs":10000}}`,
    );
  }
  return data as RateLimitTable;
}

/** Parses `--retention "run=MS,runsync=MS"` into the `retention` option. */
function retentionSpec(spec: string | undefined): { runMs?: number; runsyncMs?: number } {
  const out: { runMs?: number; runsyncMs?: number } = {};
  if (spec === undefined) return out;
  for (const part of spec.split(",")) {
    const [key, value = ""] = part.split("=").map((x) => x.trim());
    if (key === "run") out.runMs = int("retention run", value);
    else if (key === "runsync") out.runsyncMs = int("retention runsync", value);
    else {
      throw new UsageError(
        `--retention takes "run=MS,runsync=MS", got "${part}" (allowed keys: run, runsync)`,
      );
    }
  }
  return out;
}

/** What the command line asks for. */
export type Command =
  | { kind: "help" }
  | { kind: "version" }
  | { kind: "run"; options: EmulatorOptions; watchParent: boolean };

/** Turns argv into `startEmulator` options; undefined when `--help` or `--version` was asked. */
export function parseCli(argv: string[]): EmulatorOptions | undefined {
  const command = parseCommand(argv);
  return command.kind === "run" ? command.options : undefined;
}

/** Turns argv into what to do: print help or the version, or run with these options. */
export function parseCommand(argv: string[]): Command {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "api-key": { type: "string", multiple: true },
        endpoint: { type: "string", multiple: true },
        volumes: { type: "string" },
        "state-file": { type: "string" },
        handlers: { type: "string" },
        "webhook-retry-delay-ms": { type: "string" },
        retention: { type: "string" },
        "retention-run-ms": { type: "string" },
        "retention-max-bytes": { type: "string" },
        "retention-max-jobs": { type: "string" },
        "retention-runsync-ms": { type: "string" },
        faults: { type: "string" },
        "fault-seed": { type: "string" },
        "rate-limits": { type: "string" },
        "cold-start-ms": { type: "string" },
        "rollout-ms": { type: "string" },
        "load-balancer-request-wait-ms": { type: "string" },
        "pod-start-ms": { type: "string" },
        "balance-usd": { type: "string" },
        "no-parent-watch": { type: "boolean" },
        version: { type: "boolean", short: "v" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values as Record<string, string | string[] | boolean | undefined>;
  if (v.help) return { kind: "help" };
  if (v.version) return { kind: "version" };
  const s = (name: string) => v[name] as string | undefined;
  const options: EmulatorOptions = {};
  const port = int("port", s("port"));
  if (port !== undefined) {
    if (port > 65535) throw new UsageError(`--port must be 0..65535, got ${port}`);
    options.port = port;
  }
  if (s("host") !== undefined) options.host = s("host");
  if (v["api-key"]) options.apiKeys = v["api-key"] as string[];
  if (v.endpoint) options.endpoints = v.endpoint as string[];
  const volumes = s("volumes");
  if (volumes !== undefined) {
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(volumes, "utf8"));
    } catch (err) {
      throw new UsageError(`--volumes ${volumes}: cannot read a JSON file (${(err as Error).message})`);
    }
    if (!Array.isArray(data))
      throw new UsageError(`--volumes ${volumes}: must hold a JSON array of network volumes`);
    options.volumes = data;
  }
  if (s("state-file") !== undefined) options.stateFile = s("state-file");
  if (s("handlers") !== undefined) options.handlers = s("handlers");
  options.webhookRetryDelayMs = int("webhook-retry-delay-ms", s("webhook-retry-delay-ms"));
  const retention = retentionSpec(s("retention"));
  const runMs = int("retention-run-ms", s("retention-run-ms")) ?? retention.runMs;
  const runsyncMs = int("retention-runsync-ms", s("retention-runsync-ms")) ?? retention.runsyncMs;
  const maxBytes = int("retention-max-bytes", s("retention-max-bytes"));
  const maxJobs = int("retention-max-jobs", s("retention-max-jobs"));
  if (runMs !== undefined || runsyncMs !== undefined || maxBytes !== undefined || maxJobs !== undefined) {
    options.retention = { runMs, runsyncMs, maxBytes, ...(maxJobs !== undefined ? { maxJobs } : {}) };
  }
  if (s("faults") !== undefined) options.faults = s("faults");
  options.faultSeed = int("fault-seed", s("fault-seed"));
  const rateLimits = s("rate-limits");
  if (rateLimits !== undefined) {
    if (rateLimits === "on" || rateLimits === "off") options.rateLimits = rateLimits === "on";
    else options.rateLimits = rateLimitFile(rateLimits);
  }
  options.coldStartMs = int("cold-start-ms", s("cold-start-ms"));
  options.rolloutMs = int("rollout-ms", s("rollout-ms"));
  options.loadBalancerRequestWaitMs = int(
    "load-balancer-request-wait-ms",
    s("load-balancer-request-wait-ms"),
  );
  options.podStartMs = int("pod-start-ms", s("pod-start-ms"));
  const balance = s("balance-usd");
  if (balance !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(balance)) {
      throw new UsageError(
        `--balance-usd must be a number of US dollars >= 0, got ${JSON.stringify(balance)}`,
      );
    }
    options.balanceUsd = Number(balance);
  }
  for (const key of Object.keys(options) as (keyof EmulatorOptions)[]) {
    if (options[key] === undefined) delete options[key];
  }
  return { kind: "run", options, watchParent: v["no-parent-watch"] !== true };
}

/** The package's version, from its package.json (two folders up from src/emulator and dist/emulator). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
    version?: string;
  };
  return pkg.version ?? "unknown";
}

/**
 * Calls `onGone` once the parent process has exited. A process whose parent exits is re-parented
 * (to init or a subreaper), so its parent pid changes; polling it works whatever started us (npm's
 * exec, a shell, a test runner) and needs no cooperation from the parent, unlike a signal it
 * would have to forward or a stdin pipe (a background job's stdin is often /dev/null, at EOF at
 * once). The timer is unref'd: it never keeps the process alive on its own.
 */
export function watchParent(onGone: () => void, intervalMs = PARENT_CHECK_INTERVAL_MS): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Exits with a clear message on a Node older than {@link MIN_NODE} (before undici fails to load). */
function requireSupportedNode(): void {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])) return;
  process.stderr.write(
    `runpod-emulator: needs Node ${MIN_NODE.join(".")} or newer, this is ${process.versions.node}. ` +
      "Install Node 22 or 24 (or add the devDependency node@24 and run it through npx).\n",
  );
  process.exit(1);
}

async function main(): Promise<void> {
  requireSupportedNode();
  // Loaded after the version check: the server's dependencies need a current Node.
  const { startEmulator }: typeof import("./index") = require("./index");
  let command: Command;
  let checkEveryMs: number;
  try {
    command = parseCommand(process.argv.slice(2));
    checkEveryMs = parentCheckIntervalMs();
  } catch (err) {
    process.stderr.write(
      `runpod-emulator: ${(err as Error).message}\nRun runpod-emulator --help for the flags.\n`,
    );
    process.exit(2);
  }
  if (command.kind === "help") {
    process.stdout.write(HELP);
    return;
  }
  if (command.kind === "version") {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  const { options, watchParent: shouldWatchParent } = command;
  let emu: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emu = await startEmulator(options);
  } catch (err) {
    process.stderr.write(`runpod-emulator: ${(err as Error).message}\n`);
    process.exit(startFailureExitCode(err));
  }
  const ready = {
    restUrl: emu.restUrl,
    restUrlV1: emu.restUrlV1,
    restUrlV2: emu.restUrlV2,
    serverlessUrl: emu.serverlessUrl,
    apiKey: emu.apiKey,
    port: emu.port,
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`runpod-emulator: ${why}, closing\n`);
    emu.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`runpod-emulator: close failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT received"));
  process.on("SIGTERM", () => stop("SIGTERM received"));
  if (shouldWatchParent) watchParent(() => stop("parent process exited"), checkEveryMs);
}

if (require.main === module) void main();

/**
 * Scale through the engine's path: N JobRuns (100 ms jobs) in ONE deploy through the deploy
 * harness (`test/support/deployHarness.mts`) and Pulumi's real dynamic-provider host, from the
 * packed package, at `pulumi up`'s default parallelism and at `--parallel 64`.
 *
 * A real deploy runs at most P steps at once through one host process, so with W workers on the
 * endpoint and jobs of T ms it cannot finish faster than `ceil(N / min(P, W)) × T`, nor faster than
 * the service's rate limit lets N jobs start (`floor((N - 1) / R) × window + T`, R = the `run` row).
 * The engine's step generator also calls Check once per resource, one at a time (`generateSteps`,
 * step_generator.go; only Diff may run in parallel, behind `ParallelDiff`), so no deploy of N
 * resources finishes before N Check round trips and then the last resource's job have run:
 *
 *   bound = max( ceil(N / min(P, W)) × T,  N × Check round trip + T,  rate-limit bound )
 *
 * The round trip is the one the engine meets: Check goes to the same host process that runs the
 * creates (the step generator's `loadResourceProvider` and the steps' `getProvider` both take
 * `Deployment.GetProvider(ref)`: one plugin per provider), so while up to P creates run there, each
 * Check waits its turn on the host's event loop. The bench measures it in the same run with the
 * engine's floor: a driver with no program and no state that sends the same N Checks one at a time
 * to a fresh host from the same packed package, each followed by its Create in one of P slots, the
 * next Check waiting while every slot is taken (the step generator feeding the step executor:
 * `handleSingleEvent` → `ExecuteSerial`, deployment_executor.go, step_executor.go). Its mean Check is the bound's round trip; the
 * idle round trip (the median of {@link CHECK_SAMPLES} sequential Checks to an idle host) is shown
 * beside it.
 *
 * The figure is the harness deploy's steps' span (first step started → last step ended,
 * `DeployResult.stepsMs`): the program's start, the host's start and the preview are not part of it
 * (`--skip-preview`). Target: within 1.3x of the bound (DESIGN.md). A second row puts the span
 * beside the floor driver's span (what the harness adds: the program's process, the state written
 * after each step), a third the span of the same deploy with the harness registering the JobRuns
 * itself (`registrations`: no language host, so what the engine's part adds alone), a fourth the
 * harness's Checks beside the driver's. The client-only rows of
 * `scale.mts` stay as the lower bound of the service side.
 */
import { writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { createDeployHarness, defaultParallel } from "../test/support/deployHarness.mts";
import { installPackedPackage } from "../test/support/packedPackage.mts";
import { startProviderHost, typeTokenFor, urnFor } from "../test/support/providerHost.mts";
import { limits, median, progress, type ResultRow } from "./lib.mts";
import { startEmulatorProcess } from "./servers.mts";

export const DEPLOY_N = 128;
export const DEPLOY_WORKERS = 100;
export const DEPLOY_JOB_MS = 100;
export const DEPLOY_REPEATS = 3;
/** Sequential Check calls timed for the round trip. */
export const CHECK_SAMPLES = 200;

/** A JobRun's inputs as the bench program registers them. */
const JOB_INPUTS = {
  endpointId: "scale",
  input: { sleepMs: DEPLOY_JOB_MS },
  expect: { status: "COMPLETED" },
};

/** The bound above, ms; `checkRoundTripMs` is the measured round trip of one Check. */
export function deployBoundMs(
  n: number,
  parallel: number,
  checkRoundTripMs: number,
  workers = DEPLOY_WORKERS,
  jobMs = DEPLOY_JOB_MS,
) {
  const run = limits.SERVICE_RATE_LIMITS.run;
  return Math.max(
    Math.ceil(n / Math.min(parallel, workers)) * jobMs,
    n * checkRoundTripMs + jobMs,
    Math.floor((n - 1) / run.requests) * run.windowMs + jobMs,
  );
}

/** A fresh emulator with the bench's endpoint and a provider host (the packed package) configured for it. */
async function hostOnEmulator(projectDir: string) {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${DEPLOY_WORKERS}`]);
  const host = await startProviderHost({ projectDir });
  const close = async () => {
    await host.close();
    await emu.close();
  };
  try {
    await host.configure({
      "runpod:apiKey": emu.apiKey,
      "runpod:restUrl": `${emu.serverlessUrl}/v1`,
      "runpod:serverlessUrl": emu.serverlessUrl,
    });
  } catch (e) {
    await close();
    throw e;
  }
  return { host, close };
}

/**
 * One Check round trip to an idle provider host (from the packed package in `projectDir`), median of
 * {@link CHECK_SAMPLES} sequential calls with a JobRun's inputs as the bench program registers them.
 */
async function checkRoundTripMs(projectDir: string): Promise<number> {
  const { host, close } = await hostOnEmulator(projectDir);
  try {
    const times: number[] = [];
    for (let i = 0; i < CHECK_SAMPLES; i++) {
      const started = performance.now();
      const { failures } = await host.check(urnFor("JobRun", `job-${i}`), {}, JOB_INPUTS);
      times.push(performance.now() - started);
      if (failures.length > 0) throw new Error(`bench JobRun inputs fail check: ${JSON.stringify(failures)}`);
    }
    return median(times);
  } finally {
    await close();
  }
}

/**
 * The engine's floor on this machine: N Checks one at a time to a fresh host (from the packed
 * package in `projectDir`), each followed by its Create in one of `parallel` slots, with no program
 * and no state. Returns the span (first Create sent → last Create answered) and the Checks' sum.
 */
async function engineFloor(projectDir: string, n: number, parallel: number) {
  const { host, close } = await hostOnEmulator(projectDir);
  try {
    // The host loads the provider's code at its first call; the harness's span starts after its
    // first Check too.
    await host.check(urnFor("JobRun", "warm-up"), {}, JOB_INPUTS);
    let free = parallel;
    const waiting: Array<() => void> = [];
    const creates: Promise<unknown>[] = [];
    let firstCreate: number | undefined;
    let lastAnswer = 0;
    let checkMs = 0;
    for (let i = 0; i < n; i++) {
      const urn = urnFor("JobRun", `job-${i}`);
      const started = performance.now();
      const { inputs, failures } = await host.check(urn, {}, JOB_INPUTS);
      checkMs += performance.now() - started;
      if (failures.length > 0) throw new Error(`bench JobRun inputs fail check: ${JSON.stringify(failures)}`);
      if (free > 0) free--;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      firstCreate ??= performance.now();
      creates.push(
        host.create(urn, inputs).finally(() => {
          lastAnswer = performance.now();
          const next = waiting.shift();
          if (next) next();
          else free++;
        }),
      );
    }
    await Promise.all(creates);
    return { spanMs: lastAnswer - (firstCreate ?? lastAnswer), checkMs };
  } finally {
    await close();
  }
}

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { JobRun } from "pulumi-runpod-dynamic";
const config = new pulumi.Config("bench");
const n = Number(config.require("n"));
for (let i = 0; i < n; i++) {
  new JobRun(\`job-\${i}\`, { endpointId: "scale", input: { sleepMs: ${DEPLOY_JOB_MS} }, expect: { status: "COMPLETED" } });
}
`;

/**
 * One deploy of `n` JobRuns at `parallel`; returns the steps' span. `withoutProgram`: the harness
 * registers the JobRuns itself (`registrations`), with no language host.
 */
async function deployOnce(
  projectDir: string,
  programFile: string,
  n: number,
  parallel: number,
  withoutProgram = false,
) {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${DEPLOY_WORKERS}`]);
  const h = await createDeployHarness({
    projectDir,
    program: programFile,
    passphrase: "bench",
    parallel,
    skipPreview: true,
    ...(withoutProgram
      ? {
          registrations: Array.from({ length: n }, (_, i) => ({
            type: typeTokenFor("JobRun"),
            name: `job-${i}`,
            inputs: JOB_INPUTS,
          })),
        }
      : {}),
    config: {
      "bench:n": String(n),
      "runpod:apiKey": { secret: emu.apiKey },
      "runpod:restUrl": `${emu.serverlessUrl}/v1`,
      "runpod:serverlessUrl": emu.serverlessUrl,
    },
  });
  try {
    const result = await h.up();
    const done = result.resources.filter((r) => r.op === "create").length;
    if (!result.ok || done !== n)
      throw new Error(`deploy of ${n} JobRuns at parallel ${parallel}: ${done} created; ${result.errors[0]}`);
    if (result.maxConcurrentSteps > parallel)
      throw new Error(`parallel ${parallel} exceeded: ${result.maxConcurrentSteps} steps at once`);
    return { stepsMs: result.stepsMs, checkMs: result.checkMs };
  } finally {
    await h.dispose();
    await emu.close();
  }
}

/** Rows: N JobRuns in one deploy at the default parallelism and at 64, each beside its bound. */
export async function benchDeployScale(): Promise<ResultRow[]> {
  const installed = await installPackedPackage();
  const programFile = path.join(installed.projectDir, "bench-jobruns.mjs");
  await writeFile(programFile, PROGRAM);
  const rows: ResultRow[] = [];
  const defaultFrom = process.env.PULUMI_PARALLEL
    ? `PULUMI_PARALLEL=${process.env.PULUMI_PARALLEL}`
    : `4 × ${availableParallelism()} CPUs`;
  try {
    for (const parallel of [defaultParallel(), 64]) {
      const label = parallel === 64 ? "--parallel 64" : `default --parallel ${parallel} (${defaultFrom})`;
      progress(`deploy scale: ${DEPLOY_N} JobRuns through the harness and the real host, ${label}`);
      const idle: number[] = [];
      const floors: Array<{ spanMs: number; checkMs: number }> = [];
      const runs: Array<{ stepsMs: number; checkMs: number }> = [];
      const bare: Array<{ stepsMs: number; checkMs: number }> = [];
      for (let rep = 0; rep < DEPLOY_REPEATS; rep++) {
        idle.push(await checkRoundTripMs(installed.projectDir));
        floors.push(await engineFloor(installed.projectDir, DEPLOY_N, parallel));
        runs.push(await deployOnce(installed.projectDir, programFile, DEPLOY_N, parallel));
        bare.push(await deployOnce(installed.projectDir, programFile, DEPLOY_N, parallel, true));
      }
      const span = median(runs.map((r) => r.stepsMs));
      const checks = median(runs.map((r) => r.checkMs));
      const floorSpan = median(floors.map((f) => f.spanMs));
      const floorChecks = median(floors.map((f) => f.checkMs));
      const roundTrip = floorChecks / DEPLOY_N;
      const bound = deployBoundMs(DEPLOY_N, parallel, roundTrip);
      const of = `median of ${DEPLOY_REPEATS}`;
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns (100 ms jobs, workersMax ${DEPLOY_WORKERS}) in one deploy, ${label}: steps' span, ${of}`,
        value: span,
        unit: "ms",
        peer:
          `bound max(ceil(N/min(P,W))*T, N*Check round trip + T, rate-limit bound); round trip ${roundTrip.toFixed(2)} ms ` +
          `with up to ${parallel} creates on the host (engine floor, this run; idle ${median(idle).toFixed(2)} ms)`,
        peerValue: bound,
        target: "<= 1.3x bound",
        meetsTarget: span <= 1.3 * bound,
      });
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns, ${label}: steps' span through the harness vs the engine floor's, ${of}`,
        value: span,
        unit: "ms",
        peer: "engine floor: the same Checks one at a time, each Create in one of P slots, no program, no state",
        peerValue: floorSpan,
      });
      const bareSpan = median(bare.map((r) => r.stepsMs));
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns, ${label}: steps' span with the harness registering them itself (no language host), ${of}`,
        value: bareSpan,
        unit: "ms",
        peer: "the same bound: what the engine's part of the harness adds, the program's process left out",
        peerValue: bound,
        target: "<= 1.3x bound",
        meetsTarget: bareSpan <= 1.3 * bound,
      });
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns, ${label}: the harness's serial Checks (sum) vs the engine floor's, ${of}`,
        value: checks,
        unit: "ms",
        peer: `the engine floor's Checks (sum); ${DEPLOY_N} × the idle round trip = ${Math.round(DEPLOY_N * median(idle))} ms`,
        peerValue: floorChecks,
      });
    }
  } finally {
    await installed.cleanup();
  }
  return rows;
}

/**
 * Scale through the engine's path: N JobRuns (100 ms jobs) in ONE deploy through the deploy
 * harness (`test/support/deployHarness.mts`) and Pulumi's real dynamic-provider host, from the
 * packed package, at `pulumi up`'s default parallelism (4 × CPU count) and at `--parallel 64`.
 *
 * A real deploy runs at most P steps at once through one host process, so with W workers on the
 * endpoint and jobs of T ms it cannot finish faster than
 *
 *   bound = max( ceil(N / min(P, W)) × T,  floor((N - 1) / R) × window + T )
 *
 * (R = the `run` row of the service's rate limits). The figure is the steps' span measured by the
 * harness (first step started → last step ended, `DeployResult.stepsMs`): the program's start,
 * the host's start and the preview are not part of it (`--skip-preview`). Target: within 1.3x of
 * the bound (DESIGN.md). The client-only rows of `scale.mts` stay as the lower bound.
 *
 * The engine's step generator also calls Check once per resource, one at a time (`generateSteps`,
 * step_generator.go; only Diff may run in parallel, behind `ParallelDiff`), so no deploy of N
 * resources finishes before N Check round trips have run. The target's bound therefore takes the
 * larger of the two:
 *
 *   bound = max( ceil(N / min(P, W)) × T,  N × Check round trip,  rate-limit bound )
 *
 * with the round trip measured in the same run: the median of {@link CHECK_SAMPLES} sequential
 * Check calls to an idle provider host started from the same packed package (the rate-limit term,
 * `floor((N - 1) / R) × window + T`, is below the others for these N). A second row puts the steps'
 * span beside the sum of the Check calls the harness made inside the deploy (`checkMs`). The
 * harness runs the program in its own process (`test/support/programHost.mts`), as the engine keeps
 * it in the language host, so those checks do not share the runner's event loop with the program.
 */
import { writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { createDeployHarness, defaultParallel } from "../test/support/deployHarness.mts";
import { installPackedPackage } from "../test/support/packedPackage.mts";
import { startProviderHost, urnFor } from "../test/support/providerHost.mts";
import { limits, median, progress, type ResultRow } from "./lib.mts";
import { startEmulatorProcess } from "./servers.mts";

export const DEPLOY_N = 128;
export const DEPLOY_WORKERS = 100;
export const DEPLOY_JOB_MS = 100;
export const DEPLOY_REPEATS = 2;
/** Sequential Check calls timed for the round trip. */
export const CHECK_SAMPLES = 200;

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
    n * checkRoundTripMs,
    Math.floor((n - 1) / run.requests) * run.windowMs + jobMs,
  );
}

/**
 * One Check round trip to an idle provider host (from the packed package in `projectDir`), median of
 * {@link CHECK_SAMPLES} sequential calls with a JobRun's inputs as the bench program registers them.
 */
async function checkRoundTripMs(projectDir: string): Promise<number> {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${DEPLOY_WORKERS}`]);
  const host = await startProviderHost({ projectDir });
  try {
    await host.configure({
      "runpod:apiKey": emu.apiKey,
      "runpod:restUrl": `${emu.serverlessUrl}/v1`,
      "runpod:serverlessUrl": emu.serverlessUrl,
    });
    const news = { endpointId: "scale", input: { sleepMs: DEPLOY_JOB_MS }, expect: { status: "COMPLETED" } };
    const times: number[] = [];
    for (let i = 0; i < CHECK_SAMPLES; i++) {
      const started = performance.now();
      const { failures } = await host.check(urnFor("JobRun", `job-${i}`), {}, news);
      times.push(performance.now() - started);
      if (failures.length > 0) throw new Error(`bench JobRun inputs fail check: ${JSON.stringify(failures)}`);
    }
    return median(times);
  } finally {
    await host.close();
    await emu.close();
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

/** One deploy of `n` JobRuns at `parallel`; returns the steps' span. */
async function deployOnce(projectDir: string, programFile: string, n: number, parallel: number) {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${DEPLOY_WORKERS}`]);
  const h = await createDeployHarness({
    projectDir,
    program: programFile,
    passphrase: "bench",
    parallel,
    skipPreview: true,
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
  try {
    for (const parallel of [defaultParallel(), 64]) {
      const label =
        parallel === 64
          ? "--parallel 64"
          : `default --parallel ${parallel} (4 × ${availableParallelism()} CPUs)`;
      progress(`deploy scale: ${DEPLOY_N} JobRuns through the harness and the real host, ${label}`);
      const runs: Array<{ stepsMs: number; checkMs: number }> = [];
      const roundTrips: number[] = [];
      for (let rep = 0; rep < DEPLOY_REPEATS; rep++) {
        roundTrips.push(await checkRoundTripMs(installed.projectDir));
        runs.push(await deployOnce(installed.projectDir, programFile, DEPLOY_N, parallel));
      }
      const value = median(runs.map((r) => r.stepsMs));
      const checks = median(runs.map((r) => r.checkMs));
      const roundTrip = median(roundTrips);
      const bound = deployBoundMs(DEPLOY_N, parallel, roundTrip);
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns (100 ms jobs, workersMax ${DEPLOY_WORKERS}) in one deploy, ${label}: steps' span, median of ${DEPLOY_REPEATS}`,
        value,
        unit: "ms",
        peer: `bound max(ceil(N/min(P,W))*T, N*Check round trip (${roundTrip.toFixed(2)} ms, this run), rate-limit bound)`,
        peerValue: bound,
        target: "<= 1.3x bound",
        meetsTarget: value <= 1.3 * bound,
      });
      rows.push({
        name: `Deploy: ${DEPLOY_N} JobRuns, ${label}: steps' span vs the engine's serial Check calls (sum), median of ${DEPLOY_REPEATS}`,
        value,
        unit: "ms",
        peer: `N Checks, one at a time (step generator), inside the deploy; ${DEPLOY_N} × the bare round trip = ${Math.round(DEPLOY_N * roundTrip)} ms`,
        peerValue: checks,
      });
    }
  } finally {
    await installed.cleanup();
  }
  return rows;
}

/**
 * Guarded releases: what a `ServerlessEndpoint.smokeTest` gate costs over what a user
 * would otherwise run, the same update without a gate followed by a bare JobRun on the new release.
 *
 * Each contender has its own in-process emulator (real timers, `rolloutMs` 1000, one endpoint of 2
 * warm workers, made through the provider's own create) and runs its trials one after the other,
 * the two contenders at the same time. A trial changes the image (a release) through the
 * provider's own update, exactly as the provider host runs it (`dist/`):
 * - ours: `updateServerlessEndpoint` with `smokeTest` (`runs` 1): PATCH, rollout wait, then the gate
 *   runs one job on the new release through JobRun's execution and judges it;
 * - peer: `updateServerlessEndpoint` without `smokeTest` (PATCH, rollout wait), then `createJobRun`
 *   with the same job (`rollout: "wait"`: JobRun's release check), as a JobRun with
 *   `triggers: [ep.version]` runs after the update (the engine's time between the steps left out).
 * Timed: start of the update → the gate's verdict (ours) or the JobRun's result (peer); every trial
 * must pass on the new version. After each trial the endpoint settles (every worker idle, none
 * stale) before the next.
 *
 * The rollout wait reads the workers once a second from the PATCH, and the rollout ends about
 * 1.5 s after it, so both contenders wait the same two reads: what differs is the gate. That
 * difference alone is measured too, on a settled endpoint (no rollout): `runGate` (one job) against
 * `createJobRun` with the same job, {@link DIRECT_TRIALS} times each, alternating which goes first,
 * progress lines off for both.
 *
 * `node bench/gateOverhead.mts` (after `npm run build`) runs this section alone, about 25 s.
 */
import type { RunpodClient } from "../src/index.ts";
import type { RunpodSettings } from "../src/provider/config.ts";
import {
  endpointInputs,
  endpointOps,
  type GateBed,
  gateLogic,
  JOB,
  jobRunOps,
  settle,
  startBed,
} from "./gateKit.mts";
import { median, progress, type ResultRow } from "./lib.mts";

/** Releases per contender. */
export const TRIALS = 7;
/** Gate-alone and JobRun-alone runs on a settled endpoint, each. */
export const DIRECT_TRIALS = 20;

type Contender = "gated" | "bare";

const SMOKE = { ...JOB, timeoutMs: 60_000, runs: 1 };

/** Makes the bench endpoint through the provider's create; returns its id and outputs. */
async function makeEndpoint(bed: GateBed, contender: Contender) {
  const inputs = endpointInputs(
    `gate-overhead-${contender}`,
    contender === "gated" ? { smokeTest: SMOKE } : {},
  );
  const { id, outs } = await endpointOps.createServerlessEndpoint(bed.settings, inputs);
  await settle(bed.client, id);
  return { id: id as string, outs: outs as Record<string, unknown> };
}

/** One release of `contender`: ms from the update's start to the gate's verdict or the JobRun's result. */
async function release(
  settings: RunpodSettings,
  client: RunpodClient,
  contender: Contender,
  id: string,
  olds: Record<string, unknown>,
  trial: number,
): Promise<{ ms: number; outs: Record<string, unknown> }> {
  const image = `acme/api:${trial}`;
  const started = performance.now();
  if (contender === "gated") {
    const { outs } = await endpointOps.updateServerlessEndpoint(
      settings,
      id,
      olds,
      endpointInputs("gate-overhead-gated", { image, smokeTest: SMOKE }),
    );
    const ms = performance.now() - started;
    const test = outs?.lastSmokeTest as { passed: boolean; version: number } | undefined;
    if (!test?.passed || test.version !== outs?.version)
      throw new Error(`gate overhead: the gate did not pass on the new release (${JSON.stringify(test)})`);
    await settle(client, id);
    return { ms, outs: outs as Record<string, unknown> };
  }
  const { outs } = await endpointOps.updateServerlessEndpoint(
    settings,
    id,
    olds,
    endpointInputs("gate-overhead-bare", { image }),
  );
  const job = await jobRunOps.createJobRun(jobRunOps.contextFromSettings(settings), {
    endpointId: id,
    ...JOB,
    timeoutMs: 60_000,
    rollout: "wait",
  });
  const ms = performance.now() - started;
  if (job.outs.status !== "COMPLETED" || job.outs.endpointVersion !== outs?.version)
    throw new Error(
      `gate overhead: the JobRun did not pass on the new release (${JSON.stringify(job.outs)})`,
    );
  await settle(client, id);
  return { ms, outs: outs as Record<string, unknown> };
}

async function contenderTrials(contender: Contender): Promise<number[]> {
  const bed = await startBed(`bench-gate-overhead-${contender}`);
  try {
    let { id, outs } = await makeEndpoint(bed, contender);
    const times: number[] = [];
    for (let i = 1; i <= TRIALS; i++) {
      const done = await release(bed.settings, bed.client, contender, id, outs, i);
      times.push(done.ms);
      outs = done.outs;
    }
    return times;
  } finally {
    await bed.close();
  }
}

/** The gate alone against a bare JobRun, on a settled endpoint (no rollout), alternating. */
async function direct(): Promise<{ gate: number[]; jobRun: number[] }> {
  const bed = await startBed("bench-gate-overhead-direct");
  try {
    const { id, outs } = await makeEndpoint(bed, "bare");
    // Progress lines off for both (the provider host writes them to stderr): the bench times the work.
    const ctx = { ...jobRunOps.contextFromSettings(bed.settings), log: () => {} };
    const smoke = gateLogic.SmokeTestSchema.parse(SMOKE);
    const version = outs.version as number;
    const gate: number[] = [];
    const jobRun: number[] = [];
    const runGate = async () => {
      const t = performance.now();
      const verdict = await gateLogic.runGate(ctx, id, version, smoke);
      gate.push(performance.now() - t);
      if (!verdict.record.passed) throw new Error(`gate overhead: the gate failed: ${verdict.why}`);
    };
    const runJobRun = async () => {
      const t = performance.now();
      const job = await jobRunOps.createJobRun(ctx, {
        endpointId: id,
        ...JOB,
        timeoutMs: 60_000,
        rollout: "wait",
      });
      jobRun.push(performance.now() - t);
      if (job.outs.status !== "COMPLETED") throw new Error("gate overhead: the JobRun failed");
    };
    // Alternating, each first every other round.
    for (let i = 0; i < DIRECT_TRIALS; i++) {
      if (i % 2 === 0) {
        await runGate();
        await runJobRun();
      } else {
        await runJobRun();
        await runGate();
      }
    }
    return { gate, jobRun };
  } finally {
    await bed.close();
  }
}

/** Measures the gate against the update plus a bare JobRun; returns the table rows. */
export async function benchGateOverhead(): Promise<ResultRow[]> {
  progress(`gate overhead: ${TRIALS} releases per contender (update with smokeTest; update, then a JobRun)`);
  const [gated, bare] = await Promise.all([contenderTrials("gated"), contenderTrials("bare")]);
  progress(`gate overhead: the gate alone vs a JobRun alone, ${DIRECT_TRIALS} each`);
  const alone = await direct();
  const peer = "the same update without smokeTest, then a bare JobRun on the release";
  const gateMs = median(alone.gate);
  const jobRunMs = median(alone.jobRun);
  return [
    {
      name: `Guarded release: update (a release) + its smoke test (runs 1), start → verdict, median of ${TRIALS}: ours (ServerlessEndpoint with smokeTest)`,
      value: median(gated),
      unit: "ms",
      peer,
      peerValue: median(bare),
    },
    {
      name: `Guarded release: the gate alone on a rolled-out release (1 job), median of ${DIRECT_TRIALS}: ours (runGate)`,
      value: gateMs,
      unit: "ms",
      peer: "a bare JobRun with the same job (createJobRun, rollout: wait)",
      peerValue: jobRunMs,
    },
  ];
}

if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchGateOverhead())}\n`);
}

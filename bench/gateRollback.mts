/**
 * Guarded releases: how long after a failed gate's verdict the previous configuration
 * is back on every worker, beside how long a plain update's release takes to get there. Target
 * (DESIGN.md, rollouts): the rollback within the rollout time + 1 s.
 *
 * Each contender has its own in-process emulator (real timers, `rolloutMs` 1000, one endpoint of 2
 * warm workers, made through the provider's own create) and runs {@link TRIALS} trials one after
 * the other, the two contenders at the same time. Everything runs through the provider's own
 * `updateServerlessEndpoint` from `dist/`, as the provider host runs it:
 * - rollback: an update to a new image with the emulator's `RUNPOD_EMULATOR_FAIL` in `env` (every
 *   job of that release fails) and `smokeTest` (`runs` 1, `onFailure: "rollback"`): the release
 *   rolls out, its job fails, the gate fails, the provider PATCHes the previous settings back and
 *   waits for that rollout, then fails the step (the bench checks its text and that the release
 *   after it serves the previous image). The next trial starts from the previous configuration.
 * - plain update: an update to a new image, no `smokeTest`.
 *
 * Measured per trial, on the emulator's clock (ms): "verdict" is when the rollback's PATCH reached
 * the service (the rollback release's `createdAt`; the provider sends it as soon as it has judged
 * the jobs); for the plain update, its PATCH (its release's `createdAt`). "On every worker" is
 * when the last worker of the release before was replaced (the `system` line "worker stopping:
 * replaced by a worker of version N" in each old worker's log): no worker stale. "Noticed" is when
 * the update returned or failed (`Date.now()`, the same clock).
 *
 * `node bench/gateRollback.mts` (after `npm run build`) runs this section alone, about 35 s.
 */
import type { RunpodClient } from "../src/index.ts";
import type { RunpodSettings } from "../src/provider/config.ts";
import {
  endpointInputs,
  endpointOps,
  JOB,
  lastReplacement,
  releasedAt,
  settle,
  startBed,
} from "./gateKit.mts";
import { median, progress, type ResultRow } from "./lib.mts";

/** Trials per contender. */
export const TRIALS = 5;
/** How much longer than a plain release the rollback may take to reach every worker, ms. */
export const TARGET_SLACK_MS = 1000;

type Contender = "rollback" | "plain";

const SMOKE = { ...JOB, timeoutMs: 60_000, runs: 1, onFailure: "rollback" };
const BROKEN = "bench: a broken release";

interface Trial {
  /** Verdict (or PATCH) → the release on every worker. */
  liveMs: number;
  /** Verdict (or PATCH) → the update returned or failed. */
  noticedMs: number;
  /** On every worker → noticed (detection latency). */
  detectionMs: number;
}

/** The workers an endpoint lists now, with its version. */
async function workersNow(client: RunpodClient, id: string) {
  const list = await client.serverless.workers(id);
  return { ids: list.workers.map((w) => w.id), version: list.endpointVersion as number };
}

async function trialOf(
  settings: RunpodSettings,
  client: RunpodClient,
  contender: Contender,
  id: string,
  olds: Record<string, unknown>,
  trial: number,
): Promise<{ trial: Trial; outs: Record<string, unknown> }> {
  const name = `gate-rollback-${contender}`;
  const image = `acme/api:${trial}`;
  const before = await workersNow(client, id);
  if (contender === "plain") {
    const { outs } = await endpointOps.updateServerlessEndpoint(
      settings,
      id,
      olds,
      endpointInputs(name, { image }),
    );
    const noticedAt = Date.now();
    const version = before.version + 1;
    if (outs?.version !== version)
      throw new Error(`gate rollback: plain update at ${outs?.version}, not ${version}`);
    const patchedAt = await releasedAt(client, id, version);
    const liveAt = await lastReplacement(client, id, before.ids, version);
    await settle(client, id);
    return {
      trial: {
        liveMs: liveAt - patchedAt,
        noticedMs: noticedAt - patchedAt,
        detectionMs: noticedAt - liveAt,
      },
      outs: outs as Record<string, unknown>,
    };
  }
  // The failed release (version + 1) is tracked through its workers: they are the ones the rollback
  // (version + 2) replaces. The update reads them itself; the bench reads them after, from the
  // failing job's worker and the list the release made (each rollout replaces every worker).
  const news = endpointInputs(name, {
    image,
    env: { MODEL: "small", RUNPOD_EMULATOR_FAIL: BROKEN },
    smokeTest: SMOKE,
  });
  let failure: Error | undefined;
  const failedWorkers = new Set<string>();
  // Watch the workers of the failed release while the update runs (a read every 100 ms of a
  // separate client; the provider's own reads are unaffected).
  const watching = (async () => {
    for (;;) {
      const list = await client.serverless.workers(id).catch(() => undefined);
      for (const w of list?.workers ?? []) if (w.version === before.version + 1) failedWorkers.add(w.id);
      if (failure !== undefined) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await endpointOps.updateServerlessEndpoint(settings, id, olds, news).then(
    () => {
      failure = new Error("gate rollback: the broken release passed its gate");
    },
    (error: unknown) => {
      failure = error as Error;
    },
  );
  const noticedAt = Date.now();
  await watching;
  const message = String(failure?.message);
  const failed = before.version + 1;
  const serving = before.version + 2;
  if (
    !message.includes(`release version ${failed} failed`) ||
    !message.includes(`Now serving: version ${serving}`)
  )
    throw new Error(`gate rollback: not a rollback of version ${failed}: ${message.slice(0, 400)}`);
  const live = await client.serverless.get(id);
  if (live.image !== olds.image || live.env?.RUNPOD_EMULATOR_FAIL !== undefined)
    throw new Error(`gate rollback: version ${serving} does not carry the previous configuration`);
  if (failedWorkers.size !== before.ids.length)
    throw new Error(`gate rollback: saw ${failedWorkers.size} workers of version ${failed}`);
  const verdictAt = await releasedAt(client, id, serving);
  const liveAt = await lastReplacement(client, id, [...failedWorkers], serving);
  await settle(client, id);
  // What the state records after the failure: the previous configuration at the new version.
  const props = (failure as { properties?: Record<string, unknown> }).properties ?? {};
  return {
    trial: { liveMs: liveAt - verdictAt, noticedMs: noticedAt - verdictAt, detectionMs: noticedAt - liveAt },
    outs: { ...olds, ...props, image: olds.image, env: olds.env },
  };
}

async function contenderTrials(contender: Contender): Promise<Trial[]> {
  const bed = await startBed(`bench-gate-rollback-${contender}`);
  try {
    const inputs = endpointInputs(
      `gate-rollback-${contender}`,
      contender === "rollback" ? { smokeTest: SMOKE } : {},
    );
    const made = await endpointOps.createServerlessEndpoint(bed.settings, inputs);
    const id = made.id as string;
    let outs = made.outs as Record<string, unknown>;
    await settle(bed.client, id);
    const trials: Trial[] = [];
    for (let i = 1; i <= TRIALS; i++) {
      const done = await trialOf(bed.settings, bed.client, contender, id, outs, i);
      trials.push(done.trial);
      outs = done.outs;
    }
    return trials;
  } finally {
    await bed.close();
  }
}

/** Measures the rollback against a plain update's rollout; returns the table rows. */
export async function benchGateRollback(): Promise<ResultRow[]> {
  progress(`gate rollback: ${TRIALS} failed gates rolled back, ${TRIALS} plain updates`);
  const [rollback, plain] = await Promise.all([contenderTrials("rollback"), contenderTrials("plain")]);
  const peer = "a plain update: its PATCH → its release on every worker";
  const live = median(rollback.map((t) => t.liveMs));
  const plainLive = median(plain.map((t) => t.liveMs));
  const detection = median(rollback.map((t) => t.detectionMs));
  return [
    {
      name: `Rollback: failed gate's verdict → the previous configuration on every worker, median of ${TRIALS}: ours (smokeTest, onFailure: rollback)`,
      value: live,
      unit: "ms",
      peer,
      peerValue: plainLive,
      target: `<= the plain rollout + ${TARGET_SLACK_MS} ms`,
      meetsTarget: live <= plainLive + TARGET_SLACK_MS,
    },
    {
      name: `Rollback: failed gate's verdict → the step fails (rollback noticed), median of ${TRIALS}: ours`,
      value: median(rollback.map((t) => t.noticedMs)),
      unit: "ms",
      peer: "a plain update: its PATCH → the update returns",
      peerValue: median(plain.map((t) => t.noticedMs)),
    },
    {
      name: `Rollback: detection latency (on every worker → noticed), median of ${TRIALS}: ours`,
      value: detection,
      unit: "ms",
      peer: "a plain update's wait",
      peerValue: median(plain.map((t) => t.detectionMs)),
      target: "<= 1000 ms",
      meetsTarget: detection <= 1000,
    },
  ];
}

if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchGateRollback())}\n`);
}

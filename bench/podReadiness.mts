/**
 * Pod readiness: how soon after a pod becomes usable a `Pod` create notices it, and how many
 * reads of the pod it spends while waiting, beside a fixed 5 s poll.
 *
 * Each contender has its own in-process emulator (`podStartMs` {@link POD_START_MS}: a pod goes
 * PROVISIONING → STARTING → RUNNING on the emulator's timers) and client, and creates
 * {@link TRIALS} pods one after another (`POST /v2/pods`, a GPU pod). After a random 0..1000 ms
 * (stratified, one delay per n-th of the range, shuffled: the deploy's own jitter, so RUNNING falls
 * at any phase of the poll) the wait starts with the create's answer, as the provider's create
 * does. Contenders, run concurrently: ours, `waitForPod` from `dist/` (the function `Pod`'s
 * create, update and start run; `waitFor: "running"`, at most one read a second), and a fixed
 * 5 s poll (`GET /v2/pods/{id}` every 5 s until RUNNING). Each pod is deleted after its trial.
 *
 * Measured per trial (ms, `Date.now()`, the emulator's own clock): "usable" is the pod's
 * `startedAt` (the emulator sets it when the pod goes RUNNING, its ports open); detection latency
 * = wait resolved − usable; reads = the emulator's management request counter across the wait;
 * read rate = reads ÷ wait duration. A trial throws when the pod was RUNNING before the wait began.
 *
 * `node bench/podReadiness.mts` (after `npm run build`) runs this section alone, about 45 s.
 */
import { createRequire } from "node:module";
import type { RunningEmulator } from "../src/emulator/index.ts";
import type { RunpodClient } from "../src/index.ts";
import { delay, maxOf, pkg, progress, type ResultRow, sideBySide, staggeredTrials } from "./lib.mts";

/** The wait a Pod's create, update and start run, from `dist/`. */
const podWait: typeof import("../src/provider/pod/wait.ts") = createRequire(import.meta.url)(
  "../dist/provider/pod/wait.js",
);

const API_KEY = "bench-pod-readiness-key";
export const POD_START_MS = 2500;
export const TRIALS = 7;
export const START_JITTER_MS = 1000;
export const PEER_POLL_MS = 5000;
const WAIT_TIMEOUT_MS = 30_000;

type Contender = "ours" | "poll-5s";

const LABEL: Record<Contender, string> = {
  ours: `ours (Pod's wait, waitFor "running", a read every ${podWait.POLL_INTERVAL_MS / 1000} s at most)`,
  "poll-5s": `fixed ${PEER_POLL_MS / 1000} s poll`,
};

interface Trial {
  detectionMs: number;
  reads: number;
  durationMs: number;
  ratePerS: number;
}

/** The peer: a read every 5 s until RUNNING. */
async function pollEvery5s(client: RunpodClient, id: string): Promise<void> {
  const until = Date.now() + WAIT_TIMEOUT_MS;
  for (;;) {
    await delay(PEER_POLL_MS);
    if ((await client.pods.get(id)).status === "RUNNING") return;
    if (Date.now() > until) throw new Error(`pod readiness: pod ${id} was not RUNNING in time`);
  }
}

async function trialOf(
  emu: RunningEmulator,
  client: RunpodClient,
  contender: Contender,
  trial: number,
  startDelayMs: number,
): Promise<Trial> {
  const created = await client.pods.create({
    name: `bench-${contender}-${trial}`,
    image: "runpod/pytorch:2",
    gpu: { id: "NVIDIA GeForce RTX 4090" },
  });
  await delay(startDelayMs);
  const counted = emu.stats().requestsByInterface.management;
  const startedAt = Date.now();
  if (contender === "ours") {
    const done = await podWait.waitForPod({
      client,
      pod: created,
      wanted: "RUNNING",
      waitFor: "running",
      timeoutMs: WAIT_TIMEOUT_MS,
    });
    if (done.kind !== "ready") throw new Error(`pod readiness: ${done.why}`);
  } else {
    await pollEvery5s(client, created.id);
  }
  const resolvedAt = Date.now();
  const reads = emu.stats().requestsByInterface.management - counted;
  const pod = await client.pods.get(created.id);
  const usableAt = Date.parse(pod.startedAt ?? "");
  if (!Number.isFinite(usableAt) || usableAt < startedAt) {
    throw new Error(`pod readiness ${contender}: the pod was RUNNING before the wait began`);
  }
  await client.pods.delete(created.id);
  const durationMs = resolvedAt - startedAt;
  return { detectionMs: resolvedAt - usableAt, reads, durationMs, ratePerS: reads / (durationMs / 1000) };
}

async function contenderTrials(contender: Contender): Promise<Trial[]> {
  const emu = await pkg.startEmulator({ apiKeys: [API_KEY], podStartMs: POD_START_MS, rateLimits: false });
  const client = new pkg.RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
  });
  try {
    return await staggeredTrials(TRIALS, START_JITTER_MS, (i, delayMs) =>
      trialOf(emu, client, contender, i, delayMs),
    );
  } finally {
    await emu.close();
  }
}

/** Measures the Pod readiness wait (ours vs a fixed 5 s poll); returns the table rows. */
export async function benchPodReadiness(): Promise<ResultRow[]> {
  progress(`pod readiness: ${TRIALS} pods per contender (ours, fixed ${PEER_POLL_MS / 1000} s poll)`);
  const [ours, peer] = await Promise.all([contenderTrials("ours"), contenderTrials("poll-5s")]);
  const side = sideBySide(ours, peer, LABEL["poll-5s"]);
  const max = maxOf;
  const detection = side(
    `Pod readiness, detection latency (RUNNING → noticed), median of ${TRIALS} pods: ${LABEL.ours}`,
    "ms",
    (t) => t.detectionMs,
  );
  const worst = side(
    `Pod readiness, detection latency, max of ${TRIALS}: ${LABEL.ours}`,
    "ms",
    (t) => t.detectionMs,
    max,
  );
  const rate = side(
    `Pod readiness, read rate while waiting (reads ÷ wait), median: ${LABEL.ours}`,
    "req/s",
    (t) => t.ratePerS,
  );
  return [
    { ...detection, target: "<= 1000 ms", meetsTarget: detection.value <= 1000 },
    { ...worst, target: "<= 1000 ms (+ one read)", meetsTarget: worst.value <= 1100 },
    { ...rate, target: "<= 1 req/s", meetsTarget: rate.value <= 1 },
    side(`Pod readiness, reads per wait, median: ${LABEL.ours}`, "req", (t) => t.reads),
  ];
}

if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchPodReadiness())}\n`);
}

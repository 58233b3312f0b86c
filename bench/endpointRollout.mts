/**
 * ServerlessEndpoint's rollout wait: how soon after an endpoint's rolling update really
 * ends a `ServerlessEndpoint` update notices it, and how many reads of the workers it spends,
 * beside the same wait polling every 5 s.
 *
 * The method is `rollout.mts`'s (JobRun's wait), applied to the function a ServerlessEndpoint's
 * create and update run after their POST or PATCH: `waitForEndpointRollout` from `dist/` (a read
 * of `/workers` a second; done when no worker is stale and none of the new version is UNHEALTHY).
 * Each contender has its own in-process emulator (`rolloutMs` 1500, one endpoint of 3 warm
 * workers) and client. A trial: `PATCH /v2/serverless/{id}` (a new image: a release; the 3 workers
 * stay stale 1.5 s, then are replaced one at a time, 500 ms each, so the last goes about 3 s after
 * the PATCH); after a random 0..1000 ms (stratified, one delay per ninth of the range, shuffled:
 * the deploy's own jitter, so the end of the rollout falls at any phase of the poll) the wait
 * starts. Contenders, run concurrently, 9 trials each: ours (`ROLLOUT_POLL_MS`, 1 s) and a fixed
 * 5 s poll (`pollMs: 5000`, the same function).
 *
 * Measured per trial (ms, `Date.now()`, the emulator's own clock): "rolled out" is when the last
 * stale worker was replaced, from the `system` line "worker stopping: replaced by a worker of
 * version N" in each old worker's log (read after the wait); detection latency = wait resolved −
 * rolled out; requests = the emulator's management request counter across the wait; read rate =
 * (requests − 1) ÷ wait duration. A trial throws when the wait began after the rollout ended.
 *
 * `node bench/endpointRollout.mts` (after `npm run build`) runs this section alone, about 45 s.
 */
import { createRequire } from "node:module";
import type { RunningEmulator } from "../src/emulator/index.ts";
import type { RunpodClient } from "../src/index.ts";
import {
  delay,
  maxOf,
  pkg,
  progress,
  type ResultRow,
  rolloutLogic,
  sideBySide,
  staggeredTrials,
} from "./lib.mts";

/** The wait a ServerlessEndpoint's create and update run, from `dist/`. */
const endpointRollout: typeof import("../src/provider/serverlessEndpoint/rolloutWait.ts") = createRequire(
  import.meta.url,
)("../dist/provider/serverlessEndpoint/rolloutWait.js");

const API_KEY = "bench-endpoint-rollout-key";
const ENDPOINT = "rolling";
const WORKERS = 3;
export const ROLLOUT_MS = 1500;
export const TRIALS = 9;
export const START_JITTER_MS = 1000;
export const PEER_POLL_MS = 5000;
const WAIT_TIMEOUT_MS = 30_000;

type Contender = "ours" | "poll-5s";

const LABEL: Record<Contender, string> = {
  ours: `ours (ServerlessEndpoint's wait, a read every ${rolloutLogic.ROLLOUT_POLL_MS / 1000} s)`,
  "poll-5s": `fixed ${PEER_POLL_MS / 1000} s poll`,
};

interface Trial {
  detectionMs: number;
  requests: number;
  durationMs: number;
  ratePerS: number;
}

const REPLACED = /^worker stopping: replaced by a worker of version (\d+)$/;

/** When the last of `workerIds` was replaced by a worker of `version`, from their (closed) logs. */
async function lastReplacement(client: RunpodClient, workerIds: string[], version: number): Promise<number> {
  let last = Number.NEGATIVE_INFINITY;
  for (const workerId of workerIds) {
    let at: number | undefined;
    for await (const event of client.serverless.workerLogs(ENDPOINT, workerId, {
      tail: 20,
      source: "system",
      signal: AbortSignal.timeout(5000),
    })) {
      const m = REPLACED.exec(event.line);
      if (m && Number(m[1]) === version) at = Date.parse(event.ts);
    }
    if (at === undefined)
      throw new Error(`endpoint rollout: worker ${workerId} was not replaced by ${version}`);
    last = Math.max(last, at);
  }
  return last;
}

/** Resolves once every worker is IDLE on the endpoint's current version. */
async function settle(client: RunpodClient): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const list = await client.serverless.workers(ENDPOINT);
    if (list.workers.length === WORKERS && list.workers.every((w) => w.status === "IDLE" && !w.isStale))
      return;
    if (Date.now() > until)
      throw new Error(`endpoint rollout: did not settle: ${JSON.stringify(list.summary)}`);
    await delay(50);
  }
}

async function trialOf(
  emu: RunningEmulator,
  client: RunpodClient,
  contender: Contender,
  trial: number,
  startDelayMs: number,
): Promise<Trial> {
  const before = await client.serverless.workers(ENDPOINT);
  const staleIds = before.workers.map((w) => w.id);
  const version = (before.endpointVersion as number) + 1;
  await client.serverless.update(ENDPOINT, { image: `acme/api:${trial}` });
  await delay(startDelayMs);
  const counted = emu.stats().requestsByInterface.management;
  const startedAt = Date.now();
  const done = await endpointRollout.waitForEndpointRollout(
    {
      workers: (id, options) => client.serverless.workers(id, options),
      workerLogs: (id, workerId, options) => client.serverless.workerLogs(id, workerId, options),
    },
    ENDPOINT,
    ENDPOINT,
    {
      timeoutMs: WAIT_TIMEOUT_MS,
      secrets: [],
      ...(contender === "poll-5s" ? { pollMs: PEER_POLL_MS } : {}),
    },
  );
  const resolvedAt = Date.now();
  const requests = emu.stats().requestsByInterface.management - counted;
  if (done.reads < 2 || done.version !== version) {
    throw new Error(
      `endpoint rollout ${contender}: the wait began after the rollout (${JSON.stringify(done)})`,
    );
  }
  const rolledOutAt = await lastReplacement(client, staleIds, version);
  await settle(client);
  const durationMs = resolvedAt - startedAt;
  return {
    detectionMs: resolvedAt - rolledOutAt,
    requests,
    durationMs,
    ratePerS: (requests - 1) / (durationMs / 1000),
  };
}

async function contenderTrials(contender: Contender): Promise<Trial[]> {
  const emu = await pkg.startEmulator({
    apiKeys: [API_KEY],
    endpoints: [{ id: ENDPOINT, workersMax: WORKERS }],
    rolloutMs: ROLLOUT_MS,
  });
  const client = new pkg.RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
  });
  try {
    await settle(client);
    return await staggeredTrials(TRIALS, START_JITTER_MS, (i, delayMs) =>
      trialOf(emu, client, contender, i, delayMs),
    );
  } finally {
    await emu.close();
  }
}

/** Measures ServerlessEndpoint's rollout wait (ours vs a fixed 5 s poll); returns the table rows. */
export async function benchEndpointRollout(): Promise<ResultRow[]> {
  progress(`endpoint rollout: ${TRIALS} releases per contender (ours, fixed ${PEER_POLL_MS / 1000} s poll)`);
  const [ours, peer] = await Promise.all([contenderTrials("ours"), contenderTrials("poll-5s")]);
  const side = sideBySide(ours, peer, LABEL["poll-5s"]);
  const max = maxOf;
  const detection = side(
    `ServerlessEndpoint rollout wait, detection latency (rolled out → noticed), median: ${LABEL.ours}`,
    "ms",
    (t) => t.detectionMs,
  );
  const worst = side(
    `ServerlessEndpoint rollout wait, detection latency, max of ${TRIALS}: ${LABEL.ours}`,
    "ms",
    (t) => t.detectionMs,
    max,
  );
  const rate = side(
    `ServerlessEndpoint rollout wait, read rate (reads after the first ÷ wait), median: ${LABEL.ours}`,
    "req/s",
    (t) => t.ratePerS,
  );
  return [
    { ...detection, target: "<= 1000 ms", meetsTarget: detection.value <= 1000 },
    { ...worst, target: "<= 1000 ms (+ one read)", meetsTarget: worst.value <= 1100 },
    { ...rate, target: "<= 1 req/s", meetsTarget: rate.value <= 1 },
    side(
      `ServerlessEndpoint rollout wait, worker reads per wait, median: ${LABEL.ours}`,
      "req",
      (t) => t.requests,
    ),
  ];
}

if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchEndpointRollout())}\n`);
}

/**
 * JobRun's rollout wait (`rollout: "wait"`): how soon after an endpoint's rolling update
 * really ends the wait notices, and how many reads of the workers it spends; and what the check
 * adds to one JobRun when nothing is rolling out.
 *
 * Rollout trials. Each contender has its own in-process emulator (`rolloutMs` 1500, one endpoint
 * of 3 warm workers) and its own client. A trial: `PATCH /v2/serverless/{id}` (a new `env`, so a
 * new release and a rolling update: the 3 workers are stale, keep serving 1.5 s, then are replaced
 * one at a time, each replacement INITIALIZING 500 ms before the next, so the last stale worker
 * goes about 2.5 s after the PATCH); then, after a random 0..1000 ms (the deploy's own jitter, so
 * the end of the rollout falls at a random phase of a 1 s poll; stratified: one delay in each
 * ninth of the range, in random order), the waiter starts; it reads the workers at once and every
 * `pollMs` until none is stale. Then the bench waits until every worker is IDLE on the new
 * version before the next trial. Contenders, run concurrently, 9 trials each:
 * - ours: `waitForRollout` from `dist/` with its default `pollMs` (`ROLLOUT_POLL_MS`, 1000 ms),
 *   exactly as JobRun calls it, reading through `client.serverless.workers`.
 * - fixed 5 s poll: the same function with `pollMs: 5000`. The rollout here ends 1.5..2.5 s after
 *   its first read, so it is always noticed at its second read, 5 s after the first; on a rollout
 *   much longer than 5 s the delay would be spread over 0..5 s instead (about 2.5 s median).
 *
 * Measured per trial (all times `Date.now()`, the emulator's own clock, in ms):
 * - "rolled out": when the last stale worker was replaced, from the emulator's worker log (the
 *   `system` line "worker stopping: replaced by a worker of version N" of each worker the update
 *   made stale, read after the wait through `client.serverless.workerLogs`; the engine writes it
 *   in the same tick the worker leaves the list). Checked against the waiter's own reads: the
 *   last read that found a stale worker started before it, and the read that found none ended
 *   after it (else the trial throws). This costs no request while the waiter runs (a 10..20 ms
 *   observer gave the same moments within its own interval when the method was checked).
 * - detection latency: when `waitForRollout` resolved − "rolled out".
 * - requests: the emulator's REST request counter (`stats().requestsByInterface.management`)
 *   from just before the waiter starts to just after it resolves (it must equal or exceed the
 *   waiter's own count of reads; no job request may happen).
 * - wait duration: from the waiter's start to its resolution; read rate while waiting: the reads
 *   after the first (the first is the check whether anything is rolling out, which every JobRun
 *   makes, see below) ÷ the wait duration.
 *
 * JobRun with and without the check, when nothing is rolling out: `executeJobRun` from `dist/`
 * (mode "run", defaults) of a 100 ms job, once with `workers` in its context (`rollout` defaults
 * to "wait": one read of the workers before submitting, one after the job to see which release
 * ran it) and once without (no worker reads), alternating, 9 of each, one at a time, on a third
 * emulator (3 warm workers, the service's limits on). Detection latency as in `latency.mts`
 * (noticed − the moment the worker handler returned; no start jitter: JobRun waits with long
 * polls, which no phase favours); job API requests and worker reads per JobRun from the emulator's
 * counters by interface (`jobs`, `management`).
 *
 * `node bench/rollout.mts` (after `npm run build`) runs this section alone, about 50 s.
 *
 * Everything is on 127.0.0.1; each emulator is closed at the end of its part (which ends the
 * clients' connections: clients share the package's one keep-alive agent and hold nothing else).
 */
import type { RunningEmulator } from "../src/emulator/index.ts";
import type { RunpodClient } from "../src/index.ts";
import type { RolloutWaitResult, WorkerListReader } from "../src/provider/smokeTestJob/staleWorkers.ts";
import {
  delay,
  jobRunArgs,
  jobRunLogic,
  maxOf,
  median,
  pkg,
  progress,
  type ResultRow,
  rolloutLogic,
  sideBySide,
  staggeredTrials,
  timedWorker,
} from "./lib.mts";

const API_KEY = "bench-rollout-key";
const ENDPOINT = "rolling";
/** Workers of the endpoint under update. */
const WORKERS = 3;
/** How long stale workers keep serving after a release before replacement starts, in ms. */
export const ROLLOUT_MS = 1500;
/** Trials per contender. */
export const TRIALS = 9;
/** Upper bound of the random delay between the PATCH and the waiter's start (uniform), in ms. */
export const START_JITTER_MS = 1000;
/** The peer's fixed poll interval, in ms. */
export const PEER_POLL_MS = 5000;
/** Bound of one wait (it never comes close), in ms. */
const WAIT_TIMEOUT_MS = 30_000;

/** Length of the JobRun's job in the with/without comparison, in ms, and JobRuns of each kind. */
export const JOB_MS = 100;
export const JOB_SAMPLES = 9;
const JOB_ENDPOINT = "timed";

type Contender = "ours" | "poll-5s";

const LABEL: Record<Contender, string> = {
  ours: `ours (waitForRollout, a read every ${rolloutLogic.ROLLOUT_POLL_MS / 1000} s)`,
  "poll-5s": `fixed ${PEER_POLL_MS / 1000} s poll`,
};

/** What one rollout trial measured. */
interface Trial {
  detectionMs: number;
  requests: number;
  durationMs: number;
  ratePerS: number;
}

/** The `system` log line the engine writes when it replaces a stale worker. */
const REPLACED = /^worker stopping: replaced by a worker of version (\d+)$/;

/**
 * When the last of `workerIds` was replaced by a worker of `version` (ms since the epoch), from
 * their logs (each is closed, so its stream ends after the backfill).
 */
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
    if (at === undefined) {
      throw new Error(`rollout: worker ${workerId} has no replacement line for version ${version}`);
    }
    last = Math.max(last, at);
  }
  return last;
}

/** Resolves once every worker is IDLE on the endpoint's current version (the rollout fully over). */
async function settle(client: RunpodClient): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const list = await client.serverless.workers(ENDPOINT);
    if (list.workers.length === WORKERS && list.workers.every((w) => w.status === "IDLE" && !w.isStale))
      return;
    if (Date.now() > until)
      throw new Error(`rollout: the endpoint did not settle: ${JSON.stringify(list.summary)}`);
    await delay(50);
  }
}

/** One trial: update the endpoint, start the waiter after the jitter, measure it (see the module comment). */
async function rolloutTrial(
  emu: RunningEmulator,
  client: RunpodClient,
  contender: Contender,
  trial: number,
  startDelayMs: number,
): Promise<Trial> {
  const before = await client.serverless.workers(ENDPOINT);
  const staleIds = before.workers.map((w) => w.id);
  const version = (before.endpointVersion as number) + 1;
  await client.serverless.update(ENDPOINT, { env: { TRIAL: String(trial) } });
  await delay(startDelayMs);

  const reads: Array<{ start: number; end: number; stale: number }> = [];
  const read: WorkerListReader = async (id, options) => {
    const start = Date.now();
    const list = await client.serverless.workers(id, options);
    reads.push({ start, end: Date.now(), stale: rolloutLogic.rolloutState(list).stale });
    return list;
  };
  const counted = emu.stats().requestsByInterface;
  const startedAt = Date.now();
  const result: RolloutWaitResult = await rolloutLogic.waitForRollout(read, ENDPOINT, {
    signal: AbortSignal.timeout(WAIT_TIMEOUT_MS),
    ...(contender === "poll-5s" ? { pollMs: PEER_POLL_MS } : {}),
  });
  const resolvedAt = Date.now();
  const after = emu.stats().requestsByInterface;

  const requests = after.management - counted.management;
  if (after.jobs !== counted.jobs) throw new Error(`rollout ${contender}: job requests during the wait`);
  if (!result.waited || result.version !== version) {
    throw new Error(`rollout ${contender}: the wait began after the rollout (${JSON.stringify(result)})`);
  }
  if (requests < result.reads)
    throw new Error(`rollout ${contender}: ${requests} requests < ${result.reads} reads`);

  const rolledOutAt = await lastReplacement(client, staleIds, version);
  const lastStale = reads.filter((r) => r.stale > 0).at(-1);
  const final = reads.at(-1);
  if (!lastStale || !final || lastStale.start > rolledOutAt + 1 || final.end < rolledOutAt - 1) {
    throw new Error(
      `rollout ${contender}: the worker log (${rolledOutAt}) disagrees with the reads ${JSON.stringify(reads)}`,
    );
  }
  await settle(client);
  const durationMs = resolvedAt - startedAt;
  return {
    detectionMs: resolvedAt - rolledOutAt,
    requests,
    durationMs,
    ratePerS: (requests - 1) / (durationMs / 1000),
  };
}

/** Runs every trial of one contender on its own emulator. */
async function rolloutContender(contender: Contender): Promise<Trial[]> {
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
    await settle(client); // opens the keep-alive connection
    return await staggeredTrials(TRIALS, START_JITTER_MS, (i, delayMs) =>
      rolloutTrial(emu, client, contender, i, delayMs),
    );
  } finally {
    await emu.close();
  }
}

/** What one JobRun of the with/without comparison measured. */
interface JobRunSample {
  detectionMs: number;
  durationMs: number;
  jobRequests: number;
  workerReads: number;
}

/** Finish time (performance.now()) of every job of the JobRun emulator, by job id. */
const finishedAt = new Map<string, number>();

/** A worker that sleeps `input.ms` (+ `input.jitterMs`) and records when it returns. */
const timedHandler = timedWorker(finishedAt);

/** JobRuns of a 100 ms job with and without the rollout check, alternating (see the module comment). */
async function jobRunCheck(): Promise<{ withCheck: JobRunSample[]; without: JobRunSample[] }> {
  const emu = await pkg.startEmulator({
    apiKeys: [API_KEY],
    endpoints: [{ id: JOB_ENDPOINT, workersMax: 3 }],
    handlers: { [JOB_ENDPOINT]: timedHandler },
  });
  const client = new pkg.RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
  });
  try {
    await client.endpoint(JOB_ENDPOINT).health(); // open the keep-alive connection
    const workers: WorkerListReader = (id, options) => client.serverless.workers(id, options);
    const one = async (check: boolean): Promise<JobRunSample> => {
      const args = jobRunArgs.resolveJobRunArgs({ endpointId: JOB_ENDPOINT, input: { ms: JOB_MS } });
      const before = emu.stats().requestsByInterface;
      const started = performance.now();
      const outcome = await jobRunLogic.executeJobRun(args, {
        endpoint: client.endpoint(JOB_ENDPOINT),
        log: () => {},
        ...(check ? { workers } : {}),
      });
      const noticedAt = performance.now();
      const after = emu.stats().requestsByInterface;
      if (outcome.failure) throw new Error(`JobRun (check ${check}): ${outcome.failure}`);
      const { jobId, status, timeline } = outcome.result;
      if (status !== "COMPLETED") throw new Error(`JobRun (check ${check}): job ended ${status}`);
      if (timeline.some((t) => t.status === rolloutLogic.ROLLOUT_WAIT)) {
        throw new Error(`JobRun (check ${check}): it waited for a rollout, with none under way`);
      }
      if (check !== (outcome.result.endpointVersion !== undefined)) {
        throw new Error(`JobRun (check ${check}): endpointVersion ${outcome.result.endpointVersion}`);
      }
      const finished = finishedAt.get(jobId as string);
      if (finished === undefined) throw new Error(`JobRun: no finish time for job ${jobId}`);
      return {
        detectionMs: noticedAt - finished,
        durationMs: noticedAt - started,
        jobRequests: after.jobs - before.jobs,
        workerReads: after.management - before.management,
      };
    };
    const withCheck: JobRunSample[] = [];
    const without: JobRunSample[] = [];
    for (let i = 0; i < JOB_SAMPLES; i++) {
      // Alternate which goes first, so neither always runs on a just-used connection.
      if (i % 2 === 0) {
        withCheck.push(await one(true));
        without.push(await one(false));
      } else {
        without.push(await one(false));
        withCheck.push(await one(true));
      }
    }
    return { withCheck, without };
  } finally {
    await emu.close();
  }
}

/** Measures the rollout wait (ours vs a fixed 5 s poll) and the JobRun check; returns the table rows. */
export async function benchRollout(): Promise<ResultRow[]> {
  progress(
    `rollout: ${TRIALS} rolling updates per contender (ours, fixed ${PEER_POLL_MS / 1000} s poll), concurrently`,
  );
  const [ours, peer] = await Promise.all([rolloutContender("ours"), rolloutContender("poll-5s")]);
  progress(
    `rollout: ${JOB_SAMPLES} JobRuns of ${JOB_MS} ms with the rollout check and ${JOB_SAMPLES} without`,
  );
  const jobRuns = await jobRunCheck();

  const side = sideBySide(ours, peer, LABEL["poll-5s"]);
  const max = maxOf;
  const detection = side(
    `Rollout wait, detection latency (rolled out → noticed), median: ${LABEL.ours}`,
    "ms",
    (t) => t.detectionMs,
  );
  const rate = side(
    `Rollout wait, read rate (reads after the first ÷ wait duration), median: ${LABEL.ours}`,
    "req/s",
    (t) => t.ratePerS,
  );
  const rows: ResultRow[] = [
    { ...detection, target: "<= 1000 ms", meetsTarget: detection.value <= 1000 },
    side(`Rollout wait, detection latency, max of ${TRIALS}: ${LABEL.ours}`, "ms", (t) => t.detectionMs, max),
    side(`Rollout wait, worker reads per wait, median: ${LABEL.ours}`, "req", (t) => t.requests),
    { ...rate, target: "<= 1 req/s", meetsTarget: rate.value <= 1 },
    side(`Rollout wait, wait duration (start → resolved), median: ${LABEL.ours}`, "ms", (t) => t.durationMs),
  ];

  const withLabel = "ours (JobRun, rollout: wait)";
  const withoutLabel = "ours without the check (no workers reader)";
  const jobRow = (name: string, unit: string, pick: (s: JobRunSample) => number) => ({
    name: `${name}: ${withLabel}`,
    value: median(jobRuns.withCheck.map(pick)),
    unit,
    peer: withoutLabel,
    peerValue: median(jobRuns.without.map(pick)),
  });
  const size = `${JOB_MS / 1000} s job, no rollout`;
  const jobDetection = jobRow(`JobRun detection latency, ${size}, median`, "ms", (s) => s.detectionMs);
  const jobRequests = jobRow(`JobRun job API requests, ${size}, median`, "req", (s) => s.jobRequests);
  rows.push(
    { ...jobDetection, target: "<= 50 ms", meetsTarget: jobDetection.value <= 50 },
    { ...jobRequests, target: "<= 3", meetsTarget: jobRequests.value <= 3 },
    jobRow(`JobRun worker reads, ${size}, median`, "req", (s) => s.workerReads),
    jobRow(`JobRun duration (start → resolved), ${size}, median`, "ms", (s) => s.durationMs),
  );
  return rows;
}

/** `node bench/rollout.mts` runs this section alone and prints its rows. */
if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchRollout())}\n`);
}

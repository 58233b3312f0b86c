/**
 * One poll per endpoint: how many reads of `GET /v2/serverless/{id}/workers` a second
 * 64 rollout waits on ONE endpoint cost, in one process (one provider host), while a rolling
 * update is held open.
 *
 * Each contender has its own in-process emulator (the service's limits on: management 3000 a
 * minute) with one endpoint of 3 warm workers and `rolloutMs` 60 s, so once it is PATCHed (a new
 * `env`, a new release) its workers stay stale for the whole measurement. 64 waiters then start
 * together, each `waitForRollout` from `dist/` with its default `pollMs` (1000 ms), as JobRun
 * calls it:
 * - ours: every waiter through the same client settings (`pollKey`, as every JobRun of one
 *   provider host passes it): they share one read loop.
 * - 64 independent pollers: each waiter with its own reader and no key, which is what each JobRun
 *   did before the loops were shared (a read every second on its own).
 *
 * After a 1.5 s warm-up (every waiter has had its first answer), the emulator's REST request
 * counter (`stats().requestsByInterface.management`) is read at the start and end of a 10 s
 * window: reads per second = requests ÷ window. Then every waiter is aborted and the emulator
 * closed. Waiters whose read failed beyond the client's retries (429s) are counted too.
 *
 * `node bench/sharedPoll.mts` (after `npm run build`) runs this section alone, about 25 s.
 */
import type { WorkerListReader } from "../src/provider/smokeTestJob/staleWorkers.ts";
import { delay, pkg, progress, type ResultRow, rolloutLogic } from "./lib.mts";

const API_KEY = "bench-shared-poll-key";
const ENDPOINT = "rolling";
/** Waiters on the one endpoint. */
export const WAITERS = 64;
const WARMUP_MS = 1_500;
/** The measurement window, in ms. */
export const WINDOW_MS = 10_000;

type Contender = "ours" | "independent";

interface Measured {
  readsPerSecond: number;
  failedWaiters: number;
}

async function measure(contender: Contender): Promise<Measured> {
  const emu = await pkg.startEmulator({
    apiKeys: [API_KEY],
    endpoints: [{ id: ENDPOINT, workersMax: 3 }],
    rolloutMs: 60_000,
  });
  const client = new pkg.RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
  });
  const stop = new AbortController();
  try {
    await client.serverless.update(ENDPOINT, { env: { RELEASE: "2" } });
    const shared: WorkerListReader = (id, options) => client.serverless.workers(id, options);
    let failedWaiters = 0;
    const waits = Array.from({ length: WAITERS }, () => {
      const read: WorkerListReader =
        contender === "ours" ? shared : (id, options) => client.serverless.workers(id, options);
      return rolloutLogic
        .waitForRollout(read, ENDPOINT, {
          signal: stop.signal,
          ...(contender === "ours" ? { pollKey: "bench-client" } : {}),
        })
        .then(
          (done: { stale: number }) => {
            throw new Error(`sharedPoll: the rollout ended during the bench (${done.stale} stale)`);
          },
          (error: unknown) => {
            if (!stop.signal.aborted) failedWaiters += 1;
            return error;
          },
        );
    });
    await delay(WARMUP_MS);
    const before = emu.stats().requestsByInterface.management;
    const started = performance.now();
    await delay(WINDOW_MS);
    const requests = emu.stats().requestsByInterface.management - before;
    const seconds = (performance.now() - started) / 1000;
    stop.abort(new Error("bench window over"));
    await Promise.all(waits);
    return { readsPerSecond: requests / seconds, failedWaiters };
  } finally {
    stop.abort();
    await emu.close();
  }
}

/** Section entry: the rows for the table. */
export async function benchSharedPoll(): Promise<ResultRow[]> {
  progress(`sharedPoll: ${WAITERS} waiters on one endpoint, shared loop`);
  const ours = await measure("ours");
  progress(`sharedPoll: ${WAITERS} independent pollers`);
  const peer = await measure("independent");
  const rows: ResultRow[] = [
    {
      name: `Rollout wait, worker reads per second with ${WAITERS} waiters on one endpoint: ours (one shared loop per provider host)`,
      value: ours.readsPerSecond,
      unit: "reads/s",
      peer: `${WAITERS} independent pollers`,
      peerValue: peer.readsPerSecond,
      // One read a second; a 10 s window can hold 11 of them (a read at each edge): 1.1 counted.
      target: "1 read/s (<= 1.1 counted in a 10 s window)",
      meetsTarget: ours.readsPerSecond <= 1.1,
    },
    {
      name: `Rollout wait, waiters whose worker read failed beyond the client's retries, ${WAITERS} waiters: ours`,
      value: ours.failedWaiters,
      unit: "waiters",
      peer: `${WAITERS} independent pollers`,
      peerValue: peer.failedWaiters,
      target: "0",
      meetsTarget: ours.failedWaiters === 0,
    },
  ];
  return rows;
}

/** `node bench/sharedPoll.mts` runs this section alone and prints its rows. */
if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchSharedPoll())}\n`);
}

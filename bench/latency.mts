/**
 * JobRun detection latency: how long after a job finishes on the emulator each contender notices,
 * and how many requests it spends per job.
 *
 * - "finished": the moment the emulator's worker handler returns (recorded in this process with
 *   `performance.now()`, keyed by job id); the engine marks the job COMPLETED in the same tick.
 * - "noticed": the moment the contender's call resolves with the terminal job.
 * - Requests per job: the emulator's own request counter (`stats().requests`) divided by the
 *   samples; each contender has its own in-process emulator, so counts never mix.
 *
 * Contenders, all against an endpoint with the service's rate limits on:
 * - ours (JobRun, mode "run"): the JobRun provider's execution logic (`executeJobRun` from
 *   `dist/`): `POST /run`, then the client's `waitForJob` long poll (`/status-sync`).
 * - ours (JobRun, mode "runsync"): the same logic submitting with `POST /runsync?wait=`.
 * - runpod-sdk `endpoint.runSync` (the official JS SDK, pointed at the emulator by its `baseUrl`
 *   option, which it joins as `${baseUrl}/${endpointId}/runsync`).
 * - fixed 1 s polling: `POST /run`, then `GET /status` at once and every second until terminal,
 *   which is what the official Python SDK's `Job.output()` does.
 *
 * Samples of one size run concurrently, so that the 10 s jobs fit the time budget; each emulator
 * has enough workers that no job queues. Each job also waits a random 0..1000 ms before its work
 * (the queue and cold-start jitter of the real service): without it a fixed-interval poller is
 * phase-locked to a job of whole seconds and looks far better than it is. Every contender gets
 * the same distribution of jitter.
 */
import { createRequire } from "node:module";
import type { RunningEmulator } from "../src/emulator/index.ts";
import {
  delay,
  jobRunArgs,
  jobRunLogic,
  median,
  pkg,
  progress,
  quantile,
  type ResultRow,
  timedWorker,
  undici,
} from "./lib.mts";

const require = createRequire(import.meta.url);

/** Job lengths measured, with the number of samples of each. */
export const SIZES: ReadonlyArray<{ ms: number; samples: number }> = [
  { ms: 100, samples: 5 },
  { ms: 1000, samples: 5 },
  { ms: 10_000, samples: 3 },
];

const ENDPOINT = "timed";
/** Upper bound of the random start delay each job gets (uniform in [0, JITTER_MS)), in ms. */
export const JITTER_MS = 1000;
const API_KEY = "bench-latency-key";

type Contender = "ours-run" | "ours-runsync" | "runpod-sdk" | "poll-1s";

const LABEL: Record<Contender, string> = {
  "ours-run": "ours (JobRun, run + waitForJob)",
  "ours-runsync": "ours (JobRun, runsync)",
  "runpod-sdk": "runpod-sdk runSync",
  "poll-1s": "fixed 1 s polling",
};

/** Finish time (performance.now()) of every job, by job id, from every emulator below. */
const finishedAt = new Map<string, number>();

/** A worker that sleeps `input.ms` (+ `input.jitterMs`) and records when it returns. */
const timedHandler = timedWorker(finishedAt);

interface Sample {
  jobId: string;
  noticedAt: number;
  status: string;
}

/** The contenders' "run one job and notice its end" functions, bound to their emulator. */
async function makeRunner(
  contender: Contender,
  emu: RunningEmulator,
): Promise<(ms: number, jitterMs: number) => Promise<Sample>> {
  if (contender === "ours-run" || contender === "ours-runsync") {
    const client = new pkg.RunpodClient({
      apiKey: emu.apiKey,
      serverlessUrl: emu.serverlessUrl,
      restUrl: emu.restUrl,
    });
    await client.endpoint(ENDPOINT).health(); // open the keep-alive connection
    const mode = contender === "ours-run" ? "run" : "runsync";
    return async (ms, jitterMs) => {
      const args = jobRunArgs.resolveJobRunArgs({ endpointId: ENDPOINT, input: { ms, jitterMs }, mode });
      const outcome = await jobRunLogic.executeJobRun(args, {
        endpoint: client.endpoint(ENDPOINT),
        log: () => {},
      });
      const noticedAt = performance.now();
      if (outcome.failure) throw new Error(outcome.failure);
      return { jobId: outcome.result.jobId as string, noticedAt, status: outcome.result.status as string };
    };
  }
  if (contender === "runpod-sdk") {
    // runpod-sdk is an ES module; its default export builds the SDK object.
    const sdkModule = (await import(require.resolve("runpod-sdk"))) as {
      default: (apiKey: string, options: { baseUrl: string }) => any;
    };
    const sdk = sdkModule.default(emu.apiKey, { baseUrl: `${emu.serverlessUrl}/v2` });
    const endpoint = sdk.endpoint(ENDPOINT);
    await endpoint.health();
    return async (ms, jitterMs) => {
      const answer = await endpoint.runSync({ input: { ms, jitterMs } });
      const noticedAt = performance.now();
      if (answer.status !== "COMPLETED") throw new Error(`runpod-sdk: ${JSON.stringify(answer)}`);
      return { jobId: answer.id, noticedAt, status: answer.status };
    };
  }
  // Fixed 1 s polling, as the Python SDK's Job.output(): status, then sleep 1 s, until terminal.
  const base = `${emu.serverlessUrl}/v2/${ENDPOINT}`;
  const headers = { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" };
  await (await undici.request(`${base}/health`, { headers })).body.json();
  return async (ms, jitterMs) => {
    const submitted = await undici.request(`${base}/run`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input: { ms, jitterMs } }),
    });
    const job = (await submitted.body.json()) as { id: string; status: string };
    if (submitted.statusCode !== 200) throw new Error(`POST /run answered ${submitted.statusCode}`);
    for (;;) {
      const answer = await undici.request(`${base}/status/${job.id}`, { headers });
      const body = (await answer.body.json()) as { status: string };
      if (["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"].includes(body.status)) {
        return { jobId: job.id, noticedAt: performance.now(), status: body.status };
      }
      await delay(1000);
    }
  };
}

/** Measures every contender at every size; returns the table rows (ours first, then peers). */
export async function benchLatency(): Promise<ResultRow[]> {
  const contenders: Contender[] = ["ours-run", "ours-runsync", "runpod-sdk", "poll-1s"];
  const emulators = new Map<Contender, RunningEmulator>();
  const runners = new Map<Contender, (ms: number, jitterMs: number) => Promise<Sample>>();
  try {
    for (const c of contenders) {
      const emu = await pkg.startEmulator({
        apiKeys: [API_KEY],
        endpoints: [{ id: ENDPOINT, workersMax: 16 }],
        handlers: { [ENDPOINT]: timedHandler },
      });
      emulators.set(c, emu);
      runners.set(c, await makeRunner(c, emu));
    }
    const rows: ResultRow[] = [];
    for (const { ms, samples } of SIZES) {
      progress(`latency: ${samples} jobs of ${ms} ms per contender, concurrently`);
      const before = new Map(contenders.map((c) => [c, emulators.get(c)!.stats().requests]));
      const results = await Promise.all(
        contenders.map(async (c) => {
          const runs = await Promise.all(
            Array.from({ length: samples }, async () => {
              const sample = await runners.get(c)!(ms, Math.floor(Math.random() * JITTER_MS));
              const finished = finishedAt.get(sample.jobId);
              if (finished === undefined) throw new Error(`${c}: no finish time for job ${sample.jobId}`);
              if (sample.status !== "COMPLETED") throw new Error(`${c}: job ended ${sample.status}`);
              return sample.noticedAt - finished;
            }),
          );
          const requests = (emulators.get(c)!.stats().requests - (before.get(c) as number)) / samples;
          return { c, latencies: runs, requests };
        }),
      );
      const by = new Map(results.map((r) => [r.c, r]));
      const sdk = by.get("runpod-sdk")!;
      const poll = by.get("poll-1s")!;
      const size = `${ms / 1000} s`;
      for (const c of ["ours-run", "ours-runsync"] as const) {
        const ours = by.get(c)!;
        rows.push({
          name: `Detection latency, ${size} job, median: ${LABEL[c]}`,
          value: median(ours.latencies),
          unit: "ms",
          peer: LABEL["runpod-sdk"],
          peerValue: median(sdk.latencies),
          target: "<= 50 ms",
          meetsTarget: median(ours.latencies) <= 50,
        });
      }
      rows.push({
        name: `Detection latency, ${size} job, median: ${LABEL["poll-1s"]}`,
        value: median(poll.latencies),
        unit: "ms",
      });
      for (const c of ["ours-run", "ours-runsync"] as const) {
        const ours = by.get(c)!;
        rows.push({
          name: `Detection latency, ${size} job, p95: ${LABEL[c]}`,
          value: quantile(ours.latencies, 0.95),
          unit: "ms",
          peer: LABEL["runpod-sdk"],
          peerValue: quantile(sdk.latencies, 0.95),
        });
      }
      rows.push({
        name: `Detection latency, ${size} job, p95: ${LABEL["poll-1s"]}`,
        value: quantile(poll.latencies, 0.95),
        unit: "ms",
      });
      for (const c of ["ours-run", "ours-runsync"] as const) {
        const ours = by.get(c)!;
        rows.push({
          name: `Requests per job, ${size} job: ${LABEL[c]}`,
          value: ours.requests,
          unit: "req",
          peer: LABEL["runpod-sdk"],
          peerValue: sdk.requests,
          target: "<= 3",
          meetsTarget: ours.requests <= 3,
        });
      }
      rows.push({
        name: `Requests per job, ${size} job: ${LABEL["poll-1s"]}`,
        value: poll.requests,
        unit: "req",
      });
    }
    return rows;
  } finally {
    for (const emu of emulators.values()) await emu.close();
  }
}

/**
 * Scale: N JobRuns of 100 ms jobs started at once, each through the JobRun provider's execution
 * logic (`executeJobRun` from `dist/`, mode "run": `POST /run` then the `/status-sync` long poll),
 * each with its own `RunpodClient` as in the provider host (the client-side rate limiter is shared
 * per process), against an emulator process with the service's rate limits on and one endpoint
 * of `workersMax` 100.
 *
 * The bound those limits and workers allow (the fastest any client could finish):
 *
 *   bound = max( ceil(N / W) * T,  floor((N - 1) / R) * windowMs + T )
 *
 * with W = workersMax, T = job length, R = the `run` row's requests per window (1000 per 10 s).
 * The first term is the workers' capacity, the second the submission rate. The `status` row
 * (2000 per 10 s, 400 in flight) does not bind for N <= 500: each JobRun spends one long poll.
 * A 429 that reaches a JobRun's outcome counts as surfaced; the client's own retries after a 429
 * are counted apart (they are invisible to users).
 *
 * The bound ignores the cost of HTTP itself (2N requests through one 2-core machine), so each N
 * is also run by a minimal peer on its own fresh emulator: raw `undici.request` doing the same
 * `POST /run` + `GET /status-sync` per job, obeying the same in-flight caps (200 run, 400 status)
 * with a plain semaphore and no validation. Both start cold (new process, new connections).
 */
import { jobRunArgs, jobRunLogic, limits, median, pkg, progress, type ResultRow, undici } from "./lib.mts";
import { startEmulatorProcess } from "./servers.mts";

export const WORKERS = 100;
export const JOB_MS = 100;
export const SIZES = [100, 500] as const;
/** Runs per N and contender, each on a fresh emulator; the figure is the median. */
export const REPEATS = 3;

/** The lower bound on total time for `n` jobs (see the module comment), ms. */
export function scaleBoundMs(n: number, workers = WORKERS, jobMs = JOB_MS): number {
  const run = limits.SERVICE_RATE_LIMITS.run;
  return Math.max(Math.ceil(n / workers) * jobMs, Math.floor((n - 1) / run.requests) * run.windowMs + jobMs);
}

interface ScaleResult {
  n: number;
  totalMs: number;
  boundMs: number;
  completed: number;
  surfaced429: number;
  retried429: number;
  otherFailures: string[];
  healthCompleted: number;
}

/** A counting semaphore: at most `limit` holders. */
function semaphore(limit: number) {
  let held = 0;
  const waiting: Array<() => void> = [];
  return {
    async acquire() {
      if (held >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      held++;
    },
    release() {
      held--;
      waiting.shift()?.();
    },
  };
}

/** The minimal peer: raw undici, `POST /run` then `GET /status-sync`, in-flight caps obeyed. */
async function runRaw(n: number): Promise<{ totalMs: number; completed: number; got429: number }> {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${WORKERS}`]);
  try {
    const base = `${emu.serverlessUrl}/v2/scale`;
    const headers = { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" };
    const runSlots = semaphore(limits.SERVICE_RATE_LIMITS.run.concurrent as number);
    const statusSlots = semaphore(limits.SERVICE_RATE_LIMITS.status.concurrent as number);
    await (await undici.request(`${base}/health`, { headers })).body.json();
    let completed = 0;
    let got429 = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: n }, async () => {
        await runSlots.acquire();
        let job: { id: string };
        try {
          const answer = await undici.request(`${base}/run`, {
            method: "POST",
            headers,
            body: JSON.stringify({ input: { sleepMs: JOB_MS } }),
          });
          job = (await answer.body.json()) as { id: string };
          if (answer.statusCode === 429) got429++;
          if (answer.statusCode !== 200) return;
        } finally {
          runSlots.release();
        }
        await statusSlots.acquire();
        try {
          const answer = await undici.request(`${base}/status-sync/${job.id}?wait=90000`, { headers });
          const body = (await answer.body.json()) as { status?: string };
          if (answer.statusCode === 429) got429++;
          if (body.status === "COMPLETED") completed++;
        } finally {
          statusSlots.release();
        }
      }),
    );
    return { totalMs: performance.now() - started, completed, got429 };
  } finally {
    await emu.close();
  }
}

async function runScale(n: number): Promise<ScaleResult> {
  const emu = await startEmulatorProcess(["--endpoint", `scale:${WORKERS}`]);
  try {
    let retried429 = 0;
    const logger = {
      debug: (line: string) => {
        if (/ after 429 /.test(line)) retried429++;
      },
    };
    const log = (line: string) => {
      if (/submission refused .*429/.test(line) || /\b429\b/.test(line)) retried429++;
    };
    const args = jobRunArgs.resolveJobRunArgs({ endpointId: "scale", input: { sleepMs: JOB_MS } });
    const clientFor = () =>
      new pkg.RunpodClient({
        apiKey: emu.apiKey,
        serverlessUrl: emu.serverlessUrl,
        restUrl: `${emu.serverlessUrl}/v1`,
        logger,
      });
    await clientFor().endpoint("scale").health();
    const started = performance.now();
    const outcomes = await Promise.all(
      Array.from({ length: n }, () =>
        jobRunLogic.executeJobRun(args, { endpoint: clientFor().endpoint("scale"), log }).then(
          (outcome) => ({ outcome, error: undefined as unknown }),
          (error: unknown) => ({ outcome: undefined, error }),
        ),
      ),
    );
    const totalMs = performance.now() - started;
    let completed = 0;
    let surfaced429 = 0;
    const otherFailures: string[] = [];
    for (const { outcome, error } of outcomes) {
      const text = error ? String((error as Error).message) : (outcome?.failure ?? "");
      if (!error && outcome && !outcome.failure && outcome.result.status === "COMPLETED") completed++;
      else if (/\b429\b|rate limit/i.test(text)) surfaced429++;
      else otherFailures.push(text.split("\n")[0] as string);
    }
    const health = await clientFor().endpoint("scale").health();
    return {
      n,
      totalMs,
      boundMs: scaleBoundMs(n),
      completed,
      surfaced429,
      retried429,
      otherFailures,
      healthCompleted: health.jobs.completed,
    };
  } finally {
    await emu.close();
  }
}

/** Total time vs bound, and 429s surfaced, for each N. */
export async function benchScale(): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const n of SIZES) {
    progress(
      `scale: ${n} JobRuns of ${JOB_MS} ms, workersMax ${WORKERS}, service limits on, ${REPEATS} runs`,
    );
    const ours: ScaleResult[] = [];
    const raws: number[] = [];
    for (let rep = 0; rep < REPEATS; rep++) {
      const r = await runScale(n);
      if (r.completed !== n || r.healthCompleted !== n) {
        throw new Error(
          `scale N=${n}: ${r.completed} JobRuns completed, /health counts ${r.healthCompleted} completed; ` +
            `other failures: ${r.otherFailures.slice(0, 3).join(" | ")}`,
        );
      }
      ours.push(r);
      const raw = await runRaw(n);
      if (raw.completed !== n) {
        throw new Error(
          `scale N=${n}: the raw peer completed ${raw.completed} of ${n} (429s: ${raw.got429})`,
        );
      }
      raws.push(raw.totalMs);
    }
    const r = {
      ...(ours[0] as ScaleResult),
      totalMs: median(ours.map((o) => o.totalMs)),
      surfaced429: ours.reduce((sum, o) => sum + o.surfaced429, 0),
      retried429: ours.reduce((sum, o) => sum + o.retried429, 0),
    };
    const raw = { totalMs: median(raws) };
    rows.push(
      {
        name: `Scale: ${n} JobRuns (100 ms jobs, workersMax ${WORKERS}, limits on): total time, median of ${REPEATS}`,
        value: r.totalMs,
        unit: "ms",
        peer: "bound max(ceil(N/W)*T, floor((N-1)/R)*10 s + T)",
        peerValue: r.boundMs,
        // DESIGN.md's target is stated for 500 JobRuns in one deploy.
        ...(n === 500 ? { target: "<= 1.5x bound", meetsTarget: r.totalMs <= 1.5 * r.boundMs } : {}),
      },
      {
        name: `Scale: ${n} JobRuns: total time, ours vs minimal raw-undici client`,
        value: r.totalMs,
        unit: "ms",
        peer: "raw undici run + status-sync",
        peerValue: raw.totalMs,
      },
      {
        name: `Scale: ${n} JobRuns: 429s surfaced, all ${REPEATS} runs (client retries after 429: ${r.retried429})`,
        value: r.surfaced429,
        unit: "",
        target: "= 0",
        meetsTarget: r.surfaced429 === 0,
      },
    );
  }
  return rows;
}

/**
 * Request-rate benchmarks against servers in child processes (see `servers.mts`):
 *
 * - Client overhead: `GET /status/{id}` calls per second through `RunpodClient`
 *   (`endpoint.status`, `rateLimits: false`) vs raw `undici.request` + `body.json()` on the same
 *   emulator (`--rate-limits off`), same concurrency, same job. Rounds alternate between the two;
 *   the figure is the median round.
 * - Emulator throughput: the same `GET /status/{id}` against the emulator (rate limits off) vs a
 *   bare `node:http` server answering the same JSON body, both loaded with raw undici.
 */
import type { Dispatcher } from "undici";
import { delay, median, pkg, progress, type ResultRow, undici } from "./lib.mts";
import { startBareServer, startEmulatorProcess } from "./servers.mts";

/** Requests in flight at once, for both contenders of a row. */
export const OVERHEAD_CONCURRENCY = 8;
export const THROUGHPUT_CONCURRENCY = 32;
/** Rounds per contender and the length of one round, ms: short alternating rounds, so load from
 * other processes on the machine falls on both contenders alike. */
export const ROUNDS = 12;
export const ROUND_MS = 400;

/** Calls `call` from `concurrency` loops for `ms`; resolves to completed calls per second. */
async function rate(ms: number, concurrency: number, call: () => Promise<void>): Promise<number> {
  const started = performance.now();
  const deadline = started + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await call();
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/**
 * Rounds of A and B, alternating which goes first; resolves to the medians and to the median of
 * the per-round ratios A/B (each ratio compares two rounds run back to back, so it is the figure
 * least moved by other load on the machine).
 */
async function alternate(
  a: () => Promise<void>,
  b: () => Promise<void>,
  concurrency: number,
): Promise<{ a: number; b: number; ratio: number }> {
  await rate(300, concurrency, a); // warm-up: connections, JIT
  await rate(300, concurrency, b);
  const as: number[] = [];
  const bs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      as.push(await rate(ROUND_MS, concurrency, a));
      bs.push(await rate(ROUND_MS, concurrency, b));
    } else {
      bs.push(await rate(ROUND_MS, concurrency, b));
      as.push(await rate(ROUND_MS, concurrency, a));
    }
    await delay(50);
  }
  return { a: median(as), b: median(bs), ratio: median(as.map((x, i) => x / (bs[i] as number))) };
}

/** A raw GET that must answer 200; the body is parsed as the client would. */
function rawGet(url: string, headers: Record<string, string>, dispatcher?: Dispatcher) {
  return async () => {
    const response = await undici.request(url, { headers, ...(dispatcher ? { dispatcher } : {}) });
    await response.body.json();
    if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
  };
}

/** Client overhead and emulator throughput rows. */
export async function benchThroughput(): Promise<ResultRow[]> {
  const emu = await startEmulatorProcess(["--endpoint", "echo:2", "--rate-limits", "off"]);
  let bare: Awaited<ReturnType<typeof startBareServer>> | undefined;
  try {
    const client = new pkg.RunpodClient({
      apiKey: emu.apiKey,
      serverlessUrl: emu.serverlessUrl,
      restUrl: `${emu.serverlessUrl}/v1`,
      rateLimits: false,
    });
    const endpoint = client.endpoint("echo");
    const job = await endpoint.run({ input: { output: { ok: true, note: "status benchmark" } } });
    const finished = await endpoint.waitForJob(job.id, { timeoutMs: 10_000 });
    const statusUrl = `${emu.serverlessUrl}/v2/echo/status/${job.id}`;
    const headers = { authorization: `Bearer ${emu.apiKey}`, accept: "application/json" };

    progress(`client overhead: ${ROUNDS} rounds of ${ROUND_MS} ms each, concurrency ${OVERHEAD_CONCURRENCY}`);
    const overhead = await alternate(
      async () => {
        await endpoint.status(job.id);
      },
      rawGet(statusUrl, headers),
      OVERHEAD_CONCURRENCY,
    );

    progress(
      `emulator throughput: ${ROUNDS} rounds of ${ROUND_MS} ms each, concurrency ${THROUGHPUT_CONCURRENCY}`,
    );
    bare = await startBareServer(JSON.stringify(finished));
    const bareAgent = new undici.Agent({ keepAliveTimeout: 10_000 });
    const emuAgent = new undici.Agent({ keepAliveTimeout: 10_000 });
    const throughput = await alternate(
      rawGet(statusUrl, headers, emuAgent),
      rawGet(`${bare.url}/v2/echo/status/${job.id}`, headers, bareAgent),
      THROUGHPUT_CONCURRENCY,
    );
    await Promise.all([bareAgent.close(), emuAgent.close()]);

    return [
      {
        name: `Client overhead: status calls/s, RunpodClient (rateLimits off, concurrency ${OVERHEAD_CONCURRENCY})`,
        value: overhead.a,
        unit: "req/s",
        peer: "raw undici.request",
        peerValue: overhead.b,
        ratio: overhead.ratio,
        target: ">= 0.8x raw undici",
        meetsTarget: overhead.ratio >= 0.8,
      },
      {
        name: `Emulator throughput: status requests/s (rate limits off, concurrency ${THROUGHPUT_CONCURRENCY})`,
        value: throughput.a,
        unit: "req/s",
        peer: "bare node:http server",
        peerValue: throughput.b,
        ratio: throughput.ratio,
      },
    ];
  } finally {
    await bare?.close();
    await emu.close();
  }
}

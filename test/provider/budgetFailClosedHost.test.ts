/**
 * Budgets fail closed, through Pulumi's own dynamic-provider host with `__provider` from the
 * INSTALLED package, against a scripted REST v2 catalog on 127.0.0.1:
 *
 * - a list price that cannot price anything (negative, zero, missing) fails a budgeted check naming
 *   the GPU type and the price (before: -100 made the stack's sum negative, so an 8 × H100 pod at
 *   21.52 USD/h passed a 10 USD/h budget, and 0 passed any budget);
 * - `RUNPOD_MAX_HOURLY_USD` (or `runpod:maxHourlyUsd`) set blank or to a non-decimal (`" 0x10 "`)
 *   fails naming it (before: blank turned the budget off, and `0x10` was read as 16);
 * - the bound is inclusive: a ceiling, or a stack's sum, exactly at the budget passes, one cent
 *   over fails;
 * - a catalog that never answers fails a budgeted check after the catalog's bound, saying what
 *   could not be judged, and the host keeps that outcome: the next check sends no request
 *   (before: six tries of 60 s, 376 s, again for every check). The bound is 10 s; this host's is
 *   {@link SHORT_READ_BOUND_MS} (`fastWaits.cjs`), so the test does not wait out 10 real seconds
 *   (the 10 s itself is checked on a fake clock in `catalogBound.test.ts`).
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const projectDir = inject("installedProjectDir");
const API_KEY = "budget-closed-key-8d2c";
const H100 = "NVIDIA H100 80GB HBM3";
/** The catalog's read bound in the host whose catalog never answers, ms (the provider's: 10 s). */
const SHORT_READ_BOUND_MS = 500;
/** The preload that sets it (`PROVIDER_HOST_READ_BOUND_MS`). */
const FAST_WAITS = path.join(__dirname, "..", "support", "fastWaits.cjs");

/** The catalog: one sound price, and one of each kind that cannot price anything. */
const GPUS = [
  { id: H100, name: "H100 SXM", pool: "HOPPER_80", price: { secure: 2.69 } },
  { id: "NVIDIA NEGATIVE", name: "negative", pool: null, price: { secure: -100 } },
  { id: "NVIDIA ZERO", name: "zero", pool: null, price: { secure: 0 } },
  { id: "NVIDIA MISSING", name: "missing", pool: null, price: {} },
  { id: "NVIDIA CENT", name: "a cent", pool: null, price: { secure: 0.01 } },
];

let catalog: ScriptedServer;
/** A catalog that receives requests and never answers. */
let silent: ScriptedServer;

beforeAll(async () => {
  catalog = await startScriptedServer({
    fallback: (req) =>
      req.pathname === "/v2/catalog/gpus"
        ? { body: { gpus: GPUS } }
        : { status: 404, body: { title: "not found", status: 404 } },
  });
  silent = await startScriptedServer({ fallback: () => ({ hang: true }) });
});
afterAll(async () => {
  await catalog?.close();
  await silent?.close();
});

/** This process's environment without RUNPOD_* variables, plus `extra`. */
function envWith(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("RUNPOD_")) env[k] = v;
  return { ...env, ...extra };
}

/** A host on `restUrl` with `config` (and `env` for the host process), closed after `fn`. */
async function withHost(
  opts: { restUrl?: string; config?: Record<string, string>; env?: Record<string, string> },
  fn: (host: ProviderHost) => Promise<void>,
): Promise<void> {
  const host = await startProviderHost({ projectDir, ...(opts.env ? { env: envWith(opts.env) } : {}) });
  try {
    await host.configure({
      "runpod:apiKey": API_KEY,
      "runpod:restUrl": `${opts.restUrl ?? catalog.url}/v2`,
      ...opts.config,
    });
    await fn(host);
    expect(host.stderr()).not.toContain(API_KEY);
  } finally {
    await host.close();
  }
}

const pod = (name: string, gpu: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: "acme/dev:1",
  gpu: { id: gpu, count: 1 },
  __urn: urnFor("Pod", name),
  ...extra,
});
const check = (host: ProviderHost, props: ReturnType<typeof pod>) =>
  host.check(urnFor("Pod", props.name), {}, props);
const cannotWorkOut = (name: string, which: string, why: string) =>
  `Pod "${name}": ${which} applies, but its hourly ceiling cannot be worked out: ${why}. Nothing was created or changed.`;

describe("a list price that cannot price anything, under a budget", () => {
  it("fails the check naming the GPU type and the price, so it never lowers the stack's sum", async () => {
    await withHost({ config: { "runpod:maxHourlyUsd": "10" } }, async (host) => {
      const rows: [string, string][] = [
        ["NVIDIA NEGATIVE", "the catalog gives it a secure pod price of -100 USD/h, not a price above 0"],
        ["NVIDIA ZERO", "the catalog gives it a secure pod price of 0 USD/h, not a price above 0"],
        ["NVIDIA MISSING", "the catalog gives it no secure pod price"],
      ];
      for (const [gpu, why] of rows) {
        const name = `pod-${gpu.split(" ")[1]?.toLowerCase()}`;
        const { failures } = await check(host, pod(name, gpu));
        expect(failures).toEqual([
          {
            property: "",
            reason: cannotWorkOut(
              name,
              "runpod:maxHourlyUsd",
              `no list price for GPU type ${JSON.stringify(gpu)}: ${why}`,
            ),
          },
        ]);
      }
      // The case: with -100 counted, 8 × H100 (21.52 USD/h) passed a 10 USD/h budget.
      const { failures } = await check(host, pod("h100s", H100, { gpu: { id: H100, count: 8 } }));
      expect(failures).toHaveLength(1);
      expect(failures[0]?.reason).toContain(
        'runpod:maxHourlyUsd is 10 USD/h, but the hourly ceilings of this deployment\'s RunPod resources add up to 21.52 USD/h (list prices), largest first: Pod "h100s" 21.52 USD/h',
      );
    });
  });

  it("fails a pod's own maxHourlyUsd the same way (a price of 0 passed any budget)", async () => {
    await withHost({}, async (host) => {
      const { failures } = await check(host, pod("zero-own", "NVIDIA ZERO", { maxHourlyUsd: 1 }));
      expect(failures).toEqual([
        {
          property: "",
          reason: cannotWorkOut(
            "zero-own",
            "maxHourlyUsd",
            'no list price for GPU type "NVIDIA ZERO": the catalog gives it a secure pod price of 0 USD/h, not a price above 0',
          ),
        },
      ]);
    });
  });
});

describe("a stack budget that is not a plain decimal", () => {
  const h100 = () => pod("one", H100);
  it.each([
    [
      "RUNPOD_MAX_HOURLY_USD set empty",
      { env: { RUNPOD_MAX_HOURLY_USD: "" } },
      "RUNPOD_MAX_HOURLY_USD",
      '""',
    ],
    [
      "RUNPOD_MAX_HOURLY_USD set to hex",
      { env: { RUNPOD_MAX_HOURLY_USD: " 0x10 " } },
      "RUNPOD_MAX_HOURLY_USD",
      '" 0x10 "',
    ],
    [
      "runpod:maxHourlyUsd set to hex",
      { config: { "runpod:maxHourlyUsd": " 0x10 " } },
      "runpod:maxHourlyUsd",
      '" 0x10 "',
    ],
  ] as const)("%s: fails check naming it", async (_what, opts, name, shown) => {
    await withHost(opts, async (host) => {
      const { failures } = await check(host, h100());
      const blank = shown === '""' ? `; to have no budget, unset ${name}` : "";
      expect(failures).toEqual([
        {
          property: "",
          reason: `${name} must be a number of US dollars an hour, at least 0 (got ${shown})${blank}`,
        },
      ]);
    });
  });
});

describe("the budget's bound is inclusive", () => {
  it("passes a ceiling and a stack's sum exactly at the budget, and fails each one cent over", async () => {
    await withHost({ config: { "runpod:maxHourlyUsd": "21.52" } }, async (host) => {
      // 8 × 2.69 = 21.52: at its own maxHourlyUsd and at the stack's budget.
      const eight = (extra: Record<string, unknown>) =>
        pod("eight", H100, { gpu: { id: H100, count: 8 }, ...extra });
      expect((await check(host, eight({ maxHourlyUsd: 21.52 }))).failures).toEqual([]);
      // A cent more in the stack: the sum is 21.53.
      const cent = await check(host, pod("cent", "NVIDIA CENT"));
      expect(cent.failures).toHaveLength(1);
      expect(cent.failures[0]?.reason).toContain(
        'runpod:maxHourlyUsd is 21.52 USD/h, but the hourly ceilings of this deployment\'s RunPod resources add up to 21.53 USD/h (list prices), largest first: Pod "eight" 21.52 USD/h',
      );
      // The same pod under its own budget one cent lower.
      const over = await check(host, eight({ maxHourlyUsd: 21.51 }));
      expect(over.failures).toEqual([
        {
          property: "maxHourlyUsd",
          reason:
            'Pod "eight": its hourly ceiling 21.52 USD/h (one pod at 21.52 USD/h, dearest of candidates "NVIDIA H100 80GB HBM3" × 8 GPUs, list prices) ' +
            "is over maxHourlyUsd 21.51 USD/h. Nothing was created or changed. Lower its GPU count or GPU types (gpu.id, fallbackGpuIds), or raise maxHourlyUsd.",
        },
      ]);
    });
  });
});

describe("a catalog that never answers", () => {
  it("fails a budgeted check after the catalog's bound, saying what it could not judge, and the next check sends no request", async () => {
    const env = {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${JSON.stringify(FAST_WAITS)}`.trim(),
      PROVIDER_HOST_READ_BOUND_MS: String(SHORT_READ_BOUND_MS),
    };
    const config = { "runpod:maxHourlyUsd": "50" };
    await withHost({ restUrl: silent.url, config, env }, async (host) => {
      const why =
        "the catalog's prices could not be read (GET /v2/catalog/gpus did not answer within " +
        `${SHORT_READ_BOUND_MS / 1000} s), so nothing was priced`;
      const first = await check(host, pod("first", H100));
      expect(first.failures).toEqual([
        { property: "", reason: cannotWorkOut("first", "runpod:maxHourlyUsd", why) },
      ]);
      expect(silent.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual(["GET /v2/catalog/gpus"]);
      const second = await check(host, pod("second", H100));
      expect(second.failures).toEqual([
        { property: "", reason: cannotWorkOut("second", "runpod:maxHourlyUsd", why) },
      ]);
      expect(silent.requests).toHaveLength(1);
    });
  });
});

/**
 * `check`'s catalog reads are bounded and kept for the host: in process (the operations the
 * provider host runs), against a scripted REST v2 service on 127.0.0.1 whose catalog never
 * answers, timed on a fake clock given as the settings' clock. A check waits at most
 * `CATALOG_READ_BOUND_MS` (10 s) of that clock for the catalog in all (the data centres and the
 * prices are read at once), says what it could not judge, and a second check on the same host
 * sends no new request (the failure is kept).
 *
 * Failed before: the price read used the host's client (60 s a try, six tries, on the real clock,
 * 376 s for a catalog that never answers) and a failed read was read again by every check.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunpodSettings, resolveSettings } from "../../src/provider/config";
import { resetLedger } from "../../src/provider/cost/budget";
import { CATALOG_READ_BOUND_MS, resetCatalogCache } from "../../src/provider/cost/catalog";
import { operations as podOperations } from "../../src/provider/pod/operations";
import { operations as endpointOperations } from "../../src/provider/serverlessEndpoint/operations";
import { FakeClock } from "../support/fakeClock";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

let server: ScriptedServer;
let clock: FakeClock;
/** Waiters for a catalog request of a path (the service never answers it). */
let waiters: { path: string; resolve: () => void }[] = [];

beforeEach(async () => {
  waiters = [];
  server = await startScriptedServer({
    fallback: (req) => {
      if (!req.pathname.startsWith("/v2/catalog/")) return { status: 404, body: { title: "not found" } };
      for (const w of waiters.filter((x) => x.path === req.pathname)) w.resolve();
      return { hang: true };
    },
  });
  clock = new FakeClock();
});
afterEach(async () => {
  resetCatalogCache();
  resetLedger();
  await server.close();
});

/** Resolves once the service has received a request for `path` (now, or already). */
function received(path: string): Promise<void> {
  if (server.requests.some((r) => r.pathname === path)) return Promise.resolve();
  return new Promise<void>((resolve) => waiters.push({ path, resolve }));
}

/** Settings of one host: the scripted service, a stack budget when given, and the fake clock. */
function withClock(budget?: string): RunpodSettings {
  const config: Record<string, string> = {
    "runpod:apiKey": "catalog-bound-key",
    "runpod:restUrl": `${server.url}/v2`,
    ...(budget === undefined ? {} : { "runpod:maxHourlyUsd": budget }),
  };
  const s = resolveSettings({ get: (key) => config[key] }, {});
  s.clock = clock;
  return s;
}

/** Tracks whether `promise` has settled, for "not yet" checks on the fake clock. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  return { promise, settled: () => done };
}

/** Moves the clock to just before the bound (still waiting), then to it, and returns the outcome. */
async function atTheBound<T>(check: { promise: Promise<T>; settled: () => boolean }): Promise<T> {
  await clock.advance(CATALOG_READ_BOUND_MS - 1);
  expect(check.settled()).toBe(false);
  await clock.advance(1);
  return check.promise;
}

const pod = (extra: Record<string, unknown> = {}) => ({
  name: "trainer",
  image: "acme/dev:1",
  gpu: { id: "NVIDIA H100 80GB HBM3", count: 8 },
  ...extra,
});
const catalogReads = () => server.requests.filter((r) => r.pathname.startsWith("/v2/catalog/"));

const NOT_PRICED =
  "the catalog's prices could not be read (GET /v2/catalog/gpus did not answer within 10 s), so nothing was priced";

describe("check's catalog read when the catalog never answers", () => {
  it("fails a budgeted pod's check at 10 s of the settings' clock, saying what it could not judge, and keeps the failure for the host", async () => {
    expect(CATALOG_READ_BOUND_MS).toBe(10_000);
    const s = withClock("50");
    const first = tracked(podOperations.check(s, {}, pod()));
    await received("/v2/catalog/gpus");
    const result = await atTheBound(first);
    const failure = {
      property: "",
      reason:
        `Pod "trainer": runpod:maxHourlyUsd applies, but its hourly ceiling cannot be worked out: ${NOT_PRICED}. ` +
        "Nothing was created or changed.",
    };
    expect(result.failures).toEqual([failure]);
    expect(catalogReads().map((r) => r.pathname)).toEqual(["/v2/catalog/gpus"]);

    // The same host checks another pod and an endpoint: the kept failure, no new request, no wait.
    const again = await podOperations.check(s, {}, pod({ name: "second" }));
    expect(again.failures).toEqual([{ ...failure, reason: failure.reason.replace('"trainer"', '"second"') }]);
    const endpoint = await endpointOperations.check(
      s,
      {},
      {
        name: "api",
        type: "QUEUE",
        image: "acme/api:1",
        gpu: { pools: ["ADA_24"] },
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        workers: { max: 2 },
      },
    );
    expect(endpoint.failures).toEqual([
      {
        property: "",
        reason:
          `ServerlessEndpoint "api": runpod:maxHourlyUsd applies, but its hourly ceiling cannot be worked out: ${NOT_PRICED}. ` +
          "Nothing was created or changed.",
      },
    ]);
    expect(catalogReads()).toHaveLength(1);
    expect(clock.now()).toBe(CATALOG_READ_BOUND_MS);
  });

  it("passes an unbudgeted pod at the bound with a figure that says it is not priced, never $0", async () => {
    const first = tracked(podOperations.check(withClock(), {}, pod()));
    await received("/v2/catalog/gpus");
    const result = await atTheBound(first);
    expect(result.failures).toEqual([]);
    expect(result.inputs.hourlyCost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: NOT_PRICED,
    });
  });

  it("reads the data centres and the prices at once: a check with both waits one bound in all, once per host", async () => {
    const s = withClock();
    const first = tracked(podOperations.check(s, {}, pod({ dataCenterIds: ["MARS-1"] })));
    await received("/v2/catalog/datacenters");
    // Both reads are under way on the clock (one bound each, from the same moment), not one after the other.
    expect(clock.pending()).toBe(2);
    await received("/v2/catalog/gpus");
    const result = await atTheBound(first);
    // The data centres are a courtesy: nothing judged when unread.
    expect(result.failures).toEqual([]);
    expect(result.inputs.hourlyCost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: NOT_PRICED,
    });
    expect(
      catalogReads()
        .map((r) => r.pathname)
        .sort(),
    ).toEqual(["/v2/catalog/datacenters", "/v2/catalog/gpus"]);
    const again = await podOperations.check(s, {}, pod({ name: "again", dataCenterIds: ["VENUS-2"] }));
    expect(again.failures).toEqual([]);
    expect(catalogReads()).toHaveLength(2);
  });
});

/**
 * Prices and budgets of ServerlessEndpoint through Pulumi's own dynamic-provider host, with
 * `__provider` from the INSTALLED package, against the emulator's catalog (REST v2). The budgets
 * refuse in `check`: the proxy in front of the emulator sees no write, and no endpoint exists.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { GpuType } from "../../src/client";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { type ProviderHost, startProviderHost, UNKNOWN, urnFor } from "../support/providerHost.mts";
import { endpointHostKit } from "./serverlessEndpointHostKit";

const API_KEY = "cost-host-key-3e9a1f";
const kit = endpointHostKit({ apiKey: API_KEY, secrets: [API_KEY], rolloutMs: 1_000 });
let gpus: GpuType[];
/** Serverless price per GPU-hour of the dearest and the cheapest GPU type of a pool. */
const poolRates = (pool: string) => {
  const prices = gpus.filter((g) => g.pool === pool).map((g) => g.price?.serverless as number);
  return { dearest: Math.max(...prices), cheapest: Math.min(...prices) };
};
const round = (n: number) => Math.round(n * 1e6) / 1e6;

let n = 0;
const fresh = (base: string) => `cost-${base}-${++n}`;
const endpoint = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "QUEUE",
  image: "acme/api:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { min: 0, max: 2 },
  ...extra,
});
const writes = () => kit.proxy.seen.filter((r) => r.method !== "GET");

beforeAll(async () => {
  await kit.start();
  gpus = await kit.client.catalog.gpus();
});
afterAll(() => kit.stop());

describe("ServerlessEndpoint prices in the provider host", () => {
  it("outputs hourlyCost as the catalog's price × GPUs per worker × workers.min and workers.max", async () => {
    const name = fresh("create");
    const props = endpoint(name, {
      gpu: { pools: ["AMPERE_24", "ADA_24"], count: 2 },
      workers: { min: 1, max: 3 },
      rollout: "ignore",
    });
    const { outs, inputs } = await kit.create(name, props);
    const cheapest = Math.min(poolRates("AMPERE_24").cheapest, poolRates("ADA_24").cheapest);
    const dearest = Math.max(poolRates("AMPERE_24").dearest, poolRates("ADA_24").dearest);
    const expected = {
      floorUsd: round(1 * 2 * cheapest),
      ceilingUsd: round(3 * 2 * dearest),
      ratePerWorkerUsd: round(2 * dearest),
    };
    expect(inputs.hourlyCost).toEqual(expected);
    expect(outs.hourlyCost).toEqual(expected);
  });

  it("shows the old and the new ceiling when an edit raises workers.max", async () => {
    const name = fresh("edit");
    const rate = poolRates("ADA_24").dearest;
    const before = await kit.checked(name, endpoint(name, { workers: { max: 1 } }));
    const after = await kit.checked(name, endpoint(name, { workers: { max: 4 } }), before);
    expect(before.hourlyCost.ceilingUsd).toBe(round(rate));
    expect(after.hourlyCost.ceilingUsd).toBe(round(4 * rate));
  });

  it("leaves the figure unknown, not 0, when workers are unknown in a preview", async () => {
    const name = fresh("unknown");
    const inputs = await kit.checked(name, endpoint(name, { workers: { max: UNKNOWN } }));
    expect(inputs.hourlyCost).toBe(UNKNOWN);
  });

  it("says there is no list price for a pool with no priced GPU type, never $0", async () => {
    const name = fresh("unpriced");
    const inputs = await kit.checked(name, endpoint(name, { gpu: { pools: ["EMULATOR"] } }));
    expect(inputs.hourlyCost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: expect.stringContaining("no list price for GPU pool EMULATOR"),
    });
  });

  it("refuses an endpoint whose ceiling is over its maxHourlyUsd in check, with no write", async () => {
    const name = fresh("own-budget");
    const rate = poolRates("ADA_24").dearest;
    const writesBefore = writes().length;
    const { failures } = await kit.host.check(
      kit.urn(name),
      {},
      endpoint(name, { workers: { max: 4 }, maxHourlyUsd: 1 }),
    );
    expect(failures).toEqual([
      {
        property: "maxHourlyUsd",
        reason: expect.stringContaining(
          `ServerlessEndpoint "${name}": its hourly ceiling ${round(4 * rate)} USD/h (workers.max 4 × ${round(rate)} USD/h per worker, list prices) is over maxHourlyUsd 1 USD/h`,
        ),
      },
    ]);
    expect(writes().length).toBe(writesBefore);
    expect((await kit.client.serverless.list()).filter((e) => e.name === name)).toEqual([]);
  });

  it("refuses a budget on an endpoint whose GPU has no list price", async () => {
    const name = fresh("own-unpriced");
    const { failures } = await kit.host.check(
      kit.urn(name),
      {},
      endpoint(name, { gpu: { pools: ["EMULATOR"] }, maxHourlyUsd: 100 }),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]?.reason).toContain(
      "maxHourlyUsd applies, but its hourly ceiling cannot be worked out",
    );
    expect(failures[0]?.reason).toContain("no list price for GPU pool EMULATOR");
  });

  it.each([-1, "ten"])("refuses maxHourlyUsd %j in check, naming it", async (value) => {
    const name = fresh("bad-budget");
    const { failures } = await kit.host.check(kit.urn(name), {}, endpoint(name, { maxHourlyUsd: value }));
    expect(failures.map((f) => f.reason).join("\n")).toContain(
      "maxHourlyUsd must be a number of US dollars an hour, at least 0",
    );
  });
});

describe("the stack budget runpod:maxHourlyUsd", () => {
  let host: ProviderHost;
  let budget: number;
  let rate: number;
  beforeAll(async () => {
    rate = poolRates("ADA_24").dearest;
    budget = round(3 * rate);
    host = await startProviderHost({ projectDir: inject("installedProjectDir") });
    await host.configure({
      "runpod:apiKey": API_KEY,
      "runpod:restUrl": `${kit.proxy.url}/v2`,
      "runpod:serverlessUrl": kit.emu.serverlessUrl,
      "runpod:maxHourlyUsd": String(budget),
    });
  });
  afterAll(async () => {
    kit.expectNoSecret(host.stderr());
    await host.close();
  });

  it("counts each resource once, then refuses the one that takes the sum over, naming the key and every part", async () => {
    const a = fresh("stack-a");
    const b = fresh("stack-b");
    const writesBefore = writes().length;
    // Checked twice (a preview, then the up): counted once, 2 × rate of a budget of 3 × rate.
    expect((await host.check(kit.urn(a), {}, { ...endpoint(a), __urn: kit.urn(a) })).failures).toEqual([]);
    expect((await host.check(kit.urn(a), {}, { ...endpoint(a), __urn: kit.urn(a) })).failures).toEqual([]);
    const { failures } = await host.check(kit.urn(b), {}, { ...endpoint(b), __urn: kit.urn(b) });
    expect(failures).toHaveLength(1);
    const reason = failures[0]?.reason ?? "";
    expect(reason).toContain(`runpod:maxHourlyUsd is ${budget} USD/h`);
    expect(reason).toContain(`add up to ${round(4 * rate)} USD/h`);
    expect(reason).toContain(`ServerlessEndpoint "${a}" ${round(2 * rate)} USD/h`);
    expect(reason).toContain(`ServerlessEndpoint "${b}" ${round(2 * rate)} USD/h`);
    expect(writes().length).toBe(writesBefore);
  });
});

describe("a stack budget that is not a number", () => {
  it("fails check naming runpod:maxHourlyUsd", async () => {
    const host = await startProviderHost({ projectDir: inject("installedProjectDir") });
    try {
      await host.configure({
        "runpod:apiKey": API_KEY,
        "runpod:restUrl": `${kit.proxy.url}/v2`,
        "runpod:maxHourlyUsd": "NaN",
      });
      const name = fresh("stack-bad");
      const { failures } = await host.check(kit.urn(name), {}, endpoint(name));
      expect(failures).toEqual([
        {
          property: "",
          reason: 'runpod:maxHourlyUsd must be a number of US dollars an hour, at least 0 (got "NaN")',
        },
      ]);
    } finally {
      await host.close();
    }
  });
});

describe("NetworkVolume's monthly cost in the provider host", () => {
  it("shows monthlyCostUsd in the preview: $0.07 per GB-month for the first 1000 GB, $0.05 beyond", async () => {
    const volume = { name: fresh("volume"), size: 1500, dataCenterId: "EU-RO-1" };
    const { inputs, failures } = await kit.host.check(urnFor("NetworkVolume", volume.name), {}, volume);
    expect(failures).toEqual([]);
    expect(inputs.monthlyCostUsd).toBe(95);
  });

  it("leaves the figure unknown while the size is unknown", async () => {
    const volume = { name: fresh("volume"), size: UNKNOWN, dataCenterId: "EU-RO-1" };
    const { inputs } = await kit.host.check(urnFor("NetworkVolume", volume.name), {}, volume);
    expect(inputs.monthlyCostUsd).toBe(UNKNOWN);
  });
});

describe("what a job cost", () => {
  it("records JobRun costUsd as the execution time × the hourly price of the GPU its worker ran on", async () => {
    // The emulator places workers on the first pool's first GPU type (an RTX A5000 of AMPERE_24),
    // cheaper than the dearest candidate (ADA_24's RTX 4090): the run is priced at the placed one,
    // as the release check after the job (rollout: "wait") read it.
    const placed = gpus.find((g) => g.id === "NVIDIA RTX A5000")?.price?.serverless as number;
    const rate = 2 * placed;
    expect(rate).toBeLessThan(2 * poolRates("ADA_24").dearest);
    const ep = await kit.client.serverless.create({
      name: fresh("job-cost"),
      type: "QUEUE",
      image: "acme/api:1",
      gpu: { pools: ["AMPERE_24", "ADA_24"], count: 2 },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { min: 0, max: 1 },
    });
    const props = { endpointId: ep.id, input: { sleepMs: 1_800 }, rollout: "wait" };
    const { inputs } = await kit.host.check(urnFor("JobRun", "job-cost"), {}, props);
    const run = kit.host.create(urnFor("JobRun", "job-cost"), inputs);
    let settled = false;
    void run
      .finally(() => {
        settled = true;
      })
      .catch(() => {});
    // The emulator runs on a manual clock: move it on until the job has run.
    while (!settled) {
      await kit.clock.advance(WORKER_START_MS);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { outs } = await run;
    expect(outs.status).toBe("COMPLETED");
    expect(outs.executionTime).toBeGreaterThanOrEqual(1_800);
    const { workers } = await kit.client.serverless.workers(ep.id);
    expect(workers.find((w) => w.id === outs.workerId)).toMatchObject({
      gpuTypeId: "NVIDIA RTX A5000",
      gpuCount: 2,
    });
    expect(outs.costUsd).toBe(round((outs.executionTime / 3_600_000) * rate));
  });
});

describe("Pod prices and budgets in the provider host", () => {
  const podUrn = (name: string) => urnFor("Pod", name);
  const secure = (id: string) => gpus.find((g) => g.id === id)?.price?.secure as number;
  let stocked: string;
  let other: string;
  beforeAll(async () => {
    const pods = await kit.client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] } as never);
    stocked = pods.find((g) => g.availability === "HIGH")?.id ?? "";
    other = gpus.find((g) => g.id !== stocked && secure(g.id) !== secure(stocked))?.id ?? "";
    expect(stocked).not.toBe("");
    expect(other).not.toBe("");
  });
  const pod = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    image: "acme/pod:1",
    gpu: { id: stocked, count: 2 },
    fallbackGpuIds: [other],
    waitFor: "none",
    ...extra,
  });

  it("outputs hourlyCost as the candidates' secure pod price × gpu.count, floor the cheapest, ceiling the dearest", async () => {
    const name = fresh("pod");
    const { inputs, failures } = await kit.host.check(podUrn(name), {}, pod(name));
    expect(failures).toEqual([]);
    const rates = [2 * secure(stocked), 2 * secure(other)];
    const expected = {
      floorUsd: round(Math.min(...rates)),
      ceilingUsd: round(Math.max(...rates)),
      ratePerWorkerUsd: round(Math.max(...rates)),
    };
    expect(inputs.hourlyCost).toEqual(expected);
    const { outs } = await kit.host.create(podUrn(name), inputs);
    expect(outs.hourlyCost).toEqual(expected);
  });

  it("says there is no list price for a GPU type the catalog does not price, never $0", async () => {
    const name = fresh("pod-unpriced");
    const { inputs } = await kit.host.check(podUrn(name), {}, pod(name, { fallbackGpuIds: ["NVIDIA B999"] }));
    expect(inputs.hourlyCost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: expect.stringContaining('no list price for GPU type "NVIDIA B999"'),
    });
  });

  it("refuses a pod whose ceiling is over its maxHourlyUsd in check, naming the figures and candidates, with no write", async () => {
    const name = fresh("pod-budget");
    const ceiling = round(2 * Math.max(secure(stocked), secure(other)));
    const writesBefore = writes().length;
    const { failures } = await kit.host.check(podUrn(name), {}, pod(name, { maxHourlyUsd: 0.01 }));
    expect(failures).toHaveLength(1);
    expect(failures[0]?.property).toBe("maxHourlyUsd");
    const reason = failures[0]?.reason ?? "";
    expect(reason).toContain(`Pod "${name}": its hourly ceiling ${ceiling} USD/h`);
    expect(reason).toContain("over maxHourlyUsd 0.01 USD/h");
    expect(reason).toContain(JSON.stringify(stocked));
    expect(reason).toContain(JSON.stringify(other));
    expect(writes().length).toBe(writesBefore);
    expect((await kit.client.pods.list()).filter((p) => p.name === name)).toEqual([]);
  });
});

describe("the stack budget over an endpoint and a pod", () => {
  it("sums the endpoint's and the pod's ceilings once each, and refuses past the budget with no write", async () => {
    const podGpu = gpus.find((g) => typeof g.price?.secure === "number") as GpuType;
    const podRate = round(podGpu.price?.secure as number);
    const endpointRate = round(2 * poolRates("ADA_24").dearest);
    const host = await startProviderHost({ projectDir: inject("installedProjectDir") });
    try {
      await host.configure({
        "runpod:apiKey": API_KEY,
        "runpod:restUrl": `${kit.proxy.url}/v2`,
        "runpod:maxHourlyUsd": String(round(endpointRate + podRate)),
      });
      const e = fresh("mixed-endpoint");
      const p = fresh("mixed-pod");
      const q = fresh("mixed-pod-over");
      const podProps = (name: string) => ({
        name,
        image: "acme/pod:1",
        gpu: { id: podGpu.id },
        __urn: urnFor("Pod", name),
      });
      const writesBefore = writes().length;
      const checkEndpoint = () => host.check(kit.urn(e), {}, { ...endpoint(e), __urn: kit.urn(e) });
      const checkPod = () => host.check(urnFor("Pod", p), {}, podProps(p));
      // Each checked twice (a preview, then the up): counted once, the sum exactly at the budget.
      for (const check of [checkEndpoint, checkPod, checkEndpoint, checkPod]) {
        expect((await check()).failures).toEqual([]);
      }
      const { failures } = await host.check(urnFor("Pod", q), {}, podProps(q));
      expect(failures).toHaveLength(1);
      const reason = failures[0]?.reason ?? "";
      expect(reason).toContain(`add up to ${round(endpointRate + 2 * podRate)} USD/h`);
      expect(reason).toContain(`ServerlessEndpoint "${e}" ${endpointRate} USD/h`);
      expect(reason).toContain(`Pod "${p}" ${podRate} USD/h`);
      expect(reason).toContain(`Pod "${q}" ${podRate} USD/h`);
      // Largest first (a tie keeps the order checked), and which check took the sum over.
      const byRate = [
        { label: `ServerlessEndpoint "${e}"`, rate: endpointRate },
        { label: `Pod "${p}"`, rate: podRate },
        { label: `Pod "${q}"`, rate: podRate },
      ].sort((a, b) => b.rate - a.rate);
      const listed = byRate.map((part) => reason.indexOf(`${part.label} ${part.rate} USD/h`));
      expect(listed).toEqual([...listed].sort((a, b) => a - b));
      expect(reason).toContain(`(list prices), largest first: ${byRate[0]?.label} `);
      expect(reason).toContain(
        `Pod "${q}"'s check took the sum over the budget. Nothing was created or changed.`,
      );
      expect(writes().length).toBe(writesBefore);
    } finally {
      await host.close();
    }
  });
});

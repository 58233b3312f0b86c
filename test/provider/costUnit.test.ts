/**
 * The price arithmetic and the budget texts, with no network: list prices × counts, the floor at
 * the cheapest candidate and the ceiling at the dearest, prices the catalog does not give, bad
 * budgets, and the stack's sum counting each resource once.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { resolveCostSettings } from "../../src/provider/config";
import {
  ceilingsWith,
  judgeBudgets,
  parseBudget,
  recordCeiling,
  resetLedger,
  resourceBudgetFailure,
  stackBudgetFailure,
} from "../../src/provider/cost/budget";
import {
  endpointHourlyCost,
  placedWorkerRate,
  podHourlyCost,
  runCostUsd,
} from "../../src/provider/cost/prices";
import { volumeMonthlyCost } from "../../src/provider/cost/volume";

const gpus = [
  { id: "NVIDIA GeForce RTX 4090", pool: "ADA_24", price: { serverless: 1.1 } },
  { id: "NVIDIA RTX A5000", pool: "AMPERE_24", price: { serverless: 0.68 } },
  { id: "NVIDIA L4", pool: "AMPERE_24", price: { serverless: 0.6 } },
  { id: "NVIDIA H200", pool: "HOPPER_141", price: { secure: 3.59 } },
];
const cpus = [
  { id: "cpu3c", price: { serverlessPerVcpu: 0.03 } },
  { id: "cpu5c", price: { serverlessPerVcpu: 0.045 } },
  { id: "cpuX", price: {} },
];

afterEach(() => resetLedger());

describe("an endpoint's hourly cost", () => {
  it("is the pool's price times GPUs per worker, times workers.min for the floor and workers.max for the ceiling", () => {
    const cost = endpointHourlyCost(
      { gpu: { pools: ["ADA_24"], count: 2 }, workers: { min: 1, max: 4 } },
      { gpus },
    );
    expect(cost).toEqual({ floorUsd: 2.2, ceilingUsd: 8.8, ratePerWorkerUsd: 2.2 });
  });

  it("puts the floor at the cheapest GPU type of its pools and the ceiling at the dearest", () => {
    const cost = endpointHourlyCost(
      { gpu: { pools: ["AMPERE_24", "ADA_24"] }, workers: { min: 2, max: 3 } },
      { gpus },
    );
    expect(cost).toEqual({ floorUsd: 1.2, ceilingUsd: 3.3, ratePerWorkerUsd: 1.1 });
  });

  it("leaves out the excluded GPU types", () => {
    const cost = endpointHourlyCost(
      { gpu: { pools: ["AMPERE_24"], excludedTypes: ["NVIDIA RTX A5000"] }, workers: { min: 1, max: 1 } },
      { gpus },
    );
    expect(cost).toEqual({ floorUsd: 0.6, ceilingUsd: 0.6, ratePerWorkerUsd: 0.6 });
  });

  it("prices a CPU endpoint by its flavour's vCPU price times vcpuCount", () => {
    const cost = endpointHourlyCost(
      {
        cpu: [
          { id: "cpu3c", vcpuCount: 4 },
          { id: "cpu5c", vcpuCount: 8 },
        ],
        workers: { max: 3 },
      },
      { cpus },
    );
    expect(cost).toEqual({ floorUsd: 0, ceilingUsd: 1.08, ratePerWorkerUsd: 0.36 });
  });

  it("says plainly which GPU type has no list price, with null figures rather than 0", () => {
    const cost = endpointHourlyCost({ gpu: { pools: ["HOPPER_141"] }, workers: { max: 2 } }, { gpus });
    expect(cost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: expect.stringContaining('no list price for GPU type "NVIDIA H200" (pool HOPPER_141)'),
    });
  });

  it("says plainly that a pool with no GPU type of the catalog has no list price", () => {
    const cost = endpointHourlyCost({ gpu: { pools: ["EMULATOR"] }, workers: { max: 2 } }, { gpus });
    expect(cost).toMatchObject({
      ceilingUsd: null,
      note: expect.stringContaining("no list price for GPU pool EMULATOR"),
    });
  });

  it("says plainly that a CPU flavour without a serverless price has no list price", () => {
    const cost = endpointHourlyCost({ cpu: [{ id: "cpuX", vcpuCount: 2 }], workers: { max: 1 } }, { cpus });
    expect(cost).toMatchObject({ note: expect.stringContaining('no list price for CPU flavour "cpuX"') });
  });

  it("is unknown, not 0, when the workers or the GPUs are unknown in a preview", () => {
    expect(endpointHourlyCost({ gpu: { pools: ["ADA_24"] }, workers: { max: UNKNOWN } }, { gpus })).toBe(
      UNKNOWN,
    );
    expect(endpointHourlyCost({ gpu: UNKNOWN as never, workers: { max: 2 } }, { gpus })).toBe(UNKNOWN);
  });

  it("is unknown when workers.max is not given (the service decides it)", () => {
    expect(endpointHourlyCost({ gpu: { pools: ["ADA_24"] } }, { gpus })).toBe(UNKNOWN);
  });
});

describe("a run's cost", () => {
  it("is its execution time times the worker's hourly rate", () => {
    expect(runCostUsd(1_800_000, 2.2)).toBe(1.1);
    expect(runCostUsd(1_000, 3.6)).toBe(0.001);
  });
});

describe("a network volume's monthly cost", () => {
  it("is 0.07 USD per GB-month for the first 1000 GB and 0.05 beyond", () => {
    expect(volumeMonthlyCost(100, undefined)).toEqual({ usd: 7 });
    expect(volumeMonthlyCost(1500, "STANDARD")).toEqual({ usd: 95 });
  });

  it("takes the configured rate over the table", () => {
    expect(
      volumeMonthlyCost(100, "HIGH_PERFORMANCE", { value: "0.1", name: "runpod:volumePricePerGbMonth" }),
    ).toEqual({
      usd: 10,
    });
  });

  it("has no list price for a high-performance volume unless the config gives one", () => {
    expect(volumeMonthlyCost(100, "HIGH_PERFORMANCE").note).toContain("no list price for HIGH_PERFORMANCE");
  });

  it("refuses a configured rate that is not a price, naming the key", () => {
    const { failure } = volumeMonthlyCost(10, undefined, {
      value: "cheap",
      name: "runpod:volumePricePerGbMonth",
    });
    expect(failure).toContain("runpod:volumePricePerGbMonth must be a number of US dollars per GB-month");
  });
});

describe("budgets", () => {
  it.each([
    ["-1", '"-1")'],
    ["NaN", '"NaN")'],
    ["ten", '"ten")'],
    ["", '""); to have no budget, unset runpod:maxHourlyUsd'],
    ["   ", '"   "); to have no budget, unset runpod:maxHourlyUsd'],
    // Number() reads these three as 16, 100 and 10.
    [" 0x10 ", '" 0x10 ")'],
    ["1e2", '"1e2")'],
    ["+10", '"+10")'],
    ["Infinity", '"Infinity")'],
  ])("refuses %j as a budget, naming it", (value, shown) => {
    expect(parseBudget(value, "runpod:maxHourlyUsd")).toEqual({
      failure: `runpod:maxHourlyUsd must be a number of US dollars an hour, at least 0 (got ${shown}`,
    });
  });

  it.each([
    ["10", 10],
    [" 12.5 ", 12.5],
    ["0", 0],
    [".5", 0.5],
  ])("reads %j as a plain decimal budget", (value, usd) => {
    expect(parseBudget(value, "runpod:maxHourlyUsd")).toEqual({ usd });
  });

  it("keeps a budget set blank in the environment or the stack config, so check names it (a blank volume price stays unset)", () => {
    const fromEnv = resolveCostSettings(undefined, {
      RUNPOD_MAX_HOURLY_USD: "",
      RUNPOD_VOLUME_PRICE_PER_GB_MONTH: "",
    });
    expect(fromEnv).toEqual({ maxHourlyUsd: "", sources: { maxHourlyUsd: "env" } });
    const fromConfig = resolveCostSettings(
      { get: (key) => (key === "runpod:maxHourlyUsd" ? "" : undefined) },
      { RUNPOD_MAX_HOURLY_USD: "5" },
    );
    expect(fromConfig).toEqual({ maxHourlyUsd: "", sources: { maxHourlyUsd: "config" } });
    expect(resolveCostSettings(undefined, {})).toEqual({ sources: {} });
  });

  it("refuses NaN and negative numbers from a program", () => {
    expect(parseBudget(Number.NaN, "maxHourlyUsd").failure).toContain("maxHourlyUsd must be a number");
    expect(parseBudget(-0.5, "maxHourlyUsd").failure).toContain("(got -0.5)");
  });

  it("reads a number from config text", () => {
    expect(parseBudget(" 12.5 ", "runpod:maxHourlyUsd")).toEqual({ usd: 12.5 });
    expect(parseBudget(undefined, "runpod:maxHourlyUsd")).toEqual({});
  });

  it("names the field, the ceiling, how it is made and the budget when a resource is over its own", () => {
    const text = resourceBudgetFailure(
      'ServerlessEndpoint "api"',
      10,
      17.6,
      "workers.max 8 × 2.2 USD/h per worker",
      "its workers.max",
    );
    expect(text).toContain('ServerlessEndpoint "api": its hourly ceiling 17.6 USD/h');
    expect(text).toContain("Lower its workers.max, or raise maxHourlyUsd.");
    expect(text).toContain("workers.max 8 × 2.2 USD/h per worker");
    expect(text).toContain("over maxHourlyUsd 10 USD/h");
  });

  it("refuses a ceiling of a fraction of a cent under a budget of 0, its own or the stack's", async () => {
    const cost = { floorUsd: 0.004, ceilingUsd: 0.004, ratePerWorkerUsd: 0.004 };
    const pricing = {
      priceable: true,
      canRead: true,
      price: async () => cost,
      how: () => "1 GPU × 0.004 USD/h",
      lower: "its gpu.count",
    };
    const own = await judgeBudgets(
      { settings: undefined, args: { maxHourlyUsd: 0 }, key: "urn:own", label: 'Pod "own"' },
      pricing,
    );
    expect(own.failures.map((f) => f.property)).toEqual(["maxHourlyUsd"]);
    expect(own.failures[0]?.reason).toContain("over maxHourlyUsd 0 USD/h");
    const settings = { cost: resolveCostSettings(undefined, { RUNPOD_MAX_HOURLY_USD: "0" }) };
    const stack = await judgeBudgets({ settings, args: {}, key: "urn:stack", label: 'Pod "stack"' }, pricing);
    expect(stack.failures).toHaveLength(1);
    expect(stack.failures[0]?.reason).toContain("runpod:maxHourlyUsd is 0 USD/h");
  });

  it("counts each resource once in the stack's sum, however often it is checked", () => {
    recordCeiling("urn:a", { label: 'ServerlessEndpoint "a"', ceilingUsd: 4.4 });
    recordCeiling("urn:a", { label: 'ServerlessEndpoint "a"', ceilingUsd: 4.4 });
    const entries = ceilingsWith("urn:b", { label: 'ServerlessEndpoint "b"', ceilingUsd: 2.2 });
    expect(entries.map((e) => e.ceilingUsd)).toEqual([4.4, 2.2]);
    expect(
      ceilingsWith("urn:a", { label: 'ServerlessEndpoint "a"', ceilingUsd: 17.6 }).map((e) => e.ceilingUsd),
    ).toEqual([17.6]);
  });

  it("names the key, the sum and every resource that makes it up when the stack is over its budget", () => {
    const text = stackBudgetFailure(5, [
      { label: 'ServerlessEndpoint "a"', ceilingUsd: 4.4, how: "workers.max 4 × 1.1 USD/h per worker" },
      { label: 'ServerlessEndpoint "b"', ceilingUsd: 2.2 },
    ]);
    expect(text).toContain("runpod:maxHourlyUsd is 5 USD/h");
    expect(text).toContain("add up to 6.6 USD/h");
    expect(text).toContain('ServerlessEndpoint "a" 4.4 USD/h (workers.max 4 × 1.1 USD/h per worker)');
    expect(text).toContain('ServerlessEndpoint "b" 2.2 USD/h');
    expect(text).toContain("RUNPOD_MAX_HOURLY_USD");
  });

  it("lists the parts largest first and names the resource whose check took the sum over", () => {
    const text = stackBudgetFailure(
      5,
      [
        { label: 'ServerlessEndpoint "small"', ceilingUsd: 1.1 },
        { label: 'Pod "big"', ceilingUsd: 23.92 },
        { label: 'ServerlessEndpoint "new"', ceilingUsd: 2.2 },
      ],
      'ServerlessEndpoint "new"',
    );
    expect(text).toBe(
      "runpod:maxHourlyUsd is 5 USD/h, but the hourly ceilings of this deployment's RunPod resources add up to 27.22 USD/h " +
        '(list prices), largest first: Pod "big" 23.92 USD/h; ServerlessEndpoint "new" 2.2 USD/h; ServerlessEndpoint "small" 1.1 USD/h. ' +
        'ServerlessEndpoint "new"\'s check took the sum over the budget. Nothing was created or changed. ' +
        "Raise the budget (pulumi config set runpod:maxHourlyUsd <usd>, or the environment variable RUNPOD_MAX_HOURLY_USD).",
    );
    // The largest part's own check: no second name.
    expect(stackBudgetFailure(5, [{ label: 'Pod "big"', ceilingUsd: 23.92 }], 'Pod "big"')).not.toContain(
      "took the sum over",
    );
  });

  it("advises lowering the largest part in that resource's own terms: a pod's GPUs, not a workers.max", () => {
    const text = stackBudgetFailure(5, [
      { label: 'ServerlessEndpoint "a"', ceilingUsd: 1.1, lower: "its workers.max" },
      {
        label: 'Pod "trainer"',
        ceilingUsd: 23.92,
        lower: "its GPU count or GPU types (gpu.id, fallbackGpuIds)",
      },
    ]);
    expect(text).toContain(
      'Lower the largest part, Pod "trainer": its GPU count or GPU types (gpu.id, fallbackGpuIds); or raise the budget (pulumi config set runpod:maxHourlyUsd <usd>',
    );
    expect(text).not.toContain("workers.max;");
  });
});

describe("list prices that cannot price anything fail closed", () => {
  const H100 = "NVIDIA H100 80GB HBM3";
  const bad = (price: unknown) => [
    { id: H100, pool: "HOPPER_80", price: { secure: price, serverless: price } },
  ];
  const cpuBad = (price: unknown) => [
    { id: "cpu3c", price: { securePerVcpu: price, serverlessPerVcpu: price } },
  ];
  const noFigure = { floorUsd: null, ceilingUsd: null, ratePerWorkerUsd: null };

  it.each([
    [-100, "-100"],
    [0, "0"],
    [Number.NaN, "NaN"],
  ])("gives a price of %s no figure, naming the GPU type or flavour and the price", (price, shown) => {
    expect(podHourlyCost({ gpu: { id: H100, count: 8 } }, { gpus: bad(price) as never })).toEqual({
      ...noFigure,
      note: `no list price for GPU type "${H100}": the catalog gives it a secure pod price of ${shown} USD/h, not a price above 0`,
    });
    expect(
      endpointHourlyCost(
        { gpu: { pools: ["HOPPER_80"] }, workers: { max: 2 } },
        { gpus: bad(price) as never },
      ),
    ).toEqual({
      ...noFigure,
      note: `no list price for GPU type "${H100}" (pool HOPPER_80): the catalog gives it a serverless price of ${shown} USD/h, not a price above 0`,
    });
    expect(podHourlyCost({ cpu: { id: "cpu3c", vcpuCount: 4 } }, { cpus: cpuBad(price) as never })).toEqual({
      ...noFigure,
      note: `no list price for CPU flavour "cpu3c": the catalog gives it a pod vCPU price of ${shown} USD/h, not a price above 0`,
    });
    expect(
      endpointHourlyCost(
        { cpu: [{ id: "cpu3c", vcpuCount: 4 }], workers: { max: 2 } },
        { cpus: cpuBad(price) as never },
      ),
    ).toEqual({
      ...noFigure,
      note: `no list price for CPU flavour "cpu3c": the catalog gives it a serverless vCPU price of ${shown} USD/h, not a price above 0`,
    });
  });

  it.each([-1, 0, Number.NaN])(
    "gives a placed worker priced %s no rate, so a run's cost is never negative or 0",
    (price) => {
      const worker = { gpuTypeId: H100, gpuCount: 2 };
      expect(placedWorkerRate(worker, bad(price) as never)).toBeUndefined();
      expect(placedWorkerRate(worker, bad(1.5) as never)).toBe(3);
    },
  );

  it("says a missing price is missing", () => {
    expect(podHourlyCost({ gpu: { id: H100 } }, { gpus: [{ id: H100, pool: null, price: {} }] })).toEqual({
      ...noFigure,
      note: `no list price for GPU type "${H100}": the catalog gives it no secure pod price`,
    });
  });
});

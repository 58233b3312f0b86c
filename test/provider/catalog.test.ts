/**
 * The catalog lookups (`getGpuTypes`, `getCpuTypes`, `getDataCenters` and their `...Output`
 * forms) in a program under `@pulumi/pulumi/testing` mocks, against the emulator's fixed catalog:
 * what each argument does, pools fed into another resource's inputs, settings from the stack's
 * environment fallbacks, bad arguments named before any request, and a v1 restUrl refused.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import {
  getCpuTypes,
  getCpuTypesOutput,
  getDataCenters,
  getDataCentersOutput,
  getGpuTypes,
  getGpuTypesOutput,
} from "../../src/provider/catalog/lookups";

let emu: RunningEmulator;
let client: RunpodClient;
const registeredInputs = new Map<string, Record<string, unknown>>();

/** A resource of some other provider that takes pools (registered with the mocks). */
class Consumer extends pulumi.CustomResource {
  constructor(name: string, args: { gpu: pulumi.Input<{ pools: pulumi.Input<string[]> }> }) {
    super("test:index:Consumer", name, args);
  }
}

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: ["emu-key-catalog19"] });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    serverlessUrl: emu.serverlessUrl,
    restUrl: emu.restUrl,
    env: {},
  });
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registeredInputs.set(args.name, args.inputs);
        return { id: `id-${args.name}`, state: args.inputs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await emu?.close();
});

const value = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (v) => expect.fail(`expected a rejection, got ${JSON.stringify(v)}`),
    (error: unknown) => error,
  );
}

describe("getGpuTypes", () => {
  it("without arguments answers every GPU type, pods-only ones (pool null) included, with no stock", async () => {
    const gpus = await getGpuTypes(undefined, { client });
    expect(gpus.map((g) => g.id)).toEqual((await client.catalog.gpus()).map((g) => g.id));
    expect(gpus).toHaveLength(10);
    expect(gpus.some((g) => g.pool === null)).toBe(true);
    expect(gpus.every((g) => g.availability === undefined)).toBe(true);
  });

  it("serverless: true keeps the types with a pool; pool keeps one pool's types", async () => {
    const serverless = await getGpuTypes({ serverless: true }, { client });
    expect(serverless).toHaveLength(9);
    expect(serverless.every((g) => typeof g.pool === "string")).toBe(true);
    const ampere24 = await getGpuTypes({ pool: "AMPERE_24" }, { client });
    expect(ampere24.map((g) => [g.id, g.pool])).toEqual([
      ["NVIDIA RTX A5000", "AMPERE_24"],
      ["NVIDIA L4", "AMPERE_24"],
    ]);
  });

  it("availability: true carries the serverless stock of each type", async () => {
    const gpus = await getGpuTypes({ serverless: true, availability: true }, { client });
    const direct = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["SERVERLESS"] });
    expect(gpus).toEqual(direct.filter((g) => g.pool !== null));
    expect(gpus.find((g) => g.pool === "HOPPER_141")).toMatchObject({
      availability: "LOW",
      dataCenters: [
        { id: "US-GA-1", availability: "LOW" },
        { id: "EU-SE-1", availability: "NONE" },
      ],
    });
  });

  it("fails on a pool no type belongs to, listing the catalog's pools", async () => {
    const error = await rejection(getGpuTypes({ pool: "ADA_4090" }, { client }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(["pool"]);
    expect((error as ValidationError).message).toBe(
      'getGpuTypes: no GPU type is in pool "ADA_4090"; the catalog\'s pools are AMPERE_16, AMPERE_24, ADA_24, AMPERE_48, ADA_48_PRO, AMPERE_80, ADA_80_PRO, HOPPER_141',
    );
  });

  it("names a malformed or unknown argument before any request", async () => {
    const offline = new RunpodClient({
      apiKey: "k",
      restUrl: "http://127.0.0.1:9/v2",
      maxRetries: 0,
      env: {},
    });
    const cases: [Promise<unknown>, string, string][] = [
      [
        getGpuTypes({ pool: "" }, { client: offline }),
        "pool",
        'getGpuTypes: pool must be a non-empty string, got ""',
      ],
      [
        getGpuTypes({ serverless: "yes" as unknown as boolean }, { client: offline }),
        "serverless",
        'getGpuTypes: serverless must be true or false, got "yes"',
      ],
      [
        getGpuTypes({ product: "SERVERLESS" } as object, { client: offline }),
        "product",
        "getGpuTypes: unknown argument product; it takes pool, serverless, availability",
      ],
      [
        getCpuTypes({ availability: 1 as unknown as boolean }, { client: offline }),
        "availability",
        "getCpuTypes: availability must be true or false, got 1",
      ],
    ];
    for (const [call, key, message] of cases) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual([key]);
      expect((error as ValidationError).message).toBe(message);
    }
  });

  it("getGpuTypesOutput takes Output arguments and feeds pools into another resource's inputs", async () => {
    const ada = getGpuTypesOutput({ pool: pulumi.output("ADA_24") }, { client });
    expect(await value(ada.apply((t) => t[0].pool))).toBe("ADA_24");
    const pools = getGpuTypesOutput({ serverless: true, availability: true }, { client }).apply((gpus) => [
      ...new Set(
        gpus.filter((g) => (g.memory ?? 0) >= 48 && g.availability === "HIGH").map((g) => g.pool as string),
      ),
    ]);
    new Consumer("endpoint", { gpu: { pools } });
    expect(await value(pools)).toEqual(["AMPERE_48", "ADA_48_PRO", "ADA_80_PRO"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(registeredInputs.get("endpoint")).toEqual({
      gpu: { pools: ["AMPERE_48", "ADA_48_PRO", "ADA_80_PRO"] },
    });
  });
});

describe("getCpuTypes and getDataCenters", () => {
  it("answer the CPU flavours and data centres, with stock when availability is true", async () => {
    expect((await getCpuTypes(undefined, { client })).map((c) => [c.id, c.availability])).toEqual([
      ["cpu3c", undefined],
      ["cpu3g", undefined],
      ["cpu5c", undefined],
    ]);
    expect((await getCpuTypes({ availability: true }, { client })).map((c) => c.availability)).toEqual([
      "HIGH",
      "HIGH",
      "HIGH",
    ]);
    const dcs = await getDataCenters(undefined, { client });
    expect(dcs.map((d) => d.id)).toEqual(["US-KS-2", "US-GA-1", "CA-MTL-1", "EU-RO-1", "EU-SE-1"]);
    expect(dcs.every((d) => d.gpuAvailability === undefined && d.cpuAvailability === undefined)).toBe(true);
    const withStock = await getDataCenters({ availability: true }, { client });
    expect(withStock.find((d) => d.id === "CA-MTL-1")).toMatchObject({
      gpuAvailability: [
        { id: "NVIDIA RTX A4000", availability: "HIGH" },
        { id: "NVIDIA RTX A6000", availability: "HIGH" },
      ],
      cpuAvailability: [{ id: "cpu3g", availability: "LOW" }],
    });
  });

  it("have Output forms", async () => {
    expect(await value(getCpuTypesOutput({}, { client }).apply((c) => c.length))).toBe(3);
    const volumeHomes = getDataCentersOutput({ availability: pulumi.output(false) }, { client }).apply(
      (dcs) => dcs.filter((d) => (d.networkVolumeTypes ?? []).includes("HIGH_PERFORMANCE")).map((d) => d.id),
    );
    expect(await value(volumeHomes)).toEqual(["US-KS-2", "EU-RO-1"]);
  });
});

describe("settings", () => {
  it("come from the stack's environment fallbacks when no client is given", async () => {
    const saved = { key: process.env.RUNPOD_API_KEY, url: process.env.RUNPOD_REST_API_URL };
    process.env.RUNPOD_API_KEY = emu.apiKey;
    process.env.RUNPOD_REST_API_URL = emu.restUrl;
    try {
      expect((await getGpuTypes({ pool: "HOPPER_141" })).map((g) => g.id)).toEqual(["NVIDIA H200"]);
    } finally {
      for (const [name, v] of [
        ["RUNPOD_API_KEY", saved.key],
        ["RUNPOD_REST_API_URL", saved.url],
      ] as const) {
        if (v === undefined) delete process.env[name];
        else process.env[name] = v;
      }
    }
  });

  it("fail clearly on a v1 restUrl: the catalog is REST v2 only", async () => {
    const settings = { apiKey: emu.apiKey, restUrl: emu.restUrl.replace(/\/v2$/, "/v1") };
    for (const call of [
      getGpuTypes({}, { settings }),
      getCpuTypes({}, { settings }),
      getDataCenters({}, { settings }),
    ]) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toMatch(
        /^client\.catalog needs the REST v2 interface, but restUrl http:\/\/127\.0\.0\.1:\d+\/v1 is REST v1/,
      );
    }
  });
});

/**
 * `client.catalog` against the emulator: GPU types with their pools and stock, CPU
 * flavours, data centres with filters, public templates; the query checked before any request
 * (the document's pairing rules, names the parameter); REST v2 only. Both sides parse with the one
 * wire module (src/wire/catalog.ts), so the client reading the emulator's answers is the check that
 * the query encoding (comma-separated lists, booleans) and the shapes agree.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";

let emu: RunningEmulator;
let client: RunpodClient;
beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  });
});
afterAll(async () => {
  await emu.close();
});

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.fail(`expected a rejection, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

describe("client.catalog", () => {
  it("lists GPU types with their serverless pools, the ids endpoints' gpu.pools take", async () => {
    const gpus = await client.catalog.gpus();
    expect(gpus).toHaveLength(10);
    const pools = [...new Set(gpus.flatMap((g) => (g.pool === null ? [] : [g.pool])))];
    expect(pools).toEqual([
      "AMPERE_16",
      "AMPERE_24",
      "ADA_24",
      "AMPERE_48",
      "ADA_48_PRO",
      "AMPERE_80",
      "ADA_80_PRO",
      "HOPPER_141",
    ]);
    expect(gpus.filter((g) => g.pool === null).map((g) => g.id)).toEqual(["AMD Instinct MI300X OAM"]);
    // What a user does with it: a pool from the catalog is one the service takes.
    const big = gpus.find((g) => g.pool !== null && (g.memory ?? 0) >= 80);
    const ep = await client.serverless.create({
      name: "from-catalog",
      type: "QUEUE",
      image: "acme/worker:1",
      gpu: { pools: [big?.pool as string] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
    });
    expect(ep.gpu?.pools).toEqual(["AMPERE_80"]);
    await client.serverless.delete(ep.id);
  });

  it("sends include and product as the document's comma-separated lists and reads the stock", async () => {
    const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD", "SERVERLESS"] });
    const a4000 = gpus.find((g) => g.id === "NVIDIA RTX A4000");
    expect(a4000?.availability).toBe("HIGH");
    expect(a4000?.dataCenters?.map((d) => [d.id, d.availability])).toEqual([
      ["US-KS-2", "HIGH"],
      ["CA-MTL-1", "HIGH"],
      ["EU-RO-1", "MEDIUM"],
    ]);
    const inRomania = await client.catalog.gpus({
      include: ["AVAILABILITY"],
      product: ["SERVERLESS"],
      countryCodes: ["RO"],
      count: 2,
    });
    expect(inRomania.map((g) => g.id)).not.toContain("NVIDIA L4");
    expect(
      inRomania.every((g) => g.dataCenters === undefined || g.dataCenters.every((d) => d.id === "EU-RO-1")),
    ).toBe(true);
  });

  it("reads one GPU type by an id with spaces, and throws NotFoundError for an unknown one", async () => {
    const rtx = await client.catalog.gpu("NVIDIA GeForce RTX 4090", {
      include: ["AVAILABILITY"],
      product: ["SERVERLESS"],
      minCudaVersion: "12.5",
    });
    expect(rtx).toMatchObject({
      id: "NVIDIA GeForce RTX 4090",
      name: "RTX 4090",
      pool: "ADA_24",
      memory: 24,
    });
    expect(rtx.cudaVersions?.map((c) => c.version)).toEqual(["12.8", "12.6"]);
    const missing = await rejection(client.catalog.gpu("NVIDIA RTX 9999"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toContain("GPU type NVIDIA RTX 9999 not found");
  });

  it("lists CPU flavours, data centres (filters as sent) and public templates", async () => {
    expect((await client.catalog.cpus()).map((c) => c.id)).toEqual(["cpu3c", "cpu3g", "cpu5c"]);
    const stock = await client.catalog.cpus({
      include: ["AVAILABILITY"],
      product: ["SERVERLESS"],
      vcpuCount: 4,
    });
    expect(stock.map((c) => c.availability)).toEqual(["HIGH", "HIGH", "HIGH"]);
    const europeNoGlobal = await client.catalog.dataCenters({ regions: ["EUROPE"], globalNetwork: false });
    expect(europeNoGlobal.map((d) => d.id)).toEqual(["EU-SE-1"]);
    const both = await client.catalog.dataCenters({ networkVolumeTypes: ["STANDARD", "HIGH_PERFORMANCE"] });
    expect(both.map((d) => d.id)).toEqual(["US-KS-2", "EU-RO-1"]);
    const ro = await client.catalog.dataCenter("EU-RO-1", { include: ["CPU_AVAILABILITY"] });
    expect(ro.cpuAvailability?.map((c) => c.id)).toEqual(["cpu3c", "cpu5c"]);
    expect(ro.gpuAvailability).toBeUndefined();
    expect((await client.catalog.templates()).map((t) => t.name)).toEqual([
      "Runpod PyTorch 2.8",
      "ComfyUI Serverless",
      "vLLM Serverless",
    ]);
    expect((await client.catalog.templates({ source: "community" })).map((t) => t.serverless)).toEqual([
      true,
    ]);
  });

  it("refuses a query that breaks the document's rules before any request, naming the parameter", async () => {
    // An unroutable base: a request would fail with a connection error, not a ValidationError.
    const offline = new RunpodClient({
      apiKey: "k",
      restUrl: "http://127.0.0.1:9/v2",
      maxRetries: 0,
      env: {},
    });
    const cases: [Promise<unknown>, (string | number)[], RegExp][] = [
      [
        offline.catalog.gpus({ include: ["AVAILABILITY"] }),
        ["product"],
        /product is required with include=AVAILABILITY/,
      ],
      [
        offline.catalog.gpus({ product: ["POD"] }),
        ["product"],
        /product is valid only with include=AVAILABILITY/,
      ],
      [
        offline.catalog.gpu("x", {
          include: ["AVAILABILITY"],
          product: ["POD"],
          cudaVersions: ["12.4"],
          minCudaVersion: "12",
        }),
        ["minCudaVersion"],
        /cudaVersions and minCudaVersion are mutually exclusive/,
      ],
      [
        offline.catalog.cpus({ include: ["AVAILABILITY"], product: ["POD"], vcpuCount: 6 }),
        ["vcpuCount"],
        /power of two/,
      ],
      [
        offline.catalog.dataCenters({ regions: ["MARS" as "EUROPE"] }),
        ["regions", 0],
        /must be one of NORTH_AMERICA/,
      ],
      [
        offline.catalog.templates({ source: "mine" as "official" }),
        ["source"],
        /source must be official, verified or community/,
      ],
      [offline.catalog.gpus({ pool: "ADA_24" } as object), [], /unknown field pool/],
    ];
    for (const [call, path, message] of cases) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual(path);
      expect((error as ValidationError).message).toMatch(message);
    }
  });

  it("fails on a v1 restUrl with a ValidationError saying the catalog needs REST v2, before any request", async () => {
    const v1 = new RunpodClient({
      apiKey: emu.apiKey,
      restUrl: "http://127.0.0.1:9/v1",
      maxRetries: 0,
      env: {},
    });
    for (const call of [
      () => v1.catalog.gpus(),
      () => v1.catalog.gpu("NVIDIA L4"),
      () => v1.catalog.cpus(),
      () => v1.catalog.dataCenters(),
      () => v1.catalog.dataCenter("EU-RO-1"),
      () => v1.catalog.templates(),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).path).toEqual(["restUrl"]);
      expect((error as ValidationError).message).toMatch(
        /^client\.catalog needs the REST v2 interface, but restUrl http:\/\/127\.0\.0\.1:9\/v1 is REST v1 .*never had serverless endpoints, templates or the catalog/,
      );
    }
  });
});

/**
 * The emulator's REST v2 catalog: GPU types with their serverless pools, CPU flavours,
 * data centres and public templates, with availability and the document's query rules (400 for a
 * broken pairing, 422 for a malformed value), 404s; and endpoint creates and updates that refuse a
 * pool the catalog does not have. Every answer is checked against the document's own schemas
 * (fixtures/openapi/rest-v2.catalog.schemas.json, copied from rest-v2.openapi.json).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, type Harness, harness } from "./helpers";

const schemas = JSON.parse(
  readFileSync(path.join(__dirname, "../fixtures/openapi/rest-v2.catalog.schemas.json"), "utf8"),
) as { $id: string };
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("float", () => true);
ajv.addSchema(schemas);

/** Errors of `value` against the document schema `name` (empty when valid). */
function check(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`${schemas.$id}#/$defs/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function get(p: string): Promise<Answer> {
  h ??= await harness();
  return h.call("GET", p);
}

function problem(answer: Answer, status: number, detail: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
  expect(answer.body.detail).toMatch(detail);
}

const RTX_4090 = {
  id: "NVIDIA GeForce RTX 4090",
  name: "RTX 4090",
  pool: "ADA_24",
  manufacturer: "NVIDIA",
  memory: 24,
  secure: true,
  community: true,
  price: { secure: 0.69, community: 0.34, serverless: 1.1 },
  maxCount: { secure: 8, community: 4 },
};

describe("the fixture", () => {
  it("rejects answers the document forbids (so the checks below can fail)", () => {
    expect(check("GpuType", RTX_4090)).toEqual([]);
    expect(check("GpuType", { ...RTX_4090, pool: undefined })).not.toEqual([]);
    expect(check("GpuType", { ...RTX_4090, availability: "PLENTY" })).not.toEqual([]);
    expect(check("DataCenter", { id: "X", name: "X", region: "MARS" })).not.toEqual([]);
  });
});

describe("GET /v2/catalog/gpus", () => {
  it("lists the fixed GPU types with their pools and prices, and no availability unless asked", async () => {
    const answer = await get("/v2/catalog/gpus");
    expect(answer.status).toBe(200);
    expect(check("ListGpuTypesResponse", answer.body)).toEqual([]);
    const gpus: { id: string; pool: string | null; availability?: string }[] = answer.body.gpus;
    expect(gpus.map((g) => [g.id, g.pool])).toEqual([
      ["NVIDIA RTX A4000", "AMPERE_16"],
      ["NVIDIA RTX A5000", "AMPERE_24"],
      ["NVIDIA L4", "AMPERE_24"],
      ["NVIDIA GeForce RTX 4090", "ADA_24"],
      ["NVIDIA RTX A6000", "AMPERE_48"],
      ["NVIDIA L40S", "ADA_48_PRO"],
      ["NVIDIA A100 80GB PCIe", "AMPERE_80"],
      ["NVIDIA H100 80GB HBM3", "ADA_80_PRO"],
      ["NVIDIA H200", "HOPPER_141"],
      ["AMD Instinct MI300X OAM", null],
    ]);
    expect(gpus.find((g) => g.id === RTX_4090.id)).toEqual(RTX_4090);
    expect(gpus.every((g) => !("availability" in g) && !("dataCenters" in g) && !("cudaVersions" in g))).toBe(
      true,
    );
  });

  it("adds serverless stock per data centre with include=AVAILABILITY&product=SERVERLESS", async () => {
    const answer = await get("/v2/catalog/gpus?include=AVAILABILITY&product=SERVERLESS");
    expect(answer.status).toBe(200);
    expect(check("ListGpuTypesResponse", answer.body)).toEqual([]);
    const byId = new Map<string, Record<string, unknown>>(
      answer.body.gpus.map((g: { id: string }) => [g.id, g]),
    );
    expect(byId.get(RTX_4090.id)).toEqual({
      ...RTX_4090,
      availability: "HIGH",
      dataCenters: [
        { id: "US-KS-2", name: "US Kansas 2", availability: "HIGH" },
        { id: "US-GA-1", name: "US Georgia 1", availability: "HIGH" },
        { id: "EU-RO-1", name: "EU Romania 1", availability: "MEDIUM" },
        { id: "EU-SE-1", name: "EU Sweden 1", availability: "LOW" },
      ],
      cudaVersions: [
        { version: "12.8", available: true },
        { version: "12.6", available: true },
        { version: "12.4", available: true },
        { version: "12.1", available: false },
        { version: "11.8", available: true },
      ],
    });
    // Pods only: no serverless stock, no data centres, and no CUDA versions on an AMD card.
    expect(byId.get("AMD Instinct MI300X OAM")).toMatchObject({ availability: "NONE" });
    expect(byId.get("AMD Instinct MI300X OAM")).not.toHaveProperty("dataCenters");
    expect(byId.get("AMD Instinct MI300X OAM")).not.toHaveProperty("cudaVersions");
    // The best data centre decides the overall level.
    expect(byId.get("NVIDIA H200")).toMatchObject({
      availability: "LOW",
      dataCenters: [
        { id: "US-GA-1", availability: "LOW" },
        { id: "EU-SE-1", availability: "NONE" },
      ],
    });
  });

  it("takes the best level over several products, and scopes stock by count, cloud and CUDA version", async () => {
    const both = await get(
      "/v2/catalog/gpus/NVIDIA%20RTX%20A4000?include=AVAILABILITY&product=POD,SERVERLESS",
    );
    expect(both.body.dataCenters).toEqual([
      { id: "US-KS-2", name: "US Kansas 2", availability: "HIGH" },
      { id: "CA-MTL-1", name: "CA Montreal 1", availability: "HIGH" },
      { id: "EU-RO-1", name: "EU Romania 1", availability: "MEDIUM" },
    ]);
    const tooMany = await get(
      "/v2/catalog/gpus/NVIDIA%20L40S?include=AVAILABILITY&product=POD&count=4&cloud=COMMUNITY",
    );
    expect(tooMany.status).toBe(200);
    expect(tooMany.body.availability).toBe("NONE");
    expect(tooMany.body).not.toHaveProperty("dataCenters");
    const full = await get(
      "/v2/catalog/gpus/NVIDIA%20H200?include=AVAILABILITY&product=SERVERLESS&cudaVersions=12.6",
    );
    expect(full.body).toMatchObject({
      availability: "NONE",
      cudaVersions: [{ version: "12.6", available: false }],
    });
    const floor = await get(
      "/v2/catalog/gpus/NVIDIA%20L4?include=AVAILABILITY&product=SERVERLESS&minCudaVersion=12.5",
    );
    expect(floor.body.cudaVersions.map((c: { version: string }) => c.version)).toEqual(["12.8", "12.6"]);
    expect(floor.body.availability).toBe("MEDIUM");
  });

  it("drops the types with no data centre in countryCodes; /gpus/{id} answers such a type with NONE", async () => {
    const ro = await get("/v2/catalog/gpus?include=AVAILABILITY&product=SERVERLESS&countryCodes=RO");
    expect(check("ListGpuTypesResponse", ro.body)).toEqual([]);
    expect(ro.body.gpus.map((g: { id: string }) => g.id)).toEqual([
      "NVIDIA RTX A4000",
      "NVIDIA RTX A5000",
      "NVIDIA GeForce RTX 4090",
      "NVIDIA RTX A6000",
      "NVIDIA L40S",
      "NVIDIA A100 80GB PCIe",
      "NVIDIA H100 80GB HBM3",
    ]);
    expect(ro.body.gpus[0].dataCenters).toEqual([
      { id: "EU-RO-1", name: "EU Romania 1", availability: "MEDIUM" },
    ]);
    const one = await get(
      "/v2/catalog/gpus/NVIDIA%20L4?include=AVAILABILITY&product=SERVERLESS&countryCodes=RO,CA",
    );
    expect(one.status).toBe(200);
    expect(one.body.availability).toBe("NONE");
    expect(one.body).not.toHaveProperty("dataCenters");
  });

  it("answers one type by its id, and 404 problem+json for an unknown one", async () => {
    const one = await get("/v2/catalog/gpus/NVIDIA%20GeForce%20RTX%204090");
    expect(one.status).toBe(200);
    expect(check("GpuType", one.body)).toEqual([]);
    expect(one.body).toEqual(RTX_4090);
    problem(await get("/v2/catalog/gpus/NVIDIA%20RTX%209999"), 404, /GPU type NVIDIA RTX 9999 not found/);
  });

  it("answers 400 to a broken pairing rule of the document, naming the parameter", async () => {
    problem(
      await get("/v2/catalog/gpus?include=AVAILABILITY"),
      400,
      /product is required with include=AVAILABILITY/,
    );
    problem(
      await get("/v2/catalog/gpus?product=SERVERLESS"),
      400,
      /product is valid only with include=AVAILABILITY/,
    );
    problem(await get("/v2/catalog/gpus?count=2"), 400, /count is valid only with include=AVAILABILITY/);
    problem(
      await get("/v2/catalog/gpus?countryCodes=FR"),
      400,
      /countryCodes is valid only with include=AVAILABILITY/,
    );
    problem(
      await get(
        "/v2/catalog/gpus/NVIDIA%20L4?include=AVAILABILITY&product=POD&cudaVersions=12.4&minCudaVersion=12",
      ),
      400,
      /cudaVersions and minCudaVersion are mutually exclusive/,
    );
  });

  it("answers 422 to a malformed value or an unknown parameter", async () => {
    problem(
      await get("/v2/catalog/gpus?include=AVAILABILITY&product=LAPTOP"),
      422,
      /^Request validation failed: product\[0\]: must be one of POD, CLUSTER, SERVERLESS, got "LAPTOP"/,
    );
    problem(
      await get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&countryCodes=fr"),
      422,
      /countryCodes\[0\]: must be an uppercase ISO 3166-1 alpha-2 code, e.g. "FR", got "fr"/,
    );
    problem(
      await get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&cudaVersions=12"),
      422,
      /cudaVersions\[0\]: must be a CUDA version as major.minor, e.g. "12.8", got "12"/,
    );
    problem(
      await get("/v2/catalog/gpus?include=AVAILABILITY&product=POD&count=0"),
      422,
      /count must be at least 1/,
    );
    problem(
      await get("/v2/catalog/gpus?include=EVERYTHING"),
      422,
      /include\[0\]: must be one of AVAILABILITY, got "EVERYTHING"/,
    );
    problem(await get("/v2/catalog/gpus?pool=ADA_24"), 422, /unknown field pool/);
  });

  it("answers 405 with Allow to a method the document does not list", async () => {
    h = await harness();
    const post = await h.call("POST", "/v2/catalog/gpus", {});
    problem(post, 405, /POST is not allowed on \/v2\/catalog\/gpus/);
    expect(post.headers.allow).toBe("GET");
  });
});

describe("GET /v2/catalog/cpus", () => {
  it("lists the CPU flavours, with serverless stock when asked", async () => {
    const plain = await get("/v2/catalog/cpus");
    expect(check("ListCpuTypesResponse", plain.body)).toEqual([]);
    expect(plain.body.cpus.map((c: { id: string; group: string }) => [c.id, c.group])).toEqual([
      ["cpu3c", "Gen 3"],
      ["cpu3g", "Gen 3"],
      ["cpu5c", "Gen 5"],
    ]);
    const stock = await get("/v2/catalog/cpus?include=AVAILABILITY&product=SERVERLESS");
    expect(check("ListCpuTypesResponse", stock.body)).toEqual([]);
    expect(stock.body.cpus[2]).toEqual({
      id: "cpu5c",
      name: "Compute-Optimized",
      group: "Gen 5",
      vcpu: { min: 2, max: 64 },
      ramGbPerVcpu: 2,
      price: { securePerVcpu: 0.06, serverlessPerVcpu: 0.045 },
      availability: "HIGH",
      dataCenters: [{ id: "EU-RO-1", name: "EU Romania 1", availability: "HIGH" }],
    });
    const big = await get("/v2/catalog/cpus/cpu3g?include=AVAILABILITY&product=POD&vcpuCount=64");
    expect(big.body.availability).toBe("NONE");
  });

  it("applies the document's rules: 400 for pairings, 422 for a vcpuCount that is no power of two, 404", async () => {
    problem(await get("/v2/catalog/cpus?include=AVAILABILITY"), 400, /product is required/);
    problem(
      await get("/v2/catalog/cpus?vcpuCount=4"),
      400,
      /vcpuCount is valid only with include=AVAILABILITY/,
    );
    problem(
      await get("/v2/catalog/cpus?include=AVAILABILITY&product=CLUSTER"),
      422,
      /product\[0\]: must be one of POD, SERVERLESS, got "CLUSTER"/,
    );
    problem(
      await get("/v2/catalog/cpus?include=AVAILABILITY&product=POD&vcpuCount=6"),
      422,
      /vcpuCount must be a power of two/,
    );
    expect((await get("/v2/catalog/cpus/cpu5c")).body.id).toBe("cpu5c");
    problem(await get("/v2/catalog/cpus/cpu9z"), 404, /CPU type cpu9z not found/);
  });
});

describe("GET /v2/catalog/datacenters", () => {
  it("lists the data centres with region, volume tiers and compliance", async () => {
    const answer = await get("/v2/catalog/datacenters");
    expect(answer.status).toBe(200);
    expect(check("ListDataCentersResponse", answer.body)).toEqual([]);
    expect(answer.body.dataCenters.map((d: { id: string; region: string }) => [d.id, d.region])).toEqual([
      ["US-KS-2", "NORTH_AMERICA"],
      ["US-GA-1", "NORTH_AMERICA"],
      ["CA-MTL-1", "NORTH_AMERICA"],
      ["EU-RO-1", "EUROPE"],
      ["EU-SE-1", "EUROPE"],
    ]);
    expect(answer.body.dataCenters[3]).toEqual({
      id: "EU-RO-1",
      name: "EU Romania 1",
      region: "EUROPE",
      globalNetwork: true,
      networkVolumeTypes: ["STANDARD", "HIGH_PERFORMANCE"],
      compliance: ["GDPR", "ISO_IEC_27001", "SOC_2_TYPE_2"],
    });
  });

  it("filters: regions any of, networkVolumeTypes and compliance all of, globalNetwork one kind", async () => {
    const ids = async (q: string) =>
      (await get(`/v2/catalog/datacenters?${q}`)).body.dataCenters.map((d: { id: string }) => d.id);
    expect(await ids("regions=EUROPE")).toEqual(["EU-RO-1", "EU-SE-1"]);
    expect(await ids("regions=ASIA,EUROPE")).toEqual(["EU-RO-1", "EU-SE-1"]);
    expect(await ids("networkVolumeTypes=STANDARD,HIGH_PERFORMANCE")).toEqual(["US-KS-2", "EU-RO-1"]);
    expect(await ids("compliance=GDPR,RENEWABLE")).toEqual(["EU-SE-1"]);
    expect(await ids("globalNetwork=false")).toEqual(["CA-MTL-1", "EU-SE-1"]);
    expect(await ids("regions=NORTH_AMERICA&globalNetwork=true&compliance=HIPAA")).toEqual(["US-GA-1"]);
  });

  it("adds gpuAvailability and cpuAvailability when included, leaving out an empty one", async () => {
    const answer = await get("/v2/catalog/datacenters/EU-SE-1?include=GPU_AVAILABILITY,CPU_AVAILABILITY");
    expect(check("DataCenter", answer.body)).toEqual([]);
    expect(answer.body.gpuAvailability).toEqual([
      { id: "NVIDIA L4", name: "L4", availability: "LOW" },
      { id: "NVIDIA GeForce RTX 4090", name: "RTX 4090", availability: "LOW" },
      { id: "NVIDIA H200", name: "H200 SXM", availability: "NONE" },
    ]);
    expect(answer.body.cpuAvailability).toEqual([
      { id: "cpu5c", name: "Compute-Optimized", availability: "LOW" },
    ]);
    const gpusOnly = await get("/v2/catalog/datacenters?include=GPU_AVAILABILITY");
    expect(check("ListDataCentersResponse", gpusOnly.body)).toEqual([]);
    expect(
      gpusOnly.body.dataCenters.every((d: object) => "gpuAvailability" in d && !("cpuAvailability" in d)),
    ).toBe(true);
    const ga = await get("/v2/catalog/datacenters/US-GA-1?include=CPU_AVAILABILITY");
    expect(ga.body.cpuAvailability).toEqual([
      { id: "cpu3g", name: "General Purpose", availability: "MEDIUM" },
    ]);
  });

  it("answers 422 to an unknown region or include, and 404 to an unknown data centre", async () => {
    problem(
      await get("/v2/catalog/datacenters?regions=MARS"),
      422,
      /regions\[0\]: must be one of NORTH_AMERICA, .*, got "MARS"/,
    );
    problem(await get("/v2/catalog/datacenters?include=AVAILABILITY"), 422, /include\[0\]/);
    problem(
      await get("/v2/catalog/datacenters?globalNetwork=yes"),
      422,
      /globalNetwork must be true or false/,
    );
    problem(await get("/v2/catalog/datacenters/EU-XX-9"), 404, /data center EU-XX-9 not found/);
  });
});

describe("GET /v2/catalog/templates", () => {
  it("answers the official slice by default, another slice by source, and 422 to an unknown source", async () => {
    const official = await get("/v2/catalog/templates");
    expect(check("ListTemplatesResponse", official.body)).toEqual([]);
    expect(
      official.body.templates.map((t: { name: string; serverless: boolean }) => [t.name, t.serverless]),
    ).toEqual([
      ["Runpod PyTorch 2.8", false],
      ["ComfyUI Serverless", true],
      ["vLLM Serverless", true],
    ]);
    expect(
      official.body.templates.every(
        (t: { public: boolean; registry: null }) => t.public && t.registry === null,
      ),
    ).toBe(true);
    const verified = await get("/v2/catalog/templates?source=verified");
    expect(verified.body.templates.map((t: { name: string }) => t.name)).toEqual(["Ollama"]);
    problem(
      await get("/v2/catalog/templates?source=mine"),
      422,
      /source must be official, verified or community/,
    );
  });
});

describe("gpu.pools of /v2/serverless", () => {
  const ENDPOINT = {
    name: "pools",
    type: "QUEUE",
    image: "acme/model:1",
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: 1 },
  };

  it("accepts every pool the catalog lists, and the emulator's own EMULATOR pool", async () => {
    h = await harness();
    const gpus: { pool: string | null }[] = (await h.call("GET", "/v2/catalog/gpus")).body.gpus;
    const pools = [...new Set(gpus.flatMap((g) => (g.pool ? [g.pool] : [])))];
    expect(pools).toHaveLength(8);
    for (const pool of [...pools, "EMULATOR"]) {
      const created = await h.call("POST", "/v2/serverless", { ...ENDPOINT, gpu: { pools: [pool] } });
      expect(created.status, pool).toBe(201);
      expect(created.body.gpu.pools).toEqual([pool]);
    }
  });

  it("refuses a create naming an unknown pool with 400, naming it and the known pools, and creates nothing", async () => {
    h = await harness();
    const before = (await h.call("GET", "/v2/serverless")).body.endpoints;
    const refused = await h.call("POST", "/v2/serverless", {
      ...ENDPOINT,
      gpu: { pools: ["ADA_24", "ADA_4090"] },
    });
    problem(
      refused,
      400,
      /^gpu\.pools: "ADA_4090" is not a serverless pool; known pools: AMPERE_16, AMPERE_24, ADA_24, AMPERE_48, ADA_48_PRO, AMPERE_80, ADA_80_PRO, HOPPER_141, EMULATOR \(GET \/v2\/catalog\/gpus lists each GPU type's pool\)$/,
    );
    expect((await h.call("GET", "/v2/serverless")).body.endpoints).toEqual(before);
  });

  it("refuses a PATCH naming unknown pools with 400 and leaves the endpoint and its releases as they were", async () => {
    h = await harness();
    const before = await h.call("GET", "/v2/serverless/echo");
    const releases = (await h.call("GET", "/v2/serverless/echo/releases")).body.releases;
    const refused = await h.call("PATCH", "/v2/serverless/echo", { gpu: { pools: ["A100", "H100"] } });
    problem(refused, 400, /^gpu\.pools: "A100", "H100" are not serverless pools; known pools: AMPERE_16/);
    expect((await h.call("GET", "/v2/serverless/echo")).body).toEqual(before.body);
    expect((await h.call("GET", "/v2/serverless/echo/releases")).body.releases).toEqual(releases);
    const moved = await h.call("PATCH", "/v2/serverless/echo", { gpu: { pools: ["AMPERE_80"] } });
    expect(moved.status).toBe(200);
    expect(moved.body.gpu.pools).toEqual(["AMPERE_80"]);
  });

  it("still answers 404 before judging the pools of an unknown endpoint", async () => {
    h = await harness();
    problem(
      await h.call("PATCH", "/v2/serverless/nope", { gpu: { pools: ["NOPE"] } }),
      404,
      /nope not found/,
    );
  });
});

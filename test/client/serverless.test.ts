import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  NotFoundError,
  ResponseValidationError,
  type RunpodClient,
  type ServerlessEndpointCreateInput,
  UnprocessableEntityError,
  ValidationError,
} from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { API_KEY, clientFor } from "./helpers";

/** An endpoint as the v2 document's example answers it. */
const endpoint = {
  id: "4m7x2k9q",
  name: "image-generator",
  type: "QUEUE",
  requestUrls: Object.fromEntries(
    ["run", "runSync", "status", "stream", "cancel", "retry", "purgeQueue", "health"].map((k) => [
      k,
      `https://api.runpod.ai/v2/4m7x2k9q/${k}`,
    ]),
  ),
  image: "runpod/pytorch:1.0.2",
  args: "",
  disk: 20,
  ports: ["8000/http"],
  env: { MODEL_NAME: "sdxl" },
  registry: null,
  gpu: { pools: ["ADA_24"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
  workers: { min: 0, max: 5, idleTimeout: 5 },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  dataCenterIds: ["US-KS-2"],
  networkVolumes: [],
  timeout: 300000,
  flashboot: "OFF",
  createdAt: "2026-06-01T12:00:00Z",
  someFutureField: { kept: true },
};

const template = {
  id: "tpl1",
  name: "worker",
  image: "me/worker:1",
  args: "",
  disk: 10,
  mounts: {},
  ports: [],
  env: {},
  registry: null,
  serverless: true,
  public: false,
  category: "NVIDIA",
  startSsh: false,
  startJupyter: false,
  allowedCudaVersions: [],
};

const releasesAnswer = {
  endpointVersion: 3,
  rollout: { inProgress: true, workersOnLatest: 1, workersTotal: 3, percentOnLatest: 33 },
  releases: [
    {
      id: "rel3",
      version: 3,
      source: "MANUAL",
      buildId: null,
      createdByUserId: "u1",
      workerCount: 1,
      createdAt: "2026-11-22T10:00:00Z",
      diff: [{ field: "template.imageName", old: "img:1", new: "img:2" }],
    },
  ],
};

const workersAnswer = {
  endpointVersion: 3,
  workers: [
    { id: "w1", status: "RUNNING", isStale: true, version: 2, gpuCount: 1 },
    { id: "w2", status: "IDLE", isStale: false, version: 3, gpuCount: 1 },
  ],
  summary: { running: 1, idle: 1, initializing: 0, throttled: 0, unhealthy: 0, total: 2 },
};

const createBody: ServerlessEndpointCreateInput = {
  name: "image-generator",
  image: "runpod/pytorch:1.0.2",
  type: "QUEUE",
  gpu: { pools: ["ADA_24"], count: 1 },
  workers: { min: 0, max: 5, idleTimeout: 5 },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  env: { MODEL_NAME: "sdxl" },
};

const problem = (status: number, detail: string) => ({
  status,
  headers: { "content-type": "application/problem+json" },
  body: { title: "Error", status, detail },
});

describe("client.serverless and client.templates over REST v2", () => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer();
    client = clientFor(server, { restUrl: `${server.url}/v2` });
  });
  afterEach(async () => {
    await server.close();
  });
  const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);
  const bodyOf = (i: number) => JSON.parse(server.requests[i]?.body ?? "");

  it("lists endpoints from the wrapped list, keeping unknown fields, with bearer auth", async () => {
    server.enqueue({ body: { endpoints: [endpoint] } });
    expect(await client.serverless.list()).toEqual([endpoint]);
    expect(sent()).toEqual(["GET /v2/serverless"]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("gets one endpoint, percent-encoding the id", async () => {
    server.enqueue({ body: endpoint });
    expect(await client.serverless.get("a/b")).toEqual(endpoint);
    expect(sent()).toEqual(["GET /v2/serverless/a%2Fb"]);
  });

  it("creates an endpoint with the body as given and parses the 201", async () => {
    server.enqueue({ status: 201, body: endpoint });
    const created = await client.serverless.create(createBody);
    expect(created.id).toBe("4m7x2k9q");
    expect(sent()).toEqual(["POST /v2/serverless"]);
    expect(bodyOf(0)).toEqual(createBody);
    expect(server.requests[0]?.headers["content-type"]).toBe("application/json");
  });

  it("patches only the fields given", async () => {
    server.enqueue({ body: { ...endpoint, image: "runpod/pytorch:2" } });
    const updated = await client.serverless.update("4m7x2k9q", { image: "runpod/pytorch:2" });
    expect(updated.image).toBe("runpod/pytorch:2");
    expect(sent()).toEqual(["PATCH /v2/serverless/4m7x2k9q"]);
    expect(bodyOf(0)).toEqual({ image: "runpod/pytorch:2" });
  });

  it("deletes an endpoint (204, no body)", async () => {
    server.enqueue({ status: 204 });
    await expect(client.serverless.delete("4m7x2k9q")).resolves.toBeUndefined();
    expect(sent()).toEqual(["DELETE /v2/serverless/4m7x2k9q"]);
  });

  it("reads releases with endpointVersion and the rollout summary", async () => {
    const answer = releasesAnswer;
    server.enqueue({ body: answer });
    const releases = await client.serverless.releases("4m7x2k9q");
    expect(releases).toEqual(answer);
    expect(releases.rollout.percentOnLatest).toBe(33);
    expect(sent()).toEqual(["GET /v2/serverless/4m7x2k9q/releases"]);
  });

  it("reads workers with version, isStale, the summary and endpointVersion", async () => {
    const answer = workersAnswer;
    server.enqueue({ body: answer });
    const list = await client.serverless.workers("4m7x2k9q");
    expect(list).toEqual(answer);
    expect(list.workers.filter((w) => w.isStale).map((w) => w.id)).toEqual(["w1"]);
    expect(sent()).toEqual(["GET /v2/serverless/4m7x2k9q/workers"]);
  });

  it("names the field of a malformed workers answer", async () => {
    server.enqueue({
      body: {
        workers: [{ id: "w1", status: "IDLE" }],
        summary: { running: 0, idle: 1, initializing: 0, throttled: 0, unhealthy: 0, total: 1 },
      },
    });
    const error = await client.serverless.workers("ep").catch((e) => e);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.path).toEqual(["workers", 0, "isStale"]);
    expect(error.message).toContain("GET /v2/serverless/ep/workers");
  });

  it("maps problem+json answers to the typed errors", async () => {
    server.enqueue(problem(404, "endpoint nope not found"), problem(422, "gpu.pools: unknown pool XYZ"));
    const missing = await client.serverless.get("nope").catch((e) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.message).toContain("endpoint nope not found");
    const refused = await client.serverless.create(createBody).catch((e) => e);
    expect(refused).toBeInstanceOf(UnprocessableEntityError);
    expect(sent()).toEqual(["GET /v2/serverless/nope", "POST /v2/serverless"]);
  });

  it("redacts env values the error answer echoes", async () => {
    const token = "hf_SECRET_token_value_123";
    server.enqueue(problem(400, `bad env HF_TOKEN=${token}`));
    const error = await client.serverless.create({ ...createBody, env: { HF_TOKEN: token } }).catch((e) => e);
    expect(error.message).not.toContain(token);
    expect(JSON.stringify(error.body)).not.toContain(token);
    expect(error.message).toContain("[redacted]");
  });

  it("lists, gets, creates, updates and deletes templates", async () => {
    server.enqueue(
      { body: { templates: [template] } },
      { body: template },
      { status: 201, body: template },
      { body: { ...template, image: "me/worker:2" } },
      { status: 204 },
    );
    expect(await client.templates.list()).toEqual([template]);
    expect(await client.templates.get("tpl1")).toEqual(template);
    expect(await client.templates.create({ name: "worker", image: "me/worker:1", serverless: true })).toEqual(
      template,
    );
    expect((await client.templates.update("tpl1", { image: "me/worker:2" })).image).toBe("me/worker:2");
    await client.templates.delete("tpl1");
    expect(sent()).toEqual([
      "GET /v2/templates",
      "GET /v2/templates/tpl1",
      "POST /v2/templates",
      "PATCH /v2/templates/tpl1",
      "DELETE /v2/templates/tpl1",
    ]);
    expect(bodyOf(2)).toEqual({ name: "worker", image: "me/worker:1", serverless: true });
    expect(bodyOf(3)).toEqual({ image: "me/worker:2" });
  });

  it("job status answers carry the workerId", async () => {
    server.enqueue({ body: { id: "job-1", status: "COMPLETED", output: { ok: true }, workerId: "w2" } });
    const job = await client.endpoint("ep").status("job-1");
    expect(job.workerId).toBe("w2");
  });
});

describe("request validation names the field, before any request", () => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer();
    client = clientFor(server, { restUrl: `${server.url}/v2` });
  });
  afterEach(async () => {
    expect(server.requests).toEqual([]);
    await server.close();
  });

  const createError = async (body: unknown) =>
    client.serverless.create(body as typeof createBody).catch((e: unknown) => e as ValidationError);

  it.each([
    ["a missing scaling", { ...createBody, scaling: undefined }, ["scaling"], "scaling is required"],
    [
      "a queue delay below 0.5 s",
      { ...createBody, scaling: { type: "QUEUE_DELAY", queueDelay: 0.1 } },
      ["scaling", "queueDelay"],
      "scaling.queueDelay must be at least 0.5 s",
    ],
    [
      "an unknown scaling type",
      { ...createBody, scaling: { type: "FAST", queueDelay: 1 } },
      ["scaling", "type"],
      "scaling.type must be QUEUE_DELAY or REQUEST_COUNT",
    ],
    [
      "an empty GPU pool list",
      { ...createBody, gpu: { pools: [] } },
      ["gpu", "pools"],
      "gpu.pools must list at least one pool",
    ],
    [
      "both gpu and cpu",
      { ...createBody, cpu: [{ id: "cpu5c", vcpuCount: 4 }] },
      ["cpu"],
      "cpu cannot be combined with gpu",
    ],
    [
      "neither gpu nor cpu",
      { ...createBody, gpu: undefined },
      ["gpu"],
      "gpu is required unless cpu is given",
    ],
    [
      "a vCPU count that is not a power of two",
      { ...createBody, gpu: undefined, cpu: [{ id: "cpu5c", vcpuCount: 6 }] },
      ["cpu", 0, "vcpuCount"],
      "cpu[0].vcpuCount must be a power of two",
    ],
    [
      "no image and no templateId",
      { ...createBody, image: undefined },
      ["image"],
      "image is required unless templateId is given",
    ],
    [
      "a CUDA set beside a CUDA floor",
      { ...createBody, gpu: { pools: ["ADA_24"], allowedCudaVersions: ["12.4"], minCudaVersion: "12.1" } },
      ["gpu", "minCudaVersion"],
      "gpu.minCudaVersion and a non-empty allowedCudaVersions are mutually exclusive",
    ],
    [
      "a load balancer scaled by queue delay",
      { ...createBody, type: "LOAD_BALANCER" },
      ["scaling", "type"],
      "scaling.type must be REQUEST_COUNT on a LOAD_BALANCER endpoint",
    ],
    ["an unknown field", { ...createBody, gpuCount: 2 }, [], "unknown field gpuCount"],
    [
      "an idle timeout above an hour",
      { ...createBody, workers: { idleTimeout: 4000 } },
      ["workers", "idleTimeout"],
      "workers.idleTimeout must be at most 3600 s",
    ],
  ])("rejects a create with %s", async (_what, body, path, message) => {
    const error = await createError(body);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.path).toEqual(path);
    expect(error.message).toContain(message);
  });

  it("rejects an empty endpoint patch and excludedTypes without pools", async () => {
    const empty = await client.serverless.update("ep", {}).catch((e) => e);
    expect(empty).toBeInstanceOf(ValidationError);
    expect(empty.message).toContain("give at least one field to update");
    const excluded = await client.serverless
      .update("ep", { gpu: { excludedTypes: ["NVIDIA L40"] } })
      .catch((e) => e);
    expect(excluded.path).toEqual(["gpu", "excludedTypes"]);
    expect(excluded.message).toContain("gpu.excludedTypes needs pools");
  });

  it("rejects a template without an image, and a network mount on a template", async () => {
    const noImage = await client.templates.create({ name: "t" } as never).catch((e) => e);
    expect(noImage.path).toEqual(["image"]);
    expect(noImage.message).toContain("image is required");
    const mount = await client.templates
      .update("t", { mounts: { network: [{ volumeId: "v", path: "/data" }] } } as never)
      .catch((e) => e);
    expect(mount).toBeInstanceOf(ValidationError);
    expect(mount.message).toContain("unknown field mounts.network");
  });

  it("rejects bad worker-log options when workerLogs is called", () => {
    expect(() => client.serverless.workerLogs("ep", "w1", { tail: 6000 })).toThrow(
      /tail must be at most 5000/,
    );
    expect(() => client.serverless.workerLogs("ep", "w1", { source: "stdout" as never })).toThrow(
      /source must be container or system/,
    );
    expect(() => client.serverless.workerLogs("ep", "w1", { since: "yesterday" })).toThrow(
      /since must be a Date/,
    );
    expect(() => client.serverless.workerLogs("ep", "w1", { maxReconnects: -1 })).toThrow(
      /maxReconnects must be an integer >= 0/,
    );
  });
});

describe("against a v1 restUrl", () => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer();
    client = clientFor(server, { restUrl: `${server.url}/v1` });
  });
  afterEach(async () => {
    await server.close();
  });

  const calls: [string, (c: RunpodClient) => Promise<unknown>][] = [
    ["serverless.list", (c) => c.serverless.list()],
    ["serverless.get", (c) => c.serverless.get("ep")],
    ["serverless.create", (c) => c.serverless.create(createBody)],
    ["serverless.update", (c) => c.serverless.update("ep", { name: "x" })],
    ["serverless.delete", (c) => c.serverless.delete("ep")],
    ["serverless.releases", (c) => c.serverless.releases("ep")],
    ["serverless.workers", (c) => c.serverless.workers("ep")],
    ["templates.list", (c) => c.templates.list()],
    ["templates.get", (c) => c.templates.get("t")],
    ["templates.create", (c) => c.templates.create({ name: "t", image: "i" })],
    ["templates.update", (c) => c.templates.update("t", { name: "u" })],
    ["templates.delete", (c) => c.templates.delete("t")],
  ];

  it.each(calls)("%s says it needs REST v2 and sends nothing", async (name, call) => {
    const error = (await call(client).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.path).toEqual(["restUrl"]);
    expect(error.message).toContain(`client.${name.split(".")[0]} needs the REST v2 interface`);
    expect(error.message).toContain("ending in /v2");
    expect(server.requests).toEqual([]);
  });

  it("workerLogs throws when called, before any request", () => {
    expect(() => client.serverless.workerLogs("ep", "w1")).toThrow(
      /client\.serverless needs the REST v2 interface/,
    );
    expect(server.requests).toEqual([]);
  });
});

interface Schema {
  properties?: Record<string, unknown>;
  allOf?: Schema[];
  $ref?: string;
}

/** A copy of a JSON Schema without `unevaluatedProperties` (see its use below). */
function withoutUnevaluated<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutUnevaluated) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== "unevaluatedProperties")
        .map(([key, inner]) => [key, withoutUnevaluated(inner)]),
    ) as T;
  }
  return value;
}

/**
 * The bodies the client sends and the answers these tests script, checked against the schemas
 * of the v2 document (test/fixtures/openapi/rest-v2.serverless.schemas.json: its
 * components.schemas for /v2/serverless and /v2/templates, copied unchanged).
 */
describe("bodies and answers agree with the v2 document", () => {
  const schemas = JSON.parse(
    readFileSync(path.join(__dirname, "../fixtures/openapi/rest-v2.serverless.schemas.json"), "utf8"),
  ) as { $id: string };
  // ajv 8 does not see properties evaluated inside the document's `allOf` next to an `if`
  // without `else`, so with `unevaluatedProperties: false` it rejects even the document's own
  // CreateEndpointRequest examples. The checks run without that keyword, and `undeclared`
  // stands in for it: a top-level key the named schema does not declare (through allOf/$ref).
  const $defs = (schemas as unknown as { $defs: Record<string, Schema> }).$defs;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(withoutUnevaluated(schemas));
  const declared = (schema: Schema): string[] => [
    ...Object.keys(schema.properties ?? {}),
    ...(schema.allOf ?? []).flatMap(declared),
    ...(schema.$ref ? declared($defs[schema.$ref.replace("#/$defs/", "")] ?? {}) : []),
  ];
  const check = (name: string, value: unknown): string[] => {
    const validate = ajv.getSchema(`${schemas.$id}#/$defs/${name}`);
    if (!validate) throw new Error(`no schema ${name}`);
    const errors = validate(value)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    if (name.endsWith("Request") && value && typeof value === "object") {
      const known = declared($defs[name] ?? {});
      for (const key of Object.keys(value)) if (!known.includes(key)) errors.push(`/${key} is not declared`);
    }
    return errors;
  };

  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer({
      fallback: (req) => ({
        status: 200,
        body: req.pathname.startsWith("/v2/templates") ? template : endpoint,
      }),
    });
    client = clientFor(server, { restUrl: `${server.url}/v2` });
  });
  afterEach(async () => {
    await server.close();
  });
  const lastBody = () => JSON.parse(server.requests.at(-1)?.body ?? "null");

  it("the fixture rejects what the document forbids (so the checks below can fail)", () => {
    expect(check("CreateEndpointRequest", { ...createBody, name: undefined })).not.toEqual([]);
    expect(check("CreateEndpointRequest", { ...createBody, gpuCount: 1 })).toEqual([
      "/gpuCount is not declared",
    ]);
    expect(check("CreateEndpointRequest", { ...createBody, image: undefined })).not.toEqual([]);
    expect(check("ListEndpointWorkersResponse", { workers: [{ id: "w" }] })).not.toEqual([]);
    expect(check("CreateTemplateRequest", { name: "t" })).not.toEqual([]);
  });

  it("endpoint creates match CreateEndpointRequest (GPU, CPU, from a template, load balancer)", async () => {
    const bodies: ServerlessEndpointCreateInput[] = [
      createBody,
      {
        name: "cpu",
        image: "python:3.11-slim",
        type: "QUEUE",
        cpu: [
          { id: "cpu5c", vcpuCount: 4 },
          { id: "cpu5g", vcpuCount: 8 },
        ],
        scaling: { type: "QUEUE_DELAY", queueDelay: 0.5 },
        flashboot: "FLASHBOOT",
      },
      {
        name: "from-template",
        templateId: "tpl1",
        type: "QUEUE",
        gpu: {
          pools: ["ADA_24"],
          allowedCudaVersions: [],
          minCudaVersion: "12.4",
          excludedTypes: ["NVIDIA L4"],
        },
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        networkVolumes: ["vol1"],
        dataCenterIds: [],
        timeout: 600000,
      },
      {
        name: "lb",
        image: "me/server:1",
        type: "LOAD_BALANCER",
        gpu: { pools: ["ADA_24"], count: 2 },
        scaling: { type: "REQUEST_COUNT", requestCount: 4 },
        env: { PORT: "8000" },
        ports: ["8000/http"],
        registry: "reg1",
      },
    ];
    for (const body of bodies) {
      await client.serverless.create(body);
      expect(check("CreateEndpointRequest", lastBody())).toEqual([]);
    }
  });

  it("endpoint and template patches match UpdateEndpointRequest and UpdateTemplateRequest", async () => {
    for (const patch of [
      { image: "img:2" },
      { env: { A: "1" }, workers: { min: 1, max: 4 } },
      { gpu: { minCudaVersion: "" } },
      { gpu: { pools: ["ADA_24"], excludedTypes: ["NVIDIA L4"] }, templateId: "tpl2" },
    ]) {
      await client.serverless.update("ep", patch);
      expect(check("UpdateEndpointRequest", lastBody())).toEqual([]);
    }
    for (const patch of [
      { name: "t2" },
      { mounts: { persistent: { size: 20, path: "/data" } }, category: "AMD" as const },
    ]) {
      await client.templates.update("tpl1", patch);
      expect(check("UpdateTemplateRequest", lastBody())).toEqual([]);
    }
    await client.templates.create({ name: "t", image: "i", serverless: true, allowedCudaVersions: ["12.4"] });
    expect(check("CreateTemplateRequest", lastBody())).toEqual([]);
  });

  it("the scripted answers are answers the document allows", () => {
    expect(check("ListEndpointsResponse", { endpoints: [endpoint] })).toEqual([]);
    expect(check("ListEndpointReleasesResponse", releasesAnswer)).toEqual([]);
    expect(check("ListEndpointWorkersResponse", workersAnswer)).toEqual([]);
    expect(check("ListTemplatesResponse", { templates: [template] })).toEqual([]);
  });
});

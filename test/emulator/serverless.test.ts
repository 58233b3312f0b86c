/**
 * REST v2 serverless endpoints and templates on the emulator: CRUD as
 * the v2 document defines it, validated (422 problem+json), 404s, one store with the job API.
 * Every answer is checked against the document's schemas (fixtures/rest-v2.serverless.schemas.json).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const GPU_ENDPOINT = {
  name: "smoke",
  type: "QUEUE",
  image: "acme/model:1",
  env: { MODEL: "a" },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 2 },
};

const problem = (answer: { headers: Record<string, unknown>; body: unknown }) => {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
};

describe("the fixture", () => {
  it("rejects bodies and answers the document forbids (so the checks below can fail)", () => {
    expect(check("CreateEndpointRequest", GPU_ENDPOINT)).toEqual([]);
    expect(check("CreateEndpointRequest", { ...GPU_ENDPOINT, image: undefined })).not.toEqual([]);
    expect(check("Endpoint", { id: "x" })).not.toEqual([]);
    expect(check("ListEndpointWorkersResponse", { workers: [] })).not.toEqual([]);
  });
});

describe("/v2/serverless", () => {
  it("lists the --endpoint endpoints, in the document's shape", async () => {
    h = await harness({ endpoints: ["echo:2", "gpu"] });
    const list = await h.call("GET", "/v2/serverless");
    expect(list.status).toBe(200);
    expect(check("ListEndpointsResponse", list.body)).toEqual([]);
    expect(list.body.endpoints.map((e: { id: string }) => e.id)).toEqual(["echo", "gpu"]);
    expect(list.body.endpoints[0]).toMatchObject({
      name: "echo",
      image: "runpod-emulator/builtin:latest",
      workers: { max: 2 },
      requestUrls: { run: `${h.emu.serverlessUrl}/v2/echo/run` },
    });
  });

  it("creates an endpoint (201) that serves the job API at /v2/{id}/... at once", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/serverless", GPU_ENDPOINT);
    expect(created.status).toBe(201);
    expect(check("Endpoint", created.body)).toEqual([]);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      name: "smoke",
      type: "QUEUE",
      image: "acme/model:1",
      env: { MODEL: "a" },
      gpu: { pools: ["ADA_24"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
      workers: { min: 0, max: 2, idleTimeout: 10 },
      flashboot: "OFF",
      timeout: 300000,
    });
    expect(created.body.requestUrls.runSync).toBe(`${h.emu.serverlessUrl}/v2/${id}/runsync`);
    const ran = await h.call("POST", `/v2/${id}/runsync`, { input: { prompt: "hi" } });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
    expect(ran.body.workerId).toMatch(new RegExp(`^${id}-worker-\\d+$`));
    expect((await h.call("GET", `/v2/${id}/health`)).body.workers).toEqual({
      idle: 2,
      initializing: 0,
      ready: 2,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
    const got = await h.call("GET", `/v2/serverless/${id}`);
    expect(got.body).toEqual(created.body);
    const list = await h.call("GET", "/v2/serverless");
    expect(list.body.endpoints.map((e: { id: string }) => e.id)).toEqual(["echo", id]);
  });

  it("takes a CPU endpoint and reports its memory", async () => {
    h = await harness();
    const { gpu: _gpu, ...body } = GPU_ENDPOINT;
    const created = await h.call("POST", "/v2/serverless", { ...body, cpu: [{ id: "cpu3c", vcpuCount: 4 }] });
    expect(created.status).toBe(201);
    expect(check("Endpoint", created.body)).toEqual([]);
    expect(created.body.cpu).toEqual([{ id: "cpu3c", vcpuCount: 4, memory: 16 }]);
  });

  it("answers 422 problem+json naming each field the document's schema refuses", async () => {
    h = await harness();
    const noImage = await h.call("POST", "/v2/serverless", { ...GPU_ENDPOINT, image: undefined });
    expect(noImage.status).toBe(422);
    problem(noImage);
    expect(noImage.body.detail).toMatch(/image is required unless templateId is given/);
    const typo = await h.call("POST", "/v2/serverless", { ...GPU_ENDPOINT, imagee: "x" });
    expect(typo.status).toBe(422);
    expect(typo.body.detail).toMatch(/imagee/);
    const badScaling = await h.call("PATCH", "/v2/serverless/echo", { scaling: { type: "QUEUE_DELAY" } });
    expect(badScaling.status).toBe(422);
    problem(badScaling);
    const badWorkers = await h.call("PATCH", "/v2/serverless/echo", { workers: { idleTimeout: 0 } });
    expect(badWorkers.status).toBe(422);
    expect(badWorkers.body.errors.join(" ")).toMatch(/idleTimeout/);
  });

  it("answers 400 for the rules the schema cannot state: exactly one of gpu or cpu", async () => {
    h = await harness();
    const neither = await h.call("POST", "/v2/serverless", { ...GPU_ENDPOINT, gpu: undefined });
    expect(neither.status).toBe(400);
    problem(neither);
    expect(neither.body.detail).toMatch(/exactly one of gpu or cpu/);
    const both = await h.call("POST", "/v2/serverless", {
      ...GPU_ENDPOINT,
      cpu: [{ id: "cpu3c", vcpuCount: 2 }],
    });
    expect(both.status).toBe(400);
    const cuda = await h.call("POST", "/v2/serverless", {
      ...GPU_ENDPOINT,
      gpu: { pools: ["ADA_24"], allowedCudaVersions: ["12.4"], minCudaVersion: "12.1" },
    });
    expect(cuda.status).toBe(400);
    expect(cuda.body.detail).toMatch(/mutually exclusive/);
  });

  it("applies the client's request rules (one wire schema): they are 422s, a 400 rule beside one is too", async () => {
    h = await harness();
    const cpu = await h.call("POST", "/v2/serverless", {
      ...GPU_ENDPOINT,
      gpu: undefined,
      cpu: [{ id: "cpu3c", vcpuCount: 6 }],
    });
    expect(cpu.status).toBe(422);
    expect(cpu.body.errors.join(" ")).toMatch(/cpu\[0\]\.vcpuCount must be a power of two/);
    const empty = await h.call("PATCH", "/v2/serverless/echo", {});
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatch(/at least one field/);
    const excluded = await h.call("PATCH", "/v2/serverless/echo", { gpu: { excludedTypes: ["NVIDIA A40"] } });
    expect(excluded.status).toBe(422);
    expect(excluded.body.detail).toMatch(/excludedTypes needs pools/);
    // The CUDA rule (a 400 on its own) beside a schema failure: the schema's 422 wins.
    const mixed = await h.call("POST", "/v2/serverless", {
      ...GPU_ENDPOINT,
      gpu: { pools: ["ADA_24"], allowedCudaVersions: ["12.4"], minCudaVersion: "12.1", count: 0 },
    });
    expect(mixed.status).toBe(422);
  });

  it("creates a load-balancer endpoint, with requestUrls base and health (its serving: loadBalancer.test.ts)", async () => {
    h = await harness();
    const lb = await h.call("POST", "/v2/serverless", {
      ...GPU_ENDPOINT,
      type: "LOAD_BALANCER",
      scaling: { type: "REQUEST_COUNT", requestCount: 4 },
    });
    expect(lb.status).toBe(201);
    const base = `${h.emu.serverlessUrl}/lb/${lb.body.id}`;
    expect(lb.body).toMatchObject({ type: "LOAD_BALANCER", requestUrls: { base, health: `${base}/ping` } });
  });

  it("answers 404 problem+json for an unknown endpoint on every route", async () => {
    h = await harness();
    for (const [method, p] of [
      ["GET", "/v2/serverless/nope"],
      ["PATCH", "/v2/serverless/nope"],
      ["DELETE", "/v2/serverless/nope"],
      ["GET", "/v2/serverless/nope/releases"],
      ["GET", "/v2/serverless/nope/workers"],
      ["GET", "/v2/serverless/nope/workers/w/logs"],
      ["GET", "/v2/templates/nope"],
    ] as const) {
      const answer = await h.call(method, p, method === "PATCH" ? { name: "x" } : undefined);
      expect(answer.status, `${method} ${p}`).toBe(404);
      problem(answer);
    }
  });

  it("answers 405 with Allow to a method the document does not list for these paths", async () => {
    h = await harness();
    for (const [method, p, allow] of [
      ["PUT", "/v2/serverless/echo", "GET, PATCH, DELETE"],
      ["POST", "/v2/serverless/echo/releases", "GET"],
      ["DELETE", "/v2/serverless/echo/workers", "GET"],
      ["DELETE", "/v2/templates", "GET, POST"],
    ] as const) {
      const answer = await h.call(method, p, method === "DELETE" ? undefined : {});
      expect(answer.status, `${method} ${p}`).toBe(405);
      expect(answer.headers.allow).toBe(allow);
      problem(answer);
    }
  });

  it("deletes an endpoint (204): its job API answers 404 and its queued jobs end", async () => {
    h = await harness({ endpoints: ["echo", "gone:0"] });
    const queued = await h.call("POST", "/v2/gone/run", { input: {} });
    expect(queued.body.status).toBe("IN_QUEUE");
    const deleted = await h.call("DELETE", "/v2/serverless/gone");
    expect(deleted.status).toBe(204);
    expect((await h.call("GET", "/v2/serverless/gone")).status).toBe(404);
    const status = await h.call("GET", `/v2/gone/status/${queued.body.id}`);
    expect(status.status).toBe(404);
    expect(status.body).toEqual({ message: "endpoint gone not found" });
    expect((await h.call("GET", "/v2/serverless")).body.endpoints.map((e: { id: string }) => e.id)).toEqual([
      "echo",
    ]);
  });

  it("applies name, scaling and workers at once, without a release; workers.max resizes the workers", async () => {
    h = await harness({ endpoints: ["echo:1"] });
    const patched = await h.call("PATCH", "/v2/serverless/echo", {
      name: "renamed",
      workers: { max: 3 },
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
    });
    expect(patched.status).toBe(200);
    expect(check("Endpoint", patched.body)).toEqual([]);
    expect(patched.body).toMatchObject({ name: "renamed", workers: { max: 3 } });
    const releases = await h.call("GET", "/v2/serverless/echo/releases");
    expect(releases.body.endpointVersion).toBe(1);
    expect(releases.body.releases).toHaveLength(1);
    const workers = await h.call("GET", "/v2/serverless/echo/workers");
    expect(workers.body.summary).toMatchObject({ idle: 3, total: 3 });
    await h.call("PATCH", "/v2/serverless/echo", { workers: { max: 1 } });
    expect((await h.call("GET", "/v2/serverless/echo/workers")).body.summary.total).toBe(1);
    expect((await h.call("GET", "/v2/echo/health")).body.workers).toEqual({
      idle: 1,
      initializing: 0,
      ready: 1,
      running: 0,
      throttled: 0,
      unhealthy: 0,
    });
  });
});

describe("/v2/templates", () => {
  const TEMPLATE = { name: "model", image: "acme/model:2", env: { MODEL: "t" }, serverless: true };

  it("creates (201), lists, reads, patches and deletes templates in the document's shape", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/templates", TEMPLATE);
    expect(created.status).toBe(201);
    expect(check("Template", created.body)).toEqual([]);
    expect(created.body).toMatchObject({
      ...TEMPLATE,
      args: "",
      ports: [],
      registry: null,
      public: false,
      category: "NVIDIA",
      startSsh: true,
      startJupyter: true,
      allowedCudaVersions: [],
      mounts: {},
    });
    const id = created.body.id as string;
    const list = await h.call("GET", "/v2/templates");
    expect(check("ListTemplatesResponse", list.body)).toEqual([]);
    expect(list.body.templates).toEqual([created.body]);
    const patched = await h.call("PATCH", `/v2/templates/${id}`, { name: "renamed", disk: 40 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "renamed", disk: 40, image: "acme/model:2" });
    expect((await h.call("GET", `/v2/templates/${id}`)).body).toEqual(patched.body);
    expect((await h.call("DELETE", `/v2/templates/${id}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/templates/${id}`)).status).toBe(404);
  });

  it("answers 422 to a body the document refuses", async () => {
    h = await harness();
    const noImage = await h.call("POST", "/v2/templates", { name: "x" });
    expect(noImage.status).toBe(422);
    problem(noImage);
    const badCategory = await h.call("POST", "/v2/templates", { ...TEMPLATE, category: "TPU" });
    expect(badCategory.status).toBe(422);
    expect(badCategory.body.detail).toMatch(/category/);
  });

  it("gives an endpoint made from it its container settings (body fields win) as a snapshot", async () => {
    h = await harness();
    const tpl = (await h.call("POST", "/v2/templates", TEMPLATE)).body;
    const { image: _image, env: _env, ...rest } = GPU_ENDPOINT;
    const body = { ...rest, templateId: tpl.id, args: "--fast" };
    expect(check("CreateEndpointRequest", body)).toEqual([]);
    const ep = await h.call("POST", "/v2/serverless", body);
    expect(ep.status).toBe(201);
    expect(ep.body).toMatchObject({
      image: "acme/model:2",
      env: { MODEL: "t" },
      args: "--fast",
      templateId: tpl.id,
    });
    await h.call("PATCH", `/v2/templates/${tpl.id}`, { image: "acme/model:3" });
    expect((await h.call("GET", `/v2/serverless/${ep.body.id}`)).body.image).toBe("acme/model:2");
    const inUse = await h.call("DELETE", `/v2/templates/${tpl.id}`);
    expect(inUse.status).toBe(400);
    problem(inUse);
    expect(inUse.body.detail).toMatch(new RegExp(`used by endpoint ${ep.body.id}`));
  });

  it("refuses an endpoint from an unknown template with 404 and from a pod template with 422", async () => {
    h = await harness();
    const { image: _image, env: _env, ...rest } = GPU_ENDPOINT;
    const unknown = await h.call("POST", "/v2/serverless", { ...rest, templateId: "nope" });
    expect(unknown.status).toBe(404);
    problem(unknown);
    expect(unknown.body.detail).toMatch(/^templateId: no template nope/);
    const pod = (await h.call("POST", "/v2/templates", { ...TEMPLATE, serverless: false })).body;
    const fromPod = await h.call("POST", "/v2/serverless", { ...rest, templateId: pod.id });
    expect(fromPod.status).toBe(422);
    problem(fromPod);
    expect(fromPod.body.detail).toMatch(/^templateId: template \w+ is a pod template/);
    expect((await h.call("GET", "/v2/serverless")).body.endpoints).toHaveLength(1); // only the seeded echo
  });

  it("leaves templates with registry: null when their registry credential is deleted", async () => {
    h = await harness();
    const reg = (await h.call("POST", "/v2/registries", { name: "r", username: "u", password: "p" })).body;
    const tpl = (await h.call("POST", "/v2/templates", { ...TEMPLATE, registry: reg.id })).body;
    expect(tpl.registry).toBe(reg.id);
    expect((await h.call("DELETE", `/v2/registries/${reg.id}`)).status).toBe(204);
    const after = await h.call("GET", `/v2/templates/${tpl.id}`);
    expect(after.body.registry).toBeNull();
    expect(check("Template", after.body)).toEqual([]);
  });
});

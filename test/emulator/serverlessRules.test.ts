/**
 * The v2 document's rules for an endpoint's create, update and delete that
 * `ServerlessEndpoint` relies on: the compute family and `type` cannot change (a PATCH trying
 * either is refused, so the provider must replace), and a DELETE of an endpoint already gone is
 * a 404 (the provider counts it as done).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const BASE = {
  name: "rules",
  type: "QUEUE",
  image: "acme/model:1",
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 1 },
};

const problem = (answer: { headers: Record<string, unknown>; body: unknown }) => {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
};

describe("an endpoint's compute family", () => {
  it("cannot change from GPU to CPU: a PATCH with cpu on a GPU endpoint is a 400 that changes nothing", async () => {
    h = await harness({ endpoints: [] });
    const gpu = (await h.call("POST", "/v2/serverless", { ...BASE, gpu: { pools: ["ADA_24"] } })).body;
    const answer = await h.call("PATCH", `/v2/serverless/${gpu.id}`, {
      cpu: [{ id: "cpu3c", vcpuCount: 2 }],
    });
    expect(answer.status).toBe(400);
    problem(answer);
    expect(answer.body.detail).toMatch(/compute family cannot change/);
    const after = (await h.call("GET", `/v2/serverless/${gpu.id}`)).body;
    expect(after.cpu).toBeUndefined();
    expect(after.gpu.pools).toEqual(["ADA_24"]);
  });

  it("cannot change from CPU to GPU", async () => {
    h = await harness({ endpoints: [] });
    const cpu = (await h.call("POST", "/v2/serverless", { ...BASE, cpu: [{ id: "cpu3c", vcpuCount: 2 }] }))
      .body;
    const answer = await h.call("PATCH", `/v2/serverless/${cpu.id}`, { gpu: { pools: ["ADA_24"] } });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/compute family cannot change/);
  });

  it("is refused with both gpu and cpu in one PATCH (400)", async () => {
    h = await harness({ endpoints: [] });
    const gpu = (await h.call("POST", "/v2/serverless", { ...BASE, gpu: { pools: ["ADA_24"] } })).body;
    const answer = await h.call("PATCH", `/v2/serverless/${gpu.id}`, {
      gpu: { pools: ["ADA_24"] },
      cpu: [{ id: "cpu3c", vcpuCount: 2 }],
    });
    expect(answer.status).toBe(400);
  });
});

describe("an endpoint's type", () => {
  it("is not a field of the update: a PATCH naming it is a 422 and the type stays", async () => {
    h = await harness({ endpoints: [] });
    const ep = (await h.call("POST", "/v2/serverless", { ...BASE, gpu: { pools: ["ADA_24"] } })).body;
    const answer = await h.call("PATCH", `/v2/serverless/${ep.id}`, { type: "LOAD_BALANCER" });
    expect(answer.status).toBe(422);
    problem(answer);
    expect(answer.body.detail).toMatch(/type/);
    expect((await h.call("GET", `/v2/serverless/${ep.id}`)).body.type).toBe("QUEUE");
  });
});

describe("DELETE /v2/serverless/{id}", () => {
  it("answers 204, then 404 for the same id (gone)", async () => {
    h = await harness({ endpoints: [] });
    const ep = (await h.call("POST", "/v2/serverless", { ...BASE, gpu: { pools: ["ADA_24"] } })).body;
    expect((await h.call("DELETE", `/v2/serverless/${ep.id}`)).status).toBe(204);
    const again = await h.call("DELETE", `/v2/serverless/${ep.id}`);
    expect(again.status).toBe(404);
    problem(again);
    expect((await h.call("GET", `/v2/serverless/${ep.id}`)).status).toBe(404);
  });
});

/**
 * `/v2/templates` on the emulator as the `Template` resource relies on it: the update
 * and delete routes validate per the v2 document (422 naming the field, 404 for an unknown id),
 * a PATCH keeps a persistent mount it does not name (`mounts: {}`), a PATCH replaces `env`
 * whole (`env: {}` clears it), and the snapshot rule that makes "change the image, roll the
 * endpoint" one edit: a template PATCH alone makes no endpoint release, an endpoint PATCH of its
 * image does, template or not. Deleting an endpoint deletes its bound template.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const TEMPLATE = {
  name: "worker",
  image: "acme/worker:1",
  env: { MODEL: "a", TOKEN: "tok-1" },
  serverless: true,
  mounts: { persistent: { size: 20, path: "/workspace" } },
};

const ENDPOINT = {
  name: "ep",
  type: "QUEUE",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 1 },
};

const problem = (answer: { status: number; headers: Record<string, unknown>; body: unknown }) => {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
};

async function created(body: Record<string, unknown> = TEMPLATE): Promise<Record<string, any>> {
  const answer = await (h as Harness).call("POST", "/v2/templates", body);
  expect(answer.status).toBe(201);
  return answer.body;
}

describe("/v2/templates validation", () => {
  it("answers 422 naming the field to a PATCH the document refuses, and changes nothing", async () => {
    h = await harness();
    const tpl = await created();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: "" }, /name must not be empty/],
      [{ disk: 0 }, /disk must be at least 1 GB/],
      [{ category: "TPU" }, /category must be CPU, NVIDIA or AMD/],
      [{ env: { A: 1 } }, /env/],
      [{ mounts: { network: { id: "v" } } }, /network/],
      [{ mounts: { persistent: { size: 5, path: "/w" } } }, /size must be at least 10 GB/],
      [{ colour: "red" }, /colour/],
      [{ allowedCudaVersions: ["12"] }, /allowedCudaVersions must be a CUDA version/],
      [{}, /at least one field/],
    ];
    for (const [body, message] of cases) {
      const answer = await h.call("PATCH", `/v2/templates/${tpl.id}`, body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      problem(answer);
      expect(`${answer.body.detail} ${(answer.body.errors ?? []).join(" ")}`).toMatch(message);
    }
    expect((await h.call("GET", `/v2/templates/${tpl.id}`)).body).toEqual(tpl);
  });

  it("answers 404 to a GET, PATCH or DELETE of an unknown template", async () => {
    h = await harness();
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const answer = await h.call(
        method,
        "/v2/templates/nope",
        method === "PATCH" ? { name: "x" } : undefined,
      );
      expect(answer.status, method).toBe(404);
      problem(answer);
      expect(answer.body.detail).toBe("template nope not found");
    }
  });
});

describe("a template PATCH", () => {
  it("replaces env whole: env {} removes every variable", async () => {
    h = await harness();
    const tpl = await created();
    const one = await h.call("PATCH", `/v2/templates/${tpl.id}`, { env: { MODEL: "b" } });
    expect(one.body.env).toEqual({ MODEL: "b" });
    const none = await h.call("PATCH", `/v2/templates/${tpl.id}`, { env: {} });
    expect(none.status).toBe(200);
    expect(check("Template", none.body)).toEqual([]);
    expect(none.body.env).toEqual({});
  });

  it("keeps the persistent mount when mounts is {} and changes it when one is given", async () => {
    h = await harness();
    const tpl = await created();
    const kept = await h.call("PATCH", `/v2/templates/${tpl.id}`, { mounts: {} });
    expect(kept.body.mounts).toEqual({ persistent: { size: 20, path: "/workspace" } });
    const moved = await h.call("PATCH", `/v2/templates/${tpl.id}`, {
      mounts: { persistent: { size: 30, path: "/data" } },
    });
    expect(moved.body.mounts).toEqual({ persistent: { size: 30, path: "/data" } });
  });

  it("clears registry, ports, args and allowedCudaVersions with their empty values", async () => {
    h = await harness();
    const tpl = await created({
      ...TEMPLATE,
      registry: "cred-1",
      ports: ["8000/http"],
      args: "--fast",
      allowedCudaVersions: ["12.4"],
    });
    const cleared = await h.call("PATCH", `/v2/templates/${tpl.id}`, {
      registry: null,
      ports: [],
      args: "",
      allowedCudaVersions: [],
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ registry: null, ports: [], args: "", allowedCudaVersions: [] });
  });
});

describe("a template is a snapshot", () => {
  const releaseVersions = async (id: string) =>
    (
      (await (h as Harness).call("GET", `/v2/serverless/${id}/releases`)).body.releases as {
        version: number;
      }[]
    ).map((r) => r.version);

  it("a template PATCH alone makes no endpoint release; the endpoint's image PATCH does", async () => {
    h = await harness();
    const tpl = await created();
    const ep = (await h.call("POST", "/v2/serverless", { ...ENDPOINT, templateId: tpl.id, image: tpl.image }))
      .body;
    expect(ep).toMatchObject({ image: "acme/worker:1", templateId: tpl.id });
    expect(await releaseVersions(ep.id)).toEqual([1]);

    await h.call("PATCH", `/v2/templates/${tpl.id}`, { image: "acme/worker:2" });
    expect((await h.call("GET", `/v2/serverless/${ep.id}`)).body.image).toBe("acme/worker:1");
    expect(await releaseVersions(ep.id)).toEqual([1]);

    // What the resource pattern `image: tmpl.image` sends in the same update.
    const patched = await h.call("PATCH", `/v2/serverless/${ep.id}`, { image: "acme/worker:2" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ image: "acme/worker:2", templateId: tpl.id });
    const releases = (await h.call("GET", `/v2/serverless/${ep.id}/releases`)).body;
    expect(releases.endpointVersion).toBe(2);
    expect(releases.releases[0].diff).toEqual([
      { field: "image", old: "acme/worker:1", new: "acme/worker:2" },
    ]);
  });

  it("is refused deletion while bound, and deleted with its endpoint", async () => {
    h = await harness();
    const tpl = await created();
    const ep = (await h.call("POST", "/v2/serverless", { ...ENDPOINT, templateId: tpl.id })).body;
    const refused = await h.call("DELETE", `/v2/templates/${tpl.id}`);
    expect(refused.status).toBe(400);
    problem(refused);
    expect(refused.body.detail).toContain(`used by endpoint ${ep.id}`);
    expect((await h.call("DELETE", `/v2/serverless/${ep.id}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/templates/${tpl.id}`)).status).toBe(404);
    expect((await h.call("DELETE", `/v2/templates/${tpl.id}`)).status).toBe(404);
  });

  it("stays while another endpoint is still bound to it", async () => {
    h = await harness();
    const tpl = await created();
    const one = (await h.call("POST", "/v2/serverless", { ...ENDPOINT, templateId: tpl.id })).body;
    const two = (await h.call("POST", "/v2/serverless", { ...ENDPOINT, name: "ep2", templateId: tpl.id }))
      .body;
    expect((await h.call("DELETE", `/v2/serverless/${one.id}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/templates/${tpl.id}`)).status).toBe(200);
    expect((await h.call("DELETE", `/v2/serverless/${two.id}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/templates/${tpl.id}`)).status).toBe(404);
  });
});

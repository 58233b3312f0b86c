/**
 * Deleting a registry credential that something still names, as the v2 document's
 * `deleteRegistry` says: "Rejected if any pod currently uses this credential to pull its image.
 * Templates that reference it are not part of that check — they silently lose the reference
 * (`registry` becomes null) instead of blocking the delete." Endpoints are in neither sentence,
 * so the emulator leaves their `registry` as it was.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const GPU = "NVIDIA GeForce RTX 4090";

async function credential(name = "private"): Promise<string> {
  const created = await h.call("POST", "/v2/registries", { name, username: "u", password: "p" });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function pod(name: string, registry: string): Promise<string> {
  const created = await h.call("POST", "/v2/pods", {
    name,
    image: "acme/private:1",
    gpu: { id: GPU },
    registry,
  });
  expect(created.status).toBe(201);
  expect(created.body.registry).toBe(registry);
  return created.body.id as string;
}

describe("deleting a registry credential a pod pulls with", () => {
  it("answers 400 problem+json over v2, naming every pod that uses it, and keeps the credential", async () => {
    h = await harness();
    const reg = await credential();
    const first = await pod("trainer", reg);
    const second = await pod("notebook", reg);
    const refused = await h.call("DELETE", `/v2/registries/${reg}`);
    expect(refused.status).toBe(400);
    expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(check("ErrorResponse", refused.body)).toEqual([]);
    expect(refused.body.detail).toBe(
      `registry credential ${reg} is in use by pods ${first} ("trainer"), ${second} ("notebook") and cannot be deleted; ` +
        "give the pod another registry (PATCH /v2/pods/{id} with registry set to another credential or null) or delete the pod first",
    );
    expect((await h.call("GET", `/v2/registries/${reg}`)).status).toBe(200);
  });

  it("answers 400 {message} over v1 with the same words", async () => {
    h = await harness();
    const reg = await credential();
    const id = await pod("trainer", reg);
    const refused = await h.call("DELETE", `/v1/containerregistryauth/${reg}`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(
      `registry credential ${reg} is in use by pod ${id} ("trainer") and cannot be deleted`,
    );
    expect((await h.call("GET", `/v1/containerregistryauth/${reg}`)).status).toBe(200);
  });

  it("refuses while the pod is stopped, since it pulls again when it starts", async () => {
    h = await harness();
    const reg = await credential();
    const id = await pod("trainer", reg);
    const stopped = await h.call("POST", `/v2/pods/${id}/action`, { action: "stop" });
    expect(stopped.status).toBe(200);
    expect(stopped.body.status).toBe("EXITED");
    expect((await h.call("DELETE", `/v2/registries/${reg}`)).status).toBe(400);
  });

  it("deletes once the pod names another registry or is gone", async () => {
    h = await harness();
    const reg = await credential("a");
    const other = await credential("b");
    const kept = await pod("kept", reg);
    const deleted = await pod("deleted", reg);
    const moved = await h.call("PATCH", `/v2/pods/${kept}`, { registry: other });
    expect(moved.status).toBe(200);
    expect((await h.call("DELETE", `/v2/registries/${reg}`)).body.detail).toMatch(
      `pod ${deleted} ("deleted")`,
    );
    expect((await h.call("DELETE", `/v2/pods/${deleted}`)).status).toBe(204);
    expect((await h.call("DELETE", `/v2/registries/${reg}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/registries/${reg}`)).status).toBe(404);
    expect((await h.call("GET", `/v2/pods/${kept}`)).body.registry).toBe(other);
  });
});

describe("deleting a registry credential only templates and endpoints name", () => {
  it("deletes it: templates lose the reference, endpoints keep the id they were given", async () => {
    h = await harness();
    const reg = await credential();
    const tpl = await h.call("POST", "/v2/templates", {
      name: "model",
      image: "acme/private:1",
      serverless: true,
      registry: reg,
    });
    expect(tpl.status).toBe(201);
    const ep = await h.call("POST", "/v2/serverless", {
      name: "private",
      type: "QUEUE",
      image: "acme/private:1",
      registry: reg,
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { max: 1 },
    });
    expect(ep.status).toBe(201);
    expect((await h.call("DELETE", `/v2/registries/${reg}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/templates/${tpl.body.id}`)).body.registry).toBeNull();
    expect((await h.call("GET", `/v2/serverless/${ep.body.id}`)).body.registry).toBe(reg);
  });
});

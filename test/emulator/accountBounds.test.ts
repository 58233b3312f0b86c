/**
 * The emulator bounds what one object and one account hold, so that a client cannot run it out of
 * memory: an env over MAX_ENV_BYTES on an endpoint or a template, or one endpoint, template,
 * network volume, registry auth or pod past the account's most, is refused with 400 naming the
 * bound, and nothing changes; an endpoint keeps its newest MAX_RELEASES_PER_ENDPOINT releases.
 * Filled to each bound, the list answers every object, so lists stay bounded too.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  MAX_ENDPOINTS_PER_ACCOUNT,
  MAX_ENV_BYTES,
  MAX_NETWORK_VOLUMES_PER_ACCOUNT,
  MAX_PODS_PER_ACCOUNT,
  MAX_REGISTRY_AUTHS_PER_ACCOUNT,
  MAX_RELEASES_PER_ENDPOINT,
  MAX_TEMPLATES_PER_ACCOUNT,
} from "../../src/emulator/serviceFacts";
import { type Harness, harness } from "./helpers";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ENDPOINT = {
  name: "bounded",
  type: "QUEUE",
  image: "acme/model:1",
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 1 },
  gpu: { pools: ["ADA_24"] },
};
const TEMPLATE = { name: "bounded", image: "acme/model:1" };

/** Makes `count` calls, 20 at a time. */
async function inBatches<T>(count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  for (let start = 0; start < count; start += 20) {
    const batch = Array.from({ length: Math.min(20, count - start) }, (_, i) => call(start + i));
    answers.push(...(await Promise.all(batch)));
  }
  return answers;
}

/** An env whose names and values take exactly `bytes` bytes. */
function envOf(bytes: number): Record<string, string> {
  return { BIG: "x".repeat(bytes - "BIG".length) };
}

describe("an env", () => {
  it("of exactly MAX_ENV_BYTES is accepted on an endpoint, one byte more is a 400 naming env", async () => {
    h = await harness({ endpoints: [] });
    const ok = await h.call("POST", "/v2/serverless", { ...ENDPOINT, env: envOf(MAX_ENV_BYTES) });
    expect(ok.status).toBe(201);
    const over = await h.call("POST", "/v2/serverless", { ...ENDPOINT, env: envOf(MAX_ENV_BYTES + 1) });
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(new RegExp(`^env: at most ${MAX_ENV_BYTES} bytes`));
    expect(
      (await h.call("GET", "/v2/serverless")).body.endpoints.map((e: { env: object }) => e.env),
    ).not.toContainEqual(envOf(MAX_ENV_BYTES + 1));
  });

  it("over the bound in an endpoint PATCH is refused and the endpoint keeps its env and version", async () => {
    h = await harness({ endpoints: [] });
    const created = (await h.call("POST", "/v2/serverless", { ...ENDPOINT, env: { A: "1" } })).body;
    const answer = await h.call("PATCH", `/v2/serverless/${created.id}`, { env: envOf(MAX_ENV_BYTES + 1) });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toMatch(/^env: /);
    const after = (await h.call("GET", `/v2/serverless/${created.id}`)).body;
    expect(after.env).toEqual({ A: "1" });
    expect((await h.call("GET", `/v2/serverless/${created.id}/releases`)).body.endpointVersion).toBe(1);
  });

  it("over the bound on a template create or PATCH is refused", async () => {
    h = await harness({ endpoints: [] });
    const over = await h.call("POST", "/v2/templates", { ...TEMPLATE, env: envOf(MAX_ENV_BYTES + 1) });
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(/^env: /);
    const created = (await h.call("POST", "/v2/templates", TEMPLATE)).body;
    const patched = await h.call("PATCH", `/v2/templates/${created.id}`, { env: envOf(MAX_ENV_BYTES + 1) });
    expect(patched.status).toBe(400);
    expect((await h.call("GET", `/v2/templates/${created.id}`)).body.env).toEqual({});
  });
});

describe("the account", () => {
  it("holds at most MAX_ENDPOINTS_PER_ACCOUNT endpoints, lists them all, and has room again after a delete", async () => {
    h = await harness({ endpoints: [] });
    const harnessed = h;
    const created = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_ACCOUNT }, () =>
        harnessed.call("POST", "/v2/serverless", ENDPOINT),
      ),
    );
    const over = await h.call("POST", "/v2/serverless", ENDPOINT);
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(`holds ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints`);
    expect((await h.call("GET", "/v2/serverless")).body.endpoints.length).toBe(MAX_ENDPOINTS_PER_ACCOUNT);
    // Deleting one makes room again.
    const mine = created.find((a) => a.status === 201)?.body.id;
    expect((await h.call("DELETE", `/v2/serverless/${mine}`)).status).toBe(204);
    expect((await h.call("POST", "/v2/serverless", ENDPOINT)).status).toBe(201);
  });

  it("holds at most MAX_TEMPLATES_PER_ACCOUNT templates", async () => {
    h = await harness({ endpoints: [] });
    const created = await inBatches(MAX_TEMPLATES_PER_ACCOUNT, (i) =>
      (h as Harness).call("POST", "/v2/templates", { ...TEMPLATE, name: `t${i}` }),
    );
    expect(created.filter((a) => a.status !== 201).map((a) => a.body)).toEqual([]);
    const over = await h.call("POST", "/v2/templates", TEMPLATE);
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(`holds ${MAX_TEMPLATES_PER_ACCOUNT} templates`);
  });
});

describe("the account's other objects", () => {
  it("holds at most MAX_NETWORK_VOLUMES_PER_ACCOUNT network volumes, lists them all, and has room after a delete", async () => {
    h = await harness({ endpoints: [] });
    const created = await inBatches(MAX_NETWORK_VOLUMES_PER_ACCOUNT, (i) =>
      (h as Harness).call("POST", "/v2/network-volumes", { name: `v${i}`, size: 10, dataCenter: "EU-RO-1" }),
    );
    expect(created.filter((a) => a.status !== 201).map((a) => a.body)).toEqual([]);
    const over = await h.call("POST", "/v2/network-volumes", {
      name: "over",
      size: 10,
      dataCenter: "EU-RO-1",
    });
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(`holds ${MAX_NETWORK_VOLUMES_PER_ACCOUNT} network volumes`);
    const v1Over = await h.call("POST", "/v1/networkvolumes", {
      name: "over",
      size: 10,
      dataCenterId: "EU-RO-1",
    });
    expect(v1Over.status).toBe(400);
    const listed = (await h.call("GET", "/v2/network-volumes")).body.networkVolumes;
    expect(listed.length).toBe(MAX_NETWORK_VOLUMES_PER_ACCOUNT);
    expect(listed.map((v: { name: string }) => v.name)).not.toContain("over");
    expect((await h.call("DELETE", `/v2/network-volumes/${created[0]?.body.id}`)).status).toBe(204);
    expect(
      (await h.call("POST", "/v2/network-volumes", { name: "again", size: 10, dataCenter: "EU-RO-1" }))
        .status,
    ).toBe(201);
  });

  it("holds at most MAX_REGISTRY_AUTHS_PER_ACCOUNT registry auths, and lists them all", async () => {
    h = await harness({ endpoints: [] });
    const created = await inBatches(MAX_REGISTRY_AUTHS_PER_ACCOUNT, (i) =>
      (h as Harness).call("POST", "/v2/registries", { name: `r${i}`, username: "u", password: "p" }),
    );
    expect(created.filter((a) => a.status !== 201).map((a) => a.body)).toEqual([]);
    const over = await h.call("POST", "/v2/registries", { name: "over", username: "u", password: "p" });
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(`holds ${MAX_REGISTRY_AUTHS_PER_ACCOUNT} registry auths`);
    expect(over.body.detail).not.toContain('"p"');
    const listed = (await h.call("GET", "/v2/registries")).body.registries;
    expect(listed.length).toBe(MAX_REGISTRY_AUTHS_PER_ACCOUNT);
    expect((await h.call("DELETE", `/v2/registries/${created[0]?.body.id}`)).status).toBe(204);
    expect(
      (await h.call("POST", "/v2/registries", { name: "again", username: "u", password: "p" })).status,
    ).toBe(201);
  });

  it("holds at most MAX_PODS_PER_ACCOUNT pods, stopped ones included, and lists them all", async () => {
    h = await harness({ endpoints: [] });
    // Each pod stops at once, giving its vCPUs back: the bound, not stock, is what refuses.
    const created = await inBatches(MAX_PODS_PER_ACCOUNT, async (i) => {
      const pod = await (h as Harness).call("POST", "/v2/pods", {
        name: `p${i}`,
        image: "x",
        cpu: { id: "cpu3c", vcpuCount: 2 },
      });
      if (pod.status === 201)
        await (h as Harness).call("POST", `/v2/pods/${pod.body.id}/action`, { action: "stop" });
      return pod;
    });
    expect(created.filter((a) => a.status !== 201).map((a) => a.body)).toEqual([]);
    const over = await h.call("POST", "/v2/pods", {
      name: "over",
      image: "x",
      cpu: { id: "cpu3c", vcpuCount: 2 },
    });
    expect(over.status).toBe(400);
    expect(over.body.detail).toMatch(`holds ${MAX_PODS_PER_ACCOUNT} pods`);
    expect((await h.call("GET", "/v2/pods")).body.pods.length).toBe(MAX_PODS_PER_ACCOUNT);
    expect((await h.call("DELETE", `/v2/pods/${created[0]?.body.id}`)).status).toBe(204);
    expect(
      (await h.call("POST", "/v2/pods", { name: "again", image: "x", cpu: { id: "cpu3c", vcpuCount: 2 } }))
        .status,
    ).toBe(201);
  });
});

describe("an endpoint's releases", () => {
  it("keep the newest MAX_RELEASES_PER_ENDPOINT, with their versions, however many changes were made", async () => {
    h = await harness({ endpoints: [] });
    const created = (await h.call("POST", "/v2/serverless", ENDPOINT)).body;
    const changes = MAX_RELEASES_PER_ENDPOINT + 5;
    for (let i = 1; i <= changes; i++) {
      const patched = await h.call("PATCH", `/v2/serverless/${created.id}`, { image: `acme/model:${i + 1}` });
      expect(patched.status).toBe(200);
    }
    const answer = (await h.call("GET", `/v2/serverless/${created.id}/releases`)).body;
    expect(answer.endpointVersion).toBe(changes + 1);
    expect(answer.releases.map((r: { version: number }) => r.version)).toEqual(
      Array.from({ length: MAX_RELEASES_PER_ENDPOINT }, (_, i) => changes + 1 - i),
    );
  });
});

describe("finished jobs", () => {
  it("are kept at most retention.maxJobs, the oldest forgotten first with a 404 saying why", async () => {
    h = await harness({ endpoints: ["echo:4"], retention: { maxJobs: 5 } });
    const harnessed = h;
    const ids = await inBatches(8, async (i) => {
      const answer = await harnessed.call("POST", "/v2/echo/runsync", { input: { n: i } });
      expect(answer.body.status).toBe("COMPLETED");
      return answer.body.id as string;
    });
    const statuses = await Promise.all(ids.map((id) => harnessed.call("GET", `/v2/echo/status/${id}`)));
    const kept = statuses.filter((s) => s.status === 200);
    const gone = statuses.filter((s) => s.status === 404);
    expect(kept.length).toBe(5);
    expect(gone.length).toBe(3);
    for (const g of gone) {
      expect(g.body.error ?? g.body.detail ?? JSON.stringify(g.body)).toMatch(
        /evicted early, oldest first.*5 finished jobs \(retention\.maxJobs\)/,
      );
    }
  });

  it("refuses a retention.maxJobs that is not a non-negative integer, naming it", async () => {
    await expect(harness({ retention: { maxJobs: -1 } })).rejects.toThrow(/retention\.maxJobs/);
  });
});

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  BadRequestError,
  NotFoundError,
  RateLimitError,
  ResponseValidationError,
  RunpodClient,
  UnprocessableEntityError,
} from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { clientFor, recordingSleep } from "./helpers";

/** What differs between the dialects; the assertions are the same. */
const dialects = [
  {
    name: "v1",
    registries: "/v1/containerregistryauth",
    volumes: "/v1/networkvolumes",
    createdStatus: 200,
    wrapRegistries: (items: unknown[]) => items,
    wrapVolumes: (items: unknown[]) => items,
    wireVolume: (v: { id: string; name: string; size: number; dataCenterId: string }) => v,
    error: (status: number, text: string) => ({ status, body: { message: text } }),
  },
  {
    name: "v2",
    registries: "/v2/registries",
    volumes: "/v2/network-volumes",
    createdStatus: 201,
    wrapRegistries: (items: unknown[]) => ({ registries: items }),
    wrapVolumes: (items: unknown[]) => ({ networkVolumes: items }),
    wireVolume: ({
      dataCenterId,
      ...v
    }: {
      id: string;
      name: string;
      size: number;
      dataCenterId: string;
    }) => ({
      ...v,
      dataCenter: dataCenterId,
      type: "STANDARD",
    }),
    error: (status: number, text: string) => ({
      status,
      headers: { "content-type": "application/problem+json" },
      body: { title: "Error", status, detail: text },
    }),
  },
] as const;

const volume = { id: "vol-1", name: "data", size: 50, dataCenterId: "EU-RO-1" };

describe.each(dialects)("management over REST $name", (d) => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer();
    client = clientFor(server, { restUrl: `${server.url}/${d.name}` });
  });
  afterEach(async () => {
    await server.close();
  });
  const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);
  const user = (v: typeof volume) => (d.name === "v2" ? { ...v, type: "STANDARD" } : v);

  it("reports its dialect", () => {
    expect(client.restDialect).toBe(d.name);
  });

  it("creates a registry auth", async () => {
    server.enqueue({ status: d.createdStatus, body: { id: "r1", name: "hub" } });
    expect(await client.registryAuths.create({ name: "hub", username: "u", password: "p" })).toEqual({
      id: "r1",
      name: "hub",
    });
    expect(sent()).toEqual([`POST ${d.registries}`]);
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ name: "hub", username: "u", password: "p" });
  });

  it("lists, gets and deletes registry auths", async () => {
    server.enqueue(
      { body: d.wrapRegistries([{ id: "r1", name: "hub" }]) },
      { body: { id: "r1", name: "hub" } },
      { status: 204 },
    );
    expect(await client.registryAuths.list()).toEqual([{ id: "r1", name: "hub" }]);
    expect(await client.registryAuths.get("r1")).toEqual({ id: "r1", name: "hub" });
    await client.registryAuths.delete("r1");
    expect(sent()).toEqual([`GET ${d.registries}`, `GET ${d.registries}/r1`, `DELETE ${d.registries}/r1`]);
  });

  it("lists and gets network volumes in the one user-facing shape", async () => {
    server.enqueue({ body: d.wrapVolumes([d.wireVolume(volume)]) }, { body: d.wireVolume(volume) });
    expect(await client.networkVolumes.list()).toEqual([user(volume)]);
    expect(await client.networkVolumes.get("vol-1")).toEqual(user(volume));
    expect(sent()).toEqual([`GET ${d.volumes}`, `GET ${d.volumes}/vol-1`]);
  });

  it("creates, updates and deletes a network volume", async () => {
    server.enqueue(
      { status: d.createdStatus, body: d.wireVolume(volume) },
      { body: d.wireVolume({ ...volume, size: 60 }) },
      { status: 204 },
    );
    expect(await client.networkVolumes.create({ name: "data", size: 50, dataCenterId: "EU-RO-1" })).toEqual(
      user(volume),
    );
    expect(await client.networkVolumes.update("vol-1", { size: 60 })).toEqual(user({ ...volume, size: 60 }));
    await client.networkVolumes.delete("vol-1");
    expect(sent()).toEqual([`POST ${d.volumes}`, `PATCH ${d.volumes}/vol-1`, `DELETE ${d.volumes}/vol-1`]);
    const dc = d.name === "v2" ? { dataCenter: "EU-RO-1" } : { dataCenterId: "EU-RO-1" };
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ name: "data", size: 50, ...dc });
    expect(JSON.parse(server.requests[1]?.body ?? "")).toEqual({ size: 60 });
  });

  it("maps a 404 to NotFoundError with the service's text", async () => {
    server.enqueue(d.error(404, "network volume vol-9 not found"));
    const e = (await client.networkVolumes.get("vol-9").catch((x: unknown) => x)) as NotFoundError;
    expect(e).toBeInstanceOf(NotFoundError);
    expect(e.message).toContain("network volume vol-9 not found");
    expect(e.message).toContain(`GET ${d.volumes}/vol-9`);
  });

  it("maps a shrink rejection to BadRequestError", async () => {
    server.enqueue(d.error(400, "size can only grow"));
    await expect(client.networkVolumes.update("vol-1", { size: 20 })).rejects.toBeInstanceOf(BadRequestError);
  });

  it("does not retry a create answered 500", async () => {
    server.enqueue(d.error(500, "oops"));
    await expect(client.registryAuths.create({ name: "a", username: "u", password: "p" })).rejects.toThrow(
      /oops/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it("rejects a list of the other dialect's shape", async () => {
    const other = d.name === "v1" ? { registries: [] } : [];
    server.enqueue({ body: other });
    await expect(client.registryAuths.list()).rejects.toBeInstanceOf(ResponseValidationError);
  });
});

describe("REST v2 specifics", () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("sends type and maps problem+json validation errors, keeping detail and errors", async () => {
    server.enqueue({
      status: 422,
      headers: { "content-type": "application/problem+json" },
      body: {
        title: "Unprocessable Entity",
        status: 422,
        detail: "Request validation failed.",
        errors: ["$.dataCenter: unknown data center 'XX'"],
      },
    });
    const client = clientFor(server, { restUrl: `${server.url}/v2` });
    const e = (await client.networkVolumes
      .create({ name: "n", size: 10, dataCenterId: "XX", type: "HIGH_PERFORMANCE" })
      .catch((x: unknown) => x)) as UnprocessableEntityError;
    expect(e).toBeInstanceOf(UnprocessableEntityError);
    expect(e.message).toContain("Request validation failed.");
    expect(e.message).toContain("$.dataCenter: unknown data center 'XX'");
    expect(e.body).toMatchObject({ errors: ["$.dataCenter: unknown data center 'XX'"] });
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({
      name: "n",
      size: 10,
      dataCenter: "XX",
      type: "HIGH_PERFORMANCE",
    });
  });

  it("honours Retry-After on a 429", async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue(
      {
        status: 429,
        headers: { "retry-after": "3", "content-type": "application/problem+json" },
        body: { title: "Too Many Requests", status: 429, detail: "slow down" },
      },
      { body: { registries: [] } },
    );
    await clientFor(server, { restUrl: `${server.url}/v2`, sleep }).registryAuths.list();
    expect(sleeps).toEqual([3000]);
  });

  it("honours the RateLimit header's reset time when Retry-After is absent", async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue(
      { status: 429, headers: { ratelimit: '"minute";r=0;t=12, "hour";r=2800;t=1812' } },
      { body: { registries: [] } },
    );
    await clientFor(server, { restUrl: `${server.url}/v2`, sleep }).registryAuths.list();
    expect(sleeps).toEqual([12_000]);
  });

  it("waits for the reset before the next call when an answer says a quota window is used up", async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue(
      { body: { registries: [] }, headers: { ratelimit: '"minute";r=0;t=5, "hour";r=10;t=900' } },
      { body: { registries: [] }, headers: { ratelimit: '"minute";r=59;t=60' } },
      { body: { registries: [] } },
    );
    const client = clientFor(server, { restUrl: `${server.url}/v2`, sleep });
    await client.registryAuths.list();
    expect(sleeps).toEqual([]);
    await client.registryAuths.list();
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(4000);
    expect(sleeps[0]).toBeLessThanOrEqual(5000);
    await client.registryAuths.list();
    expect(sleeps).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it("gives up with RateLimitError once retries are spent", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after": "0" } },
      { status: 429, headers: { "retry-after": "0" } },
    );
    const client = clientFor(server, { restUrl: `${server.url}/v2`, maxRetries: 1 });
    await expect(client.networkVolumes.list()).rejects.toBeInstanceOf(RateLimitError);
    expect(server.requests).toHaveLength(2);
  });

  it("appends /v2 to a restUrl without a version segment", async () => {
    server.enqueue({ body: { networkVolumes: [] } });
    const client = clientFor(server, { restUrl: server.url });
    expect(await client.networkVolumes.list()).toEqual([]);
    expect(server.requests[0]?.url).toBe("/v2/network-volumes");
  });
});

describe.each(["v1", "v2"] as const)("against the emulator over REST %s", (dialect) => {
  let emu: RunningEmulator;
  let client: RunpodClient;
  beforeAll(async () => {
    emu = await startEmulator({
      port: 0,
      volumes: [{ id: "seed-1", name: "seeded", size: 100, dataCenterId: "EU-RO-1" }],
    });
    client = new RunpodClient({
      apiKey: emu.apiKey,
      restUrl: dialect === "v1" ? emu.restUrl : emu.restUrlV2,
      serverlessUrl: emu.serverlessUrl,
      env: {},
    });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("runs a registry auth lifecycle", async () => {
    const created = await client.registryAuths.create({
      name: `hub-${dialect}`,
      username: "u",
      password: "p",
    });
    expect(await client.registryAuths.get(created.id)).toMatchObject({
      id: created.id,
      name: `hub-${dialect}`,
    });
    expect((await client.registryAuths.list()).map((r) => r.name)).toContain(`hub-${dialect}`);
    await client.registryAuths.delete(created.id);
    await expect(client.registryAuths.get(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reads, grows and deletes a network volume in the user-facing shape", async () => {
    expect(await client.networkVolumes.get("seed-1")).toMatchObject({
      id: "seed-1",
      size: 100,
      dataCenterId: "EU-RO-1",
    });
    const created = await client.networkVolumes.create({
      name: "scratch",
      size: 20,
      dataCenterId: "US-KS-2",
    });
    expect(created).toMatchObject({ name: "scratch", size: 20, dataCenterId: "US-KS-2" });
    expect((await client.networkVolumes.update(created.id, { size: 30 })).size).toBe(30);
    await expect(client.networkVolumes.update(created.id, { size: 25 })).rejects.toBeInstanceOf(
      BadRequestError,
    );
    await client.networkVolumes.delete(created.id);
    expect((await client.networkVolumes.list()).map((v) => v.id)).toEqual(["seed-1"]);
  });
});

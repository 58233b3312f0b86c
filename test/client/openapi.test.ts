/**
 * The client's REST v2 request bodies, and the v2 answers it parses (as the emulator sends them),
 * checked against the schemas of the service's OpenAPI document
 * (test/fixtures/openapi/rest-v2.schemas.json, copied unchanged from rest-v2.openapi.json).
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { checkV2Schema } from "../support/v2Schemas";
import { clientFor } from "./helpers";

const check = checkV2Schema;

describe("the fixture", () => {
  it("rejects bodies the document forbids (so the checks below can fail)", () => {
    expect(check("CreateNetworkVolumeRequest", { name: "n", size: 10, dataCenterId: "EU" })).not.toEqual([]);
    expect(check("CreateNetworkVolumeRequest", { name: "n", size: 5, dataCenter: "EU" })).not.toEqual([]);
    expect(check("UpdateNetworkVolumeRequest", {})).not.toEqual([]);
    expect(check("ListRegistriesResponse", [])).not.toEqual([]);
    expect(check("ErrorResponse", { message: "x" })).not.toEqual([]);
    expect(check("CreateDelegationRequest", { resource: "arn", bogus: 1 })).not.toEqual([]);
    expect(check("EcrDelegation", { id: "d" })).not.toEqual([]);
  });
});

describe("v2 request bodies the client sends", () => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeAll(async () => {
    server = await startScriptedServer({
      fallback: (req) =>
        req.pathname.startsWith("/v2/registries")
          ? { status: 201, body: { id: "r1", name: "hub" } }
          : { status: 201, body: { id: "v1", name: "n", size: 10, dataCenter: "EU-RO-1", type: "STANDARD" } },
    });
    client = clientFor(server, { restUrl: `${server.url}/v2` });
  });
  afterAll(async () => {
    await server.close();
  });
  const lastBody = () => JSON.parse(server.requests.at(-1)?.body ?? "null");

  it("registry create matches CreateRegistryRequest", async () => {
    await client.registryAuths.create({ name: "hub", username: "user", password: "pw" });
    expect(check("CreateRegistryRequest", lastBody())).toEqual([]);
  });

  it("volume create matches CreateNetworkVolumeRequest, with and without type, at both size bounds", async () => {
    for (const input of [
      { name: "n", size: 10, dataCenterId: "EU-RO-1" },
      { name: "n", size: 4096, dataCenterId: "EU-RO-1", type: "HIGH_PERFORMANCE" as const },
      { name: "n", size: 50, dataCenterId: "EU-RO-1", type: "STANDARD" as const },
    ]) {
      await client.networkVolumes.create(input);
      expect(check("CreateNetworkVolumeRequest", lastBody())).toEqual([]);
    }
  });

  it("volume update matches UpdateNetworkVolumeRequest", async () => {
    for (const input of [{ name: "renamed" }, { size: 200 }, { name: "both", size: 4096 }]) {
      await client.networkVolumes.update("v1", input);
      expect(check("UpdateNetworkVolumeRequest", lastBody())).toEqual([]);
    }
  });
});

describe("v2 answers of the emulator", () => {
  let emu: RunningEmulator;
  const call = async (method: "GET" | "POST" | "PATCH" | "DELETE", p: string, body?: unknown) => {
    const res = await request(`${emu.restUrlV2}${p}`, {
      method,
      headers: { authorization: `Bearer ${emu.apiKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      type: String(res.headers["content-type"] ?? ""),
      json: text ? JSON.parse(text) : undefined,
    };
  };
  beforeAll(async () => {
    emu = await startEmulator({
      port: 0,
      volumes: [{ id: "seed", name: "s", size: 100, dataCenterId: "EU-RO-1" }],
    });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("registry answers match Registry and ListRegistriesResponse", async () => {
    const created = await call("POST", "/registries", { name: "hub", username: "u", password: "p" });
    expect(created.status).toBe(201);
    expect(check("Registry", created.json)).toEqual([]);
    expect(check("Registry", (await call("GET", `/registries/${created.json.id}`)).json)).toEqual([]);
    expect(check("ListRegistriesResponse", (await call("GET", "/registries")).json)).toEqual([]);
  });

  it("volume answers match NetworkVolume and ListNetworkVolumesResponse", async () => {
    const created = await call("POST", "/network-volumes", { name: "n", size: 10, dataCenter: "EU-RO-1" });
    expect(created.status).toBe(201);
    expect(check("NetworkVolume", created.json)).toEqual([]);
    expect(
      check("NetworkVolume", (await call("PATCH", `/network-volumes/${created.json.id}`, { size: 20 })).json),
    ).toEqual([]);
    expect(check("NetworkVolume", (await call("GET", "/network-volumes/seed")).json)).toEqual([]);
    expect(check("ListNetworkVolumesResponse", (await call("GET", "/network-volumes")).json)).toEqual([]);
  });

  it("ECR delegation answers match EcrDelegation and ListDelegationsResponse", async () => {
    const resource = "arn:aws:ecr:eu-west-1:123456789012:repository/team/app:v3";
    const created = await call("POST", "/registries/delegations", { resource });
    expect(created.status).toBe(201);
    expect(check("CreateDelegationRequest", { resource })).toEqual([]);
    expect(check("EcrDelegation", created.json)).toEqual([]);
    expect(check("ListDelegationsResponse", (await call("GET", "/registries/delegations")).json)).toEqual([]);
    expect((await call("DELETE", `/registries/delegations/${created.json.id}`)).status).toBe(204);
  });

  it("error answers are problem+json matching ErrorResponse", async () => {
    const answers = [
      await call("GET", "/network-volumes/nope"),
      await call("POST", "/network-volumes", { name: "n", size: 5, dataCenter: "EU-RO-1" }),
      await call("POST", "/registries", { name: "x", username: "u", password: "p", bogus: 1 }),
      await call("PATCH", "/network-volumes/seed", { size: 50 }),
      await call("POST", "/registries/delegations", { resource: "not-an-arn" }),
      await call("DELETE", "/registries/delegations/deleg_none"),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.type).toContain("application/problem+json");
      expect(check("ErrorResponse", answer.json)).toEqual([]);
    }
  });

  it("the client maps those answers onto its one shape", async () => {
    const client = new RunpodClient({
      apiKey: emu.apiKey,
      restUrl: emu.restUrlV2,
      serverlessUrl: emu.serverlessUrl,
      env: {},
    });
    expect(await client.networkVolumes.get("seed")).toMatchObject({ id: "seed", dataCenterId: "EU-RO-1" });
  });
});

/**
 * `client.registries.delegations` (REST v2 `/v2/registries/delegations`): the bodies it sends and
 * the answers it parses, checked against the document's schemas (test/fixtures/openapi), its
 * typed errors and retry rules against a scripted server, and the lifecycle against the emulator.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  NotFoundError,
  ResponseValidationError,
  RunpodClient,
  UnprocessableEntityError,
  ValidationError,
} from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { checkV2Schema as check } from "../support/v2Schemas";
import { clientFor, recordingSleep } from "./helpers";

const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";
const DELEGATION = {
  id: "deleg_abc123",
  name: "deploy",
  delegatorUserId: "user_xyz",
  awsUser: "418399314813",
  repository: "runpod/deployment",
  tag: "latest",
  awsRegion: "us-east-2",
  dockerRegistryUri: "418399314813.dkr.ecr.us-east-2.amazonaws.com",
  createdAt: "2026-03-13T20:00:00Z",
};
const problem = (status: number, detail: string, errors?: string[]) => ({
  status,
  headers: { "content-type": "application/problem+json" },
  body: { title: "x", status, detail, ...(errors ? { errors } : {}) },
});

describe("client.registries.delegations against a scripted server", () => {
  let server: ScriptedServer;
  let client: RunpodClient;
  beforeEach(async () => {
    server = await startScriptedServer();
    client = clientFor(server, { restUrl: `${server.url}/v2` });
  });
  afterEach(async () => {
    await server.close();
  });
  const sent = () => server.requests.map((r) => `${r.method} ${r.pathname}`);

  it("creates with a body matching CreateDelegationRequest and parses the EcrDelegation answered", async () => {
    server.enqueue({ status: 201, body: DELEGATION }, { status: 201, body: { ...DELEGATION, name: null } });
    expect(check("EcrDelegation", DELEGATION)).toEqual([]);
    expect(await client.registries.delegations.create({ resource: ARN, name: "deploy" })).toEqual(DELEGATION);
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ resource: ARN, name: "deploy" });
    expect(check("CreateDelegationRequest", JSON.parse(server.requests[0]?.body ?? ""))).toEqual([]);
    await client.registries.delegations.create({ resource: `${ARN}:v2` });
    expect(JSON.parse(server.requests[1]?.body ?? "")).toEqual({ resource: `${ARN}:v2` });
    expect(check("CreateDelegationRequest", JSON.parse(server.requests[1]?.body ?? ""))).toEqual([]);
    expect(sent()).toEqual(["POST /v2/registries/delegations", "POST /v2/registries/delegations"]);
  });

  it("lists (ListDelegationsResponse) and revokes by id, percent-encoded", async () => {
    server.enqueue({ body: { delegations: [DELEGATION] } }, { status: 204 });
    expect(check("ListDelegationsResponse", { delegations: [DELEGATION] })).toEqual([]);
    expect(await client.registries.delegations.list()).toEqual([DELEGATION]);
    await client.registries.delegations.revoke("deleg a/b");
    expect(sent()).toEqual([
      "GET /v2/registries/delegations",
      "DELETE /v2/registries/delegations/deleg%20a%2Fb",
    ]);
  });

  it("refuses a resource that is no ECR repository ARN, and unknown keys, before any request", async () => {
    for (const [input, field] of [
      [{ resource: "arn:aws:s3:::bucket" }, "resource"],
      [{ resource: "418399314813.dkr.ecr.us-east-2.amazonaws.com/runpod/deployment" }, "resource"],
      [{}, "resource"],
    ] as const) {
      const e = await client.registries.delegations.create(input as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(input)).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path, JSON.stringify(input)).toEqual([field]);
    }
    const unknownKey = (await client.registries.delegations
      .create({ resource: ARN, password: "x" } as never)
      .catch((x: unknown) => x)) as ValidationError;
    expect(unknownKey).toBeInstanceOf(ValidationError);
    expect(unknownKey.message).toMatch(/password/);
    const e = (await client.registries.delegations
      .create({ resource: "arn:aws:s3:::bucket" })
      .catch((x: unknown) => x)) as ValidationError;
    expect(e.message).toContain(
      "resource must be an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>]",
    );
    expect(server.requests).toEqual([]);
  });

  it("refuses a v1 restUrl before any request", async () => {
    const v1 = clientFor(server, { restUrl: `${server.url}/v1` });
    for (const call of [
      () => v1.registries.delegations.list(),
      () => v1.registries.delegations.create({ resource: ARN }),
      () => v1.registries.delegations.revoke("d"),
    ]) {
      const e = (await call().catch((x: unknown) => x)) as ValidationError;
      expect(e).toBeInstanceOf(ValidationError);
      expect(e.message).toMatch(/^client\.registries\.delegations needs the REST v2 interface/);
    }
    expect(server.requests).toEqual([]);
  });

  it("maps a 404 revoke to NotFoundError and a 422 to UnprocessableEntityError with the service's words", async () => {
    server.enqueue(
      problem(404, "delegation deleg_x not found"),
      problem(422, "Request validation failed.", ["$.resource: not an ECR ARN"]),
    );
    const gone = (await client.registries.delegations.revoke("deleg_x").catch((x: unknown) => x)) as Error;
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone.message).toContain("delegation deleg_x not found");
    const refused = (await client.registries.delegations
      .create({ resource: ARN })
      .catch((x: unknown) => x)) as Error;
    expect(refused).toBeInstanceOf(UnprocessableEntityError);
    expect(refused.message).toContain("$.resource: not an ECR ARN");
  });

  it("never resends a create the service may have acted on (500, reset), and retries a list", async () => {
    server.enqueue(problem(500, "oops"), { reset: true });
    await expect(client.registries.delegations.create({ resource: ARN })).rejects.toThrow(/oops/);
    await expect(client.registries.delegations.create({ resource: ARN })).rejects.toThrow();
    expect(sent()).toEqual(["POST /v2/registries/delegations", "POST /v2/registries/delegations"]);
    const { sleeps, sleep } = recordingSleep();
    const retrying = clientFor(server, { restUrl: `${server.url}/v2`, sleep });
    server.enqueue({ status: 503, headers: { "retry-after": "2" } }, { body: { delegations: [] } });
    expect(await retrying.registries.delegations.list()).toEqual([]);
    expect(sleeps).toEqual([2000]);
  });

  it("rejects an answer that is no EcrDelegation", async () => {
    server.enqueue({ body: { delegations: [{ id: "d" }] } }, { status: 201, body: { id: "d", name: "x" } });
    await expect(client.registries.delegations.list()).rejects.toBeInstanceOf(ResponseValidationError);
    await expect(client.registries.delegations.create({ resource: ARN })).rejects.toBeInstanceOf(
      ResponseValidationError,
    );
  });
});

describe("client.registries.delegations against the emulator", () => {
  let emu: RunningEmulator;
  let client: RunpodClient;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, rateLimits: false });
    client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrlV2, env: {}, rateLimits: false });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("creates, lists and revokes; the answers match the document", async () => {
    const created = await client.registries.delegations.create({ resource: `${ARN}:v1.2`, name: "deploy" });
    expect(check("EcrDelegation", created)).toEqual([]);
    expect(created).toMatchObject({
      name: "deploy",
      awsUser: "418399314813",
      awsRegion: "us-east-2",
      repository: "runpod/deployment",
      tag: "v1.2",
      dockerRegistryUri: "418399314813.dkr.ecr.us-east-2.amazonaws.com",
    });
    const listed = await client.registries.delegations.list();
    expect(listed).toEqual([created]);
    expect(check("ListDelegationsResponse", { delegations: listed })).toEqual([]);
    await client.registries.delegations.revoke(created.id);
    expect(await client.registries.delegations.list()).toEqual([]);
    await expect(client.registries.delegations.revoke(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

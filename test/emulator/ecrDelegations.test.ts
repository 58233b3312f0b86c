/**
 * The emulator's ECR delegation routes (`/v2/registries/delegations`), as the REST v2 document
 * defines them: every answer checked against the document's schema and the zod shape the client
 * parses with (`schemaCheck.ts`).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/emulator/clock";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const problem = (answer: { status: number; headers: Record<string, unknown>; body: unknown }) => {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
};

describe("/v2/registries/delegations", () => {
  it("creates (201), lists and revokes (204) a delegation, answering the ARN in parts", async () => {
    const clock = new ManualClock(Date.parse("2026-03-13T20:00:00Z"));
    h = await harness({ clock });
    const created = await h.call("POST", "/v2/registries/delegations", { resource: ARN, name: "deploy" });
    expect(created.status).toBe(201);
    expect(check("EcrDelegation", created.body)).toEqual([]);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^deleg_[a-z0-9]{12}$/),
      name: "deploy",
      delegatorUserId: "user_emulator",
      awsUser: "418399314813",
      repository: "runpod/deployment",
      tag: "latest",
      awsRegion: "us-east-2",
      dockerRegistryUri: "418399314813.dkr.ecr.us-east-2.amazonaws.com",
      createdAt: "2026-03-13T20:00:00.000Z",
    });
    const tagged = await h.call("POST", "/v2/registries/delegations", { resource: `${ARN}:v2.1` });
    expect(tagged.status).toBe(201);
    expect(tagged.body).toMatchObject({ name: null, tag: "v2.1", repository: "runpod/deployment" });

    const list = await h.call("GET", "/v2/registries/delegations");
    expect(list.status).toBe(200);
    expect(check("ListDelegationsResponse", list.body)).toEqual([]);
    expect(list.body).toEqual({ delegations: [created.body, tagged.body] });

    const revoked = await h.call("DELETE", `/v2/registries/delegations/${created.body.id}`);
    expect(revoked.status).toBe(204);
    expect((await h.call("GET", "/v2/registries/delegations")).body).toEqual({ delegations: [tagged.body] });
    const again = await h.call("DELETE", `/v2/registries/delegations/${created.body.id}`);
    expect(again.status).toBe(404);
    problem(again);
    expect(again.body.detail).toBe(`delegation ${created.body.id} not found`);
  });

  it("refuses a body the document refuses with 422 naming the field, creating nothing", async () => {
    h = await harness();
    for (const [body, field] of [
      [{}, "resource"],
      [{ resource: "arn:aws:s3:::bucket" }, "resource"],
      [{ resource: "418399314813.dkr.ecr.us-east-2.amazonaws.com/runpod/deployment" }, "resource"],
      [{ resource: ARN, bogus: 1 }, "bogus"],
      [{ resource: ARN, name: 5 }, "name"],
    ] as const) {
      const answer = await h.call("POST", "/v2/registries/delegations", body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      problem(answer);
      expect(answer.body.errors.join(" "), JSON.stringify(body)).toContain(field);
    }
    const notObject = await h.call("POST", "/v2/registries/delegations", [ARN]);
    expect(notObject.status).toBe(400);
    problem(notObject);
    expect((await h.call("GET", "/v2/registries/delegations")).body).toEqual({ delegations: [] });
  });

  it("answers 405 with Allow to the methods the document does not list, and leaves registries alone", async () => {
    h = await harness();
    const get = await h.call("GET", "/v2/registries/delegations/deleg_x");
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe("DELETE");
    problem(get);
    const del = await h.call("DELETE", "/v2/registries/delegations");
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe("GET, POST");
    problem(del);
    const reg = await h.call("POST", "/v2/registries", { name: "hub", username: "u", password: "p" });
    expect(reg.status).toBe(201);
    expect((await h.call("GET", `/v2/registries/${reg.body.id}`)).status).toBe(200);
  });

  it("needs the API key", async () => {
    h = await harness();
    const answer = await h.call("GET", "/v2/registries/delegations", undefined, {
      authorization: "Bearer wrong",
    });
    expect(answer.status).toBe(401);
  });

  it("keeps delegations in the state file across a restart", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emu-deleg-"));
    try {
      const stateFile = path.join(dir, "state.json");
      h = await harness({ stateFile });
      const created = await h.call("POST", "/v2/registries/delegations", { resource: ARN });
      await h.close();
      expect(JSON.parse(await readFile(stateFile, "utf8")).ecrDelegations).toEqual([created.body]);
      h = await harness({ stateFile });
      expect((await h.call("GET", "/v2/registries/delegations")).body).toEqual({
        delegations: [created.body],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("REST v1 registry auths", () => {
  it("creates, lists, gets and deletes; username and password are never returned", async () => {
    h = await harness();
    const created = await h.call("POST", "/v1/containerregistryauth", {
      name: "ghcr",
      username: "me",
      password: "s3cret",
    });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.any(String), name: "ghcr" });
    const id = created.body.id;
    expect((await h.call("GET", "/v1/containerregistryauth")).body).toEqual([{ id, name: "ghcr" }]);
    expect((await h.call("GET", `/v1/containerregistryauth/${id}`)).body).toEqual({ id, name: "ghcr" });
    const deleted = await h.call("DELETE", `/v1/containerregistryauth/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    const again = await h.call("DELETE", `/v1/containerregistryauth/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.message).toMatch(/not found/);
    expect((await h.call("GET", `/v1/containerregistryauth/${id}`)).status).toBe(404);
  });

  it("refuses a duplicate name with 400", async () => {
    h = await harness();
    await h.call("POST", "/v1/containerregistryauth", { name: "dup", username: "a", password: "b" });
    const res = await h.call("POST", "/v1/containerregistryauth", {
      name: "dup",
      username: "c",
      password: "d",
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^name: .*already exists/);
    expect((await h.call("GET", "/v1/containerregistryauth")).body).toHaveLength(1);
  });

  it("names the missing field with 400", async () => {
    h = await harness();
    const res = await h.call("POST", "/v1/containerregistryauth", { name: "x", username: "u" });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^password/);
  });
});

describe("REST v1 network volumes", () => {
  it("creates, gets, grows, renames and deletes; shrinking is refused", async () => {
    h = await harness({ volumes: [{ id: "seed1", name: "data", size: 50, dataCenterId: "EU-RO-1" }] });
    expect((await h.call("GET", "/v1/networkvolumes")).body).toEqual([
      { id: "seed1", name: "data", size: 50, dataCenterId: "EU-RO-1" },
    ]);
    const created = await h.call("POST", "/v1/networkvolumes", {
      name: "new",
      size: 10,
      dataCenterId: "US-KS-2",
    });
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[a-z0-9]{10}$/),
      name: "new",
      size: 10,
      dataCenterId: "US-KS-2",
    });
    const id = created.body.id;
    expect((await h.call("PATCH", `/v1/networkvolumes/${id}`, { size: 20 })).body.size).toBe(20);
    expect((await h.call("PATCH", `/v1/networkvolumes/${id}`, { name: "renamed", size: 20 })).body.name).toBe(
      "renamed",
    );
    const shrink = await h.call("PATCH", `/v1/networkvolumes/${id}`, { size: 5 });
    expect(shrink.status).toBe(400);
    expect(shrink.body.message).toMatch(/^size: a network volume can only grow/);
    expect((await h.call("DELETE", `/v1/networkvolumes/${id}`)).status).toBe(204);
    expect((await h.call("GET", `/v1/networkvolumes/${id}`)).status).toBe(404);
    expect((await h.call("PATCH", `/v1/networkvolumes/${id}`, { size: 50 })).status).toBe(404);
  });

  it("validates sizes against v1 bounds (0..4000)", async () => {
    h = await harness();
    const res = await h.call("POST", "/v1/networkvolumes", {
      name: "x",
      size: 4001,
      dataCenterId: "EU-RO-1",
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("size must be at most 4000 GB");
  });
});

describe("REST v2 management", () => {
  it("serves registries with wrapped lists, 201 on create and 204 on delete", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/registries", { name: "hub", username: "u", password: "p" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: "hub" });
    expect((await h.call("GET", "/v2/registries")).body).toEqual({ registries: [created.body] });
    expect((await h.call("GET", `/v2/registries/${created.body.id}`)).body).toEqual(created.body);
    expect((await h.call("DELETE", `/v2/registries/${created.body.id}`)).status).toBe(204);
  });

  it("shares one store with v1", async () => {
    h = await harness();
    const v1 = await h.call("POST", "/v1/containerregistryauth", {
      name: "shared",
      username: "u",
      password: "p",
    });
    expect((await h.call("GET", `/v2/registries/${v1.body.id}`)).body.name).toBe("shared");
    const v2 = await h.call("POST", "/v2/network-volumes", { name: "vol", size: 10, dataCenter: "EU-RO-1" });
    expect((await h.call("GET", `/v1/networkvolumes/${v2.body.id}`)).body).toEqual({
      id: v2.body.id,
      name: "vol",
      size: 10,
      dataCenterId: "EU-RO-1",
    });
  });

  it("speaks dataCenter and type for network volumes", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/network-volumes", {
      name: "fast",
      size: 50,
      dataCenter: "US-KS-2",
      type: "HIGH_PERFORMANCE",
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "fast",
      size: 50,
      dataCenter: "US-KS-2",
      type: "HIGH_PERFORMANCE",
    });
    expect((await h.call("GET", "/v2/network-volumes")).body).toEqual({ networkVolumes: [created.body] });
    const grown = await h.call("PATCH", `/v2/network-volumes/${created.body.id}`, { size: 100 });
    expect(grown.body.size).toBe(100);
  });

  it("takes a volume's data centre in any letter case and keeps the catalog's spelling", async () => {
    h = await harness();
    const v2 = await h.call("POST", "/v2/network-volumes", { name: "a", size: 10, dataCenter: "us-ks-2" });
    expect(v2.status).toBe(201);
    expect(v2.body.dataCenter).toBe("US-KS-2");
    const v1 = await h.call("POST", "/v1/networkvolumes", { name: "b", size: 10, dataCenterId: "Eu-Ro-1" });
    expect(v1.body.dataCenterId).toBe("EU-RO-1");
    expect((await h.call("GET", `/v1/networkvolumes/${v1.body.id}`)).body.dataCenterId).toBe("EU-RO-1");
  });

  it("answers errors as application/problem+json: 422 for validation with the list of errors", async () => {
    h = await harness();
    const res = await h.call("POST", "/v2/network-volumes", { name: "", size: 5, dataCenter: "EU-RO-1" });
    expect(res.status).toBe(422);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ title: "Unprocessable Entity", status: 422 });
    expect(res.body.errors).toEqual(["name must not be empty", "size must be at least 10 GB"]);
    expect(res.body.detail).toMatch(/name must not be empty/);
  });

  it("answers 400 problem+json to a shrink, a duplicate name and malformed JSON", async () => {
    h = await harness();
    const vol = await h.call("POST", "/v2/network-volumes", { name: "v", size: 20, dataCenter: "EU-RO-1" });
    const shrink = await h.call("PATCH", `/v2/network-volumes/${vol.body.id}`, { size: 10 });
    expect(shrink.status).toBe(400);
    expect(shrink.body).toMatchObject({
      title: "Bad Request",
      status: 400,
      detail: expect.stringMatching(/only grow/),
    });
    await h.call("POST", "/v2/registries", { name: "r", username: "u", password: "p" });
    const dup = await h.call("POST", "/v2/registries", { name: "r", username: "u", password: "p" });
    expect(dup.status).toBe(400);
    expect(dup.headers["content-type"]).toMatch(/problem\+json/);
    const bad = await h.call("POST", "/v2/registries", "{");
    expect(bad.status).toBe(400);
    expect(bad.body.status).toBe(400);
  });

  it("answers 404 problem+json for an unknown id", async () => {
    h = await harness();
    const res = await h.call("GET", "/v2/network-volumes/nope");
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      title: "Not Found",
      status: 404,
      detail: "network volume nope not found",
    });
  });

  it("keeps the reserved ids apart from endpoints", async () => {
    await expect(harness({ endpoints: ["registries"] })).rejects.toThrow(/reserved/);
    h = await harness();
    expect((await h.call("GET", "/v2/registries/health")).status).toBe(404);
  });
});

describe("state file", () => {
  it("keeps management data across a restart, with no plaintext password in the file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emu-state-"));
    try {
      const stateFile = join(dir, "state.json");
      h = await harness({ stateFile });
      const reg = await h.call("POST", "/v1/containerregistryauth", {
        name: "keep",
        username: "u",
        password: "hunter2-plaintext",
      });
      const vol = await h.call("POST", "/v2/network-volumes", {
        name: "vol",
        size: 10,
        dataCenter: "EU-RO-1",
      });
      await h.close();
      const text = await readFile(stateFile, "utf8");
      expect(text).not.toContain("hunter2-plaintext");
      expect(text).toMatch(/scrypt\$/);
      expect(await readdir(dir)).toEqual(["state.json"]); // no temp file left behind

      h = await harness({ stateFile });
      expect((await h.call("GET", `/v1/containerregistryauth/${reg.body.id}`)).body).toEqual({
        id: reg.body.id,
        name: "keep",
      });
      expect((await h.call("GET", `/v2/network-volumes/${vol.body.id}`)).body.name).toBe("vol");
      const dup = await h.call("POST", "/v1/containerregistryauth", {
        name: "keep",
        username: "u",
        password: "p",
      });
      expect(dup.status).toBe(400);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start on a corrupt state file instead of overwriting it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emu-state-"));
    try {
      const stateFile = join(dir, "state.json");
      await writeFile(stateFile, "{not json");
      await expect(harness({ stateFile })).rejects.toThrow(/not valid JSON/);
      expect(await readFile(stateFile, "utf8")).toBe("{not json");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

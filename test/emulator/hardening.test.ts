/**
 * The emulator checked against the service's REST v2 document: every
 * answer of a dialect satisfies that dialect's own schema, unserved v2 paths answer as v2 does,
 * v2 answers carry the rate-limit headers the document promises, and an oversized body's 413
 * reaches the client.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { exhaustedWindowMs } from "../../src/client/retry";
import { checkV2Schema } from "../support/v2Schemas";
import { type Harness, harness, KEY } from "./helpers";

const check = checkV2Schema;

let h: Harness;
afterEach(async () => {
  await h?.close();
});

describe("network volume sizes (item 10)", () => {
  it("refuses a v1 create below REST v2's minimum, naming size and the range", async () => {
    h = await harness();
    const small = await h.call("POST", "/v1/networkvolumes", { name: "s", size: 5, dataCenterId: "EU-RO-1" });
    expect(small.status).toBe(400);
    expect(small.body.message).toMatch(/^size must be an integer from 10 to 4096 GB, got 5/);
    expect((await h.call("GET", "/v2/network-volumes")).body).toEqual({ networkVolumes: [] });
  });

  it("shows every volume created over v1 (10..4000 GB) as a valid v2 NetworkVolume", async () => {
    h = await harness();
    for (const size of [10, 4000]) {
      const created = await h.call("POST", "/v1/networkvolumes", {
        name: "n",
        size,
        dataCenterId: "EU-RO-1",
      });
      expect(created.status).toBe(200);
      expect(
        check("NetworkVolume", (await h.call("GET", `/v2/network-volumes/${created.body.id}`)).body),
      ).toEqual([]);
    }
    expect(check("ListNetworkVolumesResponse", (await h.call("GET", "/v2/network-volumes")).body)).toEqual(
      [],
    );
  });

  it("refuses seeded volumes outside 10..4096 GB, naming the volume's field", async () => {
    await expect(
      harness({ volumes: [{ id: "tiny", name: "t", size: 9, dataCenterId: "EU-RO-1" }] }),
    ).rejects.toThrow(/^volumes\[0\]\.size must be an integer from 10 to 4096 GB, got 9/);
    await expect(
      harness({ volumes: [{ id: "huge", name: "h", size: 4097, dataCenterId: "EU-RO-1" }] }),
    ).rejects.toThrow(/volumes\[0\]\.size must be an integer from 10 to 4096 GB, got 4097/);
  });

  it("refuses a state file holding a volume v2 could not show", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "emu-size-"));
    try {
      const stateFile = path.join(dir, "state.json");
      await writeFile(
        stateFile,
        JSON.stringify({
          version: 1,
          registryAuths: [],
          networkVolumes: [{ id: "old", name: "o", size: 1, dataCenterId: "EU", type: "STANDARD" }],
        }),
      );
      await expect(harness({ stateFile })).rejects.toThrow(
        /state\.json: networkVolumes\[0\]\.size must be an integer from 10 to 4096 GB, got 1/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("v2 paths the emulator does not serve (item 11)", () => {
  const problem = (answer: { status: number; headers: Record<string, unknown>; body: unknown }) => {
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(check("ErrorResponse", answer.body)).toEqual([]);
    expect(answer.body).toMatchObject({ status: answer.status });
  };

  it("answers 501 to a documented operation it does not implement", async () => {
    h = await harness();
    for (const [method, p] of [
      ["GET", "/v2/clusters"],
      ["POST", "/v2/clusters"],
    ] as const) {
      const answer = await h.call(method, p, method === "POST" ? {} : undefined);
      expect(answer.status, `${method} ${p}`).toBe(501);
      problem(answer);
      expect(answer.body.title).toBe("Not Implemented");
      expect(answer.body.detail).toMatch(/is in the REST v2 document but the emulator does not implement it/);
    }
  });

  it("answers 405 with Allow to a method the document does not list for the path", async () => {
    h = await harness();
    const reg = await h.call("POST", "/v2/registries", { name: "r", username: "u", password: "p" });
    const patch = await h.call("PATCH", `/v2/registries/${reg.body.id}`, { name: "x" });
    expect(patch.status).toBe(405);
    expect(patch.headers.allow).toBe("GET, DELETE");
    problem(patch);
    const put = await h.call("PUT", "/v2/network-volumes/v1", { size: 20 });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe("GET, PATCH, DELETE");
    const del = await h.call("DELETE", "/v2/registries/delegations");
    expect(del.status).toBe(405);
    expect(del.headers.allow).toBe("GET, POST");
    problem(del);
  });

  it("answers 404 problem+json to an unknown management path, also one shaped like a job route", async () => {
    h = await harness();
    for (const p of [
      "/v2/registries/a/b",
      "/v2/pods/status/x",
      "/v2/serverless/a/run/b",
      "/v2/billing/nothing",
    ]) {
      const answer = await h.call("GET", p);
      expect(answer.status, p).toBe(404);
      problem(answer);
    }
  });

  it("keeps the job interface's {message} for unknown job paths and endpoints", async () => {
    h = await harness();
    const unknownOp = await h.call("GET", "/v2/echo/nothing");
    expect(unknownOp.status).toBe(404);
    expect(unknownOp.body).toEqual({ message: "no such path: GET /v2/echo/nothing" });
    const unknownEndpoint = await h.call("GET", "/v2/nope/health");
    expect(unknownEndpoint.body).toEqual({ message: "endpoint nope not found" });
  });

  it("answers 401 problem+json before anything else on those paths", async () => {
    h = await harness();
    const answer = await h.call("GET", "/v2/pods", undefined, { authorization: "Bearer wrong" });
    expect(answer.status).toBe(401);
    problem(answer);
  });

  it("refuses every document segment as an endpoint id", async () => {
    for (const id of ["pods", "serverless", "templates", "catalog", "billing", "account", "clusters"]) {
      await expect(harness({ endpoints: [id] })).rejects.toThrow(/reserved/);
    }
  });
});

describe("RateLimit headers on v2 answers (item 12)", () => {
  // The document's format: one member per window, `"name";r=N;t=S` and `"name";q=N;w=S`.
  const RATE_LIMIT = /^"[a-z0-9]+";r=\d+;t=\d+$/;
  const POLICY = /^"[a-z0-9]+";q=\d+;w=\d+$/;

  it("are on every authenticated v2 answer under the default table, success and error alike", async () => {
    h = await harness({ rateLimits: true });
    const answers = [
      await h.call("GET", "/v2/registries"),
      await h.call("POST", "/v2/network-volumes", { name: "n", size: 10, dataCenter: "EU-RO-1" }),
      await h.call("GET", "/v2/network-volumes/nope"),
      await h.call("POST", "/v2/network-volumes", { name: "n", size: 1, dataCenter: "EU-RO-1" }),
      await h.call("GET", "/v2/clusters"),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 201, 404, 422, 501]);
    for (const answer of answers) {
      expect(answer.headers.ratelimit).toMatch(RATE_LIMIT);
      expect(answer.headers["ratelimit-policy"]).toBe('"minute";q=3000;w=60');
    }
    expect(answers.map((a) => a.headers.ratelimit)).toEqual([
      '"minute";r=2999;t=60',
      '"minute";r=2998;t=60',
      '"minute";r=2997;t=60',
      '"minute";r=2996;t=60',
      '"minute";r=2995;t=60',
    ]);
    // The client reads them: a window with requests left asks for no pause.
    expect(exhaustedWindowMs(answers[0]?.headers as Record<string, string>)).toBeUndefined();
  });

  it("ask the client to pause once a window is used up", async () => {
    h = await harness({ rateLimits: { management: { requests: 1, windowMs: 60_000 } } });
    const first = await h.call("GET", "/v2/registries");
    expect(first.headers.ratelimit).toBe('"minute";r=0;t=60');
    expect(exhaustedWindowMs(first.headers as Record<string, string>)).toBe(60_000);
    expect(first.headers["ratelimit-policy"]).toMatch(POLICY);
  });

  it("are absent for a caller the limits exempt, for a 401, and on the other interfaces", async () => {
    h = await harness({ rateLimits: false });
    expect((await h.call("GET", "/v2/registries")).headers.ratelimit).toBeUndefined();
    await h.close();
    h = await harness({ rateLimits: true });
    const unauthorized = await h.call("GET", "/v2/registries", undefined, { authorization: "Bearer no" });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.ratelimit).toBeUndefined();
    expect((await h.call("GET", "/v1/networkvolumes")).headers.ratelimit).toBeUndefined();
    expect((await h.call("GET", "/v2/echo/health")).headers.ratelimit).toBeUndefined();
  });
});

describe("oversized job bodies (item 13)", () => {
  const TRIES = 30;
  const MB = 1_000_000;
  // A body produced as it is sent (a stream with pauses, as from a file or a generator): before the
  // fix the 413 went out while the client was still writing, and 8 of 30 tries saw EPIPE.
  async function* streamed(megabytes: number) {
    const chunk = Buffer.alloc(MB, "p");
    for (let i = 0; i < megabytes; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      yield chunk;
    }
  }

  it(`answers 413 that undici.request receives, ${TRIES} times out of ${TRIES}`, async () => {
    h = await harness();
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) {
      try {
        const res = await request(`${h.emu.serverlessUrl}/v2/echo/run`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-length": String(11 * MB) },
          body: Readable.from(streamed(11)),
        });
        await res.body.text();
        outcomes.push(res.statusCode);
      } catch (err) {
        outcomes.push((err as NodeJS.ErrnoException).code ?? String(err));
      }
    }
    expect(outcomes).toEqual(Array(TRIES).fill(413));
  });

  it(`answers 413 that node:http receives for a chunked body, ${TRIES} times out of ${TRIES}`, async () => {
    h = await harness();
    const url = new URL(`${h.emu.serverlessUrl}/v2/echo/run`);
    const chunk = Buffer.alloc(1_000_000, "p");
    const once = () =>
      new Promise<number | string>((resolve) => {
        const req = httpRequest(
          url,
          { method: "POST", headers: { authorization: `Bearer ${KEY}`, "transfer-encoding": "chunked" } },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
        for (let i = 0; i < 11; i++) req.write(chunk);
        req.end();
      });
    const outcomes: (number | string)[] = [];
    for (let i = 0; i < TRIES; i++) outcomes.push(await once());
    expect(outcomes).toEqual(Array(TRIES).fill(413));
  });
});

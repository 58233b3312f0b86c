/**
 * With a state file, templates and the endpoints made over REST v2 (with their releases) survive a
 * restart, back at their current version with fresh workers; `--endpoint` endpoints come from the
 * command line at every start.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";

let dir: string;
let h: Harness | undefined;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "emu-serverless-"));
});
afterEach(async () => {
  await h?.close();
  h = undefined;
  await rm(dir, { recursive: true, force: true });
});

const ENDPOINT = {
  name: "smoke",
  type: "QUEUE",
  image: "acme/model:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 2 },
};

describe("the state file", () => {
  it("keeps REST v2 endpoints, their releases and templates across a restart", async () => {
    const stateFile = path.join(dir, "state.json");
    h = await harness({ stateFile, endpoints: ["echo"] });
    const tpl = (await h.call("POST", "/v2/templates", { name: "t", image: "acme/model:0" })).body;
    const ep = (await h.call("POST", "/v2/serverless", ENDPOINT)).body;
    await h.call("PATCH", `/v2/serverless/${ep.id}`, { env: { MODEL: "b" } });
    await h.call("PATCH", "/v2/serverless/echo", { env: { MODEL: "lost" } });
    const before = (await h.call("GET", `/v2/serverless/${ep.id}`)).body;
    const releasesBefore = (await h.call("GET", `/v2/serverless/${ep.id}/releases`)).body.releases;
    await h.close();

    h = await harness({ stateFile, endpoints: ["echo"] });
    expect((await h.call("GET", `/v2/templates/${tpl.id}`)).body).toEqual(tpl);
    const after = (await h.call("GET", `/v2/serverless/${ep.id}`)).body;
    expect(after).toEqual({
      ...before,
      requestUrls: expect.objectContaining({ run: `${h.emu.serverlessUrl}/v2/${ep.id}/run` }),
    });
    const releases = (await h.call("GET", `/v2/serverless/${ep.id}/releases`)).body;
    expect(releases.endpointVersion).toBe(2);
    expect(releases.releases.map((r: { id: string }) => r.id)).toEqual(
      releasesBefore.map((r: { id: string }) => r.id),
    );
    expect(releases.rollout).toEqual({
      inProgress: false,
      workersOnLatest: 2,
      workersTotal: 2,
      percentOnLatest: 100,
    });
    const job = (await h.call("POST", `/v2/${ep.id}/runsync`, { input: { ok: 1 } })).body;
    expect(job).toMatchObject({ status: "COMPLETED", output: { ok: 1 } });
    // --endpoint endpoints are the command line's: the PATCH of echo did not outlive the process.
    expect((await h.call("GET", "/v2/serverless/echo")).body.env).toEqual({});
    const saved = JSON.parse(await readFile(stateFile, "utf8"));
    expect(saved.serverless.endpoints.map((e: { record: { id: string } }) => e.record.id)).toEqual([ep.id]);
  });

  it("writes a delete before answering it", async () => {
    const stateFile = path.join(dir, "state.json");
    h = await harness({ stateFile });
    const ep = (await h.call("POST", "/v2/serverless", ENDPOINT)).body;
    expect((await h.call("DELETE", `/v2/serverless/${ep.id}`)).status).toBe(204);
    const saved = JSON.parse(await readFile(stateFile, "utf8"));
    expect(saved.serverless.endpoints).toEqual([]);
  });

  it("refuses a malformed serverless section, naming the file and the field", async () => {
    const stateFile = path.join(dir, "state.json");
    await writeFile(
      stateFile,
      JSON.stringify({
        version: 1,
        registryAuths: [],
        networkVolumes: [],
        serverless: { endpoints: [{}], templates: [] },
      }),
    );
    await expect(harness({ stateFile })).rejects.toThrow(
      new RegExp(
        `stateFile ${stateFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: the serverless section is not valid \\(endpoints\\.0\\.record`,
      ),
    );
  });
});

/**
 * Network volumes and the serverless endpoints that attach them: a volume an
 * endpoint lists in `networkVolumes` cannot be deleted (400 naming the endpoints, in both
 * dialects), and an endpoint cannot attach a volume that does not exist (400 naming it).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const endpoint = (name: string, networkVolumes?: string[]) => ({
  name,
  type: "QUEUE",
  image: "acme/model:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 1 },
  ...(networkVolumes ? { networkVolumes } : {}),
});

const problem = (answer: { headers: Record<string, unknown>; body: unknown }) => {
  expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(check("ErrorResponse", answer.body)).toEqual([]);
};

/** A volume made over v2, and two endpoints attaching it. */
async function attachedTwice(): Promise<{ volume: string; first: string; second: string }> {
  h = await harness();
  const volume = (
    await h.call("POST", "/v2/network-volumes", { name: "data", size: 20, dataCenter: "EU-RO-1" })
  ).body.id as string;
  const first = await h.call("POST", "/v2/serverless", endpoint("reader", [volume]));
  expect(first.status).toBe(201);
  const second = await h.call("POST", "/v2/serverless", endpoint("writer", [volume]));
  expect(second.status).toBe(201);
  return { volume, first: first.body.id, second: second.body.id };
}

describe("deleting a network volume an endpoint attaches", () => {
  it("answers 400 problem+json over v2, naming every endpoint that holds it and what to do", async () => {
    const { volume, first, second } = await attachedTwice();
    const refused = await h!.call("DELETE", `/v2/network-volumes/${volume}`);
    expect(refused.status).toBe(400);
    problem(refused);
    expect(refused.body.detail).toBe(
      `network volume ${volume} is attached to serverless endpoints ${first} ("reader"), ${second} ("writer"); ` +
        "detach it (remove it from the endpoint's networkVolumes) or delete the endpoint first",
    );
    expect((await h!.call("GET", `/v2/network-volumes/${volume}`)).status).toBe(200);
  });

  it("answers 400 {message} over v1 with the same words", async () => {
    const { volume, first, second } = await attachedTwice();
    const refused = await h!.call("DELETE", `/v1/networkvolumes/${volume}`);
    expect(refused.status).toBe(400);
    expect(refused.headers["content-type"]).toMatch(/^application\/json/);
    expect(refused.body).toEqual({
      message:
        `network volume ${volume} is attached to serverless endpoints ${first} ("reader"), ${second} ("writer"); ` +
        "detach it (remove it from the endpoint's networkVolumes) or delete the endpoint first",
    });
  });

  it("deletes it once every endpoint has detached it or is gone", async () => {
    const { volume, first, second } = await attachedTwice();
    expect((await h!.call("PATCH", `/v2/serverless/${first}`, { networkVolumes: [] })).status).toBe(200);
    const still = await h!.call("DELETE", `/v2/network-volumes/${volume}`);
    expect(still.status).toBe(400);
    expect(still.body.detail).toContain(`attached to serverless endpoint ${second} ("writer");`);
    expect((await h!.call("DELETE", `/v2/serverless/${second}`)).status).toBe(204);
    expect((await h!.call("DELETE", `/v2/network-volumes/${volume}`)).status).toBe(204);
    expect((await h!.call("GET", `/v2/network-volumes/${volume}`)).status).toBe(404);
  });

  it("still answers 404 for a volume that does not exist", async () => {
    h = await harness();
    const missing = await h.call("DELETE", "/v2/network-volumes/nosuchvol1");
    expect(missing.status).toBe(404);
    problem(missing);
  });
});

describe("attaching a network volume that does not exist", () => {
  it("refuses the endpoint's create with 400 naming the missing id, and creates nothing", async () => {
    h = await harness();
    const volume = (
      await h.call("POST", "/v2/network-volumes", { name: "d", size: 10, dataCenter: "EU-RO-1" })
    ).body.id as string;
    const before = (await h.call("GET", "/v2/serverless")).body.endpoints.length;
    const refused = await h.call("POST", "/v2/serverless", endpoint("bad", [volume, "nosuchvol1"]));
    expect(refused.status).toBe(400);
    problem(refused);
    expect(refused.body.detail).toBe(
      "networkVolumes: no network volume nosuchvol1 in this account (attach volumes by the id GET /v2/network-volumes lists)",
    );
    expect((await h.call("GET", "/v2/serverless")).body.endpoints).toHaveLength(before);
  });

  it("refuses a PATCH attaching it with 400, leaving the endpoint as it was", async () => {
    h = await harness();
    const created = await h.call("POST", "/v2/serverless", endpoint("ok"));
    const id = created.body.id as string;
    const refused = await h.call("PATCH", `/v2/serverless/${id}`, { networkVolumes: ["gone123456"] });
    expect(refused.status).toBe(400);
    problem(refused);
    expect(refused.body.detail).toMatch(/^networkVolumes: no network volume gone123456 in this account/);
    expect((await h.call("GET", `/v2/serverless/${id}`)).body.networkVolumes).toEqual([]);
  });

  it("answers 404 for a PATCH of an endpoint that does not exist, whatever it attaches", async () => {
    h = await harness();
    const missing = await h.call("PATCH", "/v2/serverless/nosuchep", { networkVolumes: ["gone123456"] });
    expect(missing.status).toBe(404);
  });
});

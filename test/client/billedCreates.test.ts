/**
 * A create that bills (a pod, a cluster, a network volume, a serverless endpoint) is not resent by the client
 * after a 429 or 503: the service has been seen to make the object and still answer so. The
 * answer is thrown after exactly one POST, for the caller to list before sending it again. A
 * template (it bills nothing) keeps the POST rule: resent after a 503.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APIError, RunpodClient } from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

let server: ScriptedServer;
let client: RunpodClient;
/** Every wait the client took, in ms: a resend would add one. */
const waits: number[] = [];

beforeAll(async () => {
  server = await startScriptedServer({
    fallback: () => ({ status: 599, body: { message: "unexpected request" } }),
  });
  client = new RunpodClient({
    apiKey: "billed-create-key-5c1e",
    restUrl: `${server.url}/v2`,
    rateLimits: false,
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
  waits.length = 0;
});

const creates: [string, string, () => Promise<unknown>][] = [
  [
    "pods.create",
    "/v2/pods",
    () => client.pods.create({ name: "dev", image: "acme/dev:1", gpu: { id: "NVIDIA L40S" } }),
  ],
  [
    "clusters.create",
    "/v2/clusters",
    () =>
      client.clusters.create({
        name: "train",
        type: "TRAINING",
        compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
      }),
  ],
  [
    "networkVolumes.create",
    "/v2/network-volumes",
    () => client.networkVolumes.create({ name: "data", size: 50, dataCenterId: "EU-RO-1" }),
  ],
  [
    "serverless.create",
    "/v2/serverless",
    () =>
      client.serverless.create({
        name: "api",
        image: "acme/api:1",
        type: "QUEUE",
        gpu: { pools: ["ADA_24"] },
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      }),
  ],
];

describe("a create that bills, answered 429 or 503", () => {
  for (const [call, path, create] of creates) {
    for (const status of [503, 429]) {
      it(`${call} answered ${status} throws it after one POST, unsent again`, async () => {
        // A resend would meet the fallback's 599.
        server.enqueue({ status, headers: { "retry-after": "1" }, body: { title: "busy", status } });
        const error = await create().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(APIError);
        expect((error as APIError).status).toBe(status);
        expect(server.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual([`POST ${path}`]);
        expect(waits).toEqual([]);
      });
    }
  }

  it("templates.create (it bills nothing) is still resent after a 503", async () => {
    const template = { id: "tpl1", name: "worker", image: "me/worker:1", isServerless: true };
    server.enqueue({ status: 503, body: { title: "busy", status: 503 } }, { status: 200, body: template });
    expect(
      (await client.templates.create({ name: "worker", image: "me/worker:1", serverless: true })).id,
    ).toBe("tpl1");
    expect(server.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual([
      "POST /v2/templates",
      "POST /v2/templates",
    ]);
    expect(waits).toHaveLength(1);
  });
});

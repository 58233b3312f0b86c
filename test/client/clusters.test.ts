/**
 * `client.clusters` against a scripted server: each call's method, path and body, the answers it
 * parses, the service's errors as typed errors, bodies refused before any request, and the
 * billed-create rule (a cluster bills for every member: never resent after an answer). Then a
 * cluster's whole life against the emulator, its members run on a ManualClock.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  APIError,
  BadRequestError,
  type Cluster,
  InternalServerError,
  NotFoundError,
  RunpodClient,
  UnprocessableEntityError,
  ValidationError,
} from "../../src/client";
import { startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { API_KEY } from "./helpers";

let server: ScriptedServer;
let client: RunpodClient;
/** Every wait the client took, in ms: a resend adds one. */
const waits: number[] = [];

beforeAll(async () => {
  server = await startScriptedServer({
    fallback: () => ({ status: 599, body: { message: "unexpected request" } }),
  });
  client = new RunpodClient({
    apiKey: API_KEY,
    restUrl: `${server.url}/v2`,
    rateLimits: false,
    env: {},
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

const CLUSTER: Cluster = {
  id: "cl5x2",
  name: "train",
  type: "TRAINING",
  compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
  dataCenterId: "US-KS-2",
  pods: { total: 2, byStatus: { PROVISIONING: 2 } },
  createdAt: "2026-11-28T09:00:00Z",
};
const MEMBER = {
  id: "p0",
  name: "train-0",
  status: "RUNNING",
  cluster: { id: "cl5x2", rank: 0, role: "SLURM_CONTROLLER", ip: "10.65.0.2" },
  ssh: { proxy: null, direct: { host: "127.0.0.1", port: 22001, username: "root" } },
};
const problem = (status: number, detail: string) => ({
  status,
  headers: { "content-type": "application/problem+json" },
  body: { title: "error", status, detail },
});
const sent = () => server.requests.map((r) => `${r.method} ${r.url}`);
const lastBody = () => JSON.parse(server.requests.at(-1)?.body ?? "null");
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("client.clusters calls", () => {
  it("lists, reads, renames, lists members of and deletes clusters at the document's paths", async () => {
    server.enqueue(
      { body: { clusters: [CLUSTER] } },
      { body: CLUSTER },
      { body: { ...CLUSTER, name: "train-2" } },
      { body: { pods: [MEMBER] } },
      { status: 204 },
    );
    expect(await client.clusters.list()).toEqual([CLUSTER]);
    expect(await client.clusters.get("cl5x2")).toEqual(CLUSTER);
    expect((await client.clusters.update("cl5x2", { name: "train-2" })).name).toBe("train-2");
    expect(lastBody()).toEqual({ name: "train-2" });
    const pods = await client.clusters.pods("cl5x2");
    expect(pods).toEqual([MEMBER]);
    expect(pods[0]?.cluster).toEqual({ id: "cl5x2", rank: 0, role: "SLURM_CONTROLLER", ip: "10.65.0.2" });
    expect(await client.clusters.delete("cl5x2")).toBeUndefined();
    expect(sent()).toEqual([
      "GET /v2/clusters",
      "GET /v2/clusters/cl5x2",
      "PATCH /v2/clusters/cl5x2",
      "GET /v2/clusters/cl5x2/pods",
      "DELETE /v2/clusters/cl5x2",
    ]);
  });

  it("creates a cluster with the body as given (201)", async () => {
    server.enqueue({ status: 201, body: CLUSTER });
    const input = {
      name: "train",
      type: "SLURM" as const,
      image: "runpod/pytorch:2",
      compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
      dataCenterIds: ["US-KS-2"],
      ports: ["22/tcp"],
      env: { WANDB_KEY: "k" },
      startSsh: true,
    };
    expect(await client.clusters.create(input)).toEqual(CLUSTER);
    expect(sent()).toEqual(["POST /v2/clusters"]);
    expect(lastBody()).toEqual(input);
  });

  it("percent-encodes the id in every path", async () => {
    server.enqueue({ body: CLUSTER }, { body: { pods: [] } });
    await client.clusters.get("a/b c");
    await client.clusters.pods("a/b c");
    expect(sent()).toEqual(["GET /v2/clusters/a%2Fb%20c", "GET /v2/clusters/a%2Fb%20c/pods"]);
  });
});

describe("client.clusters errors", () => {
  it("a capacity refusal is a BadRequestError carrying the service's detail, after one POST", async () => {
    const detail = "There are no longer any instances available with the requested specifications.";
    server.enqueue(problem(400, detail));
    const error = await failure(
      client.clusters.create({
        name: "big",
        type: "TRAINING",
        compute: { gpuTypeId: "NVIDIA H200", gpuCountPerPod: 8, podCount: 4 },
      }),
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as BadRequestError).message).toContain(detail);
    expect(sent()).toEqual(["POST /v2/clusters"]);
  });

  it("an unknown id is a NotFoundError, and a 422 an UnprocessableEntityError", async () => {
    server.enqueue(problem(404, "cluster nope not found"), problem(422, "Request validation failed"));
    expect(await failure(client.clusters.get("nope"))).toBeInstanceOf(NotFoundError);
    expect(await failure(client.clusters.update("cl5x2", { name: "x" }))).toBeInstanceOf(
      UnprocessableEntityError,
    );
  });

  it("a create answered 500 is not resent (the service may have made the cluster)", async () => {
    server.enqueue(problem(500, "boom"));
    const error = await failure(
      client.clusters.create({
        name: "t",
        type: "RAY",
        compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
      }),
    );
    expect(error).toBeInstanceOf(InternalServerError);
    expect(sent()).toEqual(["POST /v2/clusters"]);
    expect(waits).toEqual([]);
  });

  for (const status of [429, 503]) {
    it(`a create answered ${status} is thrown after one POST, unsent again (it bills)`, async () => {
      server.enqueue({ status, headers: { "retry-after": "1" }, body: { title: "busy", status } });
      const error = await failure(
        client.clusters.create({
          name: "t",
          type: "TRAINING",
          compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
        }),
      );
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(status);
      expect(sent()).toEqual(["POST /v2/clusters"]);
      expect(waits).toEqual([]);
    });
  }

  it("a read answered 503 is retried (reads are idempotent)", async () => {
    server.enqueue({ status: 503, body: { title: "busy", status: 503 } }, { body: { clusters: [] } });
    expect(await client.clusters.list()).toEqual([]);
    expect(sent()).toEqual(["GET /v2/clusters", "GET /v2/clusters"]);
  });
});

describe("client.clusters refuses before any request", () => {
  const compute = { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 };
  const refused: [string, () => Promise<unknown>, string][] = [
    [
      "one pod (podCount starts at 2)",
      () => client.clusters.create({ name: "t", type: "TRAINING", compute: { ...compute, podCount: 1 } }),
      "Invalid cluster: compute.podCount must be at least 2",
    ],
    [
      "251 pods",
      () => client.clusters.create({ name: "t", type: "TRAINING", compute: { ...compute, podCount: 251 } }),
      "Invalid cluster: compute.podCount must be at most 250",
    ],
    [
      "a registry (clusters take none)",
      () =>
        client.clusters.create({
          name: "t",
          type: "TRAINING",
          compute,
          registry: "r1",
        } as unknown as Parameters<typeof client.clusters.create>[0]),
      "Invalid cluster: unknown field registry: not allowed here",
    ],
    [
      "an unknown type",
      () => client.clusters.create({ name: "t", type: "K8S" as "RAY", compute }),
      "Invalid cluster: type must be APPLICATION, TRAINING, SLURM or RAY",
    ],
    [
      "a PATCH of anything but the name",
      () => client.clusters.update("cl5x2", { image: "x" } as unknown as { name: string }),
      "Invalid cluster update: unknown field image: not allowed here; give name, the new name (the only field of a cluster that changes in place)",
    ],
    [
      "an empty PATCH",
      () => client.clusters.update("cl5x2", {}),
      "Invalid cluster update: give name, the new name (the only field of a cluster that changes in place)",
    ],
  ];
  for (const [what, call, text] of refused) {
    it(`refuses ${what} with a ValidationError`, async () => {
      const error = await failure(call());
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toBe(text);
      expect(server.requests).toEqual([]);
    });
  }

  it("refuses a v1 restUrl, naming client.clusters", async () => {
    const v1 = new RunpodClient({ apiKey: API_KEY, restUrl: `${server.url}/v1`, rateLimits: false, env: {} });
    const error = await failure(v1.clusters.list());
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain("client.clusters needs the REST v2 interface");
    expect(server.requests).toEqual([]);
  });
});

describe("client.clusters against the emulator", () => {
  it("creates a cluster, reads its members until RUNNING, renames it, reads its bill and deletes it", async () => {
    const clock = new ManualClock();
    const emu = await startEmulator({ port: 0, clock, podStartMs: 1000, rateLimits: false });
    try {
      const live = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrl, env: {} });
      const compute = { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 };
      const cluster = await live.clusters.create({ name: "train", type: "RAY", image: "x", compute });
      expect(cluster).toMatchObject({ name: "train", type: "RAY", compute, pods: { total: 2 } });
      await clock.advance(1000);
      let members = await live.clusters.pods(cluster.id);
      for (let i = 0; i < 50 && members.some((p) => p.status !== "RUNNING"); i++) {
        await clock.settle();
        members = await live.clusters.pods(cluster.id);
      }
      expect(members.map((p) => [p.status, p.cluster?.rank, p.cluster?.role])).toEqual([
        ["RUNNING", 0, "RAY_HEAD"],
        ["RUNNING", 1, "RAY_WORKER"],
      ]);
      expect((await live.clusters.update(cluster.id, { name: "train-2" })).name).toBe("train-2");
      expect((await live.clusters.list()).map((c) => c.name)).toEqual(["train-2"]);
      await clock.advance(3_600_000);
      const bill = await live.billing.clusters({ clusterId: cluster.id, lastN: 1, bucketSize: "day" });
      expect(bill.metadata.totals.gpuAmount).toBe(2 * 8 * 2.69);
      await live.clusters.delete(cluster.id);
      expect(await failure(live.clusters.get(cluster.id))).toBeInstanceOf(NotFoundError);
      const tooBig = await failure(
        live.clusters.create({ name: "big", type: "TRAINING", compute: { ...compute, podCount: 250 } }),
      );
      expect(tooBig).toBeInstanceOf(BadRequestError);
      expect((tooBig as BadRequestError).message).toContain("needs 2000 GPUs free in one data center");
    } finally {
      await emu.close();
    }
  });
});

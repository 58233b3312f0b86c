/**
 * The emulator's REST v2 clusters, over HTTP, with a ManualClock driving the member pods'
 * PROVISIONING -> STARTING -> RUNNING timers: placement from the catalog's CLUSTER stock (taken and
 * given back as the catalog shows it), capacity failures, members listed with rank, role, overlay
 * ip and ssh, the pod endpoints refusing to change a member, rename, delete, billing per member
 * pod, the bounds and the state file. Every answer is checked against the v2 document's schemas.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/emulator/clock";
import { type ClusterMemberHost, ClusterStore } from "../../src/emulator/pods/clusterStore";
import { NO_CAPACITY_MESSAGE } from "../../src/emulator/pods/podStore";
import { MAX_CLUSTER_PODS_PER_ACCOUNT, MAX_CLUSTERS_PER_ACCOUNT } from "../../src/emulator/serviceFacts";
import type { Pod } from "../../src/wire/pods";
import { type Answer, type Harness, harness } from "./helpers";
import { check } from "./schemaCheck";

const START_MS = 1000;
const H100 = "NVIDIA H100 80GB HBM3";
/** `price.secure` of H100 in the emulator's catalog, USD per GPU-hour. */
const H100_PRICE = 2.69;
const KEY_LINE =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@example.com";

let h: Harness;
beforeEach(async () => {
  h = await harness({ podStartMs: START_MS });
});
afterEach(async () => {
  await h.close();
});

/** POST /v2/clusters: a TRAINING cluster of 2 pods x 8 H100 in US-GA-1 (its 16 cluster GPUs) unless told. */
const create = (body: Record<string, unknown> = {}, compute: Record<string, unknown> = {}) =>
  h.call("POST", "/v2/clusters", {
    name: "train",
    type: "TRAINING",
    image: "runpod/pytorch:2",
    dataCenterIds: ["US-GA-1"],
    ...body,
    compute: { gpuTypeId: H100, gpuCountPerPod: 8, podCount: 2, ...compute },
  });

/** Reads the cluster (settling the clock between tries) until every member is `status`. */
async function untilCluster(id: string, status: string): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < 50; i++) {
    last = await h.call("GET", `/v2/clusters/${id}`);
    if (last.body?.pods?.byStatus?.[status] === last.body?.compute?.podCount) return last;
    await h.clock.settle();
  }
  throw new Error(`cluster ${id} never had every member ${status}; last: ${JSON.stringify(last?.body)}`);
}

/** The CLUSTER (or POD) level the catalog shows for a GPU type in one data centre. */
async function level(product: "CLUSTER" | "POD", gpuId: string, dataCenterId: string): Promise<string> {
  const answer = await h.call(
    "GET",
    `/v2/catalog/gpus/${encodeURIComponent(gpuId)}?include=AVAILABILITY&product=${product}`,
  );
  const entry = (answer.body.dataCenters ?? []).find((d: { id: string }) => d.id === dataCenterId);
  return entry?.availability ?? (answer.body.availability === "NONE" ? "NONE" : "absent");
}

const members = async (id: string): Promise<Pod[]> => {
  const answer = await h.call("GET", `/v2/clusters/${id}/pods`);
  expect(answer.status).toBe(200);
  expect(check("ListPodsResponse", answer.body)).toEqual([]);
  return answer.body.pods;
};

describe("creating a cluster", () => {
  it("places it from the catalog's CLUSTER stock and its members run through the pod lifecycle", async () => {
    await h.call("PUT", "/v2/account/ssh-keys", { keys: [KEY_LINE] });
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("LOW");
    const created = await create({ type: "SLURM", ports: ["22/tcp"], startSsh: true });
    expect(created.status).toBe(201);
    expect(check("Cluster", created.body)).toEqual([]);
    const id = created.body.id;
    expect(created.body).toEqual({
      id,
      name: "train",
      type: "SLURM",
      compute: { gpuTypeId: H100, gpuCountPerPod: 8, podCount: 2 },
      dataCenterId: "US-GA-1",
      pods: { total: 2, byStatus: { PROVISIONING: 2 } },
      network: { cidr: "10.65.0.0/16", vxlanId: expect.any(Number), vxlanPort: 4789 },
      primary: { podId: expect.any(String), status: "PROVISIONING" },
      createdAt: new Date(h.clock.now()).toISOString(),
    });
    // All 16 of US-GA-1's cluster GPUs are taken; its pod stock is another count, untouched.
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("NONE");
    expect(await level("POD", H100, "US-GA-1")).toBe("LOW");

    const pods = await members(id);
    expect(
      pods.map((p) => ({
        name: p.name,
        status: p.status,
        cluster: p.cluster,
        gpu: p.gpu,
        dc: p.dataCenterId,
      })),
    ).toEqual([
      {
        name: "train-0",
        status: "PROVISIONING",
        cluster: { id, rank: 0, role: "SLURM_CONTROLLER", ip: "10.65.0.2" },
        gpu: { id: H100, count: 8 },
        dc: "US-GA-1",
      },
      {
        name: "train-1",
        status: "PROVISIONING",
        cluster: { id, rank: 1, role: "SLURM_COMPUTE", ip: "10.65.0.3" },
        gpu: { id: H100, count: 8 },
        dc: "US-GA-1",
      },
    ]);
    expect(created.body.primary.podId).toBe(pods[0]?.id);
    expect(pods.every((p) => p.env?.PUBLIC_KEY === KEY_LINE && p.cost === 8 * H100_PRICE)).toBe(true);

    await h.clock.advance(START_MS / 2);
    expect((await h.call("GET", `/v2/clusters/${id}`)).body.pods.byStatus).toEqual({ STARTING: 2 });
    await h.clock.advance(START_MS / 2);
    const running = await untilCluster(id, "RUNNING");
    expect(check("Cluster", running.body)).toEqual([]);
    const [primary] = await members(id);
    const direct = primary?.ssh?.direct;
    expect(direct).toMatchObject({ host: "127.0.0.1", port: expect.any(Number) });
    expect(running.body.primary).toEqual({
      podId: primary?.id,
      status: "RUNNING",
      sshEndpoint: `${direct?.host}:${direct?.port}`,
    });
  });

  it("lists clusters, and members in GET /v2/pods only with includeClusterPods=true", async () => {
    const cluster = (await create()).body;
    const pod = await h.call("POST", "/v2/pods", {
      name: "solo",
      image: "x",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
    });
    const listed = await h.call("GET", "/v2/clusters");
    expect(check("ListClustersResponse", listed.body)).toEqual([]);
    expect(listed.body.clusters.map((c: { id: string }) => c.id)).toEqual([cluster.id]);
    const ids = (await members(cluster.id)).map((p) => p.id);
    const plain = await h.call("GET", "/v2/pods");
    expect(plain.body.pods.map((p: Pod) => p.id)).toEqual([pod.body.id]);
    const all = await h.call("GET", "/v2/pods?includeClusterPods=true");
    expect(check("ListPodsResponse", all.body)).toEqual([]);
    expect(all.body.pods.map((p: Pod) => p.id).sort()).toEqual([pod.body.id, ...ids].sort());
    expect((await h.call("GET", "/v2/pods?includeClusterPods=yes")).status).toBe(422);
    expect((await h.call("GET", `/v2/pods/${ids[1]}`)).body.cluster).toMatchObject({
      id: cluster.id,
      rank: 1,
    });
  });

  it("gives TRAINING and APPLICATION members no role, RAY members head and workers", async () => {
    const training = (await create()).body;
    expect((await members(training.id)).map((p) => p.cluster)).toEqual([
      { id: training.id, rank: 0, ip: "10.65.0.2" },
      { id: training.id, rank: 1, ip: "10.65.0.3" },
    ]);
    const ray = (
      await create({ type: "RAY", dataCenterIds: ["US-KS-2"] }, { gpuCountPerPod: 1, podCount: 3 })
    ).body;
    expect((await members(ray.id)).map((p) => p.cluster?.role)).toEqual([
      "RAY_HEAD",
      "RAY_WORKER",
      "RAY_WORKER",
    ]);
  });

  it("members of an unpullable image end in ERROR and give their GPUs back", async () => {
    const { id } = (await create({ image: "acme/unpullable:1" })).body;
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("NONE");
    await h.clock.advance(START_MS);
    const failed = await untilCluster(id, "ERROR");
    expect(failed.body.pods).toEqual({ total: 2, byStatus: { ERROR: 2 } });
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("LOW");
  });
});

describe("a create the service refuses", () => {
  it("is a 400 saying it is a capacity failure and what is free, when one data centre lacks the GPUs", async () => {
    const answer = await create({}, { podCount: 3 });
    expect(answer.status).toBe(400);
    expect(check("ErrorResponse", answer.body)).toEqual([]);
    expect(answer.body.detail).toBe(
      `${NO_CAPACITY_MESSAGE} (a cluster of 3 pods x 8 ${H100} needs 24 GPUs free in one data center among US-GA-1; the most free for clusters now is 16, in US-GA-1)`,
    );
    expect((await h.call("GET", "/v2/clusters")).body.clusters).toEqual([]);
    expect((await h.call("GET", "/v2/pods?includeClusterPods=true")).body.pods).toEqual([]);
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("LOW");
  });

  it("is a capacity failure for a GPU type no data centre offers for clusters", async () => {
    const answer = await create(
      { dataCenterIds: [] },
      { gpuTypeId: "NVIDIA GeForce RTX 4090", gpuCountPerPod: 1 },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toBe(
      `${NO_CAPACITY_MESSAGE} (a cluster of 2 pods x 1 NVIDIA GeForce RTX 4090 needs 2 GPUs free in one data center; no data center offers NVIDIA GeForce RTX 4090 for clusters)`,
    );
  });

  it("refuses more GPUs per pod than the type's maxCount, an unknown type, and a body off the document", async () => {
    const tooMany = await create({}, { gpuCountPerPod: 9 });
    expect([tooMany.status, tooMany.body.detail]).toEqual([
      400,
      `compute.gpuCountPerPod: at most 8 ${H100} GPUs per pod, got 9`,
    ]);
    const unknown = await create({}, { gpuTypeId: "NVIDIA Z9" });
    expect([unknown.status, unknown.body.detail]).toEqual([
      400,
      "compute.gpuTypeId: NVIDIA Z9 is not a GPU type (GET /v2/catalog/gpus lists them)",
    ]);
    for (const answer of [await create({}, { podCount: 1 }), await create({ registry: "r1" })]) {
      expect(answer.status).toBe(422);
      expect(check("ErrorResponse", answer.body)).toEqual([]);
    }
  });

  it("answers 402 when the account's balance does not cover an hour of the whole cluster", async () => {
    h.emu.setBalanceUsd(40);
    const answer = await create();
    expect([answer.status, answer.body.detail]).toEqual([
      402,
      `Insufficient balance: a cluster of 2 pods x 8 ${H100} costs $43.04/hr and the account's balance is $40; add funds to run it`,
    ]);
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("LOW");
  });

  it(`stops at ${MAX_CLUSTERS_PER_ACCOUNT} clusters`, async () => {
    for (let i = 0; i < MAX_CLUSTERS_PER_ACCOUNT; i++) {
      expect((await create({ dataCenterIds: ["US-KS-2"] }, { gpuCountPerPod: 1 })).status).toBe(201);
    }
    const answer = await create({ dataCenterIds: ["US-KS-2"] }, { gpuCountPerPod: 1 });
    expect([answer.status, answer.body.detail]).toEqual([
      400,
      `the account holds ${MAX_CLUSTERS_PER_ACCOUNT} clusters, the most it may hold (${MAX_CLUSTERS_PER_ACCOUNT}); delete one before creating another`,
    ]);
  });
});

describe("a cluster's life after create", () => {
  it("renames with PATCH (members keep their names) and refuses any other field", async () => {
    const { id } = (await create()).body;
    const renamed = await h.call("PATCH", `/v2/clusters/${id}`, { name: "train-2" });
    expect(renamed.status).toBe(200);
    expect(check("Cluster", renamed.body)).toEqual([]);
    expect(renamed.body.name).toBe("train-2");
    expect((await h.call("GET", `/v2/clusters/${id}`)).body.name).toBe("train-2");
    expect((await members(id)).map((p) => p.name)).toEqual(["train-0", "train-1"]);
    expect((await h.call("PATCH", `/v2/clusters/${id}`, { image: "x" })).status).toBe(422);
    expect((await h.call("PATCH", "/v2/clusters/nope", { name: "x" })).status).toBe(404);
  });

  it("keeps its members away from the pod endpoints' changes (409)", async () => {
    const { id } = (await create()).body;
    const [member] = await members(id);
    const why = `pod ${member?.id} belongs to cluster ${id} and cannot be modified via the pod endpoints; manage it through /v2/clusters/${id} (DELETE there terminates every member)`;
    for (const answer of [
      await h.call("PATCH", `/v2/pods/${member?.id}`, { name: "x" }),
      await h.call("DELETE", `/v2/pods/${member?.id}`),
      await h.call("POST", `/v2/pods/${member?.id}/action`, { action: "stop" }),
      await h.call("POST", `/v2/pods/${member?.id}/action`, { action: "terminate" }),
    ]) {
      expect([answer.status, answer.body.detail]).toEqual([409, why]);
    }
    expect((await h.call("GET", `/v2/pods/${member?.id}`)).body.status).toBe("PROVISIONING");
  });

  it("DELETE terminates every member and gives the GPUs back", async () => {
    const { id } = (await create()).body;
    const ids = (await members(id)).map((p) => p.id);
    await h.clock.advance(START_MS);
    await untilCluster(id, "RUNNING");
    expect((await h.call("DELETE", `/v2/clusters/${id}`)).status).toBe(204);
    expect((await h.call("GET", `/v2/clusters/${id}`)).status).toBe(404);
    expect((await h.call("GET", `/v2/clusters/${id}/pods`)).status).toBe(404);
    for (const pod of ids) expect((await h.call("GET", `/v2/pods/${pod}`)).status).toBe(404);
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("LOW");
    expect((await h.call("DELETE", `/v2/clusters/${id}`)).status).toBe(404);
  });

  it("bills each member while it runs, to its cluster, not as a pod", async () => {
    const { id } = (await create()).body;
    await h.clock.advance(START_MS);
    await untilCluster(id, "RUNNING");
    await h.clock.advance(3_600_000);
    expect((await h.call("DELETE", `/v2/clusters/${id}`)).status).toBe(204);
    const hour = 2 * 8 * H100_PRICE; // two members of 8 GPUs, one hour each
    const clusters = await h.call("GET", `/v2/billing/clusters?bucketSize=day&lastN=1&clusterId=${id}`);
    expect(check("ListClusterBillingResponse", clusters.body)).toEqual([]);
    expect(clusters.body.records).toEqual([
      {
        startTime: expect.any(String),
        endTime: expect.any(String),
        clusterId: id,
        totalAmount: hour,
        gpuAmount: hour,
        diskAmount: 0,
        networkingAmount: 0,
      },
    ]);
    expect(clusters.body.metadata).toMatchObject({
      recordCount: 1,
      uniqueClusterCount: 1,
      query: { clusterId: id },
      totals: { totalAmount: hour, gpuAmount: hour, diskAmount: 0, networkingAmount: 0 },
    });
    const pods = await h.call("GET", "/v2/billing/pods?bucketSize=day&lastN=1");
    expect(pods.body.records).toEqual([]);
    const all = await h.call("GET", "/v2/billing?bucketSize=day&lastN=1");
    expect(all.body.records[0]).toMatchObject({ totalAmount: hour, clusterGpuAmount: hour, podGpuAmount: 0 });
  });

  it("survives a restart from the state file, its members holding their GPUs again", async () => {
    await h.close();
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), "clusters-")), "state.json");
    h = await harness({ podStartMs: START_MS, stateFile });
    const { id } = (await create({ type: "RAY" })).body;
    const before = await members(id);
    await h.close();
    h = await harness({ podStartMs: START_MS, stateFile });
    const again = await h.call("GET", `/v2/clusters/${id}`);
    expect(again.body).toMatchObject({ id, name: "train", type: "RAY", pods: { total: 2 } });
    expect((await members(id)).map((p) => [p.id, p.cluster])).toEqual(before.map((p) => [p.id, p.cluster]));
    expect(await level("CLUSTER", H100, "US-GA-1")).toBe("NONE");
  });
});

describe("the cluster store's member bound", () => {
  it(`refuses a cluster that would take the account past ${MAX_CLUSTER_PODS_PER_ACCOUNT} member pods`, () => {
    let next = 0;
    const host: ClusterMemberHost = {
      admitMembers: (clusterId, _body, specs) =>
        specs.map((s) => ({
          id: `p${next++}`,
          name: "m",
          status: "PROVISIONING",
          cluster: { id: clusterId, rank: s.rank },
        })),
      member: () => undefined,
      terminateMember: async () => undefined,
    };
    const store = new ClusterStore(new ManualClock(), host);
    const body = (podCount: number) => ({
      name: "big",
      type: "TRAINING" as const,
      compute: { gpuTypeId: H100, gpuCountPerPod: 1, podCount },
    });
    store.create(body(250));
    store.create(body(MAX_CLUSTER_PODS_PER_ACCOUNT - 250));
    expect(() => store.create(body(2))).toThrow(
      `compute.podCount: the account's clusters hold ${MAX_CLUSTER_PODS_PER_ACCOUNT} pods, and 2 more would pass the most they may hold (${MAX_CLUSTER_PODS_PER_ACCOUNT}); delete a cluster or ask for fewer pods`,
    );
    expect(store.list()).toHaveLength(2);
  });
});

/**
 * Cluster through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized from
 * the INSTALLED package, against the emulator (REST v2, member pods starting in 50 ms of its
 * clock, read by the host every 20 ms instead of every second; cluster stock from the catalog's CLUSTER levels: 64 H100s free in US-KS-2, 16 in
 * US-GA-1) reached through a pass-through proxy a test can arm. Every env value is a secret: the
 * afterAll scans every output but `env`, every error and the host's stderr for each.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NotFoundError, type RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import type { FaultProxy } from "../support/faultProxy.mts";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { serializeProviderFrom } from "../support/serializedProvider.mts";
import { POD_POLL_MS, POD_START_MS } from "./podHostKit";
import { type ResourceHostRig, startResourceHostRig } from "./resourceHostKit";

const API_KEY = "cluster-host-key-5e1c7a";
const ENV_SECRET = "hf_Cluster-Env-Secret-9b3f2d";
const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClusterHostTestKey me@host";
const H100 = "NVIDIA H100 80GB HBM3";
/** The catalog's secure pod price of an H100, USD an hour per GPU. */
const H100_PRICE = 2.69;
const urn = (name: string) => urnFor("Cluster", name);
const seenTexts: [string, string][] = [];

function expectNoSecret(where: string, text: string): void {
  for (const secret of [ENV_SECRET, API_KEY]) {
    for (const form of [secret, Buffer.from(secret).toString("base64")]) {
      expect(text, `${where} holds a secret`).not.toContain(form);
    }
  }
}

async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  const e = error as HostError;
  const { env: _env, ...properties } = e.properties ?? {};
  seenTexts.push(["error", `${e.message} ${JSON.stringify(properties)}`]);
  return e;
}

describe("Cluster in the provider host (REST v2)", () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let __provider: string;
  let n = 0;
  const fresh = (base: string) => `${base}-${++n}`;

  let rig: ResourceHostRig | undefined;

  beforeAll(async () => {
    rig = await startResourceHostRig({
      apiKey: API_KEY,
      className: "Cluster",
      folder: "cluster",
      emulator: { podStartMs: POD_START_MS },
      // The members start in POD_START_MS; the host reads them every POD_POLL_MS, not every second.
      // After a create answered 429 or 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
      host: { pollMs: POD_POLL_MS, createPauseMs: 10 },
    });
    ({ emu, proxy, host, client, __provider } = rig);
    await client.account.setSshKeys([SSH_KEY]);
  });

  afterAll(async () => {
    const stderr = (await rig?.close()) ?? "";
    expectNoSecret("host stderr", stderr);
    for (const [where, text] of seenTexts) expectNoSecret(where, text);
  });

  const withProvider = (props: Record<string, unknown>) => ({ ...props, __provider });
  /** A TRAINING cluster of `podCount` pods of `gpuCountPerPod` H100s. */
  const cluster = (name: string, podCount = 2, gpuCountPerPod = 1) => ({
    name,
    type: "TRAINING",
    compute: { gpuTypeId: H100, gpuCountPerPod, podCount },
    image: "acme/train:1",
    env: { HF_TOKEN: ENV_SECRET },
  });

  async function create(resource: string, props: Record<string, unknown>) {
    const { inputs, failures } = await host.check(urn(resource), {}, withProvider(props));
    expect(failures).toEqual([]);
    const result = await host.create(urn(resource), inputs);
    const { env: _env, ...rest } = result.outs;
    seenTexts.push([`create ${resource}`, JSON.stringify(rest)]);
    return { ...result, inputs };
  }

  const named = async (name: string) => (await client.clusters.list()).filter((c) => c.name === name);
  const requests = (from: number) => proxy.seen.slice(from).map((r) => `${r.method} ${r.path}`);

  it("creates the cluster with one POST and returns once every member pod runs, priced from the catalog", async () => {
    const name = fresh("train");
    const before = proxy.seen.length;
    const { id, outs, inputs } = await create(name, cluster(name, 2, 4));
    // One list before the POST (to settle a 429 or a lost answer), one POST, never a second.
    expect(requests(before).filter((r) => r.startsWith("POST"))).toEqual(["POST /v2/clusters"]);
    expect(requests(before)).toContain("GET /v2/clusters");
    expect((await named(name)).map((c) => c.id)).toEqual([id]);
    const members = await client.clusters.pods(id);
    expect(members.map((m) => m.status)).toEqual(["RUNNING", "RUNNING"]);
    expect(outs.members).toEqual(
      members.map((m) => ({ id: m.id, status: "RUNNING", rank: m.cluster?.rank })),
    );
    expect(outs).toMatchObject({
      name,
      type: "TRAINING",
      compute: { gpuTypeId: H100, gpuCountPerPod: 4, podCount: 2 },
      pods: { total: 2, byStatus: { RUNNING: 2 } },
      image: "acme/train:1",
      env: { HF_TOKEN: ENV_SECRET },
      hourlyCost: {
        floorUsd: 2 * 4 * H100_PRICE,
        ceilingUsd: 2 * 4 * H100_PRICE,
        ratePerWorkerUsd: 4 * H100_PRICE,
      },
    });
    // check priced it the same before anything was created.
    expect(inputs.hourlyCost).toEqual(outs.hourlyCost);
    expect(typeof outs.dataCenterId).toBe("string");
    await host.delete(id, urn(name), outs);
  });

  it("waits for every member's SSH with waitFor ssh and outputs each member's endpoints", async () => {
    const name = fresh("ssh");
    const props = { ...cluster(name), type: "SLURM", ports: ["22/tcp"], startSsh: true, waitFor: "ssh" };
    const { id, outs } = await create(name, props);
    expect(outs.members).toHaveLength(2);
    expect(outs.members.map((m: { role: string }) => m.role)).toEqual(["SLURM_CONTROLLER", "SLURM_COMPUTE"]);
    for (const member of outs.members) {
      expect(member.status).toBe("RUNNING");
      expect(member.ssh.direct).toMatchObject({ host: "127.0.0.1" });
    }
    expect(outs.primary).toMatchObject({ podId: outs.members[0].id, status: "RUNNING" });
    await host.delete(id, urn(name), outs);
  });

  it("renames in place with one PATCH, keeping the cluster and its members", async () => {
    const name = fresh("rename");
    const { id, outs, inputs } = await create(name, cluster(name));
    const news = { ...inputs, name: `${name}-renamed` };
    expect(await host.diff(id, urn(name), outs, withProvider(news))).toMatchObject({
      changes: true,
      replaces: [],
    });
    const before = proxy.seen.length;
    const updated = await host.update(id, urn(name), outs, withProvider(news));
    const writes = proxy.seen.slice(before).filter((r) => r.method !== "GET");
    expect(writes.map((r) => `${r.method} ${r.path} ${r.body}`)).toEqual([
      `PATCH /v2/clusters/${id} {"name":"${name}-renamed"}`,
    ]);
    expect(updated.outs).toMatchObject({ name: `${name}-renamed`, pods: { total: 2 } });
    expect(updated.outs.members.map((m: { id: string }) => m.id)).toEqual(
      outs.members.map((m: { id: string }) => m.id),
    );
    expect((await client.clusters.get(id)).name).toBe(`${name}-renamed`);
    await host.delete(id, urn(name), updated.outs);
  });

  it("replaces on any other change, naming the field and the pods and GPUs it replaces", async () => {
    const name = fresh("replace");
    const { id, outs, inputs } = await create(name, cluster(name, 2, 2));
    // The warning line's words are checked in-process (clusterWait.test.ts): the host's stderr
    // reaches this process on its own schedule, after the diff's answer.
    const diffOf = async (change: Record<string, unknown>) => {
      const diff = await host.diff(id, urn(name), outs, withProvider({ ...inputs, ...change }));
      return { replaces: diff.replaces, changes: diff.changes };
    };
    const podCount = await diffOf({ compute: { gpuTypeId: H100, gpuCountPerPod: 2, podCount: 3 } });
    expect(podCount).toMatchObject({ changes: true, replaces: ["compute"] });
    expect((await diffOf({ image: "acme/train:2" })).replaces).toEqual(["image"]);
    expect((await diffOf({ env: { HF_TOKEN: "other" } })).replaces).toEqual(["env"]);
    expect((await diffOf({ startSsh: true })).replaces).toEqual(["startSsh"]);
    expect(await diffOf({})).toMatchObject({ changes: false, replaces: [] });
    // The provider's own arguments change nothing on the service.
    expect(await diffOf({ waitTimeoutMs: 5000 })).toMatchObject({ changes: true, replaces: [] });
    await host.delete(id, urn(name), outs);
  });

  it("fails as a partial failure carrying the id when members go to ERROR, naming each with its status", async () => {
    const name = fresh("broken");
    const { inputs } = await host.check(
      urn(name),
      {},
      withProvider({ ...cluster(name), image: "acme/train:unpullable" }),
    );
    const error = await hostFailure(() => host.create(urn(name), inputs));
    const [live] = await named(name);
    expect(error.id).toBe(live?.id);
    const members = await client.clusters.pods(error.id as string);
    expect(members.map((m) => m.status)).toEqual(["ERROR", "ERROR"]);
    expect(error.message).toContain(
      `Cluster "${name}" (id ${error.id}) is not usable: 2 of its 2 member pods went to ERROR instead of RUNNING. ` +
        `Members not usable: ${members.map((m) => `pod ${m.id}: ERROR`).join("; ")}.`,
    );
    expect(error.message).toContain("The cluster is kept in the stack");
    expect(error.properties).toMatchObject({
      name,
      members: members.map((m) => ({ id: m.id, status: "ERROR" })),
      __provider,
    });
    // The next up (an update with nothing changed) checks the members again and fails again.
    const again = await hostFailure(() =>
      host.update(error.id as string, urn(name), error.properties, withProvider(inputs)),
    );
    expect(again.id).toBe(error.id);
    expect(again.message).toContain("went to ERROR");
    await host.delete(error.id as string, urn(name), error.properties);
  });

  it("records the cluster a create answered 429 to, after listing, and never POSTs a second", async () => {
    const name = fresh("throttled");
    const { inputs } = await host.check(urn(name), {}, withProvider(cluster(name)));
    // The service makes the cluster, then answers 429 (it has been seen to act on such answers).
    proxy.arm("POST", /^\/v2\/clusters$/, { kind: "fail-after", status: 429 });
    const before = proxy.seen.length;
    const { id, outs } = await host.create(urn(name), inputs);
    expect(requests(before).filter((r) => r.startsWith("POST"))).toEqual(["POST /v2/clusters"]);
    expect((await named(name)).map((c) => c.id)).toEqual([id]);
    expect(outs.pods).toEqual({ total: 2, byStatus: { RUNNING: 2 } });
    expect(host.stderr()).toContain(`the service had created it anyway (id ${id}`);
    await host.delete(id, urn(name), outs);
  });

  it("says what the catalog shows in cluster stock when the service has no capacity, creating nothing", async () => {
    const name = fresh("huge");
    const { inputs, failures } = await host.check(urn(name), {}, withProvider(cluster(name, 10, 8)));
    expect(failures).toEqual([]);
    const error = await hostFailure(() => host.create(urn(name), inputs));
    expect(error.id).toBeUndefined();
    expect(error.message).toContain(
      `RunPod refused to create cluster "${name}" (10 pods × 8 ${H100}, 80 GPUs`,
    );
    expect(error.message).toContain("No cluster was created.");
    expect(error.message).toMatch(
      new RegExp(
        `The catalog shows cluster stock of ${H100} now: \\w+, in US-KS-2 \\(MEDIUM\\), US-GA-1 \\(LOW\\)`,
      ),
    );
    expect(await named(name)).toEqual([]);
  });

  it("says what the cluster would cost an hour and what to do when the balance is too low (402), creating nothing", async () => {
    const name = fresh("unfunded");
    const { inputs, failures } = await host.check(urn(name), {}, withProvider(cluster(name, 2, 4)));
    expect(failures).toEqual([]);
    // The emulator answers 402 for a cluster costing more an hour than the balance (21.52 USD/h here).
    emu.setBalanceUsd(10);
    const before = proxy.seen.length;
    const error = await hostFailure(() => host.create(urn(name), inputs)).finally(() =>
      emu.setBalanceUsd(undefined),
    );
    expect(error.id).toBeUndefined();
    expect(error.message).toBe(
      `RunPod refused to create cluster "${name}" (2 pods × 4 ${H100}, 8 GPUs): the account's balance is too low ` +
        `(402: Payment Required; Insufficient balance: a cluster of 2 pods x 4 ${H100} costs $21.52/hr and the ` +
        "account's balance is $10; add funds to run it). It would cost 21.52 USD an hour at list prices (2 pods × " +
        `${4 * H100_PRICE} USD/h). No cluster was created. Add funds in the RunPod console, or ask for fewer pods ` +
        "or GPUs per pod, then run pulumi up again.",
    );
    // One list, one POST, never a second (a 402 made nothing); no cluster exists.
    const sent = requests(before).filter((r) => !r.startsWith("GET /v2/catalog"));
    expect(sent).toEqual(["GET /v2/clusters", "POST /v2/clusters"]);
    expect(await named(name)).toEqual([]);
  });

  it("refuses in check a cluster over its own maxHourlyUsd, before anything is sent", async () => {
    const name = fresh("dear");
    const before = proxy.seen.length;
    const { failures } = await host.check(
      urn(name),
      {},
      withProvider({ ...cluster(name, 2, 8), maxHourlyUsd: 40 }),
    );
    const ceiling = 2 * 8 * H100_PRICE;
    expect(failures).toEqual([
      {
        property: "maxHourlyUsd",
        reason:
          `Cluster "${name}": its hourly ceiling ${ceiling} USD/h (2 pods × 8 "${H100}" GPUs, ${8 * H100_PRICE} USD/h a pod, ` +
          "list prices) is over maxHourlyUsd 40 USD/h. Nothing was created or changed. Lower its compute.podCount " +
          "or compute.gpuCountPerPod, or a cheaper compute.gpuTypeId, or raise maxHourlyUsd.",
      },
    ]);
    expect(requests(before).filter((r) => !r.startsWith("GET /v2/catalog"))).toEqual([]);
  });

  it("keeps a live cluster in the state when its members read answers a transient 404 on refresh", async () => {
    const name = fresh("lagging");
    const { id, outs, inputs } = await create(name, cluster(name));
    // The cluster answers; its members list answers 404 once (the service's eventual consistency).
    proxy.arm("GET", new RegExp(`^/v2/clusters/${id}/pods$`), {
      kind: "reply",
      status: 404,
      body: { error: "not found" },
    });
    const read = await host.read(id, urn(name), outs, inputs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ name, pods: { total: 2 }, image: "acme/train:1" });
    expect(read.props.members.map((m: { id: string }) => m.id)).toEqual(
      outs.members.map((m: { id: string }) => m.id),
    );
    await host.delete(id, urn(name), outs);
  });

  it("keeps a live cluster in the state when its GET answers a transient 404 on refresh, after a list", async () => {
    const name = fresh("lagging-get");
    const { id, outs, inputs } = await create(name, cluster(name));
    proxy.arm("GET", new RegExp(`^/v2/clusters/${id}$`), {
      kind: "reply",
      status: 404,
      body: { error: "not found" },
    });
    const before = proxy.seen.length;
    const read = await host.read(id, urn(name), outs, inputs);
    expect(requests(before).slice(0, 2)).toEqual([`GET /v2/clusters/${id}`, "GET /v2/clusters"]);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ name, pods: { total: 2 }, image: "acme/train:1" });
    await host.delete(id, urn(name), outs);
  });

  it("plans no replacement after a refresh answering another letter case, nor for reordered data centres", async () => {
    const name = fresh("spelling");
    const { id, outs, inputs } = await create(name, {
      ...cluster(name),
      dataCenterIds: ["US-KS-2", "US-GA-1"],
    });
    // The service spells the GPU type and the cluster type in lower case on a later read.
    proxy.arm("GET", new RegExp(`^/v2/clusters/${id}$`), {
      kind: "rewrite",
      edit: (body) => ({
        ...body,
        type: "training",
        compute: { ...(body.compute as object), gpuTypeId: H100.toLowerCase() },
      }),
    });
    const read = await host.read(id, urn(name), outs, inputs);
    expect(read.props.compute).toEqual({ gpuTypeId: H100.toLowerCase(), gpuCountPerPod: 1, podCount: 2 });
    const same = await host.diff(id, urn(name), read.props, withProvider(inputs));
    expect(same).toMatchObject({ changes: false, replaces: [] });
    const reordered = { ...inputs, dataCenterIds: ["US-GA-1", "US-KS-2"] };
    expect(await host.diff(id, urn(name), read.props, withProvider(reordered))).toMatchObject({
      changes: false,
      replaces: [],
    });
    // A real change still replaces.
    const other = { ...inputs, compute: { gpuTypeId: H100, gpuCountPerPod: 2, podCount: 2 } };
    expect((await host.diff(id, urn(name), read.props, withProvider(other))).replaces).toEqual(["compute"]);
    await host.delete(id, urn(name), outs);
  });

  it("reads the members again when the service answers 404 for them right after the create", async () => {
    const name = fresh("settling");
    const { inputs } = await host.check(urn(name), {}, withProvider(cluster(name)));
    // Right after the create the service does not find the new cluster's members yet, once.
    proxy.arm("GET", /^\/v2\/clusters\/[^/]+\/pods$/, {
      kind: "reply",
      status: 404,
      body: { error: "not found" },
    });
    const before = proxy.seen.length;
    const { id, outs } = await host.create(urn(name), inputs);
    expect(requests(before).filter((r) => r.startsWith("POST"))).toEqual(["POST /v2/clusters"]);
    expect(requests(before).filter((r) => r === `GET /v2/clusters/${id}/pods`).length).toBeGreaterThanOrEqual(
      2,
    );
    expect((await named(name)).map((c) => c.id)).toEqual([id]);
    expect(outs.members.map((m: { status: string }) => m.status)).toEqual(["RUNNING", "RUNNING"]);
    await host.delete(id, urn(name), outs);
  });

  it("reads the cluster again when its GET answers 404 once after the members wait, and the up succeeds", async () => {
    const name = fresh("settling-get");
    const { inputs } = await host.check(urn(name), {}, withProvider(cluster(name)));
    // Once the members run, the service does not find the new cluster itself yet, once.
    proxy.arm("GET", /^\/v2\/clusters\/[^/]+$/, { kind: "reply", status: 404, body: { error: "not found" } });
    const before = proxy.seen.length;
    const { id, outs } = await host.create(urn(name), inputs);
    const sent = requests(before).filter((r) => !r.startsWith("GET /v2/catalog"));
    const membersReads = sent.filter((r) => r === `GET /v2/clusters/${id}/pods`).length;
    // One list, one POST, the members read until they run, then the cluster's GET twice: one more than before.
    expect(sent).toEqual([
      "GET /v2/clusters",
      "POST /v2/clusters",
      ...Array<string>(membersReads).fill(`GET /v2/clusters/${id}/pods`),
      `GET /v2/clusters/${id}`,
      `GET /v2/clusters/${id}`,
    ]);
    expect((await named(name)).map((c) => c.id)).toEqual([id]);
    expect(outs).toMatchObject({ name, pods: { total: 2, byStatus: { RUNNING: 2 } }, image: "acme/train:1" });
    expect(outs.members.map((m: { status: string }) => m.status)).toEqual(["RUNNING", "RUNNING"]);
    await host.delete(id, urn(name), outs);
  });

  it("refuses in check more GPUs per pod than one machine of the type holds, before anything is sent", async () => {
    const name = fresh("wide");
    const before = proxy.seen.length;
    const { failures } = await host.check(urn(name), {}, withProvider(cluster(name, 2, 9)));
    expect(failures).toEqual([
      {
        property: "compute",
        reason:
          "compute.gpuCountPerPod 9 is more GPUs than one machine holds: the catalog's maxCount (GET /v2/catalog/gpus) " +
          `of "${H100}" is 8, so no member pod could be placed. Lower compute.gpuCountPerPod (and raise ` +
          "compute.podCount for the same GPUs), or name a GPU type whose machines hold that many (getGpuTypes() " +
          "lists maxCount).",
      },
    ]);
    expect(requests(before).filter((r) => !r.startsWith("GET /v2/catalog"))).toEqual([]);
    expect((await host.check(urn(name), {}, withProvider(cluster(name, 2, 8)))).failures).toEqual([]);
  });

  it("refreshes a cluster deleted outside Pulumi to an empty id, and destroys one (404 counts as done)", async () => {
    const name = fresh("gone");
    const { id, outs, inputs } = await create(name, cluster(name));
    const read = await host.read(id, urn(name), outs, inputs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ name, pods: { total: 2 }, image: "acme/train:1" });
    await client.clusters.delete(id);
    expect(await host.read(id, urn(name), outs, inputs)).toMatchObject({ id: "" });
    const other = fresh("destroy");
    const made = await create(other, cluster(other));
    const memberIds = made.outs.members.map((m: { id: string }) => m.id);
    await host.delete(made.id, urn(other), made.outs);
    await expect(client.clusters.get(made.id)).rejects.toBeInstanceOf(NotFoundError);
    for (const podId of memberIds) await expect(client.pods.get(podId)).rejects.toBeInstanceOf(NotFoundError);
    await host.delete(made.id, urn(other), made.outs);
  });
});

describe("Cluster under the stack budget runpod:maxHourlyUsd", () => {
  const projectDir = inject("installedProjectDir");
  let emu: RunningEmulator;
  let host: ProviderHost;

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    host = await startProviderHost({ projectDir });
    await host.configure({
      "runpod:apiKey": API_KEY,
      "runpod:restUrl": emu.restUrlV2,
      "runpod:maxHourlyUsd": "40",
    });
  });

  afterAll(async () => {
    await host?.close();
    await emu?.close();
  });

  it("refuses in check a cluster whose ceiling takes the stack over its budget, naming the parts", async () => {
    const __provider = (
      await serializeProviderFrom(
        projectDir,
        "pulumi-runpod-dynamic/dist/provider/cluster/resource.js",
        "Cluster",
      )
    ).text;
    const props = {
      name: "big",
      type: "TRAINING",
      compute: { gpuTypeId: H100, gpuCountPerPod: 8, podCount: 2 },
      image: "acme/train:1",
      __provider,
    };
    const { failures } = await host.check(urn("big"), {}, props);
    expect(failures).toEqual([
      {
        property: "",
        reason:
          "runpod:maxHourlyUsd is 40 USD/h, but the hourly ceilings of this deployment's RunPod resources add up to " +
          `43.04 USD/h (list prices), largest first: Cluster "big" 43.04 USD/h (2 pods × 8 "${H100}" GPUs, 21.52 USD/h a pod). ` +
          'Nothing was created or changed. Lower the largest part, Cluster "big": its compute.podCount or ' +
          "compute.gpuCountPerPod, or a cheaper compute.gpuTypeId; or raise the budget (pulumi config set " +
          "runpod:maxHourlyUsd <usd>, or the environment variable RUNPOD_MAX_HOURLY_USD).",
      },
    ]);
    // One pod fewer GPUs per pod fits: 2 × 7 × 2.69 = 37.66.
    const fits = await host.check(
      urn("big"),
      {},
      { ...props, compute: { ...props.compute, gpuCountPerPod: 7 } },
    );
    expect(fits.failures).toEqual([]);
    expect(fits.inputs.hourlyCost).toEqual({ floorUsd: 37.66, ceilingUsd: 37.66, ratePerWorkerUsd: 18.83 });
  });
});

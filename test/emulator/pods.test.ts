/**
 * The emulator's REST v2 pods and SSH keys, over HTTP, with a ManualClock driving the
 * PROVISIONING -> STARTING -> RUNNING timers: every route, the answers checked against the v2
 * document's schemas, stock taken and given back as the catalog shows it, capacity errors, the
 * ERROR pod with its pull error in the log, the SSH banner and the HTTP port of a running pod.
 */
import { mkdtempSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SSH_BANNER } from "../../src/emulator/pods/listeners";
import { NO_CAPACITY_MESSAGE } from "../../src/emulator/pods/podStore";
import { type Answer, type Harness, harness, KEY } from "./helpers";
import { check } from "./schemaCheck";

const START_MS = 1000;
const KEY_LINE =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@example.com";
const GPU = "NVIDIA GeForce RTX 4090";

let h: Harness;
beforeEach(async () => {
  h = await harness({ podStartMs: START_MS });
});
afterEach(async () => {
  await h.close();
});

const create = (body: Record<string, unknown>) =>
  h.call("POST", "/v2/pods", { name: "dev", image: "runpod/pytorch:2", gpu: { id: GPU }, ...body });

/** Reads the pod (settling the clock between tries) until `status`; fails after 50 tries. */
async function untilPod(id: string, status: string): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < 50; i++) {
    last = await h.call("GET", `/v2/pods/${id}`);
    if (last.body?.status === status) return last;
    await h.clock.settle();
  }
  throw new Error(`pod ${id} never reached ${status}; last: ${JSON.stringify(last?.body)}`);
}

/** The pod stock level the catalog shows for a GPU type in one data centre. */
async function podLevel(gpuId: string, dataCenterId: string): Promise<string | undefined> {
  const answer = await h.call(
    "GET",
    `/v2/catalog/gpus/${encodeURIComponent(gpuId)}?include=AVAILABILITY&product=POD`,
  );
  const entry = (answer.body.dataCenters ?? []).find((d: { id: string }) => d.id === dataCenterId);
  return entry?.availability ?? (answer.body.availability === "NONE" ? "NONE" : undefined);
}

/** Reads the pod's log stream until a line matches, then closes it. */
async function logUntil(id: string, match: RegExp): Promise<string[]> {
  const res = await request(`${h.emu.restUrl}/pods/${id}/logs?tail=100`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
  const lines: string[] = [];
  let buffer = "";
  for await (const chunk of res.body) {
    buffer += chunk.toString();
    const events = buffer.split("\n\n");
    buffer = events.pop() ?? "";
    for (const event of events) {
      const data = event.split("\n").find((l) => l.startsWith("data: "));
      if (data) lines.push(JSON.parse(data.slice(6)).line);
    }
    if (lines.some((l) => match.test(l))) break;
  }
  res.body.destroy();
  return lines;
}

/** The first line a TCP listener sends. */
function banner(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("data", (data) => {
      resolve(data.toString());
      socket.destroy();
    });
    socket.once("error", reject);
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

describe("emulator /v2/pods", () => {
  it("creates a pod in PROVISIONING, lists, gets, patches and deletes it, as the document shapes them", async () => {
    const created = await create({ env: { A: "1", B: "2" }, ports: ["8888/http"] });
    expect(created.status).toBe(201);
    expect(check("Pod", created.body)).toEqual([]);
    expect(created.body).toMatchObject({
      name: "dev",
      status: "PROVISIONING",
      actions: ["stop", "terminate"],
      gpu: { id: GPU, count: 1 },
      cloud: "SECURE",
      env: { A: "1", B: "2" },
      locked: false,
      runtime: null,
    });
    const id = created.body.id as string;
    const list = await h.call("GET", "/v2/pods");
    expect(check("ListPodsResponse", list.body)).toEqual([]);
    expect(list.body.pods.map((p: { id: string }) => p.id)).toEqual([id]);
    expect((await h.call("GET", `/v2/pods/${id}`)).body.id).toBe(id);

    const patched = await h.call("PATCH", `/v2/pods/${id}`, { name: "renamed", env: { C: "3" } });
    expect(patched.status).toBe(200);
    expect(check("Pod", patched.body)).toEqual([]);
    // PATCH replaces env whole: A and B are gone.
    expect(patched.body).toMatchObject({ name: "renamed", env: { C: "3" } });

    expect((await h.call("DELETE", `/v2/pods/${id}`)).status).toBe(204);
    const gone = await h.call("GET", `/v2/pods/${id}`);
    expect(gone.status).toBe(404);
    expect(check("ErrorResponse", gone.body)).toEqual([]);
    expect((await h.call("DELETE", `/v2/pods/${id}`)).status).toBe(404);
  });

  it("answers 404 with the document's error to a PATCH of a pod that does not exist, changing nothing", async () => {
    const created = await create({});
    const before = (await h.call("GET", "/v2/pods")).body;
    const patched = await h.call("PATCH", "/v2/pods/nosuchpod1", { name: "renamed" });
    expect(patched.status).toBe(404);
    expect(check("ErrorResponse", patched.body)).toEqual([]);
    expect(JSON.stringify(patched.body)).toContain("pod nosuchpod1 not found");
    expect((await h.call("GET", "/v2/pods")).body).toEqual(before);
    expect(before.pods.map((p: { id: string }) => p.id)).toEqual([created.body.id]);
  });

  it("moves PROVISIONING -> STARTING -> RUNNING on the clock, costing price x count until stopped", async () => {
    const created = await create({ gpu: { id: GPU, count: 2 } });
    const id = created.body.id as string;
    await h.clock.advance(START_MS / 2 - 1);
    expect((await h.call("GET", `/v2/pods/${id}`)).body.status).toBe("PROVISIONING");
    await h.clock.advance(1);
    expect((await h.call("GET", `/v2/pods/${id}`)).body.status).toBe("STARTING");
    await h.clock.advance(START_MS / 2);
    const running = await untilPod(id, "RUNNING");
    expect(check("Pod", running.body)).toEqual([]);
    const gpu = (await h.call("GET", `/v2/catalog/gpus/${encodeURIComponent(GPU)}`)).body;
    expect(running.body.cost).toBeCloseTo(gpu.price.secure * 2, 6);
    expect(running.body.actions).toEqual(["stop", "restart", "terminate"]);
    expect(running.body.startedAt).toBe(new Date(h.clock.now()).toISOString());

    const stopped = await h.call("POST", `/v2/pods/${id}/action`, { action: "stop" });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "EXITED", cost: 0, actions: ["start", "terminate"] });
    expect(check("Pod", stopped.body)).toEqual([]);

    const started = await h.call("POST", `/v2/pods/${id}/action`, { action: "start" });
    expect(started.body.status).toBe("PROVISIONING");
    await h.clock.advance(START_MS);
    expect((await untilPod(id, "RUNNING")).body.cost).toBeGreaterThan(0);
  });

  it("answers 409 for an action the status does not allow, and terminate as a delete", async () => {
    const id = (await create({})).body.id as string;
    const restart = await h.call("POST", `/v2/pods/${id}/action`, { action: "restart" });
    expect(restart.status).toBe(409);
    expect(restart.body.detail).toContain("valid now: stop, terminate");
    const bad = await h.call("POST", `/v2/pods/${id}/action`, { action: "reboot" });
    expect(bad.status).toBe(422);
    const terminated = await h.call("POST", `/v2/pods/${id}/action`, { action: "terminate" });
    expect(terminated.status).toBe(204);
    expect((await h.call("GET", `/v2/pods/${id}`)).status).toBe(404);
  });

  it("refuses to stop or delete a locked pod, saying to unlock it", async () => {
    const id = (await create({})).body.id as string;
    expect((await h.call("PATCH", `/v2/pods/${id}`, { locked: true })).body.locked).toBe(true);
    const del = await h.call("DELETE", `/v2/pods/${id}`);
    expect(del.status).toBe(409);
    expect(del.body.detail).toMatch(/locked.*unlock/);
    expect((await h.call("POST", `/v2/pods/${id}/action`, { action: "stop" })).status).toBe(409);
    await h.call("PATCH", `/v2/pods/${id}`, { locked: false });
    expect((await h.call("DELETE", `/v2/pods/${id}`)).status).toBe(204);
  });

  it("answers the document's 400 rules and 422 for a body that breaks the contract", async () => {
    const both = await create({ cpu: { id: "cpu3c", vcpuCount: 2 } });
    expect(both.status).toBe(400);
    expect(both.body.detail).toContain("cpu");
    const persistentCpu = await h.call("POST", "/v2/pods", {
      name: "c",
      image: "x",
      cpu: { id: "cpu3c", vcpuCount: 2 },
      mounts: { persistent: { size: 20, path: "/workspace" } },
    });
    expect(persistentCpu.status).toBe(400);
    expect(persistentCpu.body.detail).toContain("mounts.persistent");
    const unknown = await create({ bogus: true });
    expect(unknown.status).toBe(422);
    const port = await create({ ports: ["8888"] });
    expect(port.status).toBe(422);
    expect(port.body.detail).toContain("ports");
  });

  it("fixes the mount kind and the volume at create", async () => {
    const id = (await create({ mounts: { persistent: { size: 20, path: "/workspace" } } })).body.id;
    const moved = await h.call("PATCH", `/v2/pods/${id}`, {
      mounts: { persistent: { size: 20, path: "/data" } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.mounts).toEqual({ persistent: { size: 20, path: "/data" } });
    const other = await h.call("PATCH", `/v2/pods/${id}`, {
      mounts: { network: [{ volumeId: "v", path: "/v" }] },
    });
    expect(other.status).toBe(400);
    expect(other.body.detail).toContain("fixed at create");
  });

  it("creates a pod from a pod template, body fields winning and env merged per key", async () => {
    const template = await h.call("POST", "/v2/templates", {
      name: "pod-tpl",
      image: "acme/dev:1",
      ports: ["8888/http"],
      env: { A: "template", B: "template" },
      serverless: false,
    });
    expect(template.status).toBe(201);
    const created = await h.call("POST", "/v2/pods", {
      name: "from-tpl",
      templateId: template.body.id,
      gpu: { id: GPU },
      env: { B: "body" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      image: "acme/dev:1",
      ports: ["8888/http"],
      env: { A: "template", B: "body" },
      template: null,
    });
    const serverlessTpl = await h.call("POST", "/v2/templates", { name: "sl", image: "x", serverless: true });
    const refusedSl = await h.call("POST", "/v2/pods", {
      name: "p",
      templateId: serverlessTpl.body.id,
      gpu: { id: GPU },
    });
    expect(refusedSl.status).toBe(422);
    const unknownTpl = await h.call("POST", "/v2/pods", { name: "p", templateId: "nope", gpu: { id: GPU } });
    expect(unknownTpl.status).toBe(404);
  });

  it("runs a CPU pod at the flavour's price per vCPU", async () => {
    const created = await h.call("POST", "/v2/pods", {
      name: "c",
      image: "x",
      cpu: { id: "cpu3c", vcpuCount: 4 },
    });
    expect(created.status).toBe(201);
    expect(check("Pod", created.body)).toEqual([]);
    const cpu = (await h.call("GET", "/v2/catalog/cpus/cpu3c")).body;
    expect(created.body.cost).toBeCloseTo(cpu.price.securePerVcpu * 4, 6);
    expect(created.body).not.toHaveProperty("gpu");
  });
});

describe("emulator pod stock", () => {
  it("has a GPU type with no pod stock anywhere, and refuses it with a 400 carrying no code", async () => {
    const gpus = (await h.call("GET", "/v2/catalog/gpus?include=AVAILABILITY&product=POD")).body.gpus;
    const none = gpus
      .filter((g: { availability: string }) => g.availability === "NONE")
      .map((g: { id: string }) => g.id);
    expect(none).toContain("NVIDIA H200");
    const refusedCreate = await create({ gpu: { id: "NVIDIA H200" } });
    expect(refusedCreate.status).toBe(400);
    expect(refusedCreate.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(refusedCreate.body).toEqual({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: NO_CAPACITY_MESSAGE,
    });
  });

  it("places a pod in a data centre named in any letter case, as the service compares ids", async () => {
    const pod = await create({ gpu: { id: "NVIDIA L4" }, dataCenterIds: ["us-ks-2"] });
    expect(pod.status).toBe(201);
    expect(pod.body.dataCenterId).toBe("US-KS-2");
  });

  it("takes GPUs from a data centre's stock, which the catalog shows, and gives them back on delete", async () => {
    expect(await podLevel("NVIDIA L4", "US-KS-2")).toBe("LOW");
    const pod = await create({ gpu: { id: "NVIDIA L4", count: 2 }, dataCenterIds: ["US-KS-2"] });
    expect(pod.status).toBe(201);
    expect(pod.body.dataCenterId).toBe("US-KS-2");
    expect(await podLevel("NVIDIA L4", "US-KS-2")).toBe("NONE");
    const full = await create({ gpu: { id: "NVIDIA L4" }, dataCenterIds: ["US-KS-2"] });
    expect(full.status).toBe(400);
    expect(full.body.detail).toBe(NO_CAPACITY_MESSAGE);
    // Elsewhere there is still stock.
    expect((await create({ gpu: { id: "NVIDIA L4" } })).body.dataCenterId).toBe("EU-SE-1");
    await h.call("DELETE", `/v2/pods/${pod.body.id}`);
    expect(await podLevel("NVIDIA L4", "US-KS-2")).toBe("LOW");
  });

  it("gives stock back when a pod stops, and needs it again to start", async () => {
    const pod = await create({ gpu: { id: "NVIDIA L4", count: 2 }, dataCenterIds: ["US-KS-2"] });
    await h.call("POST", `/v2/pods/${pod.body.id}/action`, { action: "stop" });
    expect(await podLevel("NVIDIA L4", "US-KS-2")).toBe("LOW");
    const taker = await create({ gpu: { id: "NVIDIA L4" }, dataCenterIds: ["US-KS-2"] });
    expect(taker.status).toBe(201);
    const start = await h.call("POST", `/v2/pods/${pod.body.id}/action`, { action: "start" });
    expect(start.status).toBe(400);
    expect(start.body.detail).toContain(NO_CAPACITY_MESSAGE);
  });

  it("shows pod stock going down and back up in a data centre's gpuAvailability", async () => {
    const level = async () => {
      const dc = (await h.call("GET", "/v2/catalog/datacenters/US-KS-2?include=GPU_AVAILABILITY")).body;
      return dc.gpuAvailability.find((g: { id: string }) => g.id === "AMD Instinct MI300X OAM")?.availability;
    };
    const listed = async () => {
      const all = (await h.call("GET", "/v2/catalog/datacenters?include=GPU_AVAILABILITY")).body.dataCenters;
      const dc = all.find((d: { id: string }) => d.id === "US-KS-2");
      return dc.gpuAvailability.find((g: { id: string }) => g.id === "AMD Instinct MI300X OAM")?.availability;
    };
    expect(await level()).toBe("LOW");
    const pod = await create({
      gpu: { id: "AMD Instinct MI300X OAM", count: 2 },
      dataCenterIds: ["US-KS-2"],
    });
    expect(pod.status).toBe(201);
    expect(await level()).toBe("NONE");
    expect(await listed()).toBe("NONE");
    await h.call("DELETE", `/v2/pods/${pod.body.id}`);
    expect(await level()).toBe("LOW");
    expect(await listed()).toBe("LOW");
  });

  it("takes vCPUs of a CPU flavour's stock, refuses a CPU pod with none left, and shows it in the catalog", async () => {
    const cpuLevel = async () => {
      const cpu = (await h.call("GET", "/v2/catalog/cpus/cpu5c?include=AVAILABILITY&product=POD")).body;
      return cpu.dataCenters?.find((d: { id: string }) => d.id === "EU-SE-1")?.availability ?? "NONE";
    };
    const dcLevel = async () => {
      const dc = (await h.call("GET", "/v2/catalog/datacenters/EU-SE-1?include=CPU_AVAILABILITY")).body;
      return dc.cpuAvailability.find((c: { id: string }) => c.id === "cpu5c")?.availability;
    };
    const cpuPod = (vcpuCount: number) =>
      h.call("POST", "/v2/pods", {
        name: "c",
        image: "x",
        cpu: { id: "cpu5c", vcpuCount },
        dataCenterIds: ["EU-SE-1"],
      });
    expect(await cpuLevel()).toBe("LOW");
    expect(await dcLevel()).toBe("LOW");
    const big = await cpuPod(32);
    expect(big.status).toBe(201);
    expect(big.body.dataCenterId).toBe("EU-SE-1");
    expect(await cpuLevel()).toBe("NONE");
    expect(await dcLevel()).toBe("NONE");
    const refused = await cpuPod(2);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe(NO_CAPACITY_MESSAGE);
    await h.call("POST", `/v2/pods/${big.body.id}/action`, { action: "stop" });
    expect(await cpuLevel()).toBe("LOW");
    expect((await cpuPod(2)).status).toBe(201);
    const restart = await h.call("POST", `/v2/pods/${big.body.id}/action`, { action: "start" });
    expect(restart.status).toBe(400);
    expect(restart.body.detail).toContain(NO_CAPACITY_MESSAGE);
  });
});

describe("emulator account balance", () => {
  it("answers 402 to a pod create that costs more an hour than the balance, and creates nothing", async () => {
    h.emu.setBalanceUsd(0.1);
    const refused = await create({});
    expect(refused.status).toBe(402);
    expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 402, title: "Payment Required" });
    expect(refused.body.detail).toMatch(/^Insufficient balance: .*\$0\.1\b/);
    expect((await h.call("GET", "/v2/pods")).body.pods).toEqual([]);
    expect(await podLevel(GPU, "US-KS-2")).not.toBe("NONE");
    h.emu.setBalanceUsd(undefined);
    expect((await create({})).status).toBe(201);
  });

  it("answers 402 to a start once the balance is short, and lets the pod start when it is topped up", async () => {
    const pod = await create({});
    await h.call("POST", `/v2/pods/${pod.body.id}/action`, { action: "stop" });
    h.emu.setBalanceUsd(0);
    const start = await h.call("POST", `/v2/pods/${pod.body.id}/action`, { action: "start" });
    expect(start.status).toBe(402);
    expect((await h.call("GET", `/v2/pods/${pod.body.id}`)).body.status).toBe("EXITED");
    h.emu.setBalanceUsd(100);
    expect((await h.call("POST", `/v2/pods/${pod.body.id}/action`, { action: "start" })).status).toBe(200);
  });

  it("takes the balance from the balanceUsd option", async () => {
    const low = await harness({ podStartMs: START_MS, balanceUsd: 0 });
    try {
      const refused = await low.call("POST", "/v2/pods", {
        name: "c",
        image: "x",
        cpu: { id: "cpu3c", vcpuCount: 2 },
      });
      expect(refused.status).toBe(402);
    } finally {
      await low.close();
    }
  });
});

describe("emulator pod runtime", () => {
  it("ends an unpullable image in ERROR with the pull error in the pod's log", async () => {
    const id = (await create({ image: "acme/unpullable:1" })).body.id as string;
    await h.clock.advance(START_MS);
    const failed = await untilPod(id, "ERROR");
    expect(failed.body).toMatchObject({ cost: 0, actions: ["start", "terminate"] });
    const lines = await logUntil(id, /pull access denied/);
    expect(lines.join("\n")).toContain("error pulling image acme/unpullable:1");
  });

  it("serves SSH with a banner when started with registered keys, and closes it on delete", async () => {
    const put = await h.call("PUT", "/v2/account/ssh-keys", { keys: [KEY_LINE] });
    expect(put.status).toBe(200);
    expect(check("SshKeys", put.body)).toEqual([]);
    expect((await h.call("GET", "/v2/account/ssh-keys")).body).toEqual({ keys: [KEY_LINE] });
    const created = await create({ startSsh: true, ports: ["22/tcp"] });
    expect(created.body.env).toEqual({ PUBLIC_KEY: KEY_LINE });
    expect(created.body).not.toHaveProperty("startSsh");
    await h.clock.advance(START_MS);
    const running = (await untilPod(created.body.id, "RUNNING")).body;
    expect(check("Pod", running)).toEqual([]);
    const port = running.ssh.direct.port as number;
    expect(running.ssh.direct).toMatchObject({ host: "127.0.0.1", username: "root" });
    expect(running.ssh.proxy.port).toBe(port);
    expect(await banner(port)).toBe(SSH_BANNER);
    expect(SSH_BANNER).toMatch(/^SSH-2\.0-\S+.*\r\n$/);
    await h.call("DELETE", `/v2/pods/${created.body.id}`);
    expect(await refused(port)).toBe(true);
  });

  it("gives no SSH listener without registered keys", async () => {
    const created = await create({ startSsh: true, ports: ["22/tcp"] });
    await h.clock.advance(START_MS);
    const running = (await untilPod(created.body.id, "RUNNING")).body;
    expect(running.ssh).toEqual({ proxy: null, direct: null });
    expect(running.env).toEqual({});
  });

  it("proxies a /http port to a server answering 200, closed when the pod stops", async () => {
    const created = await create({ ports: ["8888/http"] });
    await h.clock.advance(START_MS);
    const running = (await untilPod(created.body.id, "RUNNING")).body;
    const mapping = running.runtime.ports.find((p: { private: number }) => p.private === 8888);
    expect(mapping).toMatchObject({ type: "http", ip: "127.0.0.1" });
    const res = await request(`http://127.0.0.1:${mapping.public}/health`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain("/health");
    await h.call("POST", `/v2/pods/${created.body.id}/action`, { action: "stop" });
    expect(await refused(mapping.public)).toBe(true);
  });

  it("closes every pod listener when the emulator closes", async () => {
    const created = await create({ ports: ["8888/http"] });
    await h.clock.advance(START_MS);
    const running = (await untilPod(created.body.id, "RUNNING")).body;
    const port = running.runtime.ports[0].public as number;
    await h.close();
    expect(await refused(port)).toBe(true);
  });

  it("refuses an SSH key that is not an authorized_keys line with 422", async () => {
    const bad = await h.call("PUT", "/v2/account/ssh-keys", { keys: ["not a key"] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContain("keys");
  });

  it("refuses an SSH key holding NUL with 422 and keeps the set as it was", async () => {
    await h.call("PUT", "/v2/account/ssh-keys", { keys: [KEY_LINE] });
    const bad = await h.call("PUT", "/v2/account/ssh-keys", { keys: [KEY_LINE, `${KEY_LINE}\u0000x`] });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toContain("keys entries must not hold a NUL character");
    expect((await h.call("GET", "/v2/account/ssh-keys")).body).toEqual({ keys: [KEY_LINE] });
  });

  it("streams a running pod's log with the container's lines", async () => {
    const id = (await create({ ports: ["8888/http"] })).body.id as string;
    await h.clock.advance(START_MS);
    await untilPod(id, "RUNNING");
    const lines = await logUntil(id, /container started/);
    expect(lines).toEqual(
      expect.arrayContaining(["status PROVISIONING", "status STARTING", "status RUNNING"]),
    );
  });
});

describe("emulator pods in the state file", () => {
  it("keep pods, their stock and the SSH keys across a restart, starting the container again", async () => {
    await h.close();
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), "pods-state-")), "state.json");
    h = await harness({ podStartMs: START_MS, stateFile });
    await h.call("PUT", "/v2/account/ssh-keys", { keys: [KEY_LINE] });
    const created = await create({
      gpu: { id: "NVIDIA L4", count: 2 },
      dataCenterIds: ["US-KS-2"],
      env: { A: "1" },
    });
    await h.clock.advance(START_MS);
    await untilPod(created.body.id, "RUNNING");
    await h.close();

    h = await harness({ podStartMs: START_MS, stateFile });
    expect((await h.call("GET", "/v2/account/ssh-keys")).body).toEqual({ keys: [KEY_LINE] });
    const again = await h.call("GET", `/v2/pods/${created.body.id}`);
    expect(again.body).toMatchObject({ status: "STARTING", env: { A: "1" }, dataCenterId: "US-KS-2" });
    expect(check("Pod", again.body)).toEqual([]);
    expect(await podLevel("NVIDIA L4", "US-KS-2")).toBe("NONE");
    await h.clock.advance(START_MS);
    await untilPod(created.body.id, "RUNNING");
  });
});

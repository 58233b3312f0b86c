/**
 * `client.pods`, `client.account` and `client.catalog.cpu` against the emulator over real HTTP:
 * a pod's whole life (create, read, update, stop, start, logs, delete), capacity refusals as
 * typed errors, pod stock from the catalog, SSH keys, the v1 refusal and bad input refused
 * before any request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BadRequestError,
  ConflictError,
  NotFoundError,
  type Pod,
  type PodLogEvent,
  RunpodClient,
  ValidationError,
} from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";

const START_MS = 1000;
const KEY_LINE =
  "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILXGDN/SclOozk1xsDztpmhGiKkkrfQB9SKoO8dSIQQZ me@example.com";

let emu: RunningEmulator;
let clock: ManualClock;
let client: RunpodClient;
beforeAll(async () => {
  clock = new ManualClock();
  emu = await startEmulator({ port: 0, clock, podStartMs: START_MS, rateLimits: false });
  client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrl,
    serverlessUrl: emu.serverlessUrl,
    env: {},
  });
});
afterAll(async () => {
  await emu.close();
});

/** Reads the pod, settling the clock between reads, until `status`. */
async function until(id: string, status: string): Promise<Pod> {
  for (let i = 0; i < 50; i++) {
    const pod = await client.pods.get(id);
    if (pod.status === status) return pod;
    await clock.settle();
  }
  throw new Error(`pod ${id} never reached ${status}`);
}

describe("client.pods against the emulator", () => {
  it("creates, reads, updates, stops, starts, streams logs of and deletes a pod", async () => {
    const pod = await client.pods.create({
      name: "dev",
      image: "runpod/pytorch:2",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
      env: { TOKEN: "t1", MODE: "a" },
      ports: ["8888/http"],
    });
    expect(pod).toMatchObject({
      name: "dev",
      status: "PROVISIONING",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
    });
    expect((await client.pods.list()).map((p) => p.id)).toContain(pod.id);
    await clock.advance(START_MS);
    const running = await until(pod.id, "RUNNING");
    expect(running.cost).toBeGreaterThan(0);

    const updated = await client.pods.update(pod.id, { env: { MODE: "b" } });
    expect(updated.env).toEqual({ MODE: "b" });

    const stopped = await client.pods.action(pod.id, "stop");
    expect(stopped).toMatchObject({ status: "EXITED", cost: 0 });
    await expect(client.pods.action(pod.id, "restart")).rejects.toBeInstanceOf(ConflictError);
    expect((await client.pods.action(pod.id, "start"))?.status).toBe("PROVISIONING");
    await clock.advance(START_MS);
    await until(pod.id, "RUNNING");

    const lines: PodLogEvent[] = [];
    for await (const event of client.pods.logs(pod.id, { tail: 100, source: "system" })) {
      lines.push(event);
      if (event.line === "status RUNNING" && lines.filter((l) => l.line === "status RUNNING").length === 2)
        break;
    }
    expect(lines.every((l) => l.source === "system")).toBe(true);
    expect(lines.map((l) => l.line)).toContain("pod stopped; compute released, disk kept");

    await client.pods.delete(pod.id);
    await expect(client.pods.get(pod.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("terminates through action, answering undefined", async () => {
    const pod = await client.pods.create({ name: "t", image: "x", cpu: { id: "cpu3c", vcpuCount: 2 } });
    expect(await client.pods.action(pod.id, "terminate")).toBeUndefined();
    await expect(client.pods.get(pod.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("surfaces no capacity as BadRequestError, and pod stock from the catalog shows why", async () => {
    const gpus = await client.catalog.gpus({ include: ["AVAILABILITY"], product: ["POD"] });
    const h200 = gpus.find((g) => g.id === "NVIDIA H200");
    expect(h200?.availability).toBe("NONE");
    const error = await client.pods
      .create({ name: "big", image: "x", gpu: { id: "NVIDIA H200" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toContain("no longer any instances available");
    expect((await client.pods.list()).some((p) => p.name === "big")).toBe(false);
  });

  it("reads and replaces the account's SSH keys", async () => {
    expect(await client.account.setSshKeys([KEY_LINE])).toEqual([KEY_LINE]);
    expect(await client.account.sshKeys()).toEqual([KEY_LINE]);
    expect(await client.account.setSshKeys([])).toEqual([]);
  });

  it("reads one CPU flavour from the catalog", async () => {
    const cpu = await client.catalog.cpu("cpu3c", { include: ["AVAILABILITY"], product: ["POD"] });
    expect(cpu).toMatchObject({ id: "cpu3c" });
    expect(cpu.availability).toBeDefined();
    await expect(client.catalog.cpu("cpu0x")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("client.pods input checks, before any request", () => {
  const offline = new RunpodClient({ apiKey: "k", restUrl: "http://127.0.0.1:9/v2", maxRetries: 0, env: {} });

  it.each([
    [{ name: "p", image: "x", gpu: { id: "A" }, cpu: { id: "cpu3c", vcpuCount: 2 } }, "cpu"],
    [{ name: "p", image: "x" }, "gpu"],
    [
      {
        name: "p",
        image: "x",
        cpu: { id: "cpu3c", vcpuCount: 2 },
        mounts: { persistent: { size: 20, path: "/w" } },
      },
      "mounts.persistent",
    ],
    [
      { name: "p", image: "x", gpu: { id: "A", allowedCudaVersions: ["12.4"], minCudaVersion: "12.1" } },
      "gpu.minCudaVersion",
    ],
    [{ name: "p", image: "x", gpu: { id: "A" }, ports: ["8888"] }, "ports"],
    [{ name: "p", gpu: { id: "A" } }, "image"],
  ])("refuses %j naming %s", async (body, field) => {
    const error = await offline.pods.create(body as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain(field);
  });

  it("refuses a malformed SSH key and an unknown action", async () => {
    await expect(offline.account.setSshKeys(["ssh-ed25519"])).rejects.toBeInstanceOf(ValidationError);
    await expect(offline.pods.action("p", "reboot" as never)).rejects.toBeInstanceOf(ValidationError);
  });

  it("refuses pods and ssh keys on a REST v1 restUrl, saying so", async () => {
    const v1 = new RunpodClient({ apiKey: "k", restUrl: "http://127.0.0.1:9/v1", env: {} });
    await expect(v1.pods.list()).rejects.toThrow(/client\.pods needs the REST v2 interface/);
    await expect(v1.account.sshKeys()).rejects.toThrow(/client\.account needs the REST v2 interface/);
    expect(() => v1.pods.logs("p")).toThrow(ValidationError);
  });
});

/**
 * Pod's check and diff, called directly (no network: both are pure). The host tests
 * (podHost.test.ts) drive the same functions through Pulumi's provider host.
 */
import { describe, expect, it } from "vitest";
import { checkPod, diffPod } from "../../src/provider/pod/operations";
import { type WaitOptions, waitForPod } from "../../src/provider/pod/wait";
import { FakeClock } from "../support/fakeClock";

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const ENV_SECRET = "hf_pod-unit-secret-77aa";
const base = { name: "dev", image: "acme/dev:1", gpu: { id: "NVIDIA H200" } };

async function failures(news: Record<string, unknown>) {
  const { failures } = await checkPod(undefined, {}, news);
  return (failures ?? []).map((f) => `${f.property}|${f.reason}`);
}

describe("Pod check", () => {
  it("accepts a GPU pod with the provider's own arguments", async () => {
    expect(
      await failures({
        ...base,
        ports: ["8888/http", "22/tcp"],
        startSsh: true,
        fallbackGpuIds: ["NVIDIA A100 80GB PCIe"],
        desiredStatus: "EXITED",
        waitFor: { port: 8888, path: "/lab", expectStatus: 200 },
        waitTimeoutMs: 60_000,
      }),
    ).toEqual([]);
  });

  it("refuses both gpu and cpu, naming cpu", async () => {
    const f = await failures({ ...base, cpu: { id: "cpu3c", vcpuCount: 2 } });
    expect(f.join("\n")).toMatch(/cpu.*cannot be combined with gpu/);
  });

  it("refuses neither gpu nor cpu, naming gpu", async () => {
    const { gpu: _gpu, ...noCompute } = base;
    expect((await failures(noCompute)).join("\n")).toMatch(/gpu is required unless cpu/);
  });

  it("refuses a persistent mount on a CPU pod", async () => {
    const f = await failures({
      name: "c",
      image: "i",
      cpu: { id: "cpu3c", vcpuCount: 2 },
      mounts: { persistent: { size: 20, path: "/workspace" } },
    });
    expect(f.join("\n")).toMatch(/mounts\.persistent is not allowed on a CPU pod/);
  });

  it("refuses allowedCudaVersions together with minCudaVersion", async () => {
    const f = await failures({
      ...base,
      gpu: { id: "x", allowedCudaVersions: ["12.4"], minCudaVersion: "12.1" },
    });
    expect(f.join("\n")).toMatch(/gpu\.minCudaVersion.*mutually exclusive/);
  });

  it("refuses a port without /http or /tcp", async () => {
    expect((await failures({ ...base, ports: ["8888"] })).join("\n")).toMatch(
      /ports.*"<port>\/http" or "<port>\/tcp"/,
    );
  });

  it("refuses a waitFor port the pod does not expose over http", async () => {
    const f = await failures({ ...base, ports: ["8888/tcp"], waitFor: { port: 8888 } });
    expect(f.join("\n")).toMatch(/waitFor\.port 8888 is not an HTTP port of the pod: add "8888\/http"/);
  });

  it('refuses waitFor "ssh" without startSsh', async () => {
    expect((await failures({ ...base, waitFor: "ssh" })).join("\n")).toMatch(/needs startSsh: true/);
  });

  it("refuses an unknown field and lists the allowed ones", async () => {
    const f = await failures({ ...base, gpuCount: 2 });
    expect(f.join("\n")).toMatch(/unknown property gpuCount; allowed: name, .*fallbackGpuIds/);
  });

  it("refuses bad types and bad values of the provider's own arguments, naming each", async () => {
    const f = (
      await failures({
        ...base,
        desiredStatus: "STOPPED",
        waitTimeoutMs: "10s",
        fallbackGpuIds: "A100",
        waitFor: "up",
      })
    ).join("\n");
    expect(f).toMatch(/desiredStatus must be "RUNNING" or "EXITED"/);
    expect(f).toMatch(/waitTimeoutMs must be an integer/);
    expect(f).toMatch(/fallbackGpuIds must be an array/);
    expect(f).toMatch(/waitFor must be "none", "running", "ssh"/);
  });

  it("lets unknown preview values through without failing", async () => {
    expect(
      await failures({
        name: UNKNOWN,
        image: UNKNOWN,
        gpu: UNKNOWN,
        waitFor: { port: UNKNOWN },
        ports: UNKNOWN,
      }),
    ).toEqual([]);
  });

  it("never puts an env value in a failure", async () => {
    const f = await failures({ ...base, env: { TOKEN: ENV_SECRET, BAD: 3 } });
    expect(f.length).toBeGreaterThan(0);
    expect(f.join("\n")).not.toContain(ENV_SECRET);
  });
});

/** Outputs of a GPU pod that asked for H200 and landed on A100 through its fallbacks. */
const landed = {
  name: "dev",
  image: "acme/dev:1",
  status: "RUNNING",
  gpu: { id: "NVIDIA A100 80GB PCIe", count: 1 },
  requestedGpu: { id: "NVIDIA H200" },
  fallbackGpuIds: ["NVIDIA A100 80GB PCIe"],
  cloud: "SECURE",
  dataCenterId: "US-KS-2",
  cudaVersion: "12.8",
  env: { TOKEN: ENV_SECRET, PUBLIC_KEY: "ssh-ed25519 AAAA me" },
  startSsh: true,
  mounts: { persistent: { size: 20, path: "/workspace" } },
  desiredStatus: "RUNNING",
  locked: false,
};
const program = {
  name: "dev",
  image: "acme/dev:1",
  gpu: { id: "NVIDIA H200" },
  fallbackGpuIds: ["NVIDIA A100 80GB PCIe"],
  env: { TOKEN: ENV_SECRET },
  startSsh: true,
  mounts: { persistent: { size: 20, path: "/workspace" } },
};

describe("Pod diff", () => {
  const diff = (news: Record<string, unknown>) => diffPod("p1", landed, news);

  it("sees no change for the same program, the injected PUBLIC_KEY aside", async () => {
    expect(await diff(program)).toMatchObject({ changes: false, replaces: [] });
  });

  it("does not replace when gpu.id becomes the type the pod landed on", async () => {
    const d = await diff({ ...program, gpu: { id: "NVIDIA A100 80GB PCIe" } });
    expect(d.replaces).toEqual([]);
  });

  it("replaces on another GPU type or count, naming gpu", async () => {
    expect((await diff({ ...program, gpu: { id: "NVIDIA L40S" } })).replaces).toEqual(["gpu"]);
    expect((await diff({ ...program, gpu: { id: "NVIDIA H200", count: 2 } })).replaces).toEqual(["gpu"]);
  });

  it("replaces on cloud, mount kind and the create-only flags, naming each", async () => {
    expect((await diff({ ...program, cloud: "COMMUNITY" })).replaces).toEqual(["cloud"]);
    expect(
      (await diff({ ...program, mounts: { network: [{ volumeId: "v1", path: "/w" }] } })).replaces,
    ).toEqual(["mounts"]);
    expect((await diff({ ...program, startSsh: false })).replaces).toEqual(["startSsh"]);
    expect((await diff({ ...program, startJupyter: true })).replaces).toEqual(["startJupyter"]);
  });

  it("updates container settings, name, locked and env in place", async () => {
    for (const change of [
      { image: "acme/dev:2" },
      { name: "renamed" },
      { locked: true },
      { env: { TOKEN: "other" } },
      { globalNetworking: true },
      { mounts: { persistent: { size: 40, path: "/workspace" } } },
    ]) {
      expect(await diff({ ...program, ...change }), JSON.stringify(Object.keys(change))).toMatchObject({
        changes: true,
        replaces: [],
      });
    }
  });

  it("stops and starts on desiredStatus instead of replacing", async () => {
    expect(await diff({ ...program, desiredStatus: "EXITED" })).toMatchObject({
      changes: true,
      replaces: [],
    });
    const stoppedOutside = { ...landed, desiredStatus: "EXITED", status: "EXITED" };
    expect(await diffPod("p1", stoppedOutside, program)).toMatchObject({ changes: true, replaces: [] });
  });

  it("changes fallbackGpuIds, waitFor and waitTimeoutMs without replacing", async () => {
    for (const change of [{ fallbackGpuIds: [] }, { waitFor: "none" }, { waitTimeoutMs: 5000 }]) {
      expect(await diff({ ...program, ...change })).toMatchObject({ changes: true, replaces: [] });
    }
  });
});

describe("waiting for a pod", () => {
  /**
   * A replay of the statuses a pod goes through, one per read (the last one again once they run
   * out), on a fake clock: `wait` runs the wait until it ends and says when (the clock's time) and how.
   */
  function replay(statuses: string[]) {
    const clock = new FakeClock();
    const reads: number[] = [];
    const pods = statuses.map((status) => ({ id: "p1", name: "dev", status }));
    const client = {
      pods: {
        get: async () => {
          reads.push(clock.now());
          return pods[Math.min(reads.length, pods.length - 1)];
        },
      },
    };
    const wait = async (options: Pick<WaitOptions, "wanted" | "waitFor" | "timeoutMs">) => {
      const ended = await clock.runUntil(
        waitForPod({ client: client as never, pod: pods[0] as never, clock, ...options }),
      );
      if (!ended.ok) throw ended.error;
      return { at: ended.at, result: ended.value };
    };
    return { reads, wait, clock };
  }

  it("reads the pod once a second until RUNNING, recording the status history", async () => {
    const { reads, wait } = replay(["PROVISIONING", "PROVISIONING", "STARTING", "RUNNING"]);
    const { at, result } = await wait({ wanted: "RUNNING", waitFor: "running", timeoutMs: 60_000 });
    expect(result.kind).toBe("ready");
    expect(reads).toEqual([1000, 2000, 3000]);
    expect(at).toBe(3000);
  });

  it("ends at ERROR with the statuses seen in order", async () => {
    const { reads, wait } = replay(["PROVISIONING", "STARTING", "STARTING", "ERROR"]);
    const { at, result } = await wait({ wanted: "RUNNING", waitFor: "running", timeoutMs: 60_000 });
    expect(result).toMatchObject({
      kind: "failure",
      history: ["PROVISIONING", "STARTING", "ERROR"],
      why: "it went to ERROR instead of RUNNING",
    });
    expect(reads).toEqual([1000, 2000, 3000]);
    expect(at).toBe(3000);
  });

  it("fails at once when the pod goes EXITED while waiting for RUNNING, not at waitTimeoutMs", async () => {
    const { reads, wait, clock } = replay(["PROVISIONING", "STARTING", "EXITED"]);
    const { at, result } = await wait({ wanted: "RUNNING", waitFor: "running", timeoutMs: 600_000 });
    expect(result).toEqual({
      kind: "failure",
      pod: { id: "p1", name: "dev", status: "EXITED" },
      history: ["PROVISIONING", "STARTING", "EXITED"],
      why: "it went to EXITED instead of RUNNING",
    });
    expect(reads).toEqual([1000, 2000]);
    expect(at).toBe(2000);
    expect(clock.pending()).toBe(0);
  });

  it("waits for EXITED when the pod is being stopped, and ends when it is", async () => {
    const { reads, wait } = replay(["RUNNING", "RUNNING", "EXITED"]);
    const { at, result } = await wait({ wanted: "EXITED", waitFor: "running", timeoutMs: 60_000 });
    expect(result).toMatchObject({ kind: "ready", pod: { status: "EXITED" } });
    expect(reads).toEqual([1000, 2000]);
    expect(at).toBe(2000);
  });

  it("gives up at waitTimeoutMs, saying the status it was left in", async () => {
    const { reads, wait, clock } = replay(["STARTING"]);
    const { at, result } = await wait({ wanted: "RUNNING", waitFor: "running", timeoutMs: 2500 });
    expect(result).toEqual({
      kind: "failure",
      pod: { id: "p1", name: "dev", status: "STARTING" },
      history: ["STARTING"],
      why: "it was not RUNNING within waitTimeoutMs (2500 ms); its status is STARTING",
    });
    expect(reads).toEqual([1000, 2000, 2500]);
    expect(at).toBe(2500);
    expect(clock.pending()).toBe(0);
  });

  it('returns at once for waitFor "none", reading nothing', async () => {
    const { reads, wait } = replay(["PROVISIONING"]);
    const { at, result } = await wait({ wanted: "RUNNING", waitFor: "none", timeoutMs: 60_000 });
    expect(result.kind).toBe("ready");
    expect(reads).toEqual([]);
    expect(at).toBe(0);
  });
});

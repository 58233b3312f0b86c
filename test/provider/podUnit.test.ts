/**
 * Pod's check and diff, called directly (no network: both are pure). The host tests
 * (podHost.test.ts) drive the same functions through Pulumi's provider host.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { plannedChanges, replacementWarning } from "../../src/provider/pod/changes";
import { checkPod, diffPod } from "../../src/provider/pod/operations";
import { outputsOf, withOmittedKept } from "../../src/provider/pod/outputs";
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

/**
 * A refresh stores the pod as read back; the next diff compares it with the program. A read-back
 * that differs from the last one only in the service's equivalences plans no change (a
 * replacement would delete the pod's disks); a real change still replaces.
 */
describe("Pod diff of a read-back in the service's equivalences", () => {
  /** What diff wrote to stderr (the host's, shown under the stack). */
  const written: string[] = [];
  beforeEach(() => {
    written.length = 0;
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const diff = (olds: Record<string, unknown>, news: Record<string, unknown>) => diffPod("p1", olds, news);
  const without = (key: string, from: Record<string, unknown> = landed) =>
    Object.fromEntries(Object.entries(from).filter(([k]) => k !== key));
  const none = { changes: false, replaces: [] };

  it("compares cloud in any letter case; a read-back without cloud is no change", async () => {
    expect(await diff({ ...landed, cloud: "secure" }, program)).toMatchObject(none);
    expect(await diff({ ...landed, cloud: "community" }, { ...program, cloud: "COMMUNITY" })).toMatchObject(
      none,
    );
    expect(await diff(without("cloud"), { ...program, cloud: "COMMUNITY" })).toMatchObject(none);
    // A real change still replaces.
    expect(await diff({ ...landed, cloud: "secure" }, { ...program, cloud: "COMMUNITY" })).toMatchObject({
      changes: true,
      replaces: ["cloud"],
    });
  });

  it("takes a read-back without mounts (or a mount's field) as no change", async () => {
    expect(await diff(without("mounts"), program)).toMatchObject(none);
    const pathOnly = { ...landed, mounts: { persistent: { path: "/workspace" } } };
    expect(await diff(pathOnly, program)).toMatchObject(none);
    const volume = { ...program, mounts: { network: [{ volumeId: "v1", path: "/w" }] } };
    const volumeOnly = { ...landed, mounts: { network: [{ volumeId: "v1" }] } };
    expect(await diff(volumeOnly, volume)).toMatchObject(none);
    // Real changes: another kind, another volume replace; a bigger disk changes in place.
    expect(await diff(landed, volume)).toMatchObject({ changes: true, replaces: ["mounts"] });
    expect(
      await diff(volumeOnly, { ...program, mounts: { network: [{ volumeId: "v2", path: "/w" }] } }),
    ).toMatchObject({ changes: true, replaces: ["mounts"] });
    const bigger = { ...program, mounts: { persistent: { size: 40, path: "/workspace" } } };
    expect(await diff(landed, bigger)).toMatchObject({ changes: true, replaces: [] });
  });

  it("moves a network volume's mount path in place (the document lets PATCH change it); another volume replaces", async () => {
    const onVolume = { ...landed, mounts: { network: [{ volumeId: "v1", path: "/w" }] } };
    const moved = { ...program, mounts: { network: [{ volumeId: "v1", path: "/data" }] } };
    const plan = plannedChanges(onVolume, moved as never);
    expect(plan).toMatchObject({
      replaces: [],
      patch: { mounts: { network: [{ volumeId: "v1", path: "/data" }] } },
    });
    expect(await diff(onVolume, moved)).toMatchObject({ changes: true, replaces: [] });
    const other = { ...program, mounts: { network: [{ volumeId: "v2", path: "/data" }] } };
    expect(await diff(onVolume, other)).toMatchObject({ changes: true, replaces: ["mounts"] });
  });

  it("takes a read-back without gpu.count as the count asked for, and GPU ids in any letter case", async () => {
    const two = { ...program, gpu: { id: "NVIDIA H200", count: 2 } };
    const landedTwo = { ...landed, gpu: { id: "NVIDIA A100 80GB PCIe" }, requestedGpu: two.gpu };
    expect(await diff(landedTwo, two)).toMatchObject(none);
    const lower = { ...landed, gpu: { id: "nvidia a100 80gb pcie", count: 1 } };
    expect(await diff(lower, { ...program, gpu: { id: "NVIDIA A100 80GB PCIe" } })).toMatchObject({
      replaces: [],
    });
    // A GPU pod read back without gpu (nor cpu) says nothing of its compute.
    expect(await diff(without("gpu"), program)).toMatchObject(none);
    // Real changes: another count, another type, a CPU pod.
    expect(await diff(landedTwo, { ...program, gpu: { id: "NVIDIA H200", count: 4 } })).toMatchObject({
      replaces: ["gpu"],
    });
    expect(await diff(lower, { ...program, gpu: { id: "NVIDIA L40S" } })).toMatchObject({
      replaces: ["gpu"],
    });
    const cpu = { ...without("gpu"), cpu: { id: "cpu3c", vcpuCount: 2 } };
    expect(await diff(cpu, program)).toMatchObject({ replaces: ["gpu"] });
  });

  it("takes a CPU pod read back without vcpuCount, or with its flavour in another case, as no change", async () => {
    const cpuProgram = { ...without("gpu", program), mounts: undefined, cpu: { id: "cpu3c", vcpuCount: 4 } };
    const cpuLanded = {
      ...without("requestedGpu", without("gpu")),
      mounts: {},
      cpu: { id: "CPU3C", memory: 8 },
    };
    expect(await diff(cpuLanded, cpuProgram)).toMatchObject(none);
    expect(
      await diff(
        { ...cpuLanded, cpu: { id: "cpu3c", vcpuCount: 4 } },
        { ...cpuProgram, cpu: { id: "cpu3c", vcpuCount: 8 } },
      ),
    ).toMatchObject({ replaces: ["cpu"] });
  });

  it('judges a CUDA constraint only against a major.minor version: "N/A" and null are not known', async () => {
    const constrained = { ...program, gpu: { id: "NVIDIA H200", allowedCudaVersions: ["12.8"] } };
    const floor = { ...program, gpu: { id: "NVIDIA H200", minCudaVersion: "12.8" } };
    for (const cudaVersion of ["N/A", "", null, "unknown"]) {
      const olds = { ...landed, cudaVersion, requestedGpu: constrained.gpu };
      expect(await diff(olds, constrained), String(cudaVersion)).toMatchObject(none);
      expect(await diff({ ...olds, requestedGpu: floor.gpu }, floor), String(cudaVersion)).toMatchObject(
        none,
      );
    }
    // A known version outside the constraint still replaces.
    const old = { ...landed, cudaVersion: "12.4", requestedGpu: program.gpu };
    expect(await diff(old, floor)).toMatchObject({ replaces: ["gpu"] });
    expect(await diff(old, constrained)).toMatchObject({ replaces: ["gpu"] });
  });

  it("writes one redacted line saying what a replacement deletes, and nothing when nothing is replaced", async () => {
    expect(await diff({ ...landed, cloud: "secure" }, program)).toMatchObject(none);
    expect(written).toEqual([]);
    // Redacted as every message is: here an API key pasted into the pod's name.
    const apiKey = "rpa_pod-unit-key-5e0f1c";
    const named = { ...landed, name: `dev-${apiKey}`, disk: 50 };
    const settings = { apiKey } as Parameters<typeof diffPod>[3];
    expect(await diffPod("p1", named, { ...program, cloud: "COMMUNITY" }, settings)).toMatchObject({
      replaces: ["cloud"],
    });
    expect(written).toEqual([
      'warning: replacing Pod "dev-[redacted]" (id p1) (cloud changes) terminates it and deletes its 20 GB ' +
        "persistent disk at /workspace and its 50 GB container disk with their data; the new pod starts empty. " +
        "To keep the data, copy it off first or undo the change.\n",
    ]);
  });

  it('takes templateId "" as no template; another template still replaces', async () => {
    expect(await diff({ ...landed, templateId: "" }, program)).toMatchObject(none);
    expect(await diff(landed, { ...program, templateId: "" })).toMatchObject(none);
    expect(await diff({ ...landed, templateId: "tpl1" }, { ...program, templateId: "tpl1" })).toMatchObject(
      none,
    );
    expect(await diff({ ...landed, templateId: "tpl1" }, { ...program, templateId: "tpl2" })).toMatchObject({
      replaces: ["templateId"],
    });
    expect(await diff(landed, { ...program, templateId: "tpl2" })).toMatchObject({
      replaces: ["templateId"],
    });
  });
});

describe("a pod's outputs from a read-back", () => {
  it("take templateId and the create-only flags from the inputs' echo, never from the answer", () => {
    const answer = { id: "p1", name: "dev", templateId: "tpl-from-answer", startSsh: true, template: null };
    expect(outputsOf(answer, { name: "dev" }, [])).toEqual({
      id: "p1",
      name: "dev",
      template: null,
      desiredStatus: "RUNNING",
    });
    expect(
      outputsOf({ ...answer, templateId: "" }, { templateId: "tpl1", startSsh: false }, []),
    ).toMatchObject({
      templateId: "tpl1",
      startSsh: false,
    });
  });

  it("keep the last cloud, mounts, data centre and GPU count where the answer leaves them out; cloud as the document spells it", () => {
    const last = {
      cloud: "COMMUNITY",
      mounts: { persistent: { size: 20, path: "/workspace" } },
      dataCenterId: "EU-RO-1",
      gpu: { id: "NVIDIA A100 80GB PCIe", count: 2 },
    };
    expect(withOmittedKept({ id: "p1", gpu: { id: "NVIDIA A100 80GB PCIe" } }, last)).toEqual({
      id: "p1",
      ...last,
    });
    expect(withOmittedKept({ id: "p1", cloud: "secure", dataCenterId: null }, last)).toEqual({
      id: "p1",
      ...last,
      cloud: "SECURE",
    });
    // What the answer says wins.
    const read = {
      id: "p1",
      cloud: "SECURE",
      mounts: {},
      dataCenterId: "US-KS-2",
      gpu: { id: "x", count: 1 },
    };
    expect(withOmittedKept(read, last)).toEqual(read);
    expect(
      withOmittedKept({ id: "p1", cpu: { id: "cpu3c", memory: 8 } }, { cpu: { id: "cpu3c", vcpuCount: 4 } }),
    ).toEqual({
      id: "p1",
      cpu: { id: "cpu3c", vcpuCount: 4, memory: 8 },
    });
  });
});

describe("the line a planned replacement writes", () => {
  it("names the disks it deletes, and a network volume it keeps", () => {
    expect(replacementWarning('"dev" (id p1)', ["cloud"], { ...landed, disk: 50 })).toBe(
      'warning: replacing Pod "dev" (id p1) (cloud changes) terminates it and deletes its 20 GB persistent disk at ' +
        "/workspace and its 50 GB container disk with their data; the new pod starts empty. To keep the data, " +
        "copy it off first or undo the change.",
    );
    const onVolume = { ...landed, disk: 30, mounts: { network: [{ volumeId: "v1", path: "/w" }] } };
    expect(replacementWarning("id p1", ["gpu", "templateId"], onVolume)).toBe(
      "warning: replacing Pod id p1 (gpu, templateId change) terminates it and deletes its 30 GB container disk " +
        "with their data; the new pod starts empty. To keep the data, copy it off first or undo the change. " +
        "Network volume v1 is kept.",
    );
    expect(replacementWarning("id p1", [], landed)).toBeUndefined();
  });
});

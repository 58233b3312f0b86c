/**
 * A cluster whose members never run, through the operations' create on the provider's clock: the
 * wait reads the members once a second of that clock and, at `waitTimeoutMs`, fails as a partial
 * failure carrying the cluster's id and naming every member with its last status. The emulator's
 * own clock never moves (its members stay PROVISIONING); the provider's clock moves each pause at
 * once (no real sleeps), so the test takes milliseconds.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { NotFoundError, type Pod, RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { type Clock, DeploymentCancelledError } from "../../src/provider/clock";
import { waitForMembers } from "../../src/provider/cluster/members";
import { createCluster, operations } from "../../src/provider/cluster/operations";
import type { RunpodSettings } from "../../src/provider/config";
import { FakeClock, settle } from "../support/fakeClock";
import { FaultProxy } from "../support/faultProxy.mts";

/** A clock whose every timer fires at once (on the next turn), time moving by its delay. */
class InstantClock implements Clock {
  #now = 0;
  now(): number {
    return this.#now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.#now += Math.max(0, ms);
    return setImmediate(fn);
  }
  clearTimeout(handle: unknown): void {
    clearImmediate(handle as NodeJS.Immediate);
  }
}

/**
 * The emulator on a manual clock that never moves (its members stay PROVISIONING) behind a
 * recording proxy, started before the enclosing describe's tests and closed after them.
 */
function emulatorBehindProxy() {
  let emu: RunningEmulator | undefined;
  let proxy: FaultProxy | undefined;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, clock: new ManualClock(Date.UTC(2026, 5, 1)), rateLimits: false });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
  });
  const running = () => {
    if (emu === undefined || proxy === undefined) throw new Error("started in beforeAll: use it in a test");
    return { emu, proxy };
  };
  return {
    get proxy() {
      return running().proxy;
    },
    /** The provider's settings, through the proxy. */
    settings: (more: Partial<RunpodSettings>): RunpodSettings => ({
      apiKey: running().emu.apiKey,
      restUrl: `${running().proxy.url}/v2`,
      ...more,
    }),
    /** A client of the emulator itself (not through the proxy). */
    client: () => new RunpodClient({ apiKey: running().emu.apiKey, restUrl: running().emu.restUrlV2 }),
  };
}

describe("Cluster create's wait for its members (provider clock)", () => {
  const env = emulatorBehindProxy();

  it("fails at waitTimeoutMs as a partial failure with the id, naming each member with its status", async () => {
    const settings = env.settings({ clock: new InstantClock() });
    const inputs = {
      name: "stuck",
      type: "TRAINING",
      compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
      image: "acme/train:1",
      waitTimeoutMs: 5000,
      __provider: "serialized",
    };
    const error = (await createCluster(settings, inputs).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error & { id?: string; properties?: Record<string, unknown> };
    const client = env.client();
    const [cluster] = await client.clusters.list();
    expect(error?.id).toBe(cluster?.id);
    const members = await client.clusters.pods(cluster?.id as string);
    expect(members.map((m) => m.status)).toEqual(["PROVISIONING", "PROVISIONING"]);
    expect(error.message).toContain(
      `Cluster "stuck" (id ${cluster?.id}) is not usable: 2 of its 2 member pods were not RUNNING within ` +
        `waitTimeoutMs (5000 ms). Members not usable: ${members.map((m) => `pod ${m.id}: PROVISIONING`).join("; ")}.`,
    );
    expect(error.properties).toMatchObject({
      name: "stuck",
      waitTimeoutMs: 5000,
      members: members.map((m) => ({ id: m.id, status: "PROVISIONING" })),
      __provider: "serialized",
    });
    // One read of the members a second of the provider's clock: at 0, 1, 2, 3, 4 and 5 s.
    const reads = env.proxy.seen.filter(
      (r) => r.method === "GET" && r.path === `/v2/clusters/${cluster?.id}/pods`,
    );
    expect(reads).toHaveLength(6);
  });
});

describe("Cluster members wait cancelled (fake clock)", () => {
  const HOUR_MS = 3_600_000;

  /**
   * A members wait on a fake clock over `answer` (each read, given the read's signal); `cancel()`
   * cancels it as a Ctrl-C does and resolves with its outcome once settled.
   */
  function waiting(answer: (signal?: AbortSignal) => Pod[] | Promise<Pod[]>) {
    const clock = new FakeClock();
    const cancellation = new AbortController();
    let reads = 0;
    const client = {
      clusters: {
        pods: async (_id: string, options?: { signal?: AbortSignal }) => {
          reads++;
          return answer(options?.signal);
        },
      },
    } as unknown as RunpodClient;
    const options = { client, clusterId: "c1", podCount: 2, waitFor: "running" as const, timeoutMs: HOUR_MS };
    const wait = waitForMembers({ ...options, clock, signal: cancellation.signal });
    let outcome: unknown;
    void wait.then((value) => (outcome = value));
    const cancel = async () => {
      cancellation.abort(new DeploymentCancelledError());
      await settle();
      return outcome;
    };
    return { clock, cancel, reads: () => reads, outcome: () => outcome };
  }

  /** The wait's outcome when cancelled with `members` (of 2) as last read, each not usable. */
  const cancelledWith = (members: Pod[]) => ({
    kind: "failure",
    members,
    notUsable: members.map((m) => ({ id: m.id, status: m.status })),
    why:
      "2 of its 2 member pods were not RUNNING when the deployment was cancelled (Ctrl-C); " +
      `${2 - members.length} were not listed at all`,
  });

  it("a cancel during the 404 grace ends the wait at once: no member was listed", async () => {
    const w = waiting(() => {
      throw new NotFoundError("not found", { status: 404, body: {} });
    });
    await w.clock.advance(3000);
    expect([w.reads(), w.outcome()]).toEqual([4, undefined]);
    expect(await w.cancel()).toEqual(cancelledWith([]));
    expect([w.reads(), w.clock.pending(), w.clock.now()]).toEqual([4, 0, 3000]);
  });

  it("a cancel between two reads ends the wait at once, naming the members not usable", async () => {
    const member = { id: "p1", status: "PROVISIONING" } as Pod;
    const w = waiting(() => [member]);
    await w.clock.advance(2000);
    expect(await w.cancel()).toEqual(cancelledWith([member]));
    expect([w.reads(), w.clock.pending()]).toEqual([3, 0]);
  });

  it("a cancel while a read hangs aborts the read: the wait ends at once with the members as last read", async () => {
    const member = { id: "p1", status: "PROVISIONING" } as Pod;
    // The first read answers; the next never does until its signal aborts (as the client's reads).
    let answered = 0;
    const w = waiting((signal) =>
      answered++ === 0
        ? [member]
        : new Promise<Pod[]>((_resolve, reject) =>
            signal?.addEventListener("abort", () =>
              reject(
                new Error("GET /v2/clusters/c1/pods aborted by the caller's signal", {
                  cause: signal.reason,
                }),
              ),
            ),
          ),
    );
    await w.clock.advance(1000);
    expect([w.reads(), w.outcome(), w.clock.pending()]).toEqual([2, undefined, 0]);
    expect(await w.cancel()).toEqual(cancelledWith([member]));
    expect([w.reads(), w.clock.pending()]).toEqual([2, 0]);
  });
});

describe("Cluster create's read back after its members wait (provider clock)", () => {
  const env = emulatorBehindProxy();
  const inputs = (name: string) => ({
    name,
    type: "TRAINING",
    compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
    image: "acme/train:1",
    waitFor: "none",
    __provider: "serialized",
  });
  const failureOf = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as Error & { id?: string; properties?: Record<string, unknown> },
    );
  const clusterGets = () =>
    env.proxy.seen
      .filter((r) => r.method === "GET" && /^\/v2\/clusters\/[^/]+$/.test(r.path))
      .map((r) => r.path);

  it("a GET answering 404 for the whole 30 s grace fails the create as a partial failure with the id", async () => {
    // Reads at 0, 1, ..., 30 s of the provider's clock: 31 answers of 404, the last one past the grace.
    for (let i = 0; i < 31; i++)
      env.proxy.arm("GET", /^\/v2\/clusters\/[^/]+$/, {
        kind: "reply",
        status: 404,
        body: { error: "not found" },
      });
    const settings = env.settings({ clock: new InstantClock() });
    const error = await failureOf(createCluster(settings, inputs("unseen")));
    const client = env.client();
    const [cluster] = (await client.clusters.list()).filter((c) => c.name === "unseen");
    expect(error?.id).toBe(cluster?.id);
    expect(clusterGets()).toEqual(Array<string>(31).fill(`/v2/clusters/${cluster?.id}`));
    expect(error?.message).toBe(
      `Cluster "unseen" (id ${cluster?.id}) was created, but a later step failed: reading it back ` +
        `(GET /clusters/${cluster?.id}) answered 404 for 30 s, though its members were listed\n` +
        "The cluster is kept in the stack (its member pods cost money while they hold GPUs): fix the cause and " +
        "run pulumi up again (it checks the members again), or remove the Cluster from the program to delete it.",
    );
    expect(error?.properties).toMatchObject({ name: "unseen", pods: { total: 2 }, __provider: "serialized" });
    const members = await client.clusters.pods(cluster?.id as string);
    expect(error?.properties?.members).toMatchObject(members.map((m) => ({ id: m.id, status: m.status })));
    expect(members).toHaveLength(2);
    await client.clusters.delete(cluster?.id as string);
  });

  it("a cancel during the 404 grace ends the read back at once, as a partial failure with the id", async () => {
    env.proxy.seen.length = 0;
    env.proxy.arm("GET", /^\/v2\/clusters\/[^/]+$/, {
      kind: "reply",
      status: 404,
      body: { error: "not found" },
    });
    const clock = new FakeClock();
    const cancellation = new AbortController();
    const settings = env.settings({ clock, signal: cancellation.signal });
    const creating = failureOf(createCluster(settings, inputs("cancelled")));
    // The first read back answered 404: the next one is a second away on the provider's clock.
    await vi.waitFor(() => expect([clusterGets().length, clock.pending()]).toEqual([1, 1]));
    cancellation.abort(new DeploymentCancelledError());
    const error = await creating;
    const client = env.client();
    const [cluster] = (await client.clusters.list()).filter((c) => c.name === "cancelled");
    expect(error?.id).toBe(cluster?.id);
    expect(error?.message).toBe(
      `Cluster "cancelled" (id ${cluster?.id}) was created and its members are usable, but the deployment was ` +
        "cancelled (Ctrl-C) before it was read back.\n" +
        "The cluster is kept in the stack (its member pods cost money while they hold GPUs): fix the cause and " +
        "run pulumi up again (it checks the members again), or remove the Cluster from the program to delete it.",
    );
    // The cluster as the create answered, its members as listed; no further read, no timer left.
    expect(error?.properties).toMatchObject({ name: "cancelled", __provider: "serialized" });
    const members = await client.clusters.pods(cluster?.id as string);
    expect(error?.properties?.members).toMatchObject(members.map((m) => ({ id: m.id, status: m.status })));
    expect(members).toHaveLength(2);
    expect([clusterGets().length, clock.pending(), clock.now()]).toEqual([1, 0, 0]);
    await client.clusters.delete(cluster?.id as string);
  });
});

describe("Cluster diff's replacement line", () => {
  afterEach(() => vi.restoreAllMocks());

  it("names the field and how many pods and GPUs the replacement deletes, one line on stderr", async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0);
    const compute = { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 4 };
    const olds = {
      name: "train",
      type: "TRAINING",
      compute,
      image: "acme/train:1",
      env: { T: "s3cret-env" },
    };
    const diff = await operations.diff(undefined, "c1", olds, {
      ...olds,
      compute: { ...compute, podCount: 5 },
    });
    expect(diff).toMatchObject({ changes: true, replaces: ["compute"], deleteBeforeReplace: false });
    expect(written).toEqual([
      'warning: replacing Cluster "train" (id c1) (compute changes) creates a new cluster, then deletes this one ' +
        "with its 4 member pods (32 NVIDIA H100 80GB HBM3 GPUs) and their disks; the new members start empty. " +
        "Only name changes in place: to keep the cluster, undo the change.\n",
    ]);
    written.length = 0;
    expect(await operations.diff(undefined, "c1", olds, { ...olds, name: "renamed" })).toMatchObject({
      changes: true,
      replaces: [],
    });
    expect(written).toEqual([]);
  });
});

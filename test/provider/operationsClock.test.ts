/**
 * Waits driven through the provider's operations entry points on a fake clock: the settings carry
 * the clock, and the operation's wait (its reads, its deadline) runs on it. A 127.0.0.1 server
 * answers from a recorded sequence (`test/fixtures/recordings/`) by the fake clock's time: an
 * endpoint update's rollout (the workers), a pod's create (its status, then its SSH endpoint), a
 * pod's stop and start (its status after the action). The tests say exactly when each read happens
 * and when the operation returns or gives up, with no wall-clock waits; a wait that ignores the
 * clock fails its test within a few seconds of real time instead of hanging.
 */
import { readFileSync } from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunpodSettings } from "../../src/provider/config";
import { operations as podOperations } from "../../src/provider/pod/operations";
import { operations } from "../../src/provider/serverlessEndpoint/operations";
import { FakeClock } from "../support/fakeClock";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const API_KEY = "operations-clock-test-key";

/** The operations' settings for a scripted server, on `clock`. */
const settingsOn = (server: ScriptedServer, clock: RunpodSettings["clock"]): RunpodSettings => ({
  apiKey: API_KEY,
  restUrl: `${server.url}/v2`,
  serverlessUrl: server.url,
  clock,
});

/** A pod program that waits for SSH on port 22: a create or a start is done when that answers. */
const SSH_POD = {
  name: "dev",
  image: "acme/dev:1",
  gpu: { id: "NVIDIA RTX A4000", count: 1 },
  ports: ["22/tcp"],
  startSsh: true,
  waitFor: "ssh",
};

/** A pod's log stream of one line, as `GET /v2/pods/{id}/logs` answers it (Server-Sent Events). */
function podLogAnswer(ts: string, source: string, line: string) {
  const data = JSON.stringify({ source, line, ts });
  return { headers: { "content-type": "text/event-stream" }, body: `id: ${ts}\ndata: ${data}\n\n` };
}
const rolling = JSON.parse(
  readFileSync(path.join(__dirname, "..", "fixtures", "recordings", "workers-rolling-update.json"), "utf8"),
) as { answers: { atMs: number; answer: { endpointVersion: number } }[] };

const endpoint = {
  id: "roll",
  name: "roll",
  type: "QUEUE",
  image: "acme/worker:2",
  env: {},
  gpu: { pools: ["ADA_24"], count: 1 },
  workers: { min: 0, max: 2 },
  createdAt: "2026-11-25T00:00:00Z",
};
const releases = {
  endpointVersion: 2,
  rollout: { inProgress: false, workersOnLatest: 2, workersTotal: 2, percentOnLatest: 100 },
  releases: [],
};

/**
 * A fake clock that says when a timer is set for a given time. The update's reads go over real
 * HTTP, which the fake clock does not see; the test moves time only once the wait has scheduled
 * its next read, so no read is skipped however slow the machine.
 */
class SignallingClock extends FakeClock {
  #waiting: { at: number; resolve: () => void }[] = [];
  #set = new Map<unknown, number>();

  override setTimeout(fn: () => void, ms: number): unknown {
    const handle = super.setTimeout(() => {
      this.#set.delete(handle);
      fn();
    }, ms);
    const at = this.now() + Math.max(0, ms);
    this.#set.set(handle, at);
    for (const w of this.#waiting.filter((w) => w.at === at)) w.resolve();
    this.#waiting = this.#waiting.filter((w) => w.at !== at);
    return handle;
  }

  override clearTimeout(handle: unknown): void {
    this.#set.delete(handle);
    super.clearTimeout(handle);
  }

  /** Resolves once a timer is pending for time `at` (at once if one is). */
  timerAt(at: number): Promise<void> {
    if ([...this.#set.values()].includes(at)) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push({ at, resolve }));
  }
}

/** Longest real time one step of a drive may take before the test calls the wait stuck, in ms. */
const STALL_MS = 5_000;

/**
 * Runs `promise` to its end, moving the clock a poll interval each time the wait schedules a read.
 * A step that neither ends the operation nor sets that timer on the test's clock within `stallMs`
 * of real time fails the drive at once: a wait that read the wall clock, or slept on a real timer,
 * fails the test in seconds instead of hanging until vitest's own timeout. The bound only guards
 * against a hang; no assertion reads real time.
 */
async function drive<T>(
  clock: SignallingClock,
  promise: Promise<T>,
  { pollMs = 1_000, stallMs = STALL_MS }: { pollMs?: number; stallMs?: number } = {},
) {
  let outcome: { ok: true; value: T; at: number } | { ok: false; error: unknown; at: number } | undefined;
  const ended = promise.then(
    (value) => {
      outcome = { ok: true, value, at: clock.now() };
    },
    (error: unknown) => {
      outcome = { ok: false, error, at: clock.now() };
    },
  );
  while (outcome === undefined) {
    const next = clock.now() + pollMs;
    let guard: ReturnType<typeof setTimeout> | undefined;
    const stalled = new Promise<"stalled">((resolve) => {
      guard = setTimeout(() => resolve("stalled"), stallMs);
    });
    const step = await Promise.race([ended, clock.timerAt(next), stalled]);
    clearTimeout(guard);
    if (step === "stalled") {
      throw new Error(
        `the operation neither ended nor set a timer for ${next} ms on the test's clock within ${stallMs} ms ` +
          "of real time: does its wait read the wall clock or sleep on a real timer?",
      );
    }
    if (outcome === undefined) await clock.advance(pollMs);
  }
  return outcome as NonNullable<typeof outcome>;
}

let server: ScriptedServer;
const clock = new SignallingClock();
const workerReadsAt: number[] = [];
beforeAll(async () => {
  server = await startScriptedServer();
  server.fallback = (req) => {
    if (req.method === "GET" && req.pathname === "/v2/serverless/roll/workers") {
      workerReadsAt.push(clock.now());
      const due = rolling.answers.filter((a) => a.atMs <= clock.now());
      return { body: due[due.length - 1]?.answer };
    }
    if (req.method === "GET" && req.pathname === "/v2/serverless/roll/releases") return { body: releases };
    if (req.pathname === "/v2/serverless/roll") return { body: endpoint };
    return { status: 404, body: { message: "not in this test" } };
  };
});
afterAll(async () => {
  await server?.close();
});

it("an endpoint update waits out its rollout on the clock the settings give, returning when no worker is stale", async () => {
  const settings = settingsOn(server, clock);
  const olds = { ...endpoint, rollout: "wait" };
  const news = { ...olds, image: "acme/worker:2", rolloutTimeoutMs: 60_000 };
  const ended = await drive(clock, operations.update(settings, "roll", olds, news));
  expect(ended).toMatchObject({ ok: true });
  // The recording's last stale worker is replaced at 4 s: reads once a second until then.
  expect(workerReadsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  expect(ended.at).toBe(4_000);
  expect((ended as { value: { outs: Record<string, unknown> } }).value.outs).toMatchObject({ version: 2 });
});

/** The pod's SSH endpoint, once the service maps it: answers a banner and nothing else. */
let sshd: net.Server;
let sshPort: number;
const sshSockets = new Set<net.Socket>();
/** When (on `sshClock`, the running test's clock) each connection to the SSH endpoint came. */
let sshConnectsAt: number[] = [];
let sshClock: SignallingClock | undefined;
beforeAll(async () => {
  sshd = net.createServer((socket) => {
    sshSockets.add(socket);
    socket.on("close", () => sshSockets.delete(socket));
    sshConnectsAt.push(sshClock?.now() ?? -1);
    socket.end("SSH-2.0-OpenSSH_9.6\r\n");
  });
  await new Promise<void>((resolve) => sshd.listen(0, "127.0.0.1", () => resolve()));
  sshPort = (sshd.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sshSockets) socket.destroy();
  await new Promise<void>((resolve) => (sshd ? sshd.close(() => resolve()) : resolve()));
});

/** A recorded value with its port 0 (the recording's stand-in for the SSH endpoint) pointed at `sshd`. */
function pointedAtSshd<T>(recorded: T): T {
  return JSON.parse(
    JSON.stringify(recorded)
      .replaceAll('"port":0', `"port":${sshPort}`)
      .replaceAll('"public":0', `"public":${sshPort}`),
  ) as T;
}

describe("a pod created through its operations, on the clock the settings give", () => {
  interface PodRecording {
    created: Record<string, unknown>;
    answers: { atMs: number; answer: Record<string, unknown> }[];
  }
  const recorded = JSON.parse(
    readFileSync(path.join(__dirname, "..", "fixtures", "recordings", "pod-ssh-late.json"), "utf8"),
  ) as PodRecording;
  const podId = recorded.created.id as string;

  let podServer: ScriptedServer;
  let scene: { clock: SignallingClock; readsAt: number[]; postsAt: number[]; missing?: boolean } | undefined;

  beforeAll(async () => {
    const answers = pointedAtSshd(recorded.answers);
    podServer = await startScriptedServer();
    podServer.fallback = (req) => {
      const now = scene?.clock.now() ?? -1;
      // No pod of that name yet (the create reconciles by name).
      if (req.method === "GET" && req.pathname === "/v2/pods") return { body: { pods: [] } };
      if (req.method === "POST" && req.pathname === "/v2/pods") {
        scene?.postsAt.push(now);
        return { status: 201, body: recorded.created };
      }
      if (req.method === "GET" && req.pathname === `/v2/pods/${podId}`) {
        scene?.readsAt.push(now);
        if (scene?.missing)
          return { status: 404, body: { title: "Not Found", status: 404, detail: "no such pod" } };
        const due = answers.filter((a) => a.atMs <= now);
        return { body: due[due.length - 1]?.answer };
      }
      if (req.method === "GET" && req.pathname === `/v2/pods/${podId}/logs`) {
        return podLogAnswer("2026-11-25T00:00:02.500Z", "container", "starting sshd");
      }
      return { status: 404, body: { message: "not in this test" } };
    };
  });
  afterAll(async () => {
    await podServer?.close();
  });

  /** Runs `create` of a pod waiting for SSH on a fresh fake clock, to its end. */
  async function create(inputs: Record<string, unknown>, missing = false) {
    scene = { clock: new SignallingClock(), readsAt: [], postsAt: [], missing };
    sshClock = scene.clock;
    sshConnectsAt = [];
    const settings = settingsOn(podServer, scene.clock);
    const news = { ...SSH_POD, ...inputs };
    const ended = await drive(scene.clock, podOperations.create(settings, news));
    return { ...scene, ended };
  }

  it('returns on the first read that finds the pod RUNNING with its SSH endpoint answering (waitFor "ssh")', async () => {
    const { ended, readsAt, postsAt } = await create({});
    expect(ended).toMatchObject({ ok: true, at: 4_000 });
    expect(postsAt).toEqual([0]);
    // Once a second after the POST: PROVISIONING, STARTING, RUNNING (no ports), RUNNING (no ports),
    // then RUNNING with port 22 mapped, the one read whose SSH endpoint is probed.
    expect(readsAt).toEqual([1_000, 2_000, 3_000, 4_000]);
    expect(sshConnectsAt).toEqual([4_000]);
    const outs = (ended as { value: { id: string; outs: Record<string, unknown> } }).value;
    expect(outs.id).toBe(podId);
    expect(outs.outs).toMatchObject({ status: "RUNNING", ssh: { direct: { port: sshPort } } });
  });

  it("gives up at waitTimeoutMs on that clock, naming what it waited for and where the pod was left", async () => {
    const { ended, readsAt } = await create({ waitTimeoutMs: 3_000 });
    expect(ended).toMatchObject({ ok: false, at: 3_000 });
    expect(readsAt).toEqual([1_000, 2_000, 3_000]);
    expect(sshConnectsAt).toEqual([]);
    const error = (ended as { error: Error & { id?: string } }).error;
    expect(error.message).toContain(
      `Pod "dev" (id ${podId}) is not usable: it was not RUNNING with its SSH endpoint answering within ` +
        "waitTimeoutMs (3000 ms); its status is RUNNING (the pod has no SSH endpoint yet). " +
        "Status history: PROVISIONING -> STARTING -> RUNNING.",
    );
    expect(error.message).toContain("2026-11-25T00:00:02.500Z container starting sshd");
    // A partial failure: the pod stays in the state under its id.
    expect(error.id).toBe(podId);
  });

  it("reads a pod the service answers 404 for once a second for 30 s of that clock, then keeps it as a partial failure", async () => {
    const { ended, readsAt } = await create({}, true);
    // From the first 404 (at 1 s) for NOT_FOUND_GRACE_MS (30 s): a new pod the service does not find yet.
    expect(ended).toMatchObject({ ok: false, at: 31_000 });
    expect(readsAt).toEqual(Array.from({ length: 31 }, (_, i) => (i + 1) * 1_000));
    const error = (ended as { error: Error & { id?: string; properties?: Record<string, unknown> } }).error;
    expect(error.message).toContain(
      `Pod "dev" (id ${podId}) is not usable: the service answered 404 for it for 30 s (it may have been terminated).`,
    );
    expect(error.id).toBe(podId);
    expect(error.properties).toMatchObject({ id: podId, name: "dev" });
  });
});

describe("a pod stopped and started through its operations' update, on the clock the settings give", () => {
  interface Scene {
    before: Record<string, unknown>;
    answer: Record<string, unknown>;
    reads: { atMs: number; answer: Record<string, unknown> }[];
  }
  const recorded = JSON.parse(
    readFileSync(path.join(__dirname, "..", "fixtures", "recordings", "pod-stop-start.json"), "utf8"),
  ) as { stop: Scene; start: Scene };
  const podId = recorded.stop.before.id as string;
  /** The program's pod: SSH on port 22, so a start is done when that endpoint answers. */
  const program = SSH_POD;

  let podServer: ScriptedServer;
  let scene:
    | {
        clock: SignallingClock;
        recorded: Scene;
        readsAt: number[];
        actions: { at: number; body: unknown }[];
        patches: number;
      }
    | undefined;

  beforeAll(async () => {
    podServer = await startScriptedServer();
    podServer.fallback = (req) => {
      if (!scene) return { status: 500, body: { message: "no scene" } };
      const now = scene.clock.now();
      const played = pointedAtSshd(scene.recorded);
      if (req.method === "POST" && req.pathname === `/v2/pods/${podId}/action`) {
        scene.actions.push({ at: now, body: JSON.parse(req.body) });
        return { body: played.answer };
      }
      if (req.method === "GET" && req.pathname === `/v2/pods/${podId}`) {
        scene.readsAt.push(now);
        // Before the action the pod is as it was; after it, as recorded from the action on.
        if (scene.actions.length === 0) return { body: played.before };
        const due = played.reads.filter((a) => a.atMs <= now - (scene?.actions[0]?.at ?? 0));
        return { body: due[due.length - 1]?.answer };
      }
      if (req.method === "PATCH") scene.patches++;
      if (req.method === "GET" && req.pathname === `/v2/pods/${podId}/logs`) {
        return podLogAnswer("2026-11-25T00:00:01.500Z", "system", "stopping the container");
      }
      return { status: 404, body: { message: "not in this test" } };
    };
  });
  afterAll(async () => {
    await podServer?.close();
  });

  /** Runs `update` from `from` to `to` (desiredStatus) on a fresh fake clock, to its end. */
  async function update(
    which: "stop" | "start",
    from: "RUNNING" | "EXITED",
    to: "RUNNING" | "EXITED",
    inputs: Record<string, unknown> = {},
  ) {
    scene = { clock: new SignallingClock(), recorded: recorded[which], readsAt: [], actions: [], patches: 0 };
    sshClock = scene.clock;
    sshConnectsAt = [];
    const settings = settingsOn(podServer, scene.clock);
    // The outputs of the last deploy: the pod as read then, with the program's arguments echoed.
    const olds = { ...pointedAtSshd(recorded[which].before), ...program, desiredStatus: from };
    const news = { ...program, desiredStatus: to, ...inputs };
    const ended = await drive(scene.clock, podOperations.update(settings, podId, olds, news));
    return { ...scene, ended };
  }

  it('a stop (desiredStatus "RUNNING" -> "EXITED") posts the action once and returns on the first read that finds the pod EXITED', async () => {
    const { ended, readsAt, actions, patches } = await update("stop", "RUNNING", "EXITED");
    expect(ended).toMatchObject({ ok: true, at: 3_000 });
    expect(actions).toEqual([{ at: 0, body: { action: "stop" } }]);
    expect(patches).toBe(0);
    // The read before the action, then once a second: RUNNING, RUNNING (container gone), EXITED.
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000]);
    // A stopped pod has no SSH endpoint to probe.
    expect(sshConnectsAt).toEqual([]);
    const outs = (ended as { value: { outs: Record<string, unknown> } }).value.outs;
    expect(outs).toMatchObject({ status: "EXITED", desiredStatus: "EXITED" });
  });

  it('a start (desiredStatus "EXITED" -> "RUNNING") returns on the first read whose SSH endpoint answers', async () => {
    const { ended, readsAt, actions, patches } = await update("start", "EXITED", "RUNNING");
    expect(ended).toMatchObject({ ok: true, at: 3_000 });
    expect(actions).toEqual([{ at: 0, body: { action: "start" } }]);
    expect(patches).toBe(0);
    // PROVISIONING, STARTING, RUNNING with no ports yet, then port 22 mapped: the one read probed.
    expect(readsAt).toEqual([0, 1_000, 2_000, 3_000]);
    expect(sshConnectsAt).toEqual([3_000]);
    const outs = (ended as { value: { outs: Record<string, unknown> } }).value.outs;
    expect(outs).toMatchObject({
      status: "RUNNING",
      desiredStatus: "RUNNING",
      ssh: { direct: { port: sshPort } },
    });
  });

  it("a stop gives up at waitTimeoutMs on that clock, naming the status it waited for and where the pod was left", async () => {
    const { ended, readsAt } = await update("stop", "RUNNING", "EXITED", { waitTimeoutMs: 2_000 });
    expect(ended).toMatchObject({ ok: false, at: 2_000 });
    expect(readsAt).toEqual([0, 1_000, 2_000]);
    const error = (ended as { error: Error & { id?: string; properties?: Record<string, unknown> } }).error;
    expect(error.message).toContain(
      `Pod "dev" (id ${podId}) is not usable: it was not EXITED within waitTimeoutMs (2000 ms); ` +
        "its status is RUNNING. Status history: RUNNING.",
    );
    expect(error.message).toContain("2026-11-25T00:00:01.500Z system stopping the container");
    // A partial failure: the pod stays in the state under its id, as last read.
    expect(error.id).toBe(podId);
    expect(error.properties).toMatchObject({ status: "RUNNING" });
  });
});

it("a drive fails within its real-time bound when the operation sets no timer on the test's clock", async () => {
  // Stands for a wait that sleeps on a real timer: it never schedules on the fake clock.
  const ignoresTheClock = new Promise<never>(() => {});
  await expect(drive(new SignallingClock(), ignoresTheClock, { stallMs: 50 })).rejects.toThrow(
    "the operation neither ended nor set a timer for 1000 ms on the test's clock within 50 ms of real time",
  );
});

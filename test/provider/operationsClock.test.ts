/**
 * Waits driven through the provider's operations entry points on a fake clock: the settings carry
 * the clock, and the operation's wait (its reads, its deadline) runs on it. A 127.0.0.1 server
 * answers from a recorded sequence (`test/fixtures/recordings/`) by the fake clock's time: an
 * endpoint update's rollout (the workers), a pod's create (its status, then its SSH endpoint). The
 * tests say exactly when each read happens and when the operation returns or gives up, with no
 * wall-clock waits.
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

/** Runs `promise` to its end, moving the clock a poll interval each time the wait schedules a read. */
async function drive<T>(clock: SignallingClock, promise: Promise<T>, pollMs = 1_000) {
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
    await Promise.race([ended, clock.timerAt(clock.now() + pollMs)]);
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
  const settings: RunpodSettings = {
    apiKey: API_KEY,
    restUrl: `${server.url}/v2`,
    serverlessUrl: server.url,
    clock,
  };
  const olds = { ...endpoint, rollout: "wait" };
  const news = { ...olds, image: "acme/worker:2", rolloutTimeoutMs: 60_000 };
  const ended = await drive(clock, operations.update(settings, "roll", olds, news));
  expect(ended).toMatchObject({ ok: true });
  // The recording's last stale worker is replaced at 4 s: reads once a second until then.
  expect(workerReadsAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
  expect(ended.at).toBe(4_000);
  expect((ended as { value: { outs: Record<string, unknown> } }).value.outs).toMatchObject({ version: 2 });
});

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
  let sshd: net.Server;
  let sshPort: number;
  const sshSockets = new Set<net.Socket>();
  /** When (on the test's clock) each connection to the SSH endpoint came. */
  let sshConnectsAt: number[] = [];
  let scene: { clock: SignallingClock; readsAt: number[]; postsAt: number[] } | undefined;

  beforeAll(async () => {
    // The pod's SSH endpoint, once the service maps it: answers a banner and nothing else.
    sshd = net.createServer((socket) => {
      sshSockets.add(socket);
      socket.on("close", () => sshSockets.delete(socket));
      sshConnectsAt.push(scene?.clock.now() ?? -1);
      socket.end("SSH-2.0-OpenSSH_9.6\r\n");
    });
    await new Promise<void>((resolve) => sshd.listen(0, "127.0.0.1", () => resolve()));
    sshPort = (sshd.address() as net.AddressInfo).port;
    // The recording's port 0 is the SSH listener.
    const answers = JSON.parse(
      JSON.stringify(recorded.answers)
        .replaceAll('"port":0', `"port":${sshPort}`)
        .replaceAll('"public":0', `"public":${sshPort}`),
    ) as PodRecording["answers"];
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
        const due = answers.filter((a) => a.atMs <= now);
        return { body: due[due.length - 1]?.answer };
      }
      if (req.method === "GET" && req.pathname === `/v2/pods/${podId}/logs`) {
        const ts = "2026-11-25T00:00:02.500Z";
        const line = JSON.stringify({ source: "container", line: "starting sshd", ts });
        return { headers: { "content-type": "text/event-stream" }, body: `id: ${ts}\ndata: ${line}\n\n` };
      }
      return { status: 404, body: { message: "not in this test" } };
    };
  });
  afterAll(async () => {
    await podServer?.close();
    for (const socket of sshSockets) socket.destroy();
    await new Promise<void>((resolve) => (sshd ? sshd.close(() => resolve()) : resolve()));
  });

  /** Runs `create` of a pod waiting for SSH on a fresh fake clock, to its end. */
  async function create(inputs: Record<string, unknown>) {
    scene = { clock: new SignallingClock(), readsAt: [], postsAt: [] };
    sshConnectsAt = [];
    const settings: RunpodSettings = {
      apiKey: API_KEY,
      restUrl: `${podServer.url}/v2`,
      serverlessUrl: podServer.url,
      clock: scene.clock,
    };
    const news = {
      name: "dev",
      image: "acme/dev:1",
      gpu: { id: "NVIDIA RTX A4000", count: 1 },
      ports: ["22/tcp"],
      startSsh: true,
      waitFor: "ssh",
      ...inputs,
    };
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
});

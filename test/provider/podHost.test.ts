/**
 * Pod through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized from the
 * INSTALLED package, against the emulator (REST v2, pods starting in 50 ms of its clock) reached
 * through a pass-through proxy a test can arm to lose an answer. Every env value is a secret: the
 * afterAll scans every output but `env`, every error and the host's stderr for each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, type RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import type { FaultProxy } from "../support/faultProxy.mts";
import { HostError, type ProviderHost, urnFor } from "../support/providerHost.mts";
import { POD_POLL_MS, type PodHostRig, startPodHostRig } from "./podHostKit";

const API_KEY = "pod-host-key-3b7d1f";
const ENV_SECRET = "hf_Pod-Env-Secret-4c2a9e";
const ENV_SECRET_2 = "rotated-Pod-Secret-8d1b";
const SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPodHostTestKey me@host";
const NO_STOCK = "NVIDIA H200";
const urn = (name: string) => urnFor("Pod", name);
const seenTexts: [string, string][] = [];

function leakForms(secret: string): string[] {
  return [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString("base64")];
}

function expectNoSecret(where: string, text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    for (const form of leakForms(secret)) expect(text, `${where} holds a secret`).not.toContain(form);
  }
}

async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  const e = error as HostError;
  // `env` is the secret output itself (the engine re-marks it): every other property is scanned.
  const { env: _env, ...properties } = e.properties ?? {};
  seenTexts.push(["error", `${e.message} ${JSON.stringify(e.reasons ?? [])} ${JSON.stringify(properties)}`]);
  return e;
}

describe("Pod in the provider host (REST v2)", () => {
  let rig: PodHostRig;
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let __provider: string;
  let stocked: string;
  let n = 0;
  const fresh = (base: string) => `${base}-${++n}`;
  /** JUPYTER_PASSWORD values the service injected: secrets like the env given. */
  const injected: string[] = [];

  beforeAll(async () => {
    rig = await startPodHostRig(API_KEY);
    ({ emu, proxy, host, client, stocked, __provider } = rig);
    await client.account.setSshKeys([SSH_KEY]);
    expect(stocked).not.toBe("");
    expect(rig.gpus.find((g) => g.id === NO_STOCK)?.availability).toBe("NONE");
  });

  afterAll(async () => {
    const stderr = (await rig?.close()) ?? "";
    const secrets = [ENV_SECRET, ENV_SECRET_2, API_KEY, ...injected];
    expectNoSecret("host stderr", stderr, secrets);
    for (const [where, text] of seenTexts) expectNoSecret(where, text, secrets);
  });

  const withProvider = (props: Record<string, unknown>) => ({ ...props, __provider });

  async function create(resource: string, props: Record<string, unknown>) {
    const { inputs, failures } = await host.check(urn(resource), {}, withProvider(props));
    expect(failures).toEqual([]);
    const result = await host.create(urn(resource), inputs);
    const { env, ...rest } = result.outs;
    if (env?.JUPYTER_PASSWORD) injected.push(env.JUPYTER_PASSWORD);
    seenTexts.push([`create ${resource}`, JSON.stringify(rest)]);
    return { ...result, inputs };
  }

  const named = async (name: string) => (await client.pods.list()).filter((p) => p.name === name);
  const gpuPod = (name: string) => ({
    name,
    image: "acme/dev:1",
    gpu: { id: NO_STOCK },
    fallbackGpuIds: [stocked],
    env: { HF_TOKEN: ENV_SECRET },
  });

  it("lands on the first fallback with stock when gpu.id has none, and outputs the type it landed on", async () => {
    const name = fresh("fallback");
    const posts = () => proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/pods").length;
    const before = posts();
    const { id, outs } = await create(name, gpuPod(name));
    expect(posts() - before).toBe(2);
    expect(outs).toMatchObject({
      id,
      status: "RUNNING",
      gpu: { id: stocked, count: 1 },
      requestedGpu: { id: NO_STOCK },
      desiredStatus: "RUNNING",
      env: { HF_TOKEN: ENV_SECRET },
    });
    expect(outs.cost).toBeGreaterThan(0);
    expect(typeof outs.dataCenterId).toBe("string");
    expect((await named(name)).map((p) => p.id)).toEqual([id]);
  });

  it("fails naming every candidate and the stock now when no candidate has capacity, leaving no pod", async () => {
    const name = fresh("nostock");
    const { inputs } = await host.check(urn(name), {}, withProvider({ ...gpuPod(name), fallbackGpuIds: [] }));
    const error = await hostFailure(() => host.create(urn(name), inputs));
    expect(error.message).toContain(`${NO_STOCK}: 400`);
    expect(error.message).toMatch(/no longer any instances available/);
    expect(error.message).toMatch(/The catalog shows pod stock now for: .*\(HIGH/);
    expect(error.message).toContain(stocked);
    expect(error.id).toBeUndefined();
    expect(await named(name)).toEqual([]);
  });

  it("updates env in place with one PATCH sending env whole, keeping the injected PUBLIC_KEY, and waits for SSH", async () => {
    const name = fresh("ssh");
    const props = { ...gpuPod(name), startSsh: true, ports: ["22/tcp"], waitFor: "ssh" };
    const { id, outs, inputs } = await create(name, props);
    expect(outs.env.PUBLIC_KEY).toBe(SSH_KEY);
    expect(outs.ssh.direct).toMatchObject({ host: "127.0.0.1" });
    const news = { ...inputs, env: { HF_TOKEN: ENV_SECRET_2 } };
    const diff = await host.diff(id, urn(name), outs, withProvider(news));
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    const before = proxy.seen.length;
    const updated = await host.update(id, urn(name), outs, withProvider(news));
    const patches = proxy.seen.slice(before).filter((r) => r.method === "PATCH");
    expect(patches).toHaveLength(1);
    expect(JSON.parse(patches[0]?.body ?? "{}").env).toEqual({ HF_TOKEN: ENV_SECRET_2, PUBLIC_KEY: SSH_KEY });
    expect(updated.outs).toMatchObject({
      status: "RUNNING",
      env: { HF_TOKEN: ENV_SECRET_2, PUBLIC_KEY: SSH_KEY },
    });
    expect((await client.pods.get(id)).env).toEqual({ HF_TOKEN: ENV_SECRET_2, PUBLIC_KEY: SSH_KEY });
  });

  it("plans no change, least of all a replacement, when an env value equals a field the service fills in", async () => {
    // The program leaves cloud out (the service answers SECURE); an env value that happens to be
    // "SECURE" is no reason to hide the pod's cloud and replace the pod on the next up.
    const name = fresh("env-word");
    const props = { ...gpuPod(name), env: { HF_TOKEN: ENV_SECRET, TIER: "SECURE" } };
    const { id, outs, inputs } = await create(name, props);
    expect(outs.cloud).toBe("SECURE");
    expect(await host.diff(id, urn(name), outs, withProvider(inputs))).toMatchObject({
      changes: false,
      replaces: [],
    });
    const read = await host.read(id, urn(name), outs, inputs);
    expect(read.props.cloud).toBe("SECURE");
    expect(await host.diff(id, urn(name), read.props, withProvider(inputs))).toMatchObject({
      changes: false,
      replaces: [],
    });
  });

  it("replaces on a GPU count, cloud or startJupyter change and says which field forces it", async () => {
    const name = fresh("replace");
    const { id, outs, inputs } = await create(name, gpuPod(name));
    const diffOf = async (change: Record<string, unknown>) =>
      (await host.diff(id, urn(name), outs, withProvider({ ...inputs, ...change }))).replaces;
    expect(await diffOf({ gpu: { id: NO_STOCK, count: 2 } })).toEqual(["gpu"]);
    expect(await diffOf({ cloud: "COMMUNITY" })).toEqual(["cloud"]);
    expect(await diffOf({ startJupyter: true })).toEqual(["startJupyter"]);
    expect(await diffOf({ gpu: { id: stocked } })).toEqual([]);
  });

  it("moves a network volume's mount path with one PATCH, keeping the pod and its container disk", async () => {
    const name = fresh("volpath");
    const volume = await client.networkVolumes.create({ name, size: 10, dataCenterId: "EU-RO-1" });
    const props = {
      ...gpuPod(name),
      gpu: { id: "NVIDIA H100 80GB HBM3" },
      fallbackGpuIds: [],
      mounts: { network: [{ volumeId: volume.id, path: "/workspace" }] },
    };
    const { id, outs, inputs } = await create(name, props);
    const news = { ...inputs, mounts: { network: [{ volumeId: volume.id, path: "/data" }] } };
    expect(await host.diff(id, urn(name), outs, withProvider(news))).toMatchObject({
      changes: true,
      replaces: [],
    });
    const before = proxy.seen.length;
    const updated = await host.update(id, urn(name), outs, withProvider(news));
    const patches = proxy.seen.slice(before).filter((r) => r.method === "PATCH");
    expect(patches.map((r) => JSON.parse(r.body).mounts)).toEqual([
      { network: [{ volumeId: volume.id, path: "/data" }] },
    ]);
    expect(updated.outs).toMatchObject({ id, mounts: { network: [{ volumeId: volume.id, path: "/data" }] } });
    expect((await client.pods.get(id)).mounts).toEqual({ network: [{ volumeId: volume.id, path: "/data" }] });
  });

  it("stops and starts on desiredStatus, with the cost following", async () => {
    const name = fresh("stopstart");
    const { id, outs, inputs } = await create(name, gpuPod(name));
    const stoppedNews = { ...inputs, desiredStatus: "EXITED" };
    const stopped = await host.update(id, urn(name), outs, withProvider(stoppedNews));
    expect(stopped.outs).toMatchObject({ id, status: "EXITED", cost: 0, desiredStatus: "EXITED" });
    const started = await host.update(
      id,
      urn(name),
      stopped.outs,
      withProvider({ ...inputs, desiredStatus: "RUNNING" }),
    );
    expect(started.outs).toMatchObject({ id, status: "RUNNING", desiredStatus: "RUNNING" });
    expect(started.outs.cost).toBeGreaterThan(0);
  });

  it("shows a pod stopped outside Pulumi and env changed outside as drift on refresh", async () => {
    const name = fresh("drift");
    const { id, outs, inputs } = await create(name, gpuPod(name));
    await client.pods.action(id, "stop");
    await client.pods.update(id, { env: { HF_TOKEN: ENV_SECRET, EXTRA: "added-outside" } });
    const read = await host.read(id, urn(name), outs, inputs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ status: "EXITED", desiredStatus: "EXITED" });
    expect(read.props.env).toEqual({ HF_TOKEN: ENV_SECRET, EXTRA: "added-outside" });
    const diff = await host.diff(id, urn(name), read.props, withProvider(inputs));
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    const fixed = await host.update(id, urn(name), read.props, withProvider(inputs));
    expect(fixed.outs).toMatchObject({ status: "RUNNING", env: { HF_TOKEN: ENV_SECRET } });
  });

  it("deletes by terminating, counts a pod already gone as deleted, and refresh then finds it gone", async () => {
    const name = fresh("delete");
    const { id, outs } = await create(name, gpuPod(name));
    await host.delete(id, urn(name), outs);
    await expect(client.pods.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await host.delete(id, urn(name), outs);
    expect((await host.read(id, urn(name), outs)).id).toBe("");
  });

  it("reads an existing pod by id for Pod.get, and fails naming an id that does not exist", async () => {
    const name = fresh("get");
    const { id } = await create(name, gpuPod(name));
    const read = await host.read(id, urn(`${name}-read`), {});
    expect(read).toMatchObject({ id, props: { name, status: "RUNNING", gpu: { id: stocked } } });
    const error = await hostFailure(() => host.read("nosuchpod123", urn(`${name}-missing`), {}));
    expect(error.message).toMatch(/No pod with id nosuchpod123/);
  });

  it("refuses to delete a locked pod, saying to set locked: false", async () => {
    const name = fresh("locked");
    const { id, outs } = await create(name, { ...gpuPod(name), locked: true });
    expect(outs.locked).toBe(true);
    const error = await hostFailure(() => host.delete(id, urn(name), outs));
    expect(error.message).toMatch(/locked.*Set locked: false/);
    await client.pods.update(id, { locked: false });
    await host.delete(id, urn(name), outs);
  });

  it("records the one pod the service made when the create answer is lost, never a second", async () => {
    const name = fresh("lost");
    proxy.arm("POST", /\/v2\/pods$/, { kind: "lose-after" });
    const posts = () => proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/pods").length;
    const before = posts();
    const { id, outs } = await create(name, { ...gpuPod(name), gpu: { id: stocked }, fallbackGpuIds: [] });
    expect(posts() - before).toBe(1);
    expect((await named(name)).map((p) => p.id)).toEqual([id]);
    expect(outs.status).toBe("RUNNING");
  });

  it("waits for the proxied HTTP port, and keeps the injected JUPYTER_PASSWORD in env only", async () => {
    const name = fresh("http");
    const props = {
      ...gpuPod(name),
      ports: ["8888/http"],
      startJupyter: true,
      waitFor: { port: 8888, path: "/lab" },
    };
    const before = proxy.seen.length;
    const started = performance.now();
    const { outs } = await create(name, props);
    const tookMs = performance.now() - started;
    expect(outs.status).toBe("RUNNING");
    expect(outs.runtime.ports).toEqual([expect.objectContaining({ private: 8888, type: "http" })]);
    expect(typeof outs.env.JUPYTER_PASSWORD).toBe("string");
    // At most one read of the pod per poll interval while waiting (the host's POD_POLL_MS here,
    // 1 s in the provider): reads one interval apart fit the create's time at most that often, and
    // the pod (starting in POD_START_MS) was read at least once. A busy wait would read far more.
    const reads = proxy.seen
      .slice(before)
      .filter((r) => r.method === "GET" && /\/v2\/pods\/[^/]+$/.test(r.path)).length;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(Math.floor(tookMs / POD_POLL_MS) + 1);
  });

  it("fails partially when the wait times out, naming what it waited for and the last status", async () => {
    const name = fresh("timeout");
    const props = {
      ...gpuPod(name),
      ports: ["8888/http"],
      waitFor: { port: 8888, expectStatus: 204 },
      waitTimeoutMs: 1000,
    };
    const { inputs } = await host.check(urn(name), {}, withProvider(props));
    const error = await hostFailure(() => host.create(urn(name), inputs));
    expect(error.id).toBeTruthy();
    const reason = (error.reasons ?? []).join("\n");
    expect(reason).toMatch(/not RUNNING with port 8888 answering 204 within waitTimeoutMs \(1000 ms\)/);
    expect(reason).toMatch(/port 8888 answered 200, not 204/);
    expect(error.properties).toMatchObject({ status: "RUNNING", desiredStatus: "RUNNING" });
  });

  it("creates a pod stopped when desiredStatus is EXITED", async () => {
    const name = fresh("exited");
    const { outs } = await create(name, { ...gpuPod(name), desiredStatus: "EXITED" });
    expect(outs).toMatchObject({ status: "EXITED", desiredStatus: "EXITED", cost: 0 });
  });

  it("changes waitFor, waitTimeoutMs and fallbackGpuIds with one read of the pod and no change to it", async () => {
    const name = fresh("own-args");
    const { id, outs, inputs } = await create(name, gpuPod(name));
    const news = {
      ...inputs,
      waitFor: "none",
      waitTimeoutMs: 5000,
      fallbackGpuIds: [stocked, "NVIDIA L40S"],
    };
    expect(await host.diff(id, urn(name), outs, withProvider(news))).toMatchObject({
      changes: true,
      replaces: [],
    });
    const before = proxy.seen.length;
    const updated = await host.update(id, urn(name), outs, withProvider(news));
    // The pod is read again (the update after a partial failure must look at it), nothing is sent.
    expect(proxy.seen.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([`GET /v2/pods/${id}`]);
    expect(updated.outs).toMatchObject({ id, waitFor: "none", waitTimeoutMs: 5000, gpu: { id: stocked } });
    expect(updated.outs.env).toEqual({ HF_TOKEN: ENV_SECRET });
  });

  it("skips a candidate the account cannot use (403) and lands on the next", async () => {
    const name = fresh("forbidden");
    proxy.arm("POST", /\/v2\/pods$/, {
      kind: "reply",
      status: 403,
      body: { title: "Forbidden", status: 403, detail: "your account cannot access this pool" },
    });
    const { outs } = await create(name, { ...gpuPod(name), gpu: { id: "NVIDIA L40S" } });
    expect(outs.gpu.id).toBe(stocked);
  });

  it("stops at a short balance (402) without trying the other candidates", async () => {
    const name = fresh("balance");
    proxy.arm("POST", /\/v2\/pods$/, {
      kind: "reply",
      status: 402,
      body: { title: "Payment Required", status: 402, detail: "insufficient balance" },
    });
    const { inputs } = await host.check(urn(name), {}, withProvider(gpuPod(name)));
    const posts = () => proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/pods").length;
    const before = posts();
    const error = await hostFailure(() => host.create(urn(name), inputs));
    expect(posts() - before).toBe(1);
    expect(error.message).toMatch(/balance is too low \(402.*No other GPU type was tried/);
    expect(await named(name)).toEqual([]);
  });

  it("stops at the emulator's own short balance (402), naming it, with no pod and no other candidate tried", async () => {
    const name = fresh("emu-balance");
    const { inputs } = await host.check(urn(name), {}, withProvider(gpuPod(name)));
    const posts = () => proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/pods").length;
    const before = posts();
    emu.setBalanceUsd(0.01);
    try {
      const error = await hostFailure(() => host.create(urn(name), inputs));
      // gpu.id has no stock (400), the fallback meets the short balance (402): the loop ends there.
      expect(posts() - before).toBe(2);
      expect(error.message).toMatch(
        /balance is too low \(402\b.*Insufficient balance.*No other GPU type was tried/,
      );
      expect(error.message).toContain(stocked);
      expect(error.message).toMatch(new RegExp(`Tried before it: ${NO_STOCK}: 400 `));
    } finally {
      emu.setBalanceUsd(undefined);
    }
    expect(await named(name)).toEqual([]);
  });

  it("fails partially on a pod that goes to ERROR, naming the status history and quoting its log", async () => {
    const name = fresh("error");
    const { inputs } = await host.check(
      urn(name),
      {},
      withProvider({ ...gpuPod(name), image: "acme/unpullable:1" }),
    );
    const error = await hostFailure(() => host.create(urn(name), inputs));
    expect(error.id).toBeTruthy();
    const reason = (error.reasons ?? []).join("\n");
    expect(reason).toMatch(/went to ERROR instead of RUNNING/);
    expect(reason).toMatch(/Status history: PROVISIONING -> .*ERROR/);
    expect(reason).toMatch(/pull access denied for acme\/unpullable:1/);
    // What the engine stores and passes, exactly, to the next update, read and delete.
    expect(error.properties).toMatchObject({ id: error.id, status: "ERROR", desiredStatus: "EXITED" });
    expect(error.properties.env).toEqual({ HF_TOKEN: ENV_SECRET });
    expect(error.properties.__provider).toBe(__provider);
    expect((await named(name)).map((p) => p.id)).toEqual([error.id]);
    const id = error.id as string;

    // The next up re-runs the unchanged pod through update (init errors recorded): it looks at the
    // pod again, starts it as desiredStatus says, and fails again while it still cannot run.
    const again = await hostFailure(() => host.update(id, urn(name), error.properties, inputs));
    expect(again.id).toBe(id);
    expect((again.reasons ?? []).join("\n")).toMatch(/went to ERROR instead of RUNNING/);
    expect(again.properties).toMatchObject({
      id,
      status: "ERROR",
      __provider,
      env: { HF_TOKEN: ENV_SECRET },
    });

    // Refresh and destroy with the stored properties as they are.
    const read = await host.read(id, urn(name), again.properties, inputs);
    expect(read).toMatchObject({ id, props: { id, status: "ERROR", desiredStatus: "EXITED" } });
    await host.delete(id, urn(name), again.properties);
    expect(await named(name)).toEqual([]);
  });

  // Every failure once the POST answered keeps the pod (a partial failure with its id), with the
  // properties the next read, update and delete need: the engine passes them exactly as stored.
  describe("a failure after the pod exists keeps it in the state", () => {
    const podRead = /\/v2\/pods\/[^/]+$/;
    const reads = (from: number) =>
      proxy.seen.slice(from).filter((r) => r.method === "GET" && podRead.test(r.path)).length;

    /** The kept pod's properties, then a refresh and a destroy with them as stored. */
    async function refreshAndDestroy(name: string, error: HostError, inputs: Record<string, unknown>) {
      const id = error.id as string;
      expect((await named(name)).map((p) => p.id)).toEqual([id]);
      expect(error.properties).toMatchObject({ id, name, __provider, env: { HF_TOKEN: ENV_SECRET } });
      expect((error.reasons ?? []).join("\n")).toMatch(/The pod is kept in the stack/);
      const read = await host.read(id, urn(name), error.properties, inputs);
      expect(read.id).toBe(id);
      expect(read.props).toMatchObject({ id, name, __provider });
      await host.delete(id, urn(name), error.properties);
      expect(await named(name)).toEqual([]);
    }

    it("when the wait's read of the pod answers 500 through every retry", async () => {
      const name = fresh("read-500");
      const { inputs } = await host.check(urn(name), {}, withProvider(gpuPod(name)));
      const before = proxy.seen.length;
      // The first attempt and the client's 5 retries (GET is retried on a 500; with no Retry-After
      // the host backs off from 5 ms, not 1 s a retry).
      for (let i = 0; i < 6; i++) {
        proxy.arm("GET", podRead, {
          kind: "reply",
          status: 500,
          body: { title: "Internal Server Error", status: 500, detail: "pod store unavailable" },
        });
      }
      const error = await hostFailure(() => host.create(urn(name), inputs));
      expect(reads(before)).toBe(6);
      expect(error.id).toBeTruthy();
      expect(error.reasons).toEqual([error.message]);
      expect(error.message).toMatch(
        new RegExp(
          `^Pod "${name}" \\(id ${error.id}\\) was created, but a later step failed: .*pod store unavailable`,
        ),
      );
      await refreshAndDestroy(name, error, inputs);
    });

    it("when the stop for desiredStatus EXITED fails", async () => {
      const name = fresh("stop-fails");
      const { inputs } = await host.check(
        urn(name),
        {},
        withProvider({ ...gpuPod(name), desiredStatus: "EXITED" }),
      );
      proxy.arm("POST", /\/v2\/pods\/[^/]+\/action$/, {
        kind: "reply",
        status: 500,
        body: { title: "Internal Server Error", status: 500, detail: "stop failed" },
      });
      const error = await hostFailure(() => host.create(urn(name), inputs));
      expect(error.message).toMatch(/was created, but a later step failed: .*stop failed/);
      // Not stopped: what the engine stores says it runs, so the next up stops it.
      expect(error.properties).toMatchObject({ desiredStatus: "RUNNING" });
      await refreshAndDestroy(name, error, inputs);
    });

    it("when the lock PATCH of locked: true fails", async () => {
      const name = fresh("lock-fails");
      const { inputs } = await host.check(urn(name), {}, withProvider({ ...gpuPod(name), locked: true }));
      proxy.arm("PATCH", podRead, {
        kind: "reply",
        status: 400,
        body: { title: "Bad Request", status: 400, detail: "cannot lock now" },
      });
      const error = await hostFailure(() => host.create(urn(name), inputs));
      expect(error.message).toMatch(/was created, but a later step failed: .*cannot lock now/);
      expect(error.properties.locked).not.toBe(true);
      await refreshAndDestroy(name, error, inputs);
    });

    it("reads again after a 404 during the wait (the service may not find a new pod yet)", async () => {
      const name = fresh("read-404");
      const before = proxy.seen.length;
      proxy.arm("GET", podRead, {
        kind: "reply",
        status: 404,
        body: { title: "Not Found", status: 404, detail: "pod not found" },
      });
      const { id, outs } = await create(name, gpuPod(name));
      expect(reads(before)).toBeGreaterThanOrEqual(2);
      expect(outs).toMatchObject({ id, status: "RUNNING" });
      expect((await named(name)).map((p) => p.id)).toEqual([id]);
    });
  });
});

/**
 * ServerlessEndpoint through Pulumi's own dynamic-provider host over gRPC, with `__provider`
 * serialized from the INSTALLED package, against the emulator (REST v2) on a ManualClock: a
 * rollout moves only when a test advances the clock, once the host is seen waiting for it, so
 * what the provider meets never depends on how fast this machine is.
 *
 * The host reaches the emulator through a small pass-through proxy that a test can arm to lose
 * the answer to a create after the emulator acted on it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import type { FaultProxy } from "../support/faultProxy.mts";
import { type ProviderHost, startProviderHost, UNKNOWN, urnFor } from "../support/providerHost.mts";
import { engineText } from "./engineText";
import { expectReasons } from "./jobRunHostKit";
import { endpointHostKit } from "./serverlessEndpointHostKit";

const API_KEY = "endpoint-host-key-5f0c2a";
const TOKEN = "hf_s3cr3t-Endpoint-T0ken-9b7e";
const TOKEN_2 = "rotated-Endpoint-T0ken-4d1c";
const SECRETS = [TOKEN, TOKEN_2, API_KEY];
/** How long stale workers keep serving after a release before they are replaced, in this emulator. */
const ROLLOUT_MS = 3_000;

const projectDir = inject("installedProjectDir");

const kit = endpointHostKit({ apiKey: API_KEY, secrets: SECRETS, rolloutMs: ROLLOUT_MS });
const {
  clock,
  expectNoSecret,
  urn,
  checked,
  create,
  failing,
  untilStderr,
  rollOutOnceWaiting,
  expectCleanOutputs,
} = kit;
let emu: RunningEmulator;
let proxy: FaultProxy;
let host: ProviderHost;
let client: RunpodClient;
beforeAll(async () => {
  await kit.start();
  ({ emu, proxy, host, client } = kit);
});
afterAll(() => kit.stop());
let n = 0;

/** A fresh endpoint name per test: the emulator is shared. */
const fresh = (base: string) => `${base}-${++n}`;

const base = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "QUEUE",
  image: "acme/api:1",
  env: { HF_TOKEN: TOKEN, MODEL: "small" },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { max: 2 },
  ...extra,
});

const named = async (name: string) => (await client.serverless.list()).filter((e) => e.name === name);

describe("ServerlessEndpoint in the provider host (REST v2)", () => {
  it("creates the endpoint, returns once no worker is stale, and outputs it as read back", async () => {
    const name = fresh("create");
    const { id, outs } = await create("create", base(name));
    const live = await client.serverless.get(id);
    expect(live).toMatchObject({ id, name, image: "acme/api:1", env: { HF_TOKEN: TOKEN, MODEL: "small" } });
    expect(outs).toMatchObject({
      name,
      type: "QUEUE",
      image: "acme/api:1",
      env: { HF_TOKEN: TOKEN, MODEL: "small" },
      gpu: { pools: ["ADA_24"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
      workers: { min: 0, max: 2, idleTimeout: 10 },
      args: "",
      disk: 20,
      ports: [],
      registry: null,
      dataCenterIds: [],
      networkVolumes: [],
      timeout: 300_000,
      flashboot: "OFF",
      createdAt: live.createdAt,
      version: 1,
      latestReleaseId: (await client.serverless.releases(id)).releases[0]?.id,
      requestUrls: live.requestUrls,
    });
    expect(outs.requestUrls.runSync).toBe(`${emu.serverlessUrl}/v2/${id}/runsync`);
    expect(typeof outs.__provider).toBe("string");
    expect(outs).not.toHaveProperty("id");
    expect(await named(name)).toHaveLength(1);
    const { workers } = await client.serverless.workers(id);
    expect(workers.map((w) => [w.status, w.isStale])).toEqual([
      ["IDLE", false],
      ["IDLE", false],
    ]);
  });

  it("diffs: nothing changed, an update in place, and replacements for type and the compute family", async () => {
    const name = fresh("diff");
    const { id, outs, inputs } = await create("diff", base(name));
    const diff = (news: Record<string, unknown>) => host.diff(id, urn("diff"), outs, news);
    expect(await diff(inputs)).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    expect(await diff({ ...inputs, image: "acme/api:2" })).toMatchObject({ changes: true, replaces: [] });
    expect(await diff({ ...inputs, workers: { max: 3 } })).toMatchObject({ changes: true, replaces: [] });
    expect(await diff({ ...inputs, rollout: "ignore" })).toMatchObject({ changes: true, replaces: [] });
    const { env: _env, ...noEnv } = inputs;
    expect(await diff(noEnv)).toMatchObject({ changes: true, replaces: [] });
    expect(await diff({ ...inputs, type: "LOAD_BALANCER" })).toMatchObject({
      changes: true,
      replaces: ["type"],
      deleteBeforeReplace: false,
    });
    const { gpu: _gpu, ...noGpu } = inputs;
    expect(await diff({ ...noGpu, cpu: [{ id: "cpu3c", vcpuCount: 2 }] })).toMatchObject({
      changes: true,
      replaces: ["cpu", "gpu"],
    });
    // A value not known yet (preview): an update for the image, a possible replacement for type.
    expect(await diff({ ...inputs, image: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
    expect(await diff({ ...inputs, type: UNKNOWN })).toMatchObject({ changes: true, replaces: ["type"] });
  });

  it("updates the image in place: a release, waits for its rollout, and reports the new version", async () => {
    const name = fresh("release");
    const { id, outs, inputs } = await create("release", base(name));
    const news = await checked("release", { ...inputs, image: "acme/api:2" }, inputs);
    const [{ outs: updated }] = await Promise.all([
      host.update(id, urn("release"), outs, news),
      rollOutOnceWaiting(`"${name}" (id ${id})`, 2),
    ]);
    expect(updated).toMatchObject({
      image: "acme/api:2",
      version: 2,
      env: { HF_TOKEN: TOKEN, MODEL: "small" },
    });
    const releases = await client.serverless.releases(id);
    expect(updated.latestReleaseId).toBe(releases.releases[0]?.id);
    expect(releases.rollout.inProgress).toBe(false);
    const { workers } = await client.serverless.workers(id);
    expect(workers.map((w) => [w.version, w.isStale])).toEqual([
      [2, false],
      [2, false],
    ]);
    expectCleanOutputs(updated);

    // The documented pairing: JobRun({ endpointId: ep.id, triggers: [ep.version] }) tests that release.
    const smoke = urnFor("JobRun", `smoke-${name}`);
    const checkedRun = await host.check(
      smoke,
      {},
      { endpointId: id, input: { ping: 1 }, triggers: [updated.version] },
    );
    expect(checkedRun.failures).toEqual([]);
    const { outs: run } = await host.create(smoke, checkedRun.inputs);
    expect(run).toMatchObject({ passed: true, endpointVersion: 2, output: { ping: 1 } });
  });

  it("applies a scaling change at once, with no release and no wait", async () => {
    const name = fresh("scale");
    const { id, outs, inputs } = await create("scale", base(name));
    const news = await checked(
      "scale",
      {
        ...inputs,
        workers: { max: 3, idleTimeout: 30 },
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
      },
      inputs,
    );
    const { outs: updated } = await host.update(id, urn("scale"), outs, news);
    expect(updated).toMatchObject({
      version: 1,
      workers: { min: 0, max: 3, idleTimeout: 30 },
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
    });
    expect((await client.serverless.releases(id)).releases).toHaveLength(1);
  });

  it("drops on the service what the program no longer gives: env {} and dataCenterIds []", async () => {
    const name = fresh("drop");
    const { id, outs, inputs } = await create("drop", base(name, { dataCenterIds: ["EU-RO-1"] }));
    const { env: _env, dataCenterIds: _dc, ...rest } = inputs;
    const news = await checked("drop", { ...rest, rollout: "ignore" }, inputs);
    expect(await host.diff(id, urn("drop"), outs, news)).toMatchObject({ changes: true, replaces: [] });
    const { outs: updated } = await host.update(id, urn("drop"), outs, news);
    const live = await client.serverless.get(id);
    expect(live.env).toEqual({});
    expect(live.dataCenterIds).toEqual([]);
    expect(updated).toMatchObject({ env: {}, dataCenterIds: [], version: 2 });
    // And the next diff sees nothing left to do.
    expect(await host.diff(id, urn("drop"), updated, news)).toMatchObject({ changes: false });
  });

  it("takes omitted container settings from its template and leaves them alone; its delete also removes the template", async () => {
    const tpl = await client.templates.create({
      name: fresh("tpl"),
      image: "acme/from-template:1",
      env: { FROM_TEMPLATE: "yes" },
      ports: ["8000/http"],
      serverless: true,
    });
    const { image: _image, env: _env, ...rest } = base(fresh("templated"));
    const { id, outs, inputs } = await create("templated", { ...rest, templateId: tpl.id });
    expect(outs).toMatchObject({
      image: "acme/from-template:1",
      env: { FROM_TEMPLATE: "yes" },
      ports: ["8000/http"],
      templateId: tpl.id,
    });
    expect(await host.diff(id, urn("templated"), outs, inputs)).toMatchObject({ changes: false });
    // The endpoint's own image wins over the template's: one edit rolls the endpoint.
    const news = await checked(
      "templated",
      { ...inputs, image: "acme/from-template:2", rollout: "ignore" },
      inputs,
    );
    const { outs: updated } = await host.update(id, urn("templated"), outs, news);
    expect(updated).toMatchObject({
      image: "acme/from-template:2",
      env: { FROM_TEMPLATE: "yes" },
      version: 2,
    });
    await host.delete(id, urn("templated"), updated);
    expect((await client.templates.list()).map((t) => t.id)).not.toContain(tpl.id);
  });

  it("replaces on a compute family change: the new endpoint first, then the old one deleted", async () => {
    const name = fresh("family");
    const old = await create("family", base(name));
    const { gpu: _gpu, ...rest } = old.inputs;
    const news = await checked("family", { ...rest, cpu: [{ id: "cpu3c", vcpuCount: 2 }] }, old.inputs);
    expect(await host.diff(old.id, urn("family"), old.outs, news)).toMatchObject({
      replaces: ["cpu", "gpu"],
    });
    const replacement = await host.create(urn("family"), news);
    await host.delete(old.id, urn("family"), old.outs);
    expect(replacement.id).not.toBe(old.id);
    expect(replacement.outs).toMatchObject({ cpu: [{ id: "cpu3c", vcpuCount: 2, memory: 8 }] });
    expect(replacement.outs).not.toHaveProperty("gpu");
    expect((await named(name)).map((e) => e.id)).toEqual([replacement.id]);
  });

  it("refresh shows drift made in the console, in outputs and inputs, and the next diff updates it", async () => {
    const name = fresh("drift");
    const { id, outs, inputs } = await create("drift", base(name));
    await client.serverless.update(id, { image: "acme/api:console", env: { HF_TOKEN: TOKEN_2 } });
    const read = await host.read(id, urn("drift"), outs, inputs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ image: "acme/api:console", env: { HF_TOKEN: TOKEN_2 }, version: 2 });
    expect(read.inputs).toMatchObject({ image: "acme/api:console", env: { HF_TOKEN: TOKEN_2 }, name });
    expect(read.inputs).not.toHaveProperty("version");
    expect(read.inputs).not.toHaveProperty("requestUrls");
    expectCleanOutputs(read.props);
    expect(await host.diff(id, urn("drift"), read.props, inputs)).toMatchObject({
      changes: true,
      replaces: [],
    });
  });

  it("refresh of an endpoint deleted elsewhere drops it from the state", async () => {
    const { id, outs } = await create("gone", base(fresh("gone")));
    await client.serverless.delete(id);
    expect(await host.read(id, urn("gone"), outs)).toEqual({
      id: "",
      props: { __provider: outs.__provider },
    });
  });

  it(".get reads an existing endpoint by id, and fails clearly for an id the account does not have", async () => {
    const name = fresh("get");
    const { id } = await create("get", base(name));
    const got = await host.read(id, urn("got"), {});
    expect(got.id).toBe(id);
    expect(got.props).toMatchObject({ name, image: "acme/api:1", version: 1 });
    const error = await failing(() => host.read("nosuchendpoint", urn("got-wrong"), {}));
    expect(error.message).toContain(
      'ServerlessEndpoint.get: there is no serverless endpoint with id "nosuchendpoint" in this account',
    );
  });

  it("deletes the endpoint, and counts one already deleted as done", async () => {
    const name = fresh("delete");
    const { id, outs } = await create("delete", base(name));
    await host.delete(id, urn("delete"), outs);
    expect(await named(name)).toEqual([]);
    await host.delete(id, urn("delete"), outs);
  });

  it.each(["reset", "500"] as const)(
    "after a lost answer to the create (%s after the service acted), records the endpoint it made: exactly one exists",
    async (how) => {
      const name = fresh(`lost-${how}`);
      proxy.arm("POST", /\/v2\/serverless$/, how === "500" ? { kind: "fail-after" } : { kind: "lose-after" });
      const { id } = await create("lost", base(name));
      const existing = await named(name);
      expect(existing.map((e) => e.id)).toEqual([id]);
      expect(
        proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/serverless").length,
      ).toBeGreaterThan(0);
      expect(host.stderr()).toContain(`warning: Creating serverless endpoint "${name}" failed (`);
      expect(host.stderr()).toContain(`the service had created it anyway (id ${id}`);
    },
  );

  it.each(["503", "429"] as const)(
    "after a create answered %s the service acted on, records the endpoint it made: one POST, exactly one exists",
    async (status) => {
      const name = fresh(`not-acted-${status}`);
      const posts = () => proxy.seen.filter((r) => r.method === "POST" && r.path === "/v2/serverless").length;
      const before = posts();
      proxy.arm("POST", /\/v2\/serverless$/, { kind: "fail-after", status: Number(status) });
      const { id } = await create(`not-acted-${status}`, base(name));
      expect((await named(name)).map((e) => e.id)).toEqual([id]);
      expect(posts() - before).toBe(1);
      expect(host.stderr()).toContain(
        `warning: Creating serverless endpoint "${name}" was answered ${status}, but the service had created it anyway (id ${id},`,
      );
    },
  );

  it('with rollout "ignore", returns as soon as the service took the release', async () => {
    const name = fresh("ignore");
    const { id, outs, inputs } = await create("ignore", base(name, { rollout: "ignore" }));
    const news = await checked("ignore", { ...inputs, image: "acme/api:2" }, inputs);
    const { outs: updated } = await host.update(id, urn("ignore"), outs, news);
    expect(updated).toMatchObject({ image: "acme/api:2", version: 2, rollout: "ignore" });
    const { workers } = await client.serverless.workers(id);
    expect(workers.every((w) => w.isStale)).toBe(true);
  });

  it("fails a stalled rollout early as a partial failure naming the release, the workers and the log", async () => {
    const name = fresh("stall");
    const { id, outs, inputs } = await create("stall", base(name));
    const news = await checked("stall", { ...inputs, image: "acme/api:unpullable" }, inputs);
    const label = `"${name}" (id ${id})`;
    const [error] = await Promise.all([
      failing(() => host.update(id, urn("stall"), outs, news)),
      (async () => {
        await untilStderr(`ServerlessEndpoint ${label}: waiting for version 2 to roll out`);
        await clock.advance(ROLLOUT_MS);
        await clock.advance(WORKER_START_MS);
      })(),
    ]);
    expectReasons(error);
    expect(error.id).toBe(id);
    expect(error.properties).toMatchObject({ image: "acme/api:unpullable", version: 2 });
    expect(error.properties.env).toEqual({ HF_TOKEN: TOKEN, MODEL: "small" });
    const { env: _env, ...rest } = error.properties;
    expectNoSecret(JSON.stringify(rest));
    const workers = (await client.serverless.workers(id)).workers;
    const bad = workers.find((w) => w.status === "UNHEALTHY");
    expect(bad).toBeDefined();
    const text = engineText(error);
    expect(text).toContain(
      `ServerlessEndpoint ${label}: the rollout of version 2 stalled: worker ${bad?.id} of version 2 is UNHEALTHY`,
    );
    expect(text).toContain("Workers: 1 UNHEALTHY on version 2, 1 IDLE on version 1.");
    expect(text).toContain(`Worker log (last 3 lines of ${bad?.id}):`);
    expect(text).toContain("system failed to pull image acme/api:unpullable: manifest unknown");
    expect(text).toContain(
      "The endpoint was changed: it is at version 2, and its stale workers keep serving the previous release. " +
        "Fix the release (the image, its registry credential, env or start command) and run pulumi up again; " +
        'to deploy without waiting for the rollout, set rollout: "ignore".',
    );

    // The fix: a new release with a good image rolls out and the update passes.
    const fixed = await checked("stall", { ...inputs, image: "acme/api:3" }, inputs);
    const [{ outs: done }] = await Promise.all([
      host.update(id, urn("stall"), error.properties, fixed),
      rollOutOnceWaiting(label, 3),
    ]);
    expect(done).toMatchObject({ image: "acme/api:3", version: 3 });
  });

  it("bounds a stall's message when /workers lists 50,000 workers, and keeps the endpoint's id", async () => {
    const name = fresh("crowd");
    const { id, outs, inputs } = await create("crowd", base(name));
    const news = await checked("crowd", { ...inputs, image: "acme/api:2" }, inputs);
    // Two reads in a row: one UNHEALTHY worker of the new release and 49,999 stale ones, each on
    // a version of its own, so that listing the workers by status and version is 50,000 entries.
    const crowd = (body: Record<string, unknown>) => ({
      ...body,
      endpointVersion: 2,
      workers: [
        { id: "w-unhealthy", status: "UNHEALTHY", version: 2, isStale: false },
        ...Array.from({ length: 49_999 }, (_, i) => ({
          id: `w-${i}`,
          status: "IDLE",
          version: -i,
          isStale: true,
        })),
      ],
    });
    proxy.arm("GET", new RegExp(`/v2/serverless/${id}/workers$`), { kind: "rewrite", edit: crowd });
    proxy.arm("GET", new RegExp(`/v2/serverless/${id}/workers$`), { kind: "rewrite", edit: crowd });
    const error = await failing(() => host.update(id, urn("crowd"), outs, news));
    expect(error.id).toBe(id);
    expectReasons(error);
    expect(error.message.length).toBeLessThanOrEqual(10_000);
    for (const reason of error.reasons ?? []) expect(reason.length).toBeLessThanOrEqual(10_000);
    expect(error.message).toContain(
      "the rollout of version 2 stalled: worker w-unhealthy of version 2 is UNHEALTHY",
    );
    expect(error.message).toContain("1 UNHEALTHY on version 2, 1 IDLE on version 0,");
    expect(error.message).toContain("and 49995 more groups.");
    expect(error.properties).toMatchObject({ image: "acme/api:2" });
  });

  it("fails a create whose workers cannot start, keeping the endpoint in state", async () => {
    const name = fresh("badcreate");
    const inputs = await checked("badcreate", base(name, { image: "acme/api:unpullable" }));
    const error = await failing(() => host.create(urn("badcreate"), inputs));
    expectReasons(error);
    expect((await named(name)).map((e) => e.id)).toEqual([error.id]);
    expect(error.message).toContain("the rollout of version 1 stalled");
    expect(error.message).toContain("Workers: 2 UNHEALTHY on version 1.");
    expect(typeof error.properties.__provider).toBe("string");
  });

  it("honours rolloutTimeoutMs: a rollout not over by then fails, saying how far it got", async () => {
    const name = fresh("timeout");
    const { id, outs, inputs } = await create("timeout", base(name));
    // Below what check allows (state written before the bound), so that the test need not wait 30 s.
    const news = {
      ...(await checked("timeout", { ...inputs, image: "acme/api:2" }, inputs)),
      rolloutTimeoutMs: 1500,
    };
    const error = await failing(() => host.update(id, urn("timeout"), outs, news));
    expectReasons(error);
    expect(error.message).toContain(
      `ServerlessEndpoint "${name}" (id ${id}): the rollout of version 2 did not complete within rolloutTimeoutMs ` +
        "(1500 ms): 2 of 2 workers still run an older version.",
    );
    expect(error.message).toContain("Workers: 2 IDLE on version 1.");
    expect(error.message).toContain("if the rollout only needs longer, raise rolloutTimeoutMs");
    expect(error.properties).toMatchObject({ image: "acme/api:2", version: 2 });
  });

  it("fails check, one failure per bad input, naming the field and never echoing env", async () => {
    const check = (props: Record<string, unknown>) => host.check(urn("bad"), {}, props);
    const failuresOf = async (props: Record<string, unknown>) => (await check(props)).failures;
    const good = base("bad");
    expect(await failuresOf(good)).toEqual([]);
    expect(await failuresOf({ ...good, name: "" })).toEqual([
      { property: "name", reason: "name must not be empty" },
    ]);
    expect(await failuresOf({ ...good, type: "BATCH" })).toEqual([
      { property: "type", reason: "type must be QUEUE or LOAD_BALANCER" },
    ]);
    expect(await failuresOf({ ...good, disk: 0 })).toEqual([
      { property: "disk", reason: "disk must be at least 1 GB" },
    ]);
    expect(await failuresOf({ ...good, gpu: undefined })).toEqual([
      {
        property: "",
        reason: "gpu is required unless cpu is given: an endpoint runs on exactly one of gpu or cpu",
      },
    ]);
    expect(await failuresOf({ ...good, cpu: [{ id: "cpu3c", vcpuCount: 2 }] })).toEqual([
      { property: "", reason: "cpu cannot be combined with gpu; give one of them" },
    ]);
    expect(await failuresOf({ ...good, gpu: { pools: [] } })).toEqual([
      { property: "", reason: "gpu.pools: pools must list at least one pool" },
    ]);
    expect(await failuresOf({ ...good, workers: { max: 2, idleTimeout: 0 } })).toEqual([
      { property: "", reason: "workers.idleTimeout: idleTimeout must be at least 1 s" },
    ]);
    // A missing value names no property (the engine would print `{<nil>}`), nor does an unknown
    // argument (its value may be a secret).
    expect(await failuresOf({ ...good, image: undefined })).toEqual([
      { property: "", reason: "image is required unless templateId is given" },
    ]);
    expect(await failuresOf({ ...good, rollout: "later" })).toEqual([
      { property: "rollout", reason: 'rollout must be "wait" or "ignore"' },
    ]);
    for (const short of [0, 1, 29_999]) {
      expect(await failuresOf({ ...good, rolloutTimeoutMs: short })).toEqual([
        {
          property: "rolloutTimeoutMs",
          reason:
            `rolloutTimeoutMs must be at least 30000 ms (30 s), got ${short}: a rollout starts new workers, ` +
            "and a shorter wait ends before a good release is out (allowed: 30000 .. 86400000 ms (30 s .. 24 h))",
        },
      ]);
    }
    expect(await failuresOf({ ...good, imagee: "x" })).toEqual([
      {
        property: "",
        reason: expect.stringMatching(/^unknown property imagee; allowed: .*rolloutTimeoutMs/),
      },
    ]);
    const envFailures = await failuresOf({ ...good, env: { HF_TOKEN: 42, OTHER: TOKEN } });
    expect(envFailures).toEqual([{ property: "", reason: "env.HF_TOKEN: env value must be a string" }]);
    expect(await failuresOf({ ...good, scaling: undefined })).toEqual([
      {
        property: "",
        reason:
          'scaling is required ({ type: "QUEUE_DELAY", queueDelay } or { type: "REQUEST_COUNT", requestCount })',
      },
    ]);
    expect(await failuresOf({ ...good, type: "LOAD_BALANCER" })).toEqual([
      { property: "", reason: "scaling.type: type must be REQUEST_COUNT on a LOAD_BALANCER endpoint" },
    ]);
    expect(await failuresOf({ ...good, workers: { maximum: 3 } })).toEqual([
      { property: "", reason: "workers: unknown key maximum" },
    ]);
    expect(await failuresOf({ ...good, timeout: "5" })).toEqual([
      { property: "timeout", reason: "timeout must be an integer, got a string" },
    ]);
    expectNoSecret(JSON.stringify(envFailures));
    // Unknown values (a preview) are not judged.
    expect(await failuresOf({ ...good, image: UNKNOWN, gpu: UNKNOWN, env: UNKNOWN, disk: UNKNOWN })).toEqual(
      [],
    );
  });
});

describe("ServerlessEndpoint on a REST v1 restUrl", () => {
  let v1Host: ProviderHost;
  beforeAll(async () => {
    v1Host = await startProviderHost({ projectDir });
    await v1Host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": emu.restUrlV1 });
  });
  afterAll(async () => {
    await v1Host?.close();
  });

  it("fails check saying endpoints need REST v2", async () => {
    const { failures } = await v1Host.check(urn("v1"), {}, base("v1"));
    expect(failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(
          /^ServerlessEndpoint needs the REST v2 interface .* runpod:restUrl \(or RUNPOD_REST_API_URL\) is a REST v1 URL/,
        ),
      },
    ]);
  });
});

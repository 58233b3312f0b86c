/**
 * The native plugin serving ServerlessEndpoint over gRPC against the emulator, through the
 * sequences of a program's preview, up, refresh and destroy: a guarded release (`smokeTest`) that
 * passes, one rolled back when its smoke test fails (an init error carrying the id and the state
 * the dynamic path keeps), `env` secret in and out, and an endpoint over its own `maxHourlyUsd`
 * refused in Check. The emulator runs on the real clock with short rollouts; a broken release is
 * the emulator's own (`RUNPOD_EMULATOR_FAIL=<message>` in `env` fails every job on its workers).
 * Needs the build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GpuType, RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import {
  failure,
  type PluginRig,
  pb,
  type providerClient,
  resourceCalls,
  secret,
  startPluginRig,
  UNKNOWN,
} from "./pluginKit";

const API_KEY = "plugin-endpoint-key-4b8c2d";
const TOKEN = "hf_Plugin-Endpoint-Secret-7a6b5c";
const HEADER = "Bearer plugin-probe-header-3f2e1d";
const BROKEN = "model weights missing: /models/plugin.bin";
const TYPE = "runpod-native:index:ServerlessEndpoint";
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

const SMOKE = { input: { ping: 1 }, expect: { output: { ping: 1 } }, timeoutMs: 60_000 };
const round = (n: number) => Math.round(n * 1e6) / 1e6;

describe("pulumi-resource-runpod-native: ServerlessEndpoint over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;
  let rate: number;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false, rolloutMs: 0 });
    ({ emu, rpc } = rig);
    service = new RunpodClient({
      apiKey: API_KEY,
      restUrl: emu.restUrl,
      serverlessUrl: emu.serverlessUrl,
      maxRetries: 0,
      rateLimits: false,
    });
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrl, serverlessUrl: emu.serverlessUrl });
    const gpus: GpuType[] = await service.catalog.gpus();
    rate = Math.max(...gpus.filter((g) => g.pool === "ADA_24").map((g) => g.price?.serverless as number));
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, TOKEN, HEADER]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  /** The service's endpoints of that name (the emulator also serves its own `echo` endpoint). */
  const endpointsNamed = async (name: string) =>
    (await service.serverless.list()).filter((e) => e.name === name).map((e) => e.id);

  /** What the service runs for endpoint `id`: its image, env and release. */
  const served = async (id: string) => {
    const live = await service.serverless.get(id);
    const { endpointVersion } = await service.serverless.releases(id);
    return { image: live.image, env: live.env, version: endpointVersion };
  };

  /**
   * An endpoint's outputs as the service answers them for `args("api", ...)`: the arguments as
   * given (env secret), the fields the service fills in, the release it runs and its last smoke test.
   */
  const outputsOf = (
    id: string,
    given: Record<string, unknown>,
    version: number,
    lastSmokeTest: Record<string, unknown>,
  ) => ({
    ...given,
    args: "",
    createdAt: expect.any(String),
    dataCenterIds: [],
    disk: 20,
    flashboot: "OFF",
    gpu: { pools: ["ADA_24"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
    latestReleaseId: expect.any(String),
    networkVolumes: [],
    ports: [],
    registry: null,
    requestUrls: Object.fromEntries(
      Object.entries({
        run: "run",
        runSync: "runsync",
        status: "status/{job_id}",
        stream: "stream/{job_id}",
        cancel: "cancel/{job_id}",
        retry: "retry/{job_id}",
        purgeQueue: "purge-queue",
        health: "health",
      }).map(([k, route]) => [k, `${emu.serverlessUrl}/v2/${id}/${route}`]),
    ),
    timeout: 300000,
    workers: { min: 0, max: 2, idleTimeout: 10 },
    version,
    lastSmokeTest: {
      jobIds: [expect.any(String)],
      timeline: [expect.stringMatching(/^\S+: IN_QUEUE [\d.]+ s -> (COMPLETED|FAILED) [\d.]+ s/)],
      costUsd: expect.any(Number),
      ...lastSmokeTest,
    },
  });

  const args = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    type: "QUEUE",
    image: "acme/api:1",
    env: { HF_TOKEN: TOKEN },
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: 2 },
    smokeTest: SMOKE,
    ...extra,
  });

  it("a guarded endpoint: preview, up, a release that passes, one rolled back, refresh, destroy; env secret throughout", async () => {
    const ep = resourceCalls(rpc, TYPE, "api");
    const hourlyCost = { floorUsd: 0, ceilingUsd: round(2 * rate), ratePerWorkerUsd: round(rate) };

    // preview: the image is not known yet; Check passes it through, the preview's Create writes nothing.
    const previewed = await ep.check(args("api", { image: UNKNOWN }));
    expect(previewed).toEqual({
      inputs: {
        ...args("api", { image: UNKNOWN }),
        env: secret({ HF_TOKEN: TOKEN }),
        hourlyCost,
      },
      failures: [],
    });
    expect(await ep.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(await endpointsNamed("api")).toEqual([]);

    // up: created, rolled out, its smoke test passed on release 1; env secret though given plain.
    const checked = await ep.check(args("api"));
    const inputs = { ...args("api"), env: secret({ HF_TOKEN: TOKEN }), hourlyCost };
    expect(checked).toEqual({ inputs, failures: [] });
    const made = await ep.create(inputs);
    const [live] = await endpointsNamed("api");
    expect(made.id).toBe(live);
    expect(made.outs).toEqual(outputsOf(made.id, inputs, 1, { version: 1, passed: true, failures: 0 }));
    const jobId = made.outs.lastSmokeTest.jobIds[0];
    expect(await service.endpoint(made.id).status(jobId)).toMatchObject({
      status: "COMPLETED",
      output: { ping: 1 },
    });
    // Nothing but `env` holds the token.
    const { env: _env, ...plainOuts } = made.outs;
    expect(JSON.stringify(plainOuts)).not.toContain(TOKEN);

    // unchanged: nothing planned.
    expect((await ep.diff(made.id, made.outs, inputs)).changes).toBe(D.DIFF_NONE);

    // preview of a release whose image is unknown: planned in place, nothing written.
    const unknownImage = (await ep.check(args("api", { image: UNKNOWN }), inputs)).inputs;
    const plannedUnknown = await ep.diff(made.id, made.outs, unknownImage, inputs);
    expect([plannedUnknown.changes, plannedUnknown.replaces, plannedUnknown.detailed]).toEqual([
      D.DIFF_SOME,
      [],
      { image: K.UPDATE },
    ]);
    expect(await ep.update(made.id, made.outs, unknownImage, true)).toEqual(unknownImage);
    expect(await served(made.id)).toEqual({ image: "acme/api:1", env: { HF_TOKEN: TOKEN }, version: 1 });

    // a release that passes: image 2, release 2, its smoke test recorded against it.
    const v2 = (await ep.check(args("api", { image: "acme/api:2" }), inputs)).inputs;
    const planned = await ep.diff(made.id, made.outs, v2, inputs);
    expect([planned.changes, planned.replaces, planned.detailed]).toEqual([
      D.DIFF_SOME,
      [],
      { image: K.UPDATE },
    ]);
    const released = await ep.update(made.id, made.outs, v2);
    expect(released).toEqual(outputsOf(made.id, v2, 2, { version: 2, passed: true, failures: 0 }));

    // a broken release (3): its smoke test fails, it is rolled back (release 4 runs release 2's
    // configuration), and the update fails as an init error carrying the id and what runs.
    const brokenEnv = { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN };
    const v3 = (await ep.check(args("api", { image: "acme/api:3", env: brokenEnv }), v2)).inputs;
    expect(v3.env).toEqual(secret(brokenEnv));
    const error = await failure(() => ep.update(made.id, released, v3));
    expect(error.code).toBe(2);
    expect(error.message).toContain(
      `ServerlessEndpoint "api" (id ${made.id}): the smoke test of release version 3 failed (1 of 1 job failed, maxFailures 0), so it was rolled back.`,
    );
    expect(error.message).toContain(
      "Now serving: version 4, a new release carrying the previous configuration (image acme/api:2), on every worker.",
    );
    expect(error.message).toContain(`Worker error: ${BROKEN}`);
    expect(error.init?.reasons).toEqual([error.message]);
    expect(error.init?.id).toBe(made.id);
    // The state the dynamic path keeps: what runs (release 2's configuration at version 4), env
    // still secret, the failed release's record; no __provider (the plugin has none).
    const rolledBack = error.init?.properties ?? {};
    expect(rolledBack).toEqual(outputsOf(made.id, v2, 4, { version: 3, passed: false, failures: 1 }));
    expect(rolledBack.env).toEqual(secret({ HF_TOKEN: TOKEN }));
    expect(await served(made.id)).toEqual({ image: "acme/api:2", env: { HF_TOKEN: TOKEN }, version: 4 });

    // refresh: read back as the rollback left it; env still secret.
    expect(await ep.read(made.id, rolledBack, v2)).toEqual({ id: made.id, props: rolledBack });
    // the next up tries the release again (the program still says image 3).
    const again = await ep.diff(made.id, rolledBack, v3, v2);
    expect([again.changes, again.replaces, again.detailed]).toEqual([
      D.DIFF_SOME,
      [],
      { image: K.UPDATE, env: K.UPDATE },
    ]);

    // destroy, then gone.
    await ep.delete(made.id, rolledBack);
    expect(await endpointsNamed("api")).toEqual([]);
    expect(await ep.read(made.id, rolledBack)).toEqual({ id: "", props: {} });
  });

  it("a create whose smoke test fails: an init error carrying the new endpoint's id, kept in the state as it runs", async () => {
    const ep = resourceCalls(rpc, TYPE, "first");
    const brokenEnv = { HF_TOKEN: TOKEN, RUNPOD_EMULATOR_FAIL: BROKEN };
    const inputs = (await ep.check(args("first", { env: brokenEnv }))).inputs;
    const error = await failure(() => ep.create(inputs));
    const [id] = await endpointsNamed("first");
    expect(error.message.split("\n")[0]).toBe(
      `ServerlessEndpoint "first" (id ${id}): the smoke test of release version 1 failed (1 of 1 job failed, ` +
        "maxFailures 0). The endpoint was created, and there is no previous release to roll back to: it serves " +
        "the failed release (version 1).",
    );
    expect(error.message).toContain(`Worker error: ${BROKEN}`);
    expect(error.message.split("\n").at(-1)).toBe(
      "The endpoint is recorded in the state: fix the release and run pulumi up again (the smoke test runs again).",
    );
    expect(error.init?.id).toBe(id);
    expect(error.init?.reasons).toEqual([error.message]);
    expect(error.init?.properties).toEqual(
      outputsOf(id as string, inputs, 1, { version: 1, passed: false, failures: 1 }),
    );
    expect(error.init?.properties.env).toEqual(secret(brokenEnv));
    await ep.delete(id as string, error.init?.properties ?? {});
    expect(await endpointsNamed("first")).toEqual([]);
  });

  it("a create whose rollout wait runs out of time: an init error with its id, the release untested, tested by the next up", async () => {
    // A plugin of its own, reaching the REST interface through a proxy that shows the new endpoint's
    // workers UNHEALTHY on its first read (a worker failing its health checks for a while).
    const own = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false, rolloutMs: 0 });
    const proxy = await new FaultProxy(`http://127.0.0.1:${own.emu.port}`).start();
    try {
      await own.configure({
        apiKey: secret(API_KEY),
        restUrl: `${proxy.url}/v2`,
        serverlessUrl: own.emu.serverlessUrl,
      });
      const ep = resourceCalls(own.rpc, TYPE, "slow");
      // rolloutTimeoutMs 0 (below what Check allows, as a state written before the bound): the
      // wait's deadline is over at its first read, which finds the worker UNHEALTHY once.
      const inputs = {
        ...(await ep.check(args("slow", { workers: { min: 1, max: 2 } }))).inputs,
        rolloutTimeoutMs: 0,
      };
      proxy.arm("GET", /^\/v2\/serverless\/[^/]+\/workers$/, {
        kind: "rewrite",
        edit: (list) => ({
          ...list,
          workers: (list.workers as Record<string, unknown>[]).map((w) => ({ ...w, status: "UNHEALTHY" })),
        }),
      });
      const error = await failure(() => ep.create(inputs));
      const id = error.init?.id as string;
      const ownService = new RunpodClient({
        apiKey: API_KEY,
        restUrl: own.emu.restUrl,
        serverlessUrl: own.emu.serverlessUrl,
        maxRetries: 0,
        rateLimits: false,
      });
      expect((await ownService.serverless.list()).filter((e) => e.name === "slow").map((e) => e.id)).toEqual([
        id,
      ]);
      expect(error.init?.reasons).toEqual([error.message]);
      expect(error.message.split("\n")[0]).toContain(
        `ServerlessEndpoint "slow" (id ${id}): the rollout of version 1 did not complete within rolloutTimeoutMs (0 ms)`,
      );
      expect(error.message.split("\n").at(-1)).toBe(
        "The release was not judged: its smoke test did not run. The next pulumi up waits for its rollout again and tests it.",
      );
      const props = error.init?.properties ?? {};
      expect([props.image, props.version, props.lastSmokeTest]).toEqual([
        "acme/api:1",
        1,
        {
          version: 1,
          passed: false,
          jobIds: [],
          failures: 0,
          timeline: ["not run: the rollout did not complete within rolloutTimeoutMs"],
        },
      ]);
      // The next up, the program unchanged: the diff alone (as after a refresh) plans an update, which
      // tests release 1 in place.
      expect((await ep.diff(id, props, inputs)).changes).toBe(D.DIFF_SOME);
      const tested = await ep.update(id, props, inputs);
      expect([tested.version, tested.lastSmokeTest]).toEqual([
        1,
        {
          version: 1,
          passed: true,
          jobIds: [expect.any(String)],
          failures: 0,
          timeline: [expect.stringMatching(/^\S+: IN_QUEUE [\d.]+ s -> COMPLETED [\d.]+ s$/)],
          costUsd: expect.any(Number),
        },
      ]);
      expect((await ep.diff(id, tested, inputs)).changes).toBe(D.DIFF_NONE);
    } finally {
      await proxy.close();
      const { stderr } = await own.close();
      expect(stderr).not.toContain(API_KEY);
    }
  });

  it("refuses in Check an endpoint whose ceiling is over its maxHourlyUsd, writing nothing", async () => {
    const ep = resourceCalls(rpc, TYPE, "costly");
    const refused = await ep.check(args("costly", { workers: { max: 4 }, maxHourlyUsd: 1 }));
    expect(refused.failures).toEqual([
      {
        property: "maxHourlyUsd",
        reason:
          `ServerlessEndpoint "costly": its hourly ceiling ${round(4 * rate)} USD/h (workers.max 4 × ${round(rate)} USD/h ` +
          "per worker, list prices) is over maxHourlyUsd 1 USD/h. Nothing was created or changed. Lower its " +
          "workers.max or the GPUs per worker, or choose cheaper pools, or raise maxHourlyUsd.",
      },
    ]);
    expect(await endpointsNamed("costly")).toEqual([]);
  });

  it("keeps a load balancer's smokeTest secret when its http probe has headers, as the class does", async () => {
    const lb = resourceCalls(rpc, TYPE, "lb");
    const lbArgs = (smokeTest: Record<string, unknown>) =>
      args("lb", {
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
        smokeTest,
      });
    const withHeaders = { http: { path: "/ping", headers: { "X-Api-Token": HEADER } } };
    const checked = await lb.check(lbArgs(withHeaders));
    expect(checked.failures).toEqual([]);
    expect(checked.inputs.smokeTest).toEqual(secret(withHeaders));
    const plainProbe = { http: { path: "/ping" } };
    expect((await lb.check(lbArgs(plainProbe))).inputs.smokeTest).toEqual(plainProbe);
  });

  it("never shows in a Check failure a value the program gave secret", async () => {
    const lb = resourceCalls(rpc, TYPE, "lb-secret");
    const hiddenPath = "probe-path-from-a-secret-41c9";
    const refused = await lb.check(
      args("lb-secret", {
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
        smokeTest: secret({ http: { path: hiddenPath } }),
      }),
    );
    expect(refused.failures).toEqual([
      {
        property: "",
        reason: 'smokeTest.http.path: path must be a string starting with "/", got "[redacted]"',
      },
    ]);
    expect(refused.inputs.smokeTest).toEqual(secret({ http: { path: hiddenPath } }));
  });
});

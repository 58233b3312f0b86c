/**
 * The native plugin serving JobRun over gRPC against the emulator: a smoke test of an endpoint
 * (made through the plugin too) that records the release it tested, run again when its trigger,
 * the endpoint's `version`, moves; a failed run as an init error carrying the JobRun's id and its
 * recorded outputs; `secretOutput`, `redact` and an http probe's `headers` kept secret as the class
 * keeps them; preview, refresh and destroy. Needs the build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
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

const API_KEY = "plugin-jobrun-key-9c8d7e";
const REDACTED = "plugin-jobrun-redact-6f5e4d";
const TYPE = "runpod-native:index:JobRun";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

describe("pulumi-resource-runpod-native: JobRun over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;
  let endpointId: string;
  let epInputs: Record<string, unknown>;
  let endpoint: { id: string; outs: Record<string, unknown> };
  const ep = () => resourceCalls(rpc, "runpod-native:index:ServerlessEndpoint", "api");
  const epArgs = (image: string) => ({
    name: "api",
    type: "QUEUE",
    image,
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: 1 },
  });
  /** The release the endpoint runs now. */
  const liveVersion = async () => (await service.serverless.releases(endpointId)).endpointVersion as number;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false, rolloutMs: 0 });
    ({ emu, rpc } = rig);
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrl, serverlessUrl: emu.serverlessUrl });
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrl, maxRetries: 0, rateLimits: false });
    // The endpoint the JobRuns test, made through the plugin as a program would make it.
    epInputs = (await ep().check(epArgs("acme/api:1"))).inputs;
    endpoint = await ep().create(epInputs);
    endpointId = endpoint.id;
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, REDACTED]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  /**
   * A passed run's outputs on `endpointVersion`: the arguments as given, the job as the emulator
   * ran it (it echoes the input) and the verdict; `extra` overrides (undefined: absent).
   */
  const recorded = (
    given: Record<string, unknown>,
    endpointVersion: number,
    extra: Record<string, unknown> = {},
  ) => {
    const outs: Record<string, unknown> = {
      ...given,
      passed: true,
      status: "COMPLETED",
      attempts: 1,
      jobId: expect.any(String),
      workerId: expect.stringMatching(new RegExp(`^${endpointId}-worker-`)),
      endpointVersion,
      output: { ping: 1 },
      // How often the run saw the job depends on its polls: first queued, last completed.
      timeline: expect.arrayContaining([
        { status: "IN_QUEUE", atMs: expect.any(Number) },
        { status: "COMPLETED", atMs: expect.any(Number) },
      ]),
      delayTime: expect.any(Number),
      executionTime: expect.any(Number),
      startedAt: expect.any(String),
      completedAt: expect.any(String),
      costUsd: expect.any(Number),
      ...extra,
    };
    for (const [k, v] of Object.entries(outs)) if (v === undefined) delete outs[k];
    return outs;
  };

  const submitted = () => Object.values(emu.stats().submitted).reduce((a, b) => a + b, 0);

  it("preview, up, a run again when the endpoint's release moves, refresh, destroy: each run records its release", async () => {
    expect(await liveVersion()).toBe(1);
    const smoke = resourceCalls(rpc, TYPE, "smoke");
    const args = (triggers: unknown[]) => ({
      endpointId,
      input: { ping: 1 },
      expect: { output: { ping: 1 } },
      triggers,
    });

    // preview: the endpoint's version is not known yet; nothing is submitted.
    const before = submitted();
    const previewed = await smoke.check(args([UNKNOWN]));
    expect(previewed).toEqual({ inputs: args([UNKNOWN]), failures: [] });
    expect(await smoke.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(submitted()).toBe(before);

    // up: one job on release 1, judged and recorded with the release it ran on.
    const inputs = (await smoke.check(args([1]))).inputs;
    expect(inputs).toEqual(args([1]));
    const made = await smoke.create(inputs);
    expect(made).toEqual({ id: expect.stringMatching(UUID), outs: recorded(inputs, 1) });
    expect(submitted()).toBe(before + 1);
    expect((await smoke.diff(made.id, made.outs, inputs)).changes).toBe(D.DIFF_NONE);

    // the endpoint's release 2: the trigger moves, the JobRun runs again under the same id on it.
    const released = await ep().update(
      endpoint.id,
      endpoint.outs,
      (await ep().check(epArgs("acme/api:2"), epInputs)).inputs,
    );
    expect(released.version).toBe(2);
    const v2 = (await smoke.check(args([2]), inputs)).inputs;
    const planned = await smoke.diff(made.id, made.outs, v2, inputs);
    expect([planned.changes, planned.replaces, planned.detailed]).toEqual([
      D.DIFF_SOME,
      [],
      { triggers: K.UPDATE },
    ]);
    const rerun = await smoke.update(made.id, made.outs, v2);
    expect(rerun).toEqual(recorded(v2, 2));
    expect(rerun.jobId).not.toBe(made.outs.jobId);
    expect(submitted()).toBe(before + 2);

    // refresh: the recorded job read back, unchanged; destroy: a finished job needs nothing.
    expect(await smoke.read(made.id, rerun, v2)).toEqual({ id: made.id, props: rerun });
    await smoke.delete(made.id, rerun);
    expect(submitted()).toBe(before + 2);
  });

  it("a run that fails is an init error carrying the JobRun's id and its record; the next up runs it again", async () => {
    const smoke = resourceCalls(rpc, TYPE, "wrong");
    const inputs = (await smoke.check({ endpointId, input: { ping: 1 }, expect: { output: { ping: 2 } } }))
      .inputs;
    const error = await failure(() => smoke.create(inputs));
    const jobId = error.init?.properties.jobId;
    expect(error.message.split("\n").slice(0, 3)).toEqual([
      `JobRun failed on endpoint ${endpointId}, job ${jobId}: the job ended COMPLETED but its output does not ` +
        "contain expect.output (1 difference):",
      "  output.ping: expected 2, got 1",
      "Status: COMPLETED; attempts: 1",
    ]);
    expect(error.init?.id).toMatch(UUID);
    expect(error.init?.reasons).toEqual([error.message]);
    // Recorded as failed, with the tail of the log of the worker that ran it.
    expect(error.init?.properties).toEqual(
      recorded(inputs, await liveVersion(), {
        passed: false,
        workerLogTail: expect.arrayContaining([
          expect.stringMatching(new RegExp(` container job ${jobId} completed after \\d+ ms$`)),
        ]),
      }),
    );
    // The engine keeps the inputs sent with the failed create as the old inputs.
    const again = await smoke.diff(error.init?.id ?? "", error.init?.properties ?? {}, inputs, inputs);
    expect([again.changes, again.replaces, again.detailed]).toEqual([D.DIFF_SOME, [], {}]);
  });

  it("never shows in a failed run's error a value the program gave secret (the worker echoes its input)", async () => {
    const smoke = resourceCalls(rpc, TYPE, "echoed");
    const hidden = "prompt-from-a-secret-93be";
    const checked = await smoke.check({
      endpointId,
      input: secret({ ping: hidden }),
      expect: { output: { ping: "something else" } },
    });
    expect(checked.inputs.input).toEqual(secret({ ping: hidden }));
    const error = await failure(() => smoke.create(checked.inputs));
    expect(error.message.split("\n")[1]).toBe('  output.ping: expected "something else", got "[redacted]"');
    expect(error.message).not.toContain(hidden);
    expect(error.init?.reasons).toEqual([error.message]);
    // The record the engine keeps holds the real input, secret.
    expect(error.init?.properties.input).toEqual(secret({ ping: hidden }));
  });

  it("keeps secret what the class keeps secret: redact, the output with secretOutput, an http probe with headers", async () => {
    const smoke = resourceCalls(rpc, TYPE, "secret");
    const given = { endpointId, input: { ping: 1 }, secretOutput: true, redact: [REDACTED] };
    const inputs = (await smoke.check(given)).inputs;
    expect(inputs).toEqual({ ...given, redact: secret([REDACTED]) });
    const made = await smoke.create(inputs);
    expect(made.outs).toEqual(
      recorded(inputs, await liveVersion(), {
        output: secret({ ping: 1 }),
        redact: secret([REDACTED]),
      }),
    );
    expect(await smoke.read(made.id, made.outs, inputs)).toEqual({ id: made.id, props: made.outs });

    // secretOutput: false is left out, as the class leaves it out; http is secret only with headers.
    const probe = resourceCalls(rpc, TYPE, "probe");
    const http = { path: "/ping", headers: { "X-Api-Token": REDACTED } };
    expect(await probe.check({ endpointId, http, secretOutput: false })).toEqual({
      inputs: { endpointId, http: secret(http) },
      failures: [],
    });
    expect((await probe.check({ endpointId, http: { path: "/ping" } })).inputs).toEqual({
      endpointId,
      http: { path: "/ping" },
    });
  });
});

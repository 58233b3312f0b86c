/**
 * `Cancel` over gRPC (the engine's first Ctrl-C, `SignalCancellation`, pkg/host/host.go) while a
 * serverless wait is in flight: a guarded endpoint's create waiting for its smoke-test job, and a
 * JobRun waiting for its job. Each ends now as an init error carrying its id (so the engine keeps
 * it in the state), however long its own `timeoutMs` is, and the job it was waiting for is
 * cancelled on the service, so it stops spending credits. Each test starts its own plugin: a
 * cancellation is for the process's life. Needs the build.
 */
import { describe, expect, it } from "vitest";
import {
  cancel,
  cancelRigPerTest,
  ENDPOINT,
  endpointArgs,
  HOUR_MS,
  LONG_JOB,
  QUICK_SMOKE,
  untilJobInProgress,
  untilLogged,
} from "./cancelKit";
import { failure, type PluginRig, pb, resourceCalls } from "./pluginKit";

const API_KEY = "plugin-cancel-serverless-key-7d41a2";
const JOB_RUN = "runpod-native:index:JobRun";
const D = pb.DiffResponse.DiffChanges;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("pulumi-resource-runpod-native: Cancel of serverless waits", () => {
  const rigs = cancelRigPerTest(API_KEY);

  /**
   * The test's rig. `rolloutMs`: how long an update's stale workers serve on (the emulator's
   * rollout). @default 0 (rollouts at once)
   */
  const start = (rolloutMs = 0) => rigs.start({ emulator: { rolloutMs } });

  /**
   * Asserts the init error's smoke-test record of release `version`: not passed, its one job
   * cancelled unfinished (IN_PROGRESS shows when a status answer came between the job's start and
   * the cancel). Returns the job's id and the record.
   */
  function cancelledSmokeTest(props: Record<string, unknown>, version: number) {
    const record = props.lastSmokeTest as { jobIds: string[]; timeline: string[] };
    const [jobId] = record.jobIds;
    expect(record).toEqual({
      version,
      passed: false,
      jobIds: [expect.any(String)],
      failures: 0,
      timeline: [
        expect.stringMatching(
          new RegExp(
            `^${jobId}: IN_QUEUE [\\d.]+ s (-> IN_PROGRESS [\\d.]+ s )?-> CANCELLED [\\d.]+ s \\(not finished\\)$`,
          ),
        ),
      ],
    });
    return { jobId, record };
  }

  it("a guarded endpoint's create waiting for its smoke test: an init error with its id, the job cancelled, the release untested", async () => {
    const { rig, service } = await start();
    const ep = resourceCalls(rig.rpc, ENDPOINT, "api");
    const checked = await ep.check(endpointArgs("api", { smokeTest: LONG_JOB }));
    expect(checked.failures).toEqual([]);
    const inputs = checked.inputs;
    const creating = failure(() => ep.create(inputs));
    // The endpoint exists, rolled out, and its smoke-test job runs: now the engine cancels.
    const named = async () => (await service.serverless.list()).find((e) => e.name === "api")?.id;
    const id = await untilJobInProgress(service, named);
    await cancel(rig);

    const error = await creating;
    expect(error.init?.id).toBe(id);
    expect(error.init?.reasons).toEqual([error.message]);
    const props = error.init?.properties ?? {};
    // The release is recorded as not passed (not judged): the next up tests it again.
    const { jobId, record } = cancelledSmokeTest(props, 1);
    const lastSeen = record.timeline[0].includes("IN_PROGRESS") ? "IN_PROGRESS" : "IN_QUEUE";
    // What runs: the arguments as given, at release 1, as a refresh reads it.
    expect([props.name, props.image, props.version, props.smokeTest]).toEqual([
      "api",
      "acme/api:1",
      1,
      LONG_JOB,
    ]);
    expect(await ep.read(id, props, inputs)).toEqual({ id, props });
    const lines = error.message.split("\n");
    expect(lines[0]).toBe(
      `ServerlessEndpoint "api" (id ${id}): the smoke test of release version 1 did not finish: ` +
        "the deployment was cancelled (Ctrl-C).",
    );
    expect(lines[1]).toBe("Where the first unfinished job stopped:");
    expect(lines[2]).toBe(
      `Smoke-test job ${jobId}: the job had not finished when the deployment was cancelled (Ctrl-C); last ` +
        `status ${lastSeen}. JobRun cancelled the job on the service (status CANCELLED), so it stops spending credits.`,
    );
    expect(lines.at(-2)).toBe(`Smoke-test jobs: ${record.timeline[0]}`);
    expect(lines.at(-1)).toBe(
      "The release was not judged and not rolled back: it serves, untested. The state records its smoke test " +
        "as not passed, so the next pulumi up tests it again.",
    );
    expect(error.message).not.toContain("Worker log");
    // The service: the endpoint is still there, at its one release; its smoke-test job was cancelled.
    expect((await service.serverless.list()).filter((e) => e.name === "api").map((e) => e.id)).toEqual([id]);
    expect((await service.serverless.releases(id as string)).endpointVersion).toBe(1);
    expect((await service.endpoint(id as string).status(jobId)).status).toBe("CANCELLED");
    expect((await service.endpoint(id as string).health()).jobs).toMatchObject({ inProgress: 0, inQueue: 0 });
    // The next up (a new plugin, the engine's state): planned as an update, which tests the release.
    expect((await ep.diff(id as string, props, inputs)).changes).toBe(D.DIFF_SOME);
  });

  /** A guarded endpoint made through the plugin, its quick smoke test passed on release 1. */
  async function guarded(rpc: PluginRig["rpc"]) {
    const ep = resourceCalls(rpc, ENDPOINT, "api");
    const v1 = (await ep.check(endpointArgs("api", { smokeTest: QUICK_SMOKE, workers: { min: 1, max: 1 } })))
      .inputs;
    const made = await ep.create(v1);
    expect((made.outs.lastSmokeTest as { passed: boolean }).passed).toBe(true);
    return { ep, v1, made };
  }

  it("a guarded endpoint's update waiting for its rollout: an init error with its id, the release untested, nothing rolled back", async () => {
    // The emulator's stale workers serve on for an hour: the update's rollout wait cannot end by itself.
    const { rig, service } = await start(HOUR_MS);
    const { ep, v1, made } = await guarded(rig.rpc);
    const v2 = (await ep.check({ ...v1, image: "acme/api:2" }, v1)).inputs;
    const updating = failure(() => ep.update(made.id, made.outs, v2));
    await untilLogged(rig, "waiting for version 2 to roll out");
    await cancel(rig);

    const error = await updating;
    expect(error.init?.id).toBe(made.id);
    expect(error.init?.reasons).toEqual([error.message]);
    expect(error.message.split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^ServerlessEndpoint "api" \\(id ${made.id}\\): the rollout of version 2 was not complete when the ` +
            "deployment was cancelled \\(Ctrl-C\\); 1 of 1 workers still run an older version\\. " +
            "Workers: 1 (IDLE|RUNNING) on version 1\\.$",
        ),
      ),
      "The endpoint was changed and is recorded in the state; run pulumi up again: it waits for the rollout again.",
      "The release was not judged: its smoke test did not run and it was not rolled back. The next pulumi up " +
        "waits for its rollout again and tests it.",
    ]);
    // What runs: release 2, recorded untested (not passed on it), as a refresh reads it.
    const props = error.init?.properties ?? {};
    expect([props.image, props.version, props.lastSmokeTest]).toEqual([
      "acme/api:2",
      2,
      {
        version: 2,
        passed: false,
        jobIds: [],
        failures: 0,
        timeline: ["not run: the deployment was cancelled (Ctrl-C)"],
      },
    ]);
    expect(await ep.read(made.id, props, v2)).toEqual({ id: made.id, props });
    // Nothing was rolled back: release 2 is the service's last.
    const releases = await service.serverless.releases(made.id);
    expect([releases.endpointVersion, (await service.serverless.get(made.id)).image]).toEqual([
      2,
      "acme/api:2",
    ]);
    // The next up plans an update, which waits for the rollout and tests release 2.
    expect((await ep.diff(made.id, props, v2)).changes).toBe(D.DIFF_SOME);
  });

  it("a guarded endpoint's update waiting for its smoke test: the job cancelled, the release neither judged nor rolled back", async () => {
    const { rig, service } = await start();
    const { ep, v1, made } = await guarded(rig.rpc);
    // Release 2 with a smoke test whose job runs for an hour; onFailure is "rollback" (the default).
    const v2 = (await ep.check({ ...v1, image: "acme/api:2", smokeTest: LONG_JOB }, v1)).inputs;
    const updating = failure(() => ep.update(made.id, made.outs, v2));
    await untilJobInProgress(service, async () => made.id);
    await cancel(rig);

    const error = await updating;
    expect(error.init?.id).toBe(made.id);
    expect(error.init?.reasons).toEqual([error.message]);
    const props = error.init?.properties ?? {};
    const { jobId } = cancelledSmokeTest(props, 2);
    const lines = error.message.split("\n");
    expect([lines[0], lines[1], lines.at(-1)]).toEqual([
      `ServerlessEndpoint "api" (id ${made.id}): the smoke test of release version 2 did not finish: ` +
        "the deployment was cancelled (Ctrl-C).",
      "Where the first unfinished job stopped:",
      "The release was not judged and not rolled back: it serves, untested. The state records its smoke test " +
        "as not passed, so the next pulumi up tests it again.",
    ]);
    expect(lines[2]).toContain("JobRun cancelled the job on the service (status CANCELLED)");
    // What runs is release 2, as a refresh reads it: no rollback release was made.
    expect([props.image, props.version]).toEqual(["acme/api:2", 2]);
    expect(await ep.read(made.id, props, v2)).toEqual({ id: made.id, props });
    expect((await service.serverless.releases(made.id)).endpointVersion).toBe(2);
    expect((await service.endpoint(made.id).status(jobId)).status).toBe("CANCELLED");
    expect((await service.endpoint(made.id).health()).jobs).toMatchObject({ inProgress: 0, inQueue: 0 });
    expect((await ep.diff(made.id, props, v2)).changes).toBe(D.DIFF_SOME);
  });

  it("a JobRun waiting for its job: an init error with the JobRun's id and its record, the job cancelled", async () => {
    const { rig, service } = await start();
    const ep = resourceCalls(rig.rpc, ENDPOINT, "worker");
    const endpoint = await ep.create((await ep.check(endpointArgs("worker"))).inputs);
    const run = resourceCalls(rig.rpc, JOB_RUN, "train");
    const args = { endpointId: endpoint.id, ...LONG_JOB };
    const checked = await run.check(args);
    expect(checked).toEqual({ inputs: args, failures: [] });
    const running = failure(() => run.create(checked.inputs));
    await untilJobInProgress(service, async () => endpoint.id);
    await cancel(rig);

    const error = await running;
    expect(error.init?.id).toMatch(UUID);
    expect(error.init?.reasons).toEqual([error.message]);
    // The job's worker and IN_PROGRESS show when a status answer came between its start and the cancel.
    const { workerId, ...props } = error.init?.properties ?? {};
    const jobId = props.jobId as string;
    const statuses = (props.timeline as { status: string }[]).map((t) => t.status);
    const lastSeen = statuses.includes("IN_PROGRESS") ? "IN_PROGRESS" : "IN_QUEUE";
    expect(props).toEqual({
      ...args,
      passed: false,
      status: "CANCELLED",
      attempts: 1,
      jobId: expect.any(String),
      startedAt: expect.any(String),
      timeline: [
        { status: "IN_QUEUE", atMs: expect.any(Number) },
        ...(lastSeen === "IN_PROGRESS" ? [{ status: "IN_PROGRESS", atMs: expect.any(Number) }] : []),
        { status: "CANCELLED", atMs: expect.any(Number) },
      ],
    });
    expect([undefined, expect.stringMatching(new RegExp(`^${endpoint.id}-worker-`))]).toContainEqual(
      workerId,
    );
    expect(error.message.split("\n")).toEqual([
      `JobRun failed on endpoint ${endpoint.id}, job ${jobId}: the job had not finished when the deployment was ` +
        `cancelled (Ctrl-C); last status ${lastSeen}. JobRun cancelled the job on the service (status CANCELLED), ` +
        "so it stops spending credits.",
      "Status: CANCELLED; attempts: 1",
      expect.stringMatching(/^Timeline: IN_QUEUE [\d.]+ s (-> IN_PROGRESS [\d.]+ s )?-> CANCELLED [\d.]+ s$/),
      "Hint: Run `pulumi up` again to start a new job.",
    ]);
    // The service: the job was cancelled; the endpoint is untouched.
    expect((await service.endpoint(endpoint.id).status(jobId)).status).toBe("CANCELLED");
    expect((await service.endpoint(endpoint.id).health()).jobs).toMatchObject({ inProgress: 0, inQueue: 0 });
    expect((await service.serverless.releases(endpoint.id)).endpointVersion).toBe(1);
  });

  it("a JobRun waiting for the endpoint's rollout before its job: fails at once, nothing submitted, nothing to keep", async () => {
    // The emulator's stale workers serve on for an hour: the JobRun's rollout wait cannot end by itself.
    const { rig } = await start(HOUR_MS);
    const ep = resourceCalls(rig.rpc, ENDPOINT, "worker");
    const v1 = (await ep.check(endpointArgs("worker", { workers: { min: 1, max: 1 } }))).inputs;
    const endpoint = await ep.create(v1);
    await ep.update(endpoint.id, endpoint.outs, { ...v1, image: "acme/api:2", rollout: "ignore" });
    const run = resourceCalls(rig.rpc, JOB_RUN, "train");
    const args = { endpointId: endpoint.id, ...LONG_JOB };
    const inputs = (await run.check(args)).inputs;
    const running = failure(() => run.create(inputs));
    await untilLogged(rig, "waiting for version 2 to roll out");
    await cancel(rig);

    // No job exists, so there is no JobRun to keep: a plain failure, as when its timeoutMs passes
    // there (the engine's contract allows "a creation error"); the next up creates it.
    const error = await running;
    expect([error.init, error.message]).toEqual([
      undefined,
      `JobRun did not submit a job to endpoint ${endpoint.id}: the deployment was cancelled (Ctrl-C) while it ` +
        `waited for the rollout (endpoint ${endpoint.id} was still rolling out version 2: 1 of 1 workers ran an ` +
        "older version). No job was created. Hint: run `pulumi up` again to submit one.",
    ]);
    expect(rig.emu.stats().submitted[endpoint.id] ?? 0).toBe(0);
  });
});

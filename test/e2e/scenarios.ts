/**
 * End-to-end scenarios over the examples, written once and run through two drivers with the same
 * surface: the deploy harness (`test/support/deployHarness.mts`, always) and the real `pulumi`
 * CLI with a local file backend (`test/support/pulumiCli.mts`, when it is on PATH).
 *
 * Each scenario deploys one example against an in-process emulator started by
 * {@link startE2eEmulator}, changes an input, deploys again, refreshes and destroys, asserting the
 * per-resource ops, the outputs and what exists on the emulator. Every result and every stored
 * state is appended to `transcript`, for the secret scans.
 */
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { createDeployHarness } from "../support/deployHarness.mts";
import { CliStack } from "../support/pulumiCli.mts";

export const EXAMPLES_DIR = path.resolve(__dirname, "..", "..", "examples");
/** Programs written for the scenarios only (not examples users copy). */
export const PROGRAMS_DIR = path.join(__dirname, "programs");

/** A stack config value: plaintext, or `{ secret }`. */
export type ConfigValue = string | { secret: string };

/** What a driver's `up`/`refresh`/`destroy` returns (the deploy harness's `DeployResult`). */
export interface StepResult {
  ok: boolean;
  outputs: Record<string, unknown>;
  secretOutputs: string[];
  resources: Array<{ urn: string; id: string; op: string; error?: string }>;
  errors: string[];
  logs: string[];
}

/** One stack of one example program, driven by the harness or by the CLI. */
export interface Driver {
  /** `pulumi up --yes`: previews first, as a user's `pulumi up` does. */
  up(): Promise<StepResult>;
  /** `pulumi preview`. */
  preview(): Promise<StepResult>;
  refresh(): Promise<StepResult>;
  destroy(): Promise<StepResult>;
  setConfig(key: string, value: ConfigValue | undefined): void | Promise<void>;
  stackOutputs(opts?: { showSecrets?: boolean }): Promise<Record<string, unknown>>;
  /** Everything stored, as stored (secrets must be ciphertext there). */
  rawState(): Promise<string>;
  dispose(): Promise<void>;
}

/** Makes a driver for an example directory with the given stack config. */
export type MakeDriver = (program: string, config: Record<string, ConfigValue>) => Promise<Driver>;

const PASSPHRASE = "e2e passphrase";

/**
 * The scenarios' waits: the emulator's old workers serve {@link E2E_ROLLOUT_MS} after a release
 * (its default is 3 s) before they are replaced one at a time (0.5 s each, as by default), and the
 * provider host reads a rollout and a pod's readiness every {@link E2E_POLL_MS} (the provider's
 * own: 1 s). What happens, and in what order, is the same; only the seconds of plain waiting go.
 */
export const E2E_ROLLOUT_MS = 150;
/** See {@link E2E_ROLLOUT_MS}. */
export const E2E_POLL_MS = 50;
/**
 * How long an `SshKey` edit waits after its verified write before reading the account's keys once
 * more, ms (`RUNPOD_SSH_KEY_SETTLE_MS` in the host's environment; the provider's own: 2 s). The
 * settle read still happens, after a shorter wait; `sshKeySettle.test.ts` holds the interval's rule.
 */
export const E2E_SSH_KEY_SETTLE_MS = 50;

/** The harness's environment: this process's without RUNPOD_*, with {@link E2E_SSH_KEY_SETTLE_MS}. */
function harnessEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RUNPOD_")));
  return { ...env, RUNPOD_SSH_KEY_SETTLE_MS: String(E2E_SSH_KEY_SETTLE_MS) };
}

/** Drivers through the deploy harness, in the temp project with the packed package. */
export const harnessDriver =
  (projectDir: string): MakeDriver =>
  (program, config) =>
    createDeployHarness({
      projectDir,
      program,
      passphrase: PASSPHRASE,
      config,
      env: harnessEnv(),
      pollMs: E2E_POLL_MS,
    });
// (DeployHarness.up previews first by default, as `pulumi up` does.)

/** Drivers through the `pulumi` CLI (local file backend inside the program copy). */
export const cliDriver =
  (projectDir: string): MakeDriver =>
  (program, config) =>
    CliStack.create({ projectDir, program, passphrase: PASSPHRASE, config });

/** The network volumes the emulator starts with: two named "models". */
export const VOLUMES = {
  eu: { id: "agv6w2qcg7", name: "models", size: 100, dataCenterId: "EU-RO-1" },
  us: { id: "q3ykc5r0zv", name: "models", size: 50, dataCenterId: "US-KS-2" },
};

/** The endpoint the smoke-test scenario tests and redeploys (the built-in worker). */
export const SMOKE_ENDPOINT = "smoke";

/** The error the `flaky` endpoint's worker fails with while broken. */
export const WORKER_ERROR = "worker crashed: model weights not found at /runpod-volume/models";

/** An emulator for the scenarios, and the switch that breaks the `flaky` endpoint. */
export interface E2eEmulator {
  emu: RunningEmulator;
  /** While true, jobs on endpoint `flaky` end FAILED with {@link WORKER_ERROR}. */
  setBroken(broken: boolean): void;
  /** Registry auths on the emulator (REST v1 list). */
  registryAuths(): Promise<Array<{ id: string; name: string }>>;
  /** Jobs queued or running on an endpoint (`/health`). */
  activeJobs(endpointId: string): Promise<number>;
  /** Redeploys an endpoint with `env` over REST v2 (a new release, rolled out worker by worker). */
  redeploy(endpointId: string, env: Record<string, string>): Promise<void>;
  /** The version each listed worker of an endpoint runs, by worker id (REST v2 `/workers`). */
  workerVersions(endpointId: string): Promise<Record<string, number | null | undefined>>;
  /**
   * Keeps the next rollout of an endpoint from ending: a long job (2 minutes at most) occupies one
   * of its workers, which stays on the release it runs until the job ends, while the endpoint's
   * other old workers keep taking jobs. `release()` cancels the job; the rollout then goes on.
   */
  holdRollout(endpointId: string): Promise<{ release(): Promise<void> }>;
  /** REST management requests the emulator has received (v1 and v2), e.g. reads of the workers. */
  managementRequests(): number;
  close(): Promise<void>;
}

/**
 * Starts an emulator with {@link VOLUMES}, the built-in `echo` endpoint, the `flaky` one, and
 * `smoke` (built-in worker) that only the smoke-test scenario redeploys, so the versions other
 * scenarios see on `echo` do not depend on the order the tests run in. Its rollouts keep old
 * workers {@link E2E_ROLLOUT_MS}.
 */
export async function startE2eEmulator(): Promise<E2eEmulator> {
  let broken = false;
  const emu = await startEmulator({
    rolloutMs: E2E_ROLLOUT_MS,
    volumes: [VOLUMES.eu, VOLUMES.us],
    endpoints: ["echo", "flaky", SMOKE_ENDPOINT],
    handlers: {
      flaky: async (job) => {
        if (broken) throw new Error(WORKER_ERROR);
        return job.input.output ?? job.input;
      },
    },
  });
  const auth = { authorization: `Bearer ${emu.apiKey}` };
  const client = new RunpodClient({
    apiKey: emu.apiKey,
    restUrl: emu.restUrlV2,
    serverlessUrl: emu.serverlessUrl,
  });
  return {
    emu,
    setBroken: (b) => {
      broken = b;
    },
    async redeploy(endpointId, env) {
      const res = await fetch(`${emu.restUrlV2}/serverless/${endpointId}`, {
        method: "PATCH",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ env }),
      });
      expect(res.status).toBe(200);
    },
    async registryAuths() {
      const res = await fetch(`${emu.restUrlV1}/containerregistryauth`, { headers: auth });
      expect(res.status).toBe(200);
      return (await res.json()) as Array<{ id: string; name: string }>;
    },
    async activeJobs(endpointId) {
      const res = await fetch(`${emu.serverlessUrl}/v2/${endpointId}/health`, { headers: auth });
      expect(res.status).toBe(200);
      const { jobs } = (await res.json()) as { jobs: { inQueue: number; inProgress: number } };
      return jobs.inQueue + jobs.inProgress;
    },
    async workerVersions(endpointId) {
      const { workers } = await client.serverless.workers(endpointId);
      return Object.fromEntries(workers.map((w) => [w.id, w.version]));
    },
    async holdRollout(endpointId) {
      const endpoint = client.endpoint(endpointId);
      const job = await endpoint.run({ input: { sleepMs: 120_000 } });
      let { status } = job;
      for (let polls = 0; status === "IN_QUEUE" && polls < 200; polls++) {
        await sleep(25);
        ({ status } = await endpoint.status(job.id));
      }
      expect(status).toBe("IN_PROGRESS");
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          await endpoint.cancel(job.id);
        },
      };
    },
    managementRequests: () => emu.stats().requestsByInterface.management,
    close: () => emu.close(),
  };
}

/**
 * An emulator whose API key can be rotated: `rotateKey()` stops it and starts it again on the same
 * port and state file with a new key only (the old one then gets 401), as a user's key rotation.
 */
export async function startRotatingEmulator(): Promise<
  Pick<E2eEmulator, "registryAuths" | "close"> & { emu: RunningEmulator; rotateKey(): Promise<string> }
> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const os = await import("node:os");
  const dir = await mkdtemp(path.join(os.tmpdir(), "e2e-rotate-"));
  const stateFile = path.join(dir, "emulator-state.json");
  let n = 1;
  const start = (port: number) =>
    startEmulator({ port, stateFile, apiKeys: [`rotating-key-${n}-${randomBytes(6).toString("hex")}`] });
  let emu = await start(0);
  const port = Number(new URL(emu.serverlessUrl).port);
  return {
    get emu() {
      return emu;
    },
    async rotateKey() {
      await emu.close();
      n++;
      emu = await start(port);
      return emu.apiKey;
    },
    async registryAuths() {
      const res = await fetch(`${emu.restUrlV1}/containerregistryauth`, {
        headers: { authorization: `Bearer ${emu.apiKey}` },
      });
      expect(res.status).toBe(200);
      return (await res.json()) as Array<{ id: string; name: string }>;
    },
    async close() {
      await emu.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The emulator's connection settings as stack config (the key as a secret). REST v2 is the
 * default dialect, as it is for users; `"v1"` points the stack at the older interface.
 */
export function runpodConfig(emu: RunningEmulator, dialect: "v1" | "v2" = "v2"): Record<string, ConfigValue> {
  return {
    "runpod:apiKey": { secret: emu.apiKey },
    "runpod:restUrl": dialect === "v1" ? emu.restUrlV1 : emu.restUrlV2,
    "runpod:serverlessUrl": emu.serverlessUrl,
  };
}

/**
 * `name:op` per resource, sorted (the CLI and the harness may finish steps in another order). A
 * replacement is one `replace`: the harness also lists the old half's delete at the end of the run.
 */
export function ops(r: StepResult): string[] {
  const byUrn = new Map<string, string>();
  for (const x of r.resources) {
    if (x.op === "delete" && byUrn.get(x.urn) === "replace") continue;
    byUrn.set(x.urn, x.op);
  }
  return [...byUrn].map(([urn, op]) => `${urn.split("::").pop()}:${op}`).sort();
}

/** Everything a run left behind, for the secret scans. */
export type Transcript = string[];

/** Runs one step, records its result and the stored state in `transcript`. */
async function record(
  transcript: Transcript,
  driver: Driver,
  step: Promise<StepResult>,
): Promise<StepResult> {
  const result = await step;
  transcript.push(JSON.stringify(result), await driver.rawState());
  return result;
}

/**
 * A recorder for one driver's runs: `step(run)` awaits a run and records its result and the stored
 * state in `transcript`, for the secret scan at the end ({@link expectNoSecrets}).
 */
export function recorder(driver: Driver): {
  transcript: Transcript;
  step: (run: Promise<StepResult>) => Promise<StepResult>;
} {
  const transcript: Transcript = [];
  return { transcript, step: (run) => record(transcript, driver, run) };
}

/** `<prefix>-<8 hex digits>`: a name no other run uses. */
export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

/**
 * registry-auth: create, unchanged up, password change → replace (the old credential deleted
 * first: the name stays), refresh, destroy (no credential left).
 */
export async function registryAuthScenario(make: MakeDriver, e: E2eEmulator, password: string) {
  const transcript: Transcript = [];
  const name = unique("e2e-ghcr");
  const d = await make(path.join(EXAMPLES_DIR, "registry-auth"), {
    ...runpodConfig(e.emu, "v1"), // the older interface; the demo covers v2
    "runpod-registry-auth:registryAuthName": name,
    "runpod-registry-auth:registryUsername": "ci-bot",
    "runpod-registry-auth:registryPassword": { secret: password },
  });
  try {
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);
    expect(ops(first)).toEqual(["ghcr:create"]);
    const firstId = first.outputs.registryAuthId as string;
    expect(await e.registryAuths()).toEqual([expect.objectContaining({ id: firstId, name })]);

    const again = await record(transcript, d, d.up());
    expect(again.errors).toEqual([]);
    expect(ops(again)).toEqual(["ghcr:same"]);
    expect(again.outputs.registryAuthId).toBe(firstId);

    await d.setConfig("runpod-registry-auth:registryPassword", { secret: `${password}-rotated` });
    const rotated = await record(transcript, d, d.up());
    expect(rotated.errors).toEqual([]);
    expect(ops(rotated)).toEqual(["ghcr:replace"]);
    const secondId = rotated.outputs.registryAuthId as string;
    expect(secondId).not.toBe(firstId);
    expect(await e.registryAuths()).toEqual([expect.objectContaining({ id: secondId, name })]);

    const refreshed = await record(transcript, d, d.refresh());
    expect(refreshed.errors).toEqual([]);
    expect(ops(refreshed)).toEqual(["ghcr:same"]);
    expect((await d.stackOutputs()).registryAuthId).toBe(secondId);

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(ops(destroyed)).toEqual(["ghcr:delete"]);
    expect(await e.registryAuths()).toEqual([]);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/**
 * volume-lookup: the EU-RO-1 "models" volume, then the US-KS-2 one after a config change, a
 * clear error for a name that does not exist, refresh and destroy (no resources, volumes kept).
 */
export async function volumeLookupScenario(make: MakeDriver, e: E2eEmulator) {
  const transcript: Transcript = [];
  const d = await make(path.join(EXAMPLES_DIR, "volume-lookup"), runpodConfig(e.emu, "v1"));
  try {
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);
    expect(first.resources).toEqual([]);
    expect(first.outputs).toEqual({
      volumeId: VOLUMES.eu.id,
      volumeSizeGb: VOLUMES.eu.size,
      volumeDataCenter: "EU-RO-1",
    });

    await d.setConfig("runpod-volume-lookup:dataCenterId", "US-KS-2");
    const moved = await record(transcript, d, d.up());
    expect(moved.errors).toEqual([]);
    expect(moved.outputs).toEqual({
      volumeId: VOLUMES.us.id,
      volumeSizeGb: VOLUMES.us.size,
      volumeDataCenter: "US-KS-2",
    });

    await d.setConfig("runpod-volume-lookup:volumeName", "no-such-volume");
    const missing = await record(transcript, d, d.up());
    expect(missing.ok).toBe(false);
    expect(missing.errors.join("\n")).toMatch(/no-such-volume/);
    // The failed update keeps the last good outputs.
    expect((await d.stackOutputs()).volumeId).toBe(VOLUMES.us.id);
    await d.setConfig("runpod-volume-lookup:volumeName", undefined);

    const refreshed = await record(transcript, d, d.refresh());
    expect(refreshed.errors).toEqual([]);
    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(destroyed.resources).toEqual([]);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/** What the smoke-test example answers on the emulator: its default input's `output`. */
export const SMOKE_OUTPUT = { text: "OK", tokens: 2 };

/** The statuses of a JobRun's `timeline` output, in order. */
const statuses = (timeline: unknown) => (timeline as Array<{ status: string }>).map((t) => t.status);

/**
 * smoke-test: the job runs on create, on the endpoint's current release (`endpointVersion`, the
 * lookup's version); not on an unchanged up; again (in-place update, same resource id, a new job)
 * when the endpoint is redeployed over REST v2 (its trigger is the lookup's `version`), after
 * waiting for the rollout, on a worker of the new release; not on refresh; destroy leaves no job
 * queued or running.
 *
 * The trigger is the endpoint's own version (not a hand-bumped config value), so the re-run comes
 * from a redeploy, as it does for users.
 */
export async function smokeTestScenario(make: MakeDriver, e: E2eEmulator) {
  const transcript: Transcript = [];
  const submitted = () => e.emu.stats().submitted[SMOKE_ENDPOINT] ?? 0;
  const d = await make(path.join(EXAMPLES_DIR, "smoke-test"), {
    ...runpodConfig(e.emu),
    "runpod-smoke-test:endpointId": SMOKE_ENDPOINT,
  });
  let hold: { release(): Promise<void> } | undefined;
  try {
    const before = submitted();
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);
    expect(ops(first)).toEqual(["smoke:create"]);
    expect(first.outputs).toMatchObject({ jobStatus: "COMPLETED", jobOutput: SMOKE_OUTPUT });
    const version = first.outputs.deployedVersion as number;
    expect(version).toEqual(expect.any(Number));
    expect(first.outputs.endpointVersion).toBe(version);
    expect(first.outputs.workerId).toEqual(expect.any(String));
    expect(statuses(first.outputs.jobTimeline)).not.toContain("ROLLOUT_WAIT"); // nothing was rolling out
    expect(submitted()).toBe(before + 1);
    const resourceId = first.resources[0]!.id;

    const again = await record(transcript, d, d.up());
    expect(ops(again)).toEqual(["smoke:same"]);
    expect(again.outputs.jobId).toBe(first.outputs.jobId);
    expect(submitted()).toBe(before + 1);

    // A redeploy by another tool: a new release, rolled out worker by worker. A long job holds one
    // old worker, so the rollout cannot end before the scenario lets it, while two old workers
    // sit idle, ready to take a job a smoke test would send at once.
    hold = await e.holdRollout(SMOKE_ENDPOINT);
    await e.redeploy(SMOKE_ENDPOINT, { MODEL_REVISION: "2" });
    const released = version + 1;
    const submittedBefore = submitted();
    const reads = e.managementRequests();
    let upEnded = false;
    const up = d.up().finally(() => {
      upEnded = true;
    });
    // The program's lookup reads the endpoint 3 times in the preview and 3 in the update, before
    // the JobRun (whose trigger it feeds) starts; a 7th read is the JobRun's first look at the
    // workers, which finds old ones: it waits. Then let the rollout end.
    while (!upEnded && e.managementRequests() < reads + 7) await sleep(50);
    await hold.release();
    const rerun = await record(transcript, d, up);
    expect(rerun.errors).toEqual([]);
    expect(ops(rerun)).toEqual(["smoke:update"]);
    expect(rerun.resources[0]!.id).toBe(resourceId);
    expect(rerun.outputs.jobId).not.toBe(first.outputs.jobId);
    expect(rerun.outputs).toMatchObject({
      jobStatus: "COMPLETED",
      jobOutput: SMOKE_OUTPUT,
      deployedVersion: released,
      endpointVersion: released,
    });
    // It waited for the rollout (idle old workers and all), then ran once, on a new worker.
    const timeline = statuses(rerun.outputs.jobTimeline);
    expect(timeline.slice(0, 3)).toEqual(["ROLLOUT_WAIT", "ROLLED_OUT", "IN_QUEUE"]);
    expect(timeline).not.toContain("STALE_WORKER");
    expect((await e.workerVersions(SMOKE_ENDPOINT))[rerun.outputs.workerId as string]).toBe(released);
    expect(submitted()).toBe(submittedBefore + 1);

    const refreshed = await record(transcript, d, d.refresh());
    expect(refreshed.errors).toEqual([]);
    expect(refreshed.resources.map((r) => r.op)).not.toContain("delete");
    expect((await d.stackOutputs()).jobId).toBe(rerun.outputs.jobId);
    expect(submitted()).toBe(submittedBefore + 1);

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(ops(destroyed)).toEqual(["smoke:delete"]);
    expect(await e.activeJobs(SMOKE_ENDPOINT)).toBe(0);
  } finally {
    await hold?.release();
    await d.dispose();
  }
  return transcript;
}

/**
 * smoke-test on a broken endpoint: the deploy fails, and the error the engine prints (only the
 * partial failure's `reasons`: test/support/README.md rule 1) names the endpoint, the job id, the
 * status and the worker's error; the JobRun stays in the stack; once the endpoint is fixed, the
 * next up (no config change) re-runs it through update under the same id and passes.
 */
export async function brokenEndpointScenario(make: MakeDriver, e: E2eEmulator) {
  const transcript: Transcript = [];
  const d = await make(path.join(EXAMPLES_DIR, "smoke-test"), {
    ...runpodConfig(e.emu),
    "runpod-smoke-test:endpointId": "flaky",
  });
  try {
    e.setBroken(true);
    const failed = await record(transcript, d, d.up());
    expect(failed.ok).toBe(false);
    expect(ops(failed)).toEqual(["smoke:failed"]);
    const message = failed.errors.join("\n");
    expect(message).not.toContain("resource init failed");
    expect(message).toContain("flaky");
    expect(message).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/); // the job id
    expect(message).toContain("FAILED");
    expect(message).toContain(WORKER_ERROR);
    expect(message).toMatch(/^Release: endpoint version \d+ \(worker [\w-]+\)$/m); // the release that failed

    e.setBroken(false);
    const fixed = await record(transcript, d, d.up());
    expect(fixed.errors).toEqual([]);
    expect(ops(fixed)).toEqual(["smoke:update"]);
    expect(fixed.resources[0]!.id).toBe(failed.resources[0]!.id);
    expect(fixed.outputs).toMatchObject({ jobStatus: "COMPLETED", jobOutput: SMOKE_OUTPUT });

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(await e.activeJobs("flaky")).toBe(0);
  } finally {
    e.setBroken(false);
    await d.dispose();
  }
  return transcript;
}

/**
 * Inputs that take another resource's output (`programs/dependent`): a JobRun's `input` and a
 * ContainerRegistryAuth's `name` are unknown in the preview; the preview passes (Check accepts the
 * unknowns) and plans three creates; the update then deploys them with the real values.
 */
export async function dependentInputsScenario(make: MakeDriver, e: E2eEmulator) {
  const transcript: Transcript = [];
  const prefix = unique("e2e-dep");
  const d = await make(path.join(PROGRAMS_DIR, "dependent"), {
    ...runpodConfig(e.emu),
    "e2e-dependent:namePrefix": prefix,
    "e2e-dependent:registryPassword": { secret: "dependent-passw0rd" },
  });
  try {
    const preview = await record(transcript, d, d.preview());
    expect(preview.errors).toEqual([]);
    expect(ops(preview)).toEqual(["first:create", "registry:create", "second:create"]);
    expect(await e.registryAuths()).toEqual([]);

    const up = await record(transcript, d, d.up());
    expect(up.errors).toEqual([]);
    expect(ops(up)).toEqual(["first:create", "registry:create", "second:create"]);
    expect(up.outputs.secondStatus).toBe("COMPLETED");
    expect(up.outputs.registryName).toBe(`${prefix}-${up.outputs.firstJobId}`);
    expect((await e.registryAuths()).map((a) => a.name)).toEqual([up.outputs.registryName]);

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(await e.registryAuths()).toEqual([]);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/**
 * A ContainerRegistryAuth moved under a component (`programs/moved`). With an alias to its old
 * place it is the same resource: neither replaced nor deleted. Moved without an alias, the engine
 * creates the new URN first (the old one's delete comes last, after a successful run): the
 * provider refuses the name, which the old credential still holds, so the deploy fails and
 * nothing is deleted; the state never keeps a credential that was deleted, and destroy removes
 * the one that exists.
 */
export async function movedRegistryAuthScenario(make: MakeDriver, e: E2eEmulator) {
  const transcript: Transcript = [];
  const name = unique("e2e-moved");
  const d = await make(path.join(PROGRAMS_DIR, "moved"), {
    ...runpodConfig(e.emu),
    "e2e-moved:registryAuthName": name,
    "e2e-moved:registryPassword": { secret: "moved-passw0rd" },
  });
  try {
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);
    const id = first.outputs.registryAuthId as string;

    await d.setConfig("e2e-moved:layout", "alias");
    const aliased = await record(transcript, d, d.up());
    expect(aliased.errors).toEqual([]);
    expect(ops(aliased)).toEqual(["registry:same"]);
    expect(aliased.outputs.registryAuthId).toBe(id);
    expect(await e.registryAuths()).toEqual([expect.objectContaining({ id, name })]);

    // Once the state holds the new URN, the alias is no longer needed.
    await d.setConfig("e2e-moved:layout", "moved");
    const kept = await record(transcript, d, d.up());
    expect(kept.errors).toEqual([]);
    expect(ops(kept)).toEqual(["registry:same"]);

    // Moving it back to the top level without an alias: a new URN whose create comes first and
    // finds the name taken by the credential the old URN still holds; nothing is deleted.
    await d.setConfig("e2e-moved:layout", "flat");
    const back = await record(transcript, d, d.up());
    expect(back.ok).toBe(false);
    expect(back.errors.join("\n")).toContain(`named "${name}" already exists`);
    expect(ops(back)).toEqual(["registry:failed"]);
    expect(await e.registryAuths()).toEqual([expect.objectContaining({ id, name })]);
    expect(await d.rawState()).toContain(id);

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(await e.registryAuths()).toEqual([]);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/**
 * Key rotation, then destroy (README "Rotating runpod:apiKey"): destroy configures the provider
 * with the key stored at the last `up`, so once the old key is revoked it fails with a 401 until
 * an `up` with the new key has run; after that `up`, destroy works with the new key.
 */
export async function keyRotationScenario(
  make: MakeDriver,
  e: Awaited<ReturnType<typeof startRotatingEmulator>>,
) {
  const transcript: Transcript = [];
  const name = unique("e2e-rotate");
  const d = await make(path.join(EXAMPLES_DIR, "registry-auth"), {
    ...runpodConfig(e.emu),
    "runpod-registry-auth:registryAuthName": name,
    "runpod-registry-auth:registryUsername": "ci-bot",
    "runpod-registry-auth:registryPassword": { secret: "rotate-passw0rd" },
  });
  try {
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);

    const newKey = await e.rotateKey(); // the old key no longer works
    await d.setConfig("runpod:apiKey", { secret: newKey });
    const tooEarly = await record(transcript, d, d.destroy());
    expect(tooEarly.ok).toBe(false);
    expect(tooEarly.errors.join("\n")).toMatch(/401|runpod:apiKey|RUNPOD_API_KEY/);
    expect(await e.registryAuths()).toHaveLength(1);

    const up = await record(transcript, d, d.up());
    expect(up.errors).toEqual([]);
    expect(ops(up)).toEqual(["ghcr:same"]);
    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    expect(await e.registryAuths()).toEqual([]);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/** Secrets the demo scenario is given; none may appear in plaintext anywhere. */
export interface DemoSecrets {
  registryPassword: string;
  /** The endpoint's `env` token (`hfToken`). */
  hfToken: string;
}

/** The error every job of the demo's broken release fails with (the emulator's RUNPOD_EMULATOR_FAIL). */
export const DEMO_WORKER_ERROR = "CUDA out of memory (e2e: a broken release)";

/** A resource as the stack's state records it: its inputs and outputs (secret values as `"[secret]"`). */
interface Recorded {
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/**
 * What the stack's state records for the resource named `name`: from the harness's state, or from
 * the CLI's checkpoint (`<backend>/.pulumi/stacks/<project>/<stack>.json`); secret values (stored
 * encrypted by both) read as `"[secret]"`, so a scenario sees what any state reader sees.
 */
async function recorded(d: Driver, project: string, name: string): Promise<Recorded | undefined> {
  const hide = (v: unknown): unknown =>
    v !== null && typeof v === "object" && !Array.isArray(v) && SECRET_SIG in v
      ? "[secret]"
      : Array.isArray(v)
        ? v.map(hide)
        : v !== null && typeof v === "object"
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, hide(x)]))
          : v;
  if (d instanceof CliStack) {
    const { readFile } = await import("node:fs/promises");
    const file = path.join(d.backendDir, ".pulumi", "stacks", project, `${d.stack}.json`);
    const checkpoint = JSON.parse(await readFile(file, "utf8")) as {
      checkpoint: { latest?: { resources?: Array<{ urn: string } & Partial<Recorded>> } };
    };
    const r = checkpoint.checkpoint.latest?.resources?.find((x) => x.urn.endsWith(`::${name}`));
    return (
      r && {
        inputs: hide(r.inputs ?? {}) as Recorded["inputs"],
        outputs: hide(r.outputs ?? {}) as Recorded["outputs"],
      }
    );
  }
  const harness = d as unknown as {
    state(): Promise<{
      resources: Array<{ name: string } & Recorded & { secretInputs: string[]; secretOutputs: string[] }>;
    }>;
  };
  const r = (await harness.state()).resources.find((x) => x.name === name);
  if (!r) return undefined;
  const mask = (values: Record<string, unknown>, secret: string[]) =>
    Object.fromEntries(Object.entries(values).map(([k, v]) => [k, secret.includes(k) ? "[secret]" : v]));
  return { inputs: mask(r.inputs, r.secretInputs), outputs: mask(r.outputs, r.secretOutputs) };
}

/**
 * demo (the whole serverless pipeline; the endpoint smoke-tests its own releases): up creates the
 * credential, the volume, the template and the endpoint (pools from the catalog, the volume
 * attached, the credential, env), whose smoke test passes on release 1; an unchanged up changes
 * nothing; a new image tag → template and endpoint updated in place, the release rolled out and
 * smoke-tested; a larger volume → only the volume; a broken release (image 1.2.0 with a failing
 * env) → release 3 rolls out, fails its smoke test and is rolled back: the previous configuration
 * serves as version 4, the up fails saying so, and the state records what runs (the previous
 * inputs, version 4, the failed test), so a refresh finds no drift; the env fixed → the next up
 * tries 1.2.0 again as release 5, which passes; refresh; destroy leaves nothing of the stack on the
 * emulator (compared with what it held before the first up).
 */
export async function demoScenario(make: MakeDriver, e: E2eEmulator, secrets: DemoSecrets) {
  const transcript: Transcript = [];
  const name = unique("e2e-demo");
  const client = new RunpodClient({ apiKey: e.emu.apiKey, restUrl: e.emu.restUrlV2 });
  const account = async () => {
    const [endpoints, templates, volumes, registryAuths] = await Promise.all([
      client.serverless.list(),
      client.templates.list(),
      client.networkVolumes.list(),
      client.registryAuths.list(),
    ]);
    const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id).sort();
    return {
      endpoints: ids(endpoints),
      templates: ids(templates),
      volumes: ids(volumes),
      registryAuths: ids(registryAuths),
    };
  };
  const before = await account();
  const d = await make(path.join(EXAMPLES_DIR, "demo"), {
    ...runpodConfig(e.emu),
    "runpod-demo:registryAuthName": name,
    "runpod-demo:registryPassword": { secret: secrets.registryPassword },
    "runpod-demo:volumeName": name,
    "runpod-demo:templateName": name,
    "runpod-demo:endpointName": name,
    "runpod-demo:chatName": `${name}-chat`,
    "runpod-demo:hfToken": { secret: secrets.hfToken },
  });
  const ALL = ["chat", "endpoint", "models", "registry", "worker"];
  const opsAre = (r: StepResult, changed: Record<string, string>, rest: string) =>
    expect(ops(r)).toEqual(ALL.map((n) => `${n}:${changed[n] ?? rest}`));
  const IMAGE = (tag: string) => `ghcr.io/acme/echo-worker:${tag}`;
  try {
    const first = await record(transcript, d, d.up());
    expect(first.errors).toEqual([]);
    opsAre(first, {}, "create");
    expect(first.outputs).toMatchObject({
      gpuPools: ["ADA_24", "AMPERE_24"], // the catalog's serverless pools of 24 GB GPUs
      volumeSizeGb: 20,
      endpointImage: IMAGE("1.0.0"),
      endpointVersion: 1,
      lastSmokeTest: { version: 1, passed: true, failures: 0 },
    });
    const firstTest = first.outputs.lastSmokeTest as { jobIds: string[]; timeline: string[] };
    expect(firstTest.jobIds).toHaveLength(1);
    expect(firstTest.timeline).toEqual([
      expect.stringMatching(new RegExp(`^${firstTest.jobIds[0]}: .*COMPLETED`)),
    ]);
    const { endpointId, registryAuthId, volumeId, templateId } = first.outputs as Record<string, string>;
    const endpoint = await client.serverless.get(endpointId!);
    expect(endpoint).toMatchObject({
      name,
      templateId,
      image: IMAGE("1.0.0"),
      registry: registryAuthId,
      networkVolumes: [volumeId],
      dataCenterIds: ["EU-RO-1"],
      env: { HF_TOKEN: secrets.hfToken },
      gpu: expect.objectContaining({ pools: ["ADA_24", "AMPERE_24"] }),
    });
    expect(await client.templates.get(templateId!)).toMatchObject({
      name,
      image: IMAGE("1.0.0"),
      registry: registryAuthId,
    });
    expect(await client.networkVolumes.get(volumeId!)).toMatchObject({ name, size: 20 });
    // The load balancer: created at version 1, its smoke test one HTTP probe (no job) that passed,
    // and its base URL answers a chat request.
    expect(first.outputs).toMatchObject({
      chatVersion: 1,
      chatSmokeTest: {
        version: 1,
        passed: true,
        failures: 0,
        jobIds: [],
        timeline: [expect.stringMatching(/^probe 1: REQUEST_SENT [\d.]+ s -> HTTP_200 [\d.]+ s$/)],
      },
    });
    const chat = (await client.serverless.list()).find((x) => x.name === `${name}-chat`);
    expect(chat).toMatchObject({ type: "LOAD_BALANCER", image: "ghcr.io/acme/chat-server:1.0.0" });
    expect(first.outputs.chatUrl).toBe(chat?.requestUrls?.base);
    const answer = await client.loadBalancer(chat!.id).request({
      method: "POST",
      path: "/v1/chat/completions",
      body: { model: "emulator-model", messages: [{ role: "user", content: "hi" }] },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ choices: [{ message: { content: "echo: hi" } }] });

    const again = await record(transcript, d, d.up());
    expect(again.errors).toEqual([]);
    opsAre(again, {}, "same");
    expect(again.outputs.lastSmokeTest).toEqual(first.outputs.lastSmokeTest); // no release, no test
    expect(again.outputs.chatSmokeTest).toEqual(first.outputs.chatSmokeTest);

    // A new image tag: one edit rolls the template and the endpoint (in place), whose smoke test
    // runs on the new release.
    await d.setConfig("runpod-demo:imageTag", "1.1.0");
    const released = await record(transcript, d, d.up());
    expect(released.errors).toEqual([]);
    opsAre(released, { endpoint: "update", worker: "update" }, "same");
    expect(released.outputs).toMatchObject({
      endpointId,
      templateId,
      endpointImage: IMAGE("1.1.0"),
      endpointVersion: 2,
      lastSmokeTest: { version: 2, passed: true, failures: 0 },
    });
    expect((released.outputs.lastSmokeTest as { jobIds: string[] }).jobIds[0]).not.toBe(firstTest.jobIds[0]);
    expect(Object.values(await e.workerVersions(endpointId!))).toEqual([2, 2]); // rolled out
    expect((await client.templates.get(templateId!)).image).toBe(IMAGE("1.1.0"));

    // A larger volume: grown in place, nothing else touched (no release, no smoke test).
    await d.setConfig("runpod-demo:volumeSizeGb", "30");
    const grown = await record(transcript, d, d.up());
    expect(grown.errors).toEqual([]);
    opsAre(grown, { models: "update" }, "same");
    expect(grown.outputs).toMatchObject({ volumeId, volumeSizeGb: 30, endpointVersion: 2 });
    expect(grown.outputs.lastSmokeTest).toEqual(released.outputs.lastSmokeTest);

    // A broken release (1.2.0, every job failing): release 3 rolls out, its smoke test fails, and
    // the endpoint rolls the previous configuration back out as version 4 inside the update.
    await d.setConfig("runpod-demo:imageTag", "1.2.0");
    await d.setConfig("runpod-demo:extraEnv", JSON.stringify({ RUNPOD_EMULATOR_FAIL: DEMO_WORKER_ERROR }));
    const broken = await record(transcript, d, d.up());
    expect(broken.ok).toBe(false);
    opsAre(broken, { endpoint: "failed", worker: "update" }, "same");
    // The engine prints the partial failure's reasons (test/support/README.md rule 1).
    const message = broken.errors.join("\n");
    expect(message).toContain(
      `ServerlessEndpoint "${name}" (id ${endpointId}): the smoke test of release version 3 failed (1 of 1 job failed, maxFailures 0), so it was rolled back.`,
    );
    expect(message).toContain(
      `Now serving: version 4, a new release carrying the previous configuration (image ${IMAGE("1.1.0")}), on every worker.`,
    );
    expect(message).toMatch(/^Smoke-test job \S+: the job ended FAILED, expected COMPLETED$/m);
    expect(message).not.toContain("JobRun");
    expect(message).toContain(`Worker error: ${DEMO_WORKER_ERROR}`);
    expect(message).toMatch(
      new RegExp(`^Release: endpoint version 3 \\(worker ${endpointId}-worker-\\d+\\)$`, "m"),
    );
    expect(message).toMatch(/^Worker log \(last \d+ lines of /m);
    expect(message).toContain("The state records what runs (the previous configuration at version 4)");
    expect(message).not.toContain("resource init failed");
    // What runs: the previous configuration, on every worker, under version 4.
    const live = await client.serverless.get(endpointId!);
    expect(live.image).toBe(IMAGE("1.1.0"));
    expect(live.env).toEqual({ HF_TOKEN: secrets.hfToken });
    expect(Object.values(await e.workerVersions(endpointId!))).toEqual([4, 4]);
    // The state records exactly that: the previous inputs (the engine keeps them for a partially
    // failed update), the provider's record of what runs (version 4, image 1.1.0) and the failed
    // test of release 3. The template, a separate resource, did take 1.2.0.
    const state = await recorded(d, "runpod-demo", "endpoint");
    expect(state?.inputs).toMatchObject({ image: IMAGE("1.1.0"), env: "[secret]" });
    expect(state?.outputs).toMatchObject({
      image: IMAGE("1.1.0"),
      version: 4,
      env: "[secret]",
      lastSmokeTest: { version: 3, passed: false, failures: 1 },
    });
    const failedTest = (state?.outputs.lastSmokeTest ?? {}) as { jobIds: string[]; timeline: string[] };
    expect(failedTest.jobIds).toHaveLength(1);
    expect(failedTest.timeline).toEqual([
      expect.stringMatching(new RegExp(`^${failedTest.jobIds[0]}: .*FAILED`)),
    ]);
    expect(message).toContain(failedTest.jobIds[0]);
    expect((await client.templates.get(templateId!)).image).toBe(IMAGE("1.2.0"));
    // The stack's outputs are those of the last successful up (the engine records none for a failed one).
    expect(await d.stackOutputs()).toMatchObject({ endpointVersion: 2, endpointImage: IMAGE("1.1.0") });

    // What the state records is what runs: a refresh finds no drift.
    const afterRollback = await record(transcript, d, d.refresh());
    expect(afterRollback.errors).toEqual([]);
    expect(ops(afterRollback)).toEqual(ALL.map((n) => `${n}:same`));
    expect((await recorded(d, "runpod-demo", "endpoint"))?.outputs).toMatchObject({
      version: 4,
      image: IMAGE("1.1.0"),
    });

    // The env fixed: the next up tries release 1.2.0 again (version 5), and it passes.
    await d.setConfig("runpod-demo:extraEnv", undefined);
    const fixed = await record(transcript, d, d.up());
    expect(fixed.errors).toEqual([]);
    opsAre(fixed, { endpoint: "update" }, "same");
    expect(fixed.outputs).toMatchObject({
      endpointId,
      endpointImage: IMAGE("1.2.0"),
      endpointVersion: 5,
      lastSmokeTest: { version: 5, passed: true, failures: 0 },
      // The load balancer was never touched: still release 1 and its first probe.
      chatVersion: 1,
      chatSmokeTest: first.outputs.chatSmokeTest,
    });
    expect(await client.serverless.get(endpointId!)).toMatchObject({
      image: IMAGE("1.2.0"),
      env: { HF_TOKEN: secrets.hfToken },
    });
    expect(Object.values(await e.workerVersions(endpointId!))).toEqual([5, 5]);

    const refreshed = await record(transcript, d, d.refresh());
    expect(refreshed.errors).toEqual([]);
    expect(ops(refreshed)).toEqual(ALL.map((n) => `${n}:same`));

    const destroyed = await record(transcript, d, d.destroy());
    expect(destroyed.errors).toEqual([]);
    opsAre(destroyed, {}, "delete");
    // Nothing of the stack is left: the account holds exactly what it held before the first up.
    expect(await account()).toEqual(before);
  } finally {
    await d.dispose();
  }
  return transcript;
}

/** Fails naming the first secret found in plaintext in any transcript entry. */
export function expectNoSecrets(transcript: Transcript, secrets: Record<string, string>): void {
  expect(transcript.length).toBeGreaterThan(0);
  for (const [label, secret] of Object.entries(secrets)) {
    const at = transcript.findIndex((t) => t.includes(secret));
    expect(at, `${label} found in plaintext in transcript entry ${at}`).toBe(-1);
  }
}

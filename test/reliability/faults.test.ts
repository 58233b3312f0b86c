/**
 * Reliability under injected faults, at DESIGN.md's 20% rate and kinds (429 and 503 before acting
 * with Retry-After, 500 after acting on a POST, resets before or after acting, 0..20 ms latency),
 * through Pulumi's dynamic-provider host running the INSTALLED package, as `pulumi up` would.
 *
 * test/provider/registryAuthFaults.test.ts runs 8 sequential lifecycles per REST dialect with a
 * heavier mix of ambiguous faults; this file runs 50 lifecycles (REST v2, the default dialect)
 * ten at a time, plus 50 JobRuns, and classifies every outcome. The emulator's fault sequence is
 * seeded; with requests interleaving, which request meets which fault still varies per run, so
 * the assertions hold for every outcome rather than for a fixed sequence. The host's client backs
 * off from 5 ms instead of 0.5 s and waits at most {@link RETRY_AFTER_CAP_MS} for an injected
 * `Retry-After: 1` (fastWaits.cjs): what is tested is each outcome, not the waits (the client's
 * own tests cover those), and the seed, not the pause, decides each request's fault.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { hostEnv } from "../provider/hostEnv";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";

const API_KEY = "reliability-faults-key-3c1e";
const PASSWORD = "fault-tolerant-Pa55-60b2";
/** DESIGN.md: "429 with Retry-After, 5xx, connection resets, slow responses at 20%". */
const FAULTS = "429=0.05,503=0.05,500=0.05,reset=0.05,latency=0-20";
const LIFECYCLES = 50;
const JOB_RUNS = 50;
const CONCURRENCY = 10;
/** A user re-runs `pulumi up` after "nothing was created"; cap the re-runs. */
const MAX_ATTEMPTS = 5;
/** The host's longest wait for a server's Retry-After, ms (the client's own: 60 s). */
const RETRY_AFTER_CAP_MS = 20;

const projectDir = inject("installedProjectDir");

let emu: RunningEmulator;
let host: ProviderHost;
/** The test's own view of the service: reads only, retried through the faults. */
let view: RunpodClient;
/** Job ids the worker saw, by the JobRun's tag: more than one means a job was submitted twice. */
const jobsByTag = new Map<string, string[]>();

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: [API_KEY],
    endpoints: [{ id: "faulty", workersMax: CONCURRENCY }],
    faults: FAULTS,
    faultSeed: 20_2607,
    handlers: {
      faulty: async (job) => {
        const tag = String(job.input.tag);
        jobsByTag.set(tag, [...(jobsByTag.get(tag) ?? []), job.id]);
        return { tag };
      },
    },
  });
  host = await startProviderHost({
    projectDir,
    retryBackoffMs: 5,
    env: hostEnv({ PROVIDER_HOST_RETRY_AFTER_CAP_MS: String(RETRY_AFTER_CAP_MS) }),
  });
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:restUrl": emu.restUrlV2,
    "runpod:serverlessUrl": emu.serverlessUrl,
  });
  view = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 20 });
});

afterAll(async () => {
  const stderr = host?.stderr() ?? "";
  await host?.close();
  await emu?.close();
  expect(stderr).not.toContain(PASSWORD);
  expect(stderr).not.toContain(API_KEY);
});

/** Runs `task(i)` for i in 0..count-1 with at most `limit` in flight. */
async function inPool<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

describe("under 20% injected faults, through the provider host", () => {
  it("completes 50 registry-auth lifecycles with no duplicate and no orphan, every outcome classified", async () => {
    const outcomes = {
      "created at first attempt": 0,
      "created after re-runs that provably created nothing": 0,
      "deleted at first attempt": 0,
      "deleted after a re-run": 0,
    };
    const unexplained: string[] = [];

    // Phase 1: every create, re-run only after a failure that says nothing was created.
    const created = await inPool(LIFECYCLES, CONCURRENCY, async (i) => {
      const name = `reliable-${i}`;
      const urn = urnFor("ContainerRegistryAuth", name);
      const { inputs, failures } = await host.check(urn, {}, { name, username: "u", password: PASSWORD });
      expect(failures).toEqual([]);
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        try {
          const result = await host.create(urn, inputs);
          outcomes[
            attempt === 1 ? "created at first attempt" : "created after re-runs that provably created nothing"
          ]++;
          return { name, urn, ...result };
        } catch (error) {
          const message = (error as Error).message;
          expect(message).not.toContain(PASSWORD);
          // Explained: the provider proved the service stored nothing (a refusal before acting,
          // or an ambiguous failure after which the name is still free), so a re-run is safe.
          if (!(error instanceof HostError) || !/nothing was created/.test(message)) {
            unexplained.push(`create ${name}: ${message}`);
            return undefined;
          }
        }
      }
      unexplained.push(`create ${name}: still failing after ${MAX_ATTEMPTS} attempts`);
      return undefined;
    });
    expect(unexplained).toEqual([]);

    // Phase 2: exactly one credential per name, with the id the create recorded: no duplicate.
    const listed = await view.registryAuths.list();
    expect(listed).toHaveLength(LIFECYCLES);
    for (const c of created) {
      expect(listed.filter((r) => r.name === c?.name)).toEqual([{ id: c?.id, name: c?.name }]);
    }

    // Phase 3: refresh and delete each; a failed delete is re-run as a user would.
    await inPool(LIFECYCLES, CONCURRENCY, async (i) => {
      const c = created[i] as NonNullable<(typeof created)[number]>;
      const refreshed = await host.read(c.id, c.urn, c.outs);
      expect(refreshed).toMatchObject({ id: c.id, props: { name: c.name } });
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        try {
          await host.delete(c.id, c.urn, c.outs);
          outcomes[attempt === 1 ? "deleted at first attempt" : "deleted after a re-run"]++;
          return;
        } catch (error) {
          expect((error as Error).message).not.toContain(PASSWORD);
        }
      }
      unexplained.push(`delete ${c.name}: still failing after ${MAX_ATTEMPTS} attempts`);
    });
    expect(unexplained).toEqual([]);

    // Phase 4: nothing left behind: no orphan.
    expect(await view.registryAuths.list()).toEqual([]);
    const faults = emu.stats().faults;
    console.info(`registry auths: ${JSON.stringify(outcomes)}; faults so far ${JSON.stringify(faults)}`);
    expect(
      outcomes["created at first attempt"] + outcomes["created after re-runs that provably created nothing"],
    ).toBe(LIFECYCLES);
    expect(outcomes["deleted at first attempt"] + outcomes["deleted after a re-run"]).toBe(LIFECYCLES);
    // The mix must have exercised the hard cases, or this test proves little.
    expect(faults["500"]).toBeGreaterThan(0);
    expect(faults.reset).toBeGreaterThan(0);
  }, 120_000);

  it("completes 50 JobRuns except those whose submission met an ambiguous fault, and never submits a job twice", async () => {
    const submittedBefore = emu.stats().submitted.faulty ?? 0;
    const results = await inPool(JOB_RUNS, CONCURRENCY, async (i) => {
      const tag = `run-${i}`;
      const urn = urnFor("JobRun", tag);
      const { inputs, failures } = await host.check(urn, {}, { endpointId: "faulty", input: { tag } });
      expect(failures).toEqual([]);
      try {
        const { id, outs } = await host.create(urn, inputs);
        return { tag, kind: "completed" as const, id, outs, message: "" };
      } catch (error) {
        return { tag, kind: "failed" as const, id: "", outs: undefined, message: (error as Error).message };
      }
    });

    // Jobs whose submission answer was lost still run: let the endpoint drain before counting.
    await vi.waitFor(
      () => {
        const c = emu.stats().endpoints.faulty;
        expect(c?.completed).toBe(c?.submitted);
      },
      { timeout: 10_000 },
    );
    const outcomes = {
      completed: 0,
      "ambiguous submission, no job created": 0,
      "ambiguous submission, job created and left alone": 0,
    };
    const unexplained: string[] = [];
    for (const r of results) {
      const jobs = jobsByTag.get(r.tag) ?? [];
      // Never two jobs for one JobRun, whatever happened.
      expect(jobs.length, `${r.tag} was submitted ${jobs.length} times`).toBeLessThanOrEqual(1);
      if (r.kind === "completed") {
        expect(r.outs).toMatchObject({ status: "COMPLETED", output: { tag: r.tag }, attempts: 1 });
        expect(jobs).toEqual([r.outs.jobId]);
        outcomes.completed++;
      } else if (/may or may not have happened/.test(r.message)) {
        // The POST /run met a 500 after acting or a reset: the job may exist; JobRun did not resend.
        expect(r.message).toMatch(/did not send a second job/);
        expect(r.message).toMatch(/POST \/run failed after it was sent/);
        outcomes[
          jobs.length === 0
            ? "ambiguous submission, no job created"
            : "ambiguous submission, job created and left alone"
        ]++;
      } else {
        unexplained.push(`${r.tag}: ${r.message}`);
      }
    }
    const stats = emu.stats();
    console.info(`JobRuns: ${JSON.stringify(outcomes)}; faults so far ${JSON.stringify(stats.faults)}`);
    expect(unexplained).toEqual([]);
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(JOB_RUNS);
    // The emulator's own count agrees: one job per JobRun that reached it, none more.
    const seen = [...jobsByTag.values()].reduce((n, ids) => n + ids.length, 0);
    expect((stats.submitted.faulty ?? 0) - submittedBefore).toBe(seen);
    expect(seen).toBe(outcomes.completed + outcomes["ambiguous submission, job created and left alone"]);
  }, 120_000);
});

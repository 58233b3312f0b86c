/**
 * What the deployment's cancellation (`RunpodSettings.signal`, aborted by the native plugin's
 * `Cancel`) does to a guarded release, shown on the rules themselves: a failed gate starts no
 * rollback once the deployment is cancelled (a rollback is a PATCH and a rollout wait, and the user
 * asked to stop), and a gate cut short is not judged. The gRPC sequences are in
 * test/plugin/cancelServerless.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import { DeploymentCancelledError } from "../../src/provider/clock";
import { failedGate } from "../../src/provider/serverlessEndpoint/rollback";
import { cancelledGate, judgeGate, SmokeTestSchema } from "../../src/provider/serverlessEndpoint/smokeTest";
import { ENDPOINT_OUTPUTS, ENDPOINT_PROGRAM } from "./endpointFixtures";

/** A client that records every call and answers none: the rule under test makes no request. */
function silentClient() {
  const calls: string[] = [];
  const group = (name: string) =>
    new Proxy(
      {},
      {
        get: (_, method) => () => {
          calls.push(`${name}.${String(method)}`);
          return Promise.reject(new Error("no request expected"));
        },
      },
    );
  const client = new Proxy({}, { get: (_, name) => group(String(name)) }) as unknown as RunpodClient;
  return { client, calls };
}

const cancelled = () => {
  const controller = new AbortController();
  controller.abort(new DeploymentCancelledError());
  return controller.signal;
};

describe("a guarded release after the deployment's cancellation", () => {
  const smoke = SmokeTestSchema.parse({ input: { ping: 1 } });
  const failedJob = {
    jobId: "job-1",
    passed: false,
    failure: "JobRun failed on endpoint ep1, job job-1: the job ended FAILED",
    timeline: [{ status: "FAILED", atMs: 40 }],
  };

  it("starts no rollback of a failed gate: no request, the failed release recorded on what runs", async () => {
    const { client, calls } = silentClient();
    const verdict = judgeGate(2, [failedJob], 0);
    const outs = { ...ENDPOINT_OUTPUTS, image: "acme/api:2", version: 2, lastSmokeTest: verdict.record };
    const error = await failedGate({
      client,
      settings: Object.defineProperty({}, "signal", { value: cancelled(), enumerable: false }),
      id: "ep1",
      label: '"api" (id ep1)',
      inputs: { ...ENDPOINT_PROGRAM, image: "acme/api:2", smokeTest: { input: { ping: 1 } } },
      previous: ENDPOINT_OUTPUTS,
      secrets: [],
      provider: "provider-text",
      touched: ["image"],
      smoke,
      outs,
      verdict,
    }).catch((e: unknown) => e as Error & { id?: string; properties?: Record<string, unknown> });
    expect(calls).toEqual([]);
    expect(error.id).toBe("ep1");
    // What runs (the failed release), with its failed record: the next up tests it again.
    expect(error.properties).toEqual({ ...outs, __provider: "provider-text" });
    expect(error.message.split("\n")).toEqual([
      'ServerlessEndpoint "api" (id ep1): the smoke test of release version 2 failed (1 of 1 job failed, ' +
        "maxFailures 0), and it was NOT rolled back: the deployment was cancelled (Ctrl-C) before the rollback " +
        "started, so the failed release (version 2) still serves.",
      "Why release version 2 failed (the first failing job):",
      failedJob.failure,
      "Smoke-test jobs: job-1: FAILED 0.04 s (failed)",
      "The state records the failed smoke test on what runs, so the next pulumi up tests the release again " +
        "(and rolls it back if it fails again): fix it first.",
    ]);
  });

  it("does not judge a gate cut short: not passed on its release, no failures counted, unfinished jobs marked", () => {
    const done = { jobId: "job-1", passed: true, timeline: [{ status: "COMPLETED", atMs: 20 }] };
    const cut = {
      jobId: "job-2",
      passed: false,
      failure:
        "JobRun failed on endpoint ep1, job job-2: the job had not finished when the deployment was cancelled",
      timeline: [
        { status: "IN_QUEUE", atMs: 10 },
        { status: "CANCELLED", atMs: 30 },
      ],
    };
    expect(cancelledGate(3, [done, cut])).toEqual({
      record: {
        version: 3,
        passed: false,
        jobIds: ["job-1", "job-2"],
        failures: 0,
        timeline: ["job-1: COMPLETED 0.02 s", "job-2: IN_QUEUE 0.01 s -> CANCELLED 0.03 s (not finished)"],
      },
      why: cut.failure,
      cancelled: true,
    });
  });
});

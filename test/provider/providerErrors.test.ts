/**
 * The providers' own failures belong to the package's one error hierarchy: each is a
 * `RunpodError` with a stable `code` and its published name, and neither its printed form
 * (`util.inspect`, which shows `cause`) nor its JSON carries the API key, also when the failure
 * it wraps came from a service that echoed the request's credentials back.
 */
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { APIError, RunpodClient, RunpodError } from "../../src/client";
import * as root from "../../src/index";
import { EndpointRolloutError } from "../../src/provider/serverlessEndpoint/rolloutWait";
import { resolveJobRunArgs } from "../../src/provider/smokeTestJob/jobArgs";
import { executeJobRun } from "../../src/provider/smokeTestJob/run";
import { JobRunFailedError } from "../../src/provider/smokeTestJob/runAndRecord";
import { RolloutTimeoutError } from "../../src/provider/smokeTestJob/staleWorkers";
import { JobRunSubmitError } from "../../src/provider/smokeTestJob/submission";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const API_KEY = "rpa_provider-errors-test-key-6f1c2d";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
  // A service that echoes the request's credentials in its refusal, body and headers alike.
  server.fallback = (req) => ({
    status: 400,
    headers: { "x-echo-authorization": String(req.headers.authorization) },
    body: { message: `refused request with authorization ${String(req.headers.authorization)}` },
  });
});
afterAll(async () => {
  await server?.close();
});

function client(): RunpodClient {
  return new RunpodClient({
    apiKey: API_KEY,
    serverlessUrl: server.url,
    restUrl: `${server.url}/v2`,
    rateLimits: false,
    maxRetries: 0,
  });
}

/** A JobRun whose `POST /run` the echoing service refuses: the error JobRun's create throws. */
async function refusedSubmission(): Promise<unknown> {
  return executeJobRun(resolveJobRunArgs({ endpointId: "ep", input: {}, timeoutMs: 60_000 }), {
    endpoint: client().endpoint("ep"),
    log: () => {},
  }).then(
    () => {
      throw new Error("the JobRun succeeded; the service refused it");
    },
    (error: unknown) => error,
  );
}

/** A failed read of the workers from the echoing service: what a rollout wait may end on. */
async function refusedWorkersRead(): Promise<APIError> {
  const error = await client()
    .serverless.workers("ep")
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

async function providerErrors(): Promise<[string, string, unknown][]> {
  const readFailure = await refusedWorkersRead();
  return [
    [
      "EndpointRolloutError",
      "endpoint_rollout_failed",
      new EndpointRolloutError('ServerlessEndpoint "echo" (id ep): the rollout stalled', 3, "stalled"),
    ],
    ["RolloutTimeoutError", "rollout_wait_timeout", new RolloutTimeoutError("ep", undefined, 1, readFailure)],
    ["JobRunSubmitError", "job_run_submit_failed", await refusedSubmission()],
    [
      "JobRunFailedError",
      "job_run_failed",
      new JobRunFailedError("JobRun job-1 FAILED", "job-1", { status: "FAILED", __provider: "..." }),
    ],
  ];
}

describe("the providers' errors", () => {
  it("are RunpodErrors with their published name and a stable code each", async () => {
    for (const [name, code, error] of await providerErrors()) {
      expect(error).toBeInstanceOf(RunpodError);
      expect(error).toBeInstanceOf(Error);
      expect([name, (error as RunpodError).name, (error as RunpodError).code]).toEqual([name, name, code]);
    }
  });

  it("keep the fields they carry", async () => {
    const [[, , rollout], [, , timeout], [, , submit], [, , failed]] = await providerErrors();
    expect(rollout).toMatchObject({ version: 3, kind: "stalled" });
    expect(timeout).toMatchObject({ last: undefined, reads: 1 });
    expect((timeout as RolloutTimeoutError).message).toContain("could not be read before the deadline");
    expect((timeout as RolloutTimeoutError).cause).toBeInstanceOf(APIError);
    expect(submit).toMatchObject({ ambiguous: false });
    expect((submit as JobRunSubmitError).cause).toBeInstanceOf(APIError);
    expect(failed).toMatchObject({ id: "job-1", properties: { status: "FAILED" } });
  });

  it("never carry the API key, printed with their causes or as JSON", async () => {
    // The echo reached the client: without redaction the key would be in the causes.
    expect(server.requests.some((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
    for (const [name, , error] of await providerErrors()) {
      const printed = inspect(error, { depth: 20 });
      const json = JSON.stringify(error);
      expect([name, printed.includes(API_KEY), json.includes(API_KEY)]).toEqual([name, false, false]);
      expect(json).toContain(`"code"`);
      // The two that wrap the refusal print it (redacted), so the check above saw the echo.
      if (name === "RolloutTimeoutError" || name === "JobRunSubmitError")
        expect(printed).toContain("refused request with authorization");
    }
  });

  it("are exported from the package root as the same classes", () => {
    expect(root.EndpointRolloutError).toBe(EndpointRolloutError);
    expect(root.RolloutTimeoutError).toBe(RolloutTimeoutError);
    expect(root.JobRunSubmitError).toBe(JobRunSubmitError);
    expect(root.JobRunFailedError).toBe(JobRunFailedError);
  });
});

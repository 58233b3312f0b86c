/**
 * Program-side wiring of JobRun and getEndpointHealth under `@pulumi/pulumi/testing` mocks: the
 * type token, secret inputs, registered options (mocks ignore `additionalSecretOutputs`, so the
 * options are read through a stack transformation) and the lookup's argument checks. The
 * provider host tests cover what the provider does.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { getEndpointHealth, getEndpointHealthOutput } from "../../src/provider/endpointHealth";
import { JobRun } from "../../src/provider/jobRun/resource";
import { SECRET_SIG, SECRET_VALUE_SIG, useMockedProgram } from "../support/mockedProgram";

const TOKEN = "pulumi-nodejs:dynamic/runpod:JobRun";
const S3 = {
  accessId: "AKID",
  accessSecret: "mock-s3-secret-99f1",
  bucketName: "b",
  endpointUrl: "https://s3.example.com",
};

const mocked = useMockedProgram((args) => ({ ...args.inputs, status: "COMPLETED", jobId: "job-1" }));
const { run: runProgram, registration } = mocked;
const seenOptions = mocked.options;

describe("JobRun in a program (mocks)", () => {
  it("registers the JobRun type token and sends s3Config to the engine as a secret", async () => {
    await runProgram(
      () => new JobRun("smoke", { endpointId: "echo", input: { prompt: "hi" }, s3Config: S3 }),
    );
    const reg = await registration("smoke");
    expect(reg.type).toBe(TOKEN);
    expect(reg.inputs).toMatchObject({ endpointId: "echo", input: { prompt: "hi" } });
    expect(reg.inputs.s3Config).toEqual({ [SECRET_SIG]: SECRET_VALUE_SIG, value: S3 });
    expect(reg.inputs.__provider).not.toContain(S3.accessSecret);
  });

  it("registers output and stream as additional secret outputs when secretOutput is set", async () => {
    await runProgram(
      () =>
        new JobRun(
          "secret-out",
          { endpointId: "echo", input: {}, secretOutput: true },
          { additionalSecretOutputs: ["error"], protect: true },
        ),
    );
    const opts = seenOptions.get("secret-out");
    expect(opts?.additionalSecretOutputs).toEqual(expect.arrayContaining(["output", "stream", "error"]));
    expect(opts?.protect).toBe(true);
    expect((await registration("secret-out")).inputs.secretOutput).toBe(true);
  });

  it("sends http to the engine as a secret when it has headers, and as plain values without", async () => {
    const http = { path: "/v1/models", headers: { "X-Token": "mock-header-secret-5521" } };
    await runProgram(() => {
      new JobRun("probe-secret", { endpointId: "lb1", http });
      new JobRun("probe-plain", { endpointId: "lb1", http: { path: "/ping" } });
      new JobRun("probe-output", { endpointId: "lb1", http: pulumi.output(http) });
    });
    expect((await registration("probe-secret")).inputs.http).toEqual({
      [SECRET_SIG]: SECRET_VALUE_SIG,
      value: { path: "/v1/models", headers: { "X-Token": "mock-header-secret-5521" } },
    });
    expect((await registration("probe-plain")).inputs.http).toEqual({ path: "/ping" });
    expect((await registration("probe-output")).inputs.http).toMatchObject({
      [SECRET_SIG]: SECRET_VALUE_SIG,
    });
    expect((await registration("probe-secret")).inputs.__provider).not.toContain("mock-header-secret-5521");
  });

  it("registers no additional secret outputs without secretOutput", async () => {
    await runProgram(() => new JobRun("plain-out", { endpointId: "echo", input: {} }));
    expect(seenOptions.get("plain-out")?.additionalSecretOutputs ?? []).toEqual([]);
  });

  it("serializes one small provider that loads its code from the package by name", async () => {
    await runProgram(() => {
      new JobRun("p1", { endpointId: "echo", input: {} });
      new JobRun("p2", { endpointId: "echo", input: {} });
    });
    const p1 = (await registration("p1")).inputs.__provider as string;
    const p2 = (await registration("p2")).inputs.__provider as string;
    expect(p1).toBe(p2);
    expect(p1).toContain("pulumi-runpod-dynamic/dist/provider/jobRun/operations.js");
    // The provider holds its operations module's path and nothing else (settings arrive in the host).
    expect({ ...JobRun.provider }).toEqual({
      operationsModule: "pulumi-runpod-dynamic/dist/provider/jobRun/operations.js",
    });
  });
});

describe("getEndpointHealth", () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ endpoints: ["echo:2"] });
    return () => emu.close();
  });

  it("returns job and worker counts", async () => {
    const client = new RunpodClient({
      apiKey: emu.apiKey,
      serverlessUrl: emu.serverlessUrl,
      restUrl: emu.restUrl,
    });
    const health = await getEndpointHealth({ endpointId: "echo" }, { client });
    expect(health.workers).toMatchObject({ idle: 2, running: 0 });
    expect(health.jobs).toMatchObject({ inQueue: 0, inProgress: 0 });
  });

  it("resolves as an Output from Input arguments", async () => {
    const client = new RunpodClient({
      apiKey: emu.apiKey,
      serverlessUrl: emu.serverlessUrl,
      restUrl: emu.restUrl,
    });
    const health = getEndpointHealthOutput({ endpointId: pulumi.output("echo") }, { client });
    const workers = await new Promise((resolve) => health.apply((h) => resolve(h.workers.idle)));
    expect(workers).toBe(2);
  });

  it("rejects an empty endpointId naming the property, before any network call", async () => {
    const before = emu.stats().requests;
    const error = await getEndpointHealth({ endpointId: " " }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).path).toEqual(["endpointId"]);
    expect((error as Error).message).toContain("endpointId must be a non-empty endpoint id");
    expect(emu.stats().requests).toBe(before);
  });

  it("without a client, names the api key settings when none is configured", async () => {
    const saved = process.env.RUNPOD_API_KEY;
    delete process.env.RUNPOD_API_KEY;
    try {
      await expect(getEndpointHealth({ endpointId: "echo" })).rejects.toThrow(
        /runpod:apiKey.*RUNPOD_API_KEY/,
      );
    } finally {
      if (saved !== undefined) process.env.RUNPOD_API_KEY = saved;
    }
  });
});

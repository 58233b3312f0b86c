// A serverless endpoint whose every release is smoke-tested inside the endpoint's own update, and
// rolled back when it fails (`smokeTest`): no separate JobRun, and a broken release never keeps
// serving.
//   pulumi config set imageTag 1.1.0
//   pulumi up        # the release rolls out, 3 jobs run on it, at most 1 may fail
// Against the emulator, `pulumi config set failWith "model weights missing"` makes the next
// release fail every job (env RUNPOD_EMULATOR_FAIL): the update fails, and the endpoint serves the
// previous configuration again under a new version.
import * as pulumi from "@pulumi/pulumi";
import { ServerlessEndpoint } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const image = config.get("image") ?? "ghcr.io/acme/echo-worker";
const imageTag = config.get("imageTag") ?? "1.0.0";
const failWith = config.get("failWith");

const ep = new ServerlessEndpoint("endpoint", {
  name: config.get("endpointName") ?? "guarded-echo",
  type: "QUEUE",
  image: `${image}:${imageTag}`,
  env: {
    GREETING: config.get("greeting") ?? "hello",
    API_TOKEN: config.getSecret("apiToken") ?? "",
    ...(failWith === undefined ? {} : { RUNPOD_EMULATOR_FAIL: failWith }),
  },
  gpu: { pools: config.getObject<string[]>("gpuPools") ?? ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { min: 0, max: 2 },
  rolloutTimeoutMs: config.getNumber("rolloutTimeoutMs") ?? 10 * 60_000,
  smokeTest: {
    input: { prompt: "ping", output: { reply: "pong" } }, // the emulator's built-in worker returns `output`
    expect: { output: { reply: "pong" } },
    timeoutMs: 2 * 60_000,
    runs: config.getNumber("smokeRuns") ?? 3,
    maxFailures: config.getNumber("smokeMaxFailures") ?? 1,
    onFailure: (config.get("onFailure") as "rollback" | "keep" | undefined) ?? "rollback",
  },
});

export const endpointId = ep.id;
export const endpointVersion = ep.version;
export const servingImage = ep.image;
export const lastSmokeTest = ep.lastSmokeTest;

// A RunPod serverless endpoint managed by this stack (REST v2), and a smoke test of each release.
//
// One `pulumi up` after a new image tag goes: the endpoint's release (a PATCH), a wait until every
// worker runs it (a stalled rollout fails the deploy with the workers' states and a log tail), then
// one job on that release:
//   pulumi config set imageTag 1.4.3
//   pulumi up
import * as pulumi from "@pulumi/pulumi";
import { JobRun, ServerlessEndpoint } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const image = config.get("image") ?? "ghcr.io/acme/echo-worker";
const imageTag = config.get("imageTag") ?? "1.0.0";

const ep = new ServerlessEndpoint("endpoint", {
  name: config.get("endpointName") ?? "echo-worker",
  type: "QUEUE",
  image: `${image}:${imageTag}`, // a new tag makes a release
  // One secret as a whole: none of its values reaches another output, an error or a log line.
  env: { GREETING: config.get("greeting") ?? "hello", API_TOKEN: config.getSecret("apiToken") ?? "" },
  gpu: { pools: config.getObject<string[]>("gpuPools") ?? ["ADA_24"] }, // pool ids: see getGpuTypes
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { min: 0, max: config.getNumber("workersMax") ?? 2 },
  rolloutTimeoutMs: config.getNumber("rolloutTimeoutMs") ?? 10 * 60_000,
});

// Runs on create and after every release (`ep.version` goes up by one with each container change),
// on that release: the endpoint's update returned only once no worker was left on the old one.
const smoke = new JobRun("smoke", {
  endpointId: ep.id,
  input: { prompt: "ping", output: { reply: "pong" } }, // the emulator's built-in worker returns `output`
  expect: { status: "COMPLETED", output: config.getObject("expectOutput") ?? { reply: "pong" } },
  timeoutMs: 5 * 60_000,
  triggers: [ep.version],
});

export const endpointId = ep.id;
export const endpointVersion = ep.version;
export const latestReleaseId = ep.latestReleaseId;
export const runSyncUrl = ep.requestUrls.apply((urls) => urls.runSync);
export const testedVersion = smoke.endpointVersion;
export const smokeJobId = smoke.jobId;

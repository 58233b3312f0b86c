// The demo stack: one program using all three features. `npm run demo` deploys it against the
// local emulator; with a real API key and no URL overrides it targets RunPod itself.
import * as pulumi from "@pulumi/pulumi";
import {
  ContainerRegistryAuth,
  getNetworkVolumeOutput,
  getServerlessEndpointOutput,
  JobRun,
} from "pulumi-runpod-dynamic";

const config = new pulumi.Config();

// 1. Private registry credentials (the password is stored as a secret, always).
const registry = new ContainerRegistryAuth("registry", {
  name: config.get("registryAuthName") ?? "demo-registry",
  username: config.get("registryUsername") ?? "demo-bot",
  password: config.getSecret("registryPassword") ?? pulumi.secret("demo-password"),
});

// 2. An existing network volume, found by name and data centre.
const volume = getNetworkVolumeOutput({
  name: config.get("volumeName") ?? "models",
  dataCenterId: config.get("dataCenterId") ?? "EU-RO-1",
});

// Optional: S3-compatible storage handed to the worker (the whole s3Config is kept secret).
const s3Bucket = config.get("s3Bucket");
const s3Config = s3Bucket
  ? {
      bucketName: s3Bucket,
      endpointUrl: config.require("s3EndpointUrl"),
      accessId: config.require("s3AccessId"),
      accessSecret: config.requireSecret("s3AccessSecret"),
    }
  : undefined;

// 3. A smoke test of the serverless endpoint: fails the deploy if the worker is broken. The lookup
// reads the endpoint's current release, so the test runs again on every redeploy of the endpoint
// (whichever tool made it); before submitting, the JobRun waits until no worker of an older
// release is left (rollout: "wait", the default on REST v2), and records the release it tested.
const endpointId = config.get("endpointId") ?? "echo";
const endpoint = getServerlessEndpointOutput({ id: endpointId });
const smoke = new JobRun("smoke", {
  endpointId,
  input: { prompt: "ping", volumeId: volume.id, output: { reply: "pong" } },
  s3Config,
  expect: { output: { reply: "pong" } },
  timeoutMs: 2 * 60 * 1000,
  triggers: [endpoint.version],
});

export const registryAuthId = registry.id;
export const volumeId = volume.id;
export const volumeSizeGb = volume.size;
export const smokeJobId = smoke.jobId;
export const smokeStatus = smoke.status;
export const smokeTimeline = smoke.timeline;
export const smokeEndpointVersion = smoke.endpointVersion;

// The demo stack: the whole serverless pipeline in one program. `npm run demo` deploys it against
// the local emulator; with a real API key and no URL overrides it targets RunPod itself.
//
// Every change is an edit of this stack's config, then `pulumi up`:
//   pulumi config set imageTag 1.1.0          # a release: template and endpoint updated in place,
//                                              # the rollout waited for, the smoke test re-run on it
//   pulumi config set extraEnv '{"LOG_LEVEL":"debug"}'   # more env: also a release
import * as pulumi from "@pulumi/pulumi";
import {
  ContainerRegistryAuth,
  getGpuTypesOutput,
  JobRun,
  NetworkVolume,
  ServerlessEndpoint,
  Template,
} from "pulumi-runpod-dynamic";

const config = new pulumi.Config();

// 1. Private registry credentials (the password is stored as a secret, always).
const registry = new ContainerRegistryAuth("registry", {
  name: config.get("registryAuthName") ?? "demo-registry",
  username: config.get("registryUsername") ?? "demo-bot",
  password: config.getSecret("registryPassword") ?? pulumi.secret("demo-password"),
});

// 2. A network volume the workers mount (a smaller size is refused; a new data centre replaces it).
const volume = new NetworkVolume("models", {
  name: config.get("volumeName") ?? "models",
  size: config.getNumber("volumeSizeGb") ?? 20,
  dataCenterId: config.get("dataCenterId") ?? "EU-RO-1",
});

// 3. The catalog picks the GPU pools (no pool id pasted by hand): every serverless pool whose GPUs
//    have `gpuMemoryGb` GB.
const gpuMemoryGb = config.getNumber("gpuMemoryGb") ?? 24;
const pools = getGpuTypesOutput({ serverless: true }).apply((gpus) =>
  [...new Set(gpus.filter((g) => g.memory === gpuMemoryGb).map((g) => g.pool as string))].sort(),
);

// 4. The container, as a template. The image tag is the one edit that rolls a release: the template
//    is updated for endpoints made later, and the endpoint gets `image: tmpl.image` (a template is a
//    snapshot applied at create; the endpoint's own image wins).
const image = `${config.get("image") ?? "ghcr.io/acme/echo-worker"}:${config.get("imageTag") ?? "1.0.0"}`;
const tmpl = new Template("worker", {
  name: config.get("templateName") ?? "demo-worker",
  image,
  registry: registry.id,
  disk: 20,
  serverless: true,
});

// 5. The endpoint. `env` is one secret as a whole (no value of it reaches another output, an error or
//    a log); `extraEnv` (a JSON object in config) is merged in. With `rollout: "wait"` an update
//    returns only once every worker runs the new release.
const extraEnv = config.getObject<Record<string, string>>("extraEnv") ?? {};
const ep = new ServerlessEndpoint("endpoint", {
  name: config.get("endpointName") ?? "demo-worker",
  type: "QUEUE",
  templateId: tmpl.id,
  image: tmpl.image,
  registry: registry.id,
  env: { HF_TOKEN: config.getSecret("hfToken") ?? pulumi.secret("hf_demo_token"), ...extraEnv },
  gpu: { pools },
  dataCenterIds: [volume.dataCenterId],
  networkVolumes: [volume.id],
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  workers: { min: 0, max: config.getNumber("workersMax") ?? 2 },
  rollout: "wait",
  rolloutTimeoutMs: config.getNumber("rolloutTimeoutMs") ?? 10 * 60_000,
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

// 6. A smoke test of each release: it runs on create and whenever `ep.version` changes (every
//    container change is a release), on that release, and fails the deploy when the worker does not
//    answer as expected, with the job's error, the release it ran on and the worker's log tail.
const smoke = new JobRun("smoke", {
  endpointId: ep.id,
  input: { prompt: "ping", volumeId: volume.id, output: { reply: "pong" } }, // the emulator's worker returns `output`
  s3Config,
  expect: { status: "COMPLETED", output: { reply: "pong" } },
  timeoutMs: 2 * 60 * 1000,
  triggers: [ep.version],
});

export const registryAuthId = registry.id;
export const volumeId = volume.id;
export const volumeSizeGb = volume.size;
export const gpuPools = pools;
export const templateId = tmpl.id;
export const endpointId = ep.id;
export const endpointImage = ep.image;
export const endpointVersion = ep.version;
export const smokeJobId = smoke.jobId;
export const smokeStatus = smoke.status;
export const smokeTimeline = smoke.timeline;
export const smokeEndpointVersion = smoke.endpointVersion;

// The demo stack: the whole serverless pipeline in one program. `npm run demo` deploys it against
// the local emulator; with a real API key and no URL overrides it targets RunPod itself.
//
// Every change is an edit of this stack's config, then `pulumi up`:
//   pulumi config set imageTag 1.1.0          # a release: template and endpoint updated in place,
//                                              # the rollout waited for, the release smoke-tested
//   pulumi config set extraEnv '{"LOG_LEVEL":"debug"}'   # more env: also a release
// A release that fails its smoke test is rolled back inside the endpoint's update: the previous
// configuration serves again (as a new version), and `pulumi up` fails saying which release failed
// and why. Against the emulator, extraEnv '{"RUNPOD_EMULATOR_FAIL":"..."}' makes such a release.
// A second endpoint, a load balancer serving an OpenAI-compatible model server, guards its releases
// with an HTTP smoke test (a POST to its own /v1/chat/completions).
import * as pulumi from "@pulumi/pulumi";
import {
  ContainerRegistryAuth,
  getGpuTypesOutput,
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

// 5. The endpoint, guarding its own releases. `env` is one secret as a whole (no value of it reaches
//    another output, an error or a log); `extraEnv` (a JSON object in config) is merged in. With
//    `rollout: "wait"` an update returns only once every worker runs the new release. `smokeTest`
//    then runs a job on that release (a JobRun's job: same `input`, `expect`, `timeoutMs`; the
//    worker that ran it must run the new version); when it fails, `onFailure: "rollback"` puts the
//    previous container settings back as a new release, waits for that rollout and fails the step
//    with the job's error, the release it ran on and the worker's log tail. The state then records
//    what runs (the previous configuration), so the next `pulumi up` tries the new release again.
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
  smokeTest: {
    input: { prompt: "ping", volumeId: volume.id, output: { reply: "pong" } }, // the emulator's worker returns `output`
    expect: { status: "COMPLETED", output: { reply: "pong" } },
    timeoutMs: 2 * 60 * 1000,
    runs: 1, // how many jobs; with maxFailures 0 (the default) every one must pass
    onFailure: "rollback", // the default: a failed release does not keep serving
  },
});

// 6. A load-balancer endpoint: its workers serve their own HTTP paths (an OpenAI-compatible model
//    server, health on /ping) at `requestUrls.base`, scaled by requests in flight. Its smoke test is
//    an HTTP probe: once a release has rolled out, one POST to /v1/chat/completions on it must answer
//    200 with the expected message (the emulator's built-in server answers "echo: <last message>");
//    a failed probe rolls the release back as for the queue endpoint. It has its own image (no
//    template), so the image tag above does not roll it. The model is named in the probe's body, not
//    in `env`: every `env` value is a secret, redacted from every other output (the recorded
//    `smokeTest` too), so a probe repeating one would never match its input again.
const modelName = config.get("chatModel") ?? "emulator-model"; // the emulator's built-in server serves this one
const chat = new ServerlessEndpoint("chat", {
  name: config.get("chatName") ?? "demo-chat",
  type: "LOAD_BALANCER",
  image: config.get("chatImage") ?? "ghcr.io/acme/chat-server:1.0.0",
  gpu: { pools },
  scaling: { type: "REQUEST_COUNT", requestCount: 4 },
  workers: { min: 1, max: 1 },
  rollout: "wait",
  rolloutTimeoutMs: config.getNumber("rolloutTimeoutMs") ?? 10 * 60_000,
  smokeTest: {
    http: {
      method: "POST",
      path: "/v1/chat/completions",
      body: { model: modelName, messages: [{ role: "user", content: "ping" }] },
      expectStatus: 200,
    },
    expect: { output: { choices: [{ message: { content: "echo: ping" } }] } },
    timeoutMs: 2 * 60 * 1000,
  },
});

export const registryAuthId = registry.id;
export const volumeId = volume.id;
export const volumeSizeGb = volume.size;
export const gpuPools = pools;
export const templateId = tmpl.id;
export const endpointId = ep.id;
export const endpointImage = ep.image;
export const endpointVersion = ep.version;
// The last smoke test: the release it tested, whether it passed, its job ids and timeline.
export const lastSmokeTest = ep.lastSmokeTest;
// The load balancer: its base URL (POST <chatUrl>/v1/chat/completions with the API key as
// `Authorization: Bearer`), its version and its last smoke test (an HTTP probe: `jobIds` is empty).
export const chatUrl = chat.requestUrls.apply((u) => u.base);
export const chatVersion = chat.version;
export const chatSmokeTest = chat.lastSmokeTest;
// What each endpoint may cost an hour at list prices, known in the preview (from the catalog):
// `floorUsd` with `workers.min` always on at the cheapest pool, `ceilingUsd` with `workers.max`
// busy at the dearest. With stack config `runpod:maxHourlyUsd`, a change whose ceilings add up to
// more is refused in the preview, before anything is created or changed.
export const endpointCost = ep.hourlyCost;
export const chatCost = chat.hourlyCost;

/**
 * Every check failure of every resource, as the CLI prints it: each distinct failure
 * the providers' `check` can produce (enumerated from each `args.ts` and operation's check), sent
 * through Pulumi's real dynamic-provider host from the packed package, and printed the engine's
 * way (`issueCheckFailures` in pkg/resource/deploy/step_generator.go, diag 2002/2003 in
 * sdk/go/common/diag/errors.go, `PropertyValue.String` in sdk/go/common/resource/properties.go;
 * `checkFailureText` in test/support/deployRunner.mts). The engine prints a named property's value
 * whole and unredacted, so the printed text must name the field and say what is allowed, and
 * never carry a secret (a planted one), a value over 200 characters, `{<nil>}` nor `[object Object]`.
 *
 * Failed before this test was added: an unknown argument was reported with its name as
 * `property`, so the engine printed its value whole (`passwrd: pulumi.secret(...)` printed the
 * secret as `{&{{...}}}`, a large typo'd value printed whole).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { checkJobRunArgs } from "../../src/provider/jobRun/operations";
import { KEYS } from "../fixtures/sshKeys";
import { checkFailureText } from "../support/deployRunner.mts";
import {
  type ProviderHost,
  SECRET_SIG,
  SECRET_SIG_KEY,
  secretValue,
  startProviderHost,
  typeTokenFor,
  urnFor,
} from "../support/providerHost.mts";
import { type ProviderKind, serializedProvider } from "../support/serializedProvider.mts";

const projectDir = inject("installedProjectDir");
/** Planted in every secret input; must never be printed. */
const SECRET = "planted-secret-q8z3";
/** A value far over what the engine should ever print whole. */
const LARGE = "x".repeat(500);

type Kind = Extract<
  ProviderKind,
  | "ContainerRegistryAuth"
  | "JobRun"
  | "ServerlessEndpoint"
  | "SshKey"
  | "Template"
  | "NetworkVolume"
  | "Pod"
  | "EcrDelegation"
  | "Cluster"
>;

/** Valid program inputs of each resource (secrets as the program marks them). */
const BASE: Record<Kind, Record<string, unknown>> = {
  ContainerRegistryAuth: { name: "creds", username: "robot", password: secretValue(SECRET) },
  NetworkVolume: { name: "vol", size: 20, dataCenterId: "EU-RO-1" },
  Template: { name: "tpl", image: "acme/worker:1", env: secretValue({ HF_TOKEN: SECRET }) },
  SshKey: { publicKey: KEYS.ed25519.line },
  EcrDelegation: {
    resource: "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
    name: "deploy",
  },
  ServerlessEndpoint: {
    name: "ep",
    type: "QUEUE",
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    gpu: { pools: ["ADA_24"] },
    image: "acme/worker:1",
    env: secretValue({ HF_TOKEN: SECRET }),
  },
  Cluster: {
    name: "train",
    type: "TRAINING",
    compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
    image: "acme/train:1",
    env: secretValue({ HF_TOKEN: SECRET }),
  },
  Pod: {
    name: "pod",
    image: "acme/dev:1",
    gpu: { id: "NVIDIA H100 80GB HBM3" },
    env: secretValue({ HF_TOKEN: SECRET }),
  },
  JobRun: {
    endpointId: "ep123",
    input: { prompt: "hello" },
    s3Config: secretValue({
      accessId: "AKIA1",
      accessSecret: SECRET,
      bucketName: "b",
      endpointUrl: "https://s3.example.com",
    }),
    redact: secretValue([SECRET]),
  },
};

/**
 * One bad input: the change to the base inputs (`undefined` removes a key), the dialect, and the
 * printed lines after `<type> resource 'bad'`.
 */
interface Row {
  what: string;
  change: Record<string, unknown>;
  dialect?: "v1" | "v2";
  /**
   * `"emulator"`: checked on a host whose REST v2 service is the emulator, so what only the
   * catalog can judge (data centres) is judged. @default a host whose service never answers
   */
  service?: "emulator";
  /** Previous inputs (a NetworkVolume shrink). */
  olds?: Record<string, unknown>;
  /** The field every printed line must name. @default the first key of `change` */
  field?: string;
  printed: string[];
}

const T = (kind: Kind) => typeTokenFor(kind);

/** What the emulator's catalog of data centres is printed as in a refusal. */
const KNOWN_CENTRES =
  "of the catalog (GET /v2/catalog/datacenters), which lists US-KS-2, US-GA-1, CA-MTL-1, EU-RO-1, EU-SE-1 " +
  "(in any letter case). Use one of those ids; getDataCenters() lists them with their regions.";

/** JobRun's base turned into an http probe: no input, no s3Config. */
const PROBE = { input: undefined, s3Config: undefined, http: { path: "/v1/models" } };

const row = (
  what: string,
  change: Record<string, unknown>,
  printed: string[],
  extra: Partial<Row> = {},
): Row => ({
  what,
  change,
  printed,
  ...extra,
});

const ROWS: Record<Kind, Row[]> = {
  ContainerRegistryAuth: [
    row("name missing", { name: undefined }, [" has a problem: name is required: a non-empty string"]),
    row("name blank", { name: "   " }, [": property name value {   } has a problem: name must not be empty"]),
    row("name of 1 MB (its value not printed)", { name: "n".repeat(1_000_000) }, [
      " has a problem: name must be at most 191 characters, got 1000000",
    ]),
    row("name with a newline (its value not printed)", { name: "a\nb" }, [
      " has a problem: name must not contain control characters (NUL, newline, tab, ...)",
    ]),
    row("name not a string", { name: 42 }, [
      ": property name value {42} has a problem: name must be a string, got a number",
    ]),
    row("username blank", { username: "" }, [
      ": property username value {} has a problem: username must not be empty",
    ]),
    row("password blank (a secret)", { password: secretValue("  ") }, [
      " has a problem: password must not be empty",
    ]),
    row("password not a string (a secret)", { password: secretValue([SECRET]) }, [
      " has a problem: password must be a string, got an array of 1 item",
    ]),
    row("adoptExisting not a boolean", { adoptExisting: "yes" }, [
      ": property adoptExisting value {yes} has a problem: adoptExisting must be a boolean (true or false), got a string",
    ]),
    row("an unknown argument holding a secret", { passwrd: secretValue(SECRET) }, [
      " has a problem: unknown property passwrd; allowed: name, username, password, adoptExisting",
    ]),
    row("an unknown argument holding a large value", { notes: LARGE }, [
      " has a problem: unknown property notes; allowed: name, username, password, adoptExisting",
    ]),
  ],
  NetworkVolume: [
    row(
      "dataCenterId not a data centre of the catalog",
      { dataCenterId: "US-TX-3" },
      [
        `: property dataCenterId value {US-TX-3} has a problem: dataCenterId has "US-TX-3", not a data centre ${KNOWN_CENTRES}`,
      ],
      { service: "emulator" },
    ),
    row("name missing", { name: undefined }, [" has a problem: name is required: a non-empty string"]),
    row("name blank", { name: " " }, [": property name value { } has a problem: name must not be empty"]),
    row("size missing", { size: undefined }, [" has a problem: size is required: an integer number of GB"]),
    row("size not an integer", { size: 10.5 }, [
      ": property size value {10.5} has a problem: size must be an integer number of GB, got 10.5",
    ]),
    row("size not a number", { size: "20" }, [
      ": property size value {20} has a problem: size must be an integer number of GB, got a string",
    ]),
    row("size below REST v2's bounds", { size: 5 }, [
      ": property size value {5} has a problem: size must be from 10 to 4096 GB on REST v2, got 5",
    ]),
    row(
      "size above REST v1's bounds",
      { size: 5000 },
      [": property size value {5000} has a problem: size must be from 0 to 4000 GB on REST v1, got 5000"],
      { dialect: "v1" },
    ),
    row(
      "size smaller than before (a shrink)",
      { size: 20 },
      [
        ": property size value {20} has a problem: size may only grow: the volume is 50 GB, the program asks for 20 GB; a network volume cannot shrink, and replacing it would delete its data. Set size to 50 or more. To start over with a smaller volume, give this resource a new name in the program (pulumi up then creates the new volume and deletes this one with its data), or remove it from the program, run pulumi up, and add it back.",
      ],
      {
        olds: { name: "vol", size: 50, dataCenterId: "EU-RO-1" },
      },
    ),
    row("dataCenterId blank", { dataCenterId: "" }, [
      ": property dataCenterId value {} has a problem: dataCenterId must not be empty",
    ]),
    row("type not a tier", { type: "FAST" }, [
      ": property type value {FAST} has a problem: type must be STANDARD or HIGH_PERFORMANCE",
    ]),
    row(
      "type on REST v1",
      { type: "STANDARD" },
      [
        ": property type value {STANDARD} has a problem: type: REST v1 has no volume types (STANDARD and HIGH_PERFORMANCE exist only in REST v2); omit type, or set runpod:restUrl to a URL ending in /v2",
      ],
      { dialect: "v1" },
    ),
    row("an unknown argument", { region: "EU" }, [
      " has a problem: unknown property region; allowed: name, size, dataCenterId, type, allowReplaceDeletingData",
    ]),
  ],
  Template: [
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: Template needs the REST v2 interface, but runpod:restUrl is http://127.0.0.1:9/v1, REST v1 (retired 2026-11-15; it never had templates). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
      ],
      { dialect: "v1", field: "runpod:restUrl" },
    ),
    row("name missing", { name: undefined }, [" has a problem: name is required: a non-empty string"]),
    row("image blank", { image: " " }, [": property image value { } has a problem: image must not be empty"]),
    row("disk below 1", { disk: 0 }, [": property disk value {0} has a problem: disk must be at least 1 GB"]),
    row("disk not an integer", { disk: 1.5 }, [
      ": property disk value {1.5} has a problem: disk must be a whole number of GB (at least 1), not a fraction",
    ]),
    row("an env name with = (env is secret)", { env: secretValue({ HF_TOKEN: SECRET, "KEY=1": SECRET }) }, [
      ' has a problem: env names must be non-empty, without "=" or control characters, e.g. MODEL_ID (name 2 of 2 is not)',
    ]),
    row("a relative mount path", { mounts: { persistent: { size: 20, path: "relative" } } }, [
      ' has a problem: mounts.persistent.path must be an absolute path inside the container, starting with "/", e.g. "/workspace"',
    ]),
    row("an env value not a string (env is secret)", { env: secretValue({ HF_TOKEN: SECRET, PORT: 8000 }) }, [
      " has a problem: env.PORT: env value must be a string",
    ]),
    row("env not an object (env is secret)", { env: secretValue(SECRET) }, [
      " has a problem: env must be an object of strings, got a string",
    ]),
    row("ports not strings", { ports: [8000] }, [" has a problem: ports.0: ports must be a string"]),
    row("ports a large list", { ports: Array.from({ length: 60 }, (_, i) => 8000 + i) }, [
      " has a problem: ports.0: ports must be a string",
    ]),
    row("mounts.persistent.size below 10", { mounts: { persistent: { size: 5, path: "/w" } } }, [
      " has a problem: mounts.persistent.size: size must be at least 10 GB",
    ]),
    row("mounts with an unknown key", { mounts: { network: { id: "v" } } }, [
      " has a problem: mounts: unknown key network",
    ]),
    row("allowedCudaVersions not major.minor", { allowedCudaVersions: ["12"] }, [
      ' has a problem: allowedCudaVersions.0: allowedCudaVersions must be a CUDA version as major.minor, e.g. "12.4"',
    ]),
    row("category not a category", { category: "TPU" }, [
      ": property category value {TPU} has a problem: category must be CPU, NVIDIA or AMD",
    ]),
    row("public not a boolean", { public: "yes" }, [
      ": property public value {yes} has a problem: public must be true or false, got a string",
    ]),
    row("registry blank", { registry: "" }, [
      ": property registry value {} has a problem: registry must not be empty",
    ]),
    row("args not a string", { args: ["--x"] }, [
      ": property args value {[{--x}]} has a problem: args must be a string, got an array of 1 item",
    ]),
    row("an unknown argument holding a secret", { envv: secretValue({ HF_TOKEN: SECRET }) }, [
      " has a problem: unknown property envv; allowed: name, image, args, disk, env, ports, registry, allowedCudaVersions, category, mounts, public, serverless, startJupyter, startSsh",
    ]),
  ],
  EcrDelegation: [
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: EcrDelegation needs the REST v2 interface, but runpod:restUrl is http://127.0.0.1:9/v1, REST v1 (retired 2026-11-15; it never had ECR delegations). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
      ],
      { dialect: "v1", field: "runpod:restUrl" },
    ),
    row("resource missing", { resource: undefined }, [
      " has a problem: resource is required: an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
    ]),
    row(
      "resource a registry host, not an ARN",
      { resource: "418399314813.dkr.ecr.us-east-2.amazonaws.com/app" },
      [
        ": property resource value {418399314813.dkr.ecr.us-east-2.amazonaws.com/app} has a problem: resource must be an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
      ],
    ),
    row("name blank", { name: " " }, [": property name value { } has a problem: name must not be empty"]),
    row("name with a newline (its value not printed)", { name: "a\nb" }, [
      " has a problem: name must not contain control characters (NUL, newline, tab, ...)",
    ]),
    row("an unknown argument holding a secret", { password: secretValue(SECRET) }, [
      " has a problem: unknown property password; allowed: resource, name",
    ]),
  ],
  SshKey: [
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: SshKey needs the REST v2 interface, but runpod:restUrl is http://127.0.0.1:9/v1, REST v1 (retired 2026-11-15; it never had the account's SSH keys). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
      ],
      { dialect: "v1", field: "runpod:restUrl" },
    ),
    row(
      "publicKey missing",
      { publicKey: undefined },
      [
        ' has a problem: publicKey is required: one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, with <type> one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com',
      ],
      { field: "publicKey" },
    ),
    row("publicKey truncated", { publicKey: KEYS.rsa.line.slice(0, 120) }, [
      ' has a problem: publicKey has a key whose data is cut short or malformed for a ssh-rsa key (a truncated paste?); expected one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, with <type> one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com',
    ]),
    row("publicKey of two lines", { publicKey: `${KEYS.ed25519.line}\n${KEYS.rsa.line}` }, [
      ' has a problem: publicKey holds 2 lines, but one SshKey manages one key: declare one SshKey per key; expected one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, with <type> one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com',
    ]),
    row("publicKey with options", { publicKey: `command="uptime" ${KEYS.ed25519.line}` }, [
      ' has a problem: publicKey starts with authorized_keys options (such as command= or from=) before the key type: the service takes bare keys, remove the options; expected one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, with <type> one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com',
    ]),
    row(
      "publicKey type not matching its key",
      { publicKey: KEYS.ed25519.line.replace("ssh-ed25519", "ssh-rsa") },
      [
        ' has a problem: publicKey says ssh-rsa but the key data is a "ssh-ed25519" key: the type and the base64 must come from the same .pub line; expected one authorized_keys line "<type> <base64-key> [comment]" as in ~/.ssh/id_ed25519.pub, with <type> one of ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com',
      ],
    ),
    row("an unknown argument holding a secret", { comment: secretValue(SECRET) }, [
      " has a problem: unknown property comment; allowed: publicKey",
    ]),
  ],
  ServerlessEndpoint: [
    row(
      "dataCenterIds naming a data centre the catalog does not list",
      { dataCenterIds: ["eu-ro-1", "MARS-1"] },
      [
        `: property dataCenterIds value {[{eu-ro-1} {MARS-1}]} has a problem: dataCenterIds has "MARS-1", not a data centre ${KNOWN_CENTRES}`,
      ],
      { service: "emulator" },
    ),
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: ServerlessEndpoint needs the REST v2 interface (serverless endpoints do not exist on REST v1), but runpod:restUrl (or RUNPOD_REST_API_URL) is a REST v1 URL. Set it to the REST v2 base (https://rest.runpod.io/v2, or the emulator's restUrl) or unset it: the default is REST v2.",
      ],
      { dialect: "v1", field: "runpod:restUrl" },
    ),
    row("name missing", { name: undefined }, [" has a problem: name is required (a non-empty string)"]),
    row("type not QUEUE or LOAD_BALANCER", { type: "BATCH" }, [
      ": property type value {BATCH} has a problem: type must be QUEUE or LOAD_BALANCER",
    ]),
    row("scaling missing", { scaling: undefined }, [
      ' has a problem: scaling is required ({ type: "QUEUE_DELAY", queueDelay } or { type: "REQUEST_COUNT", requestCount })',
    ]),
    row("scaling.queueDelay too small", { scaling: { type: "QUEUE_DELAY", queueDelay: 0.1 } }, [
      " has a problem: scaling.queueDelay: queueDelay must be at least 0.5 s",
    ]),
    row("scaling type not REQUEST_COUNT on a load balancer", { type: "LOAD_BALANCER" }, [
      " has a problem: scaling.type: type must be REQUEST_COUNT on a LOAD_BALANCER endpoint",
    ]),
    row("neither gpu nor cpu", { gpu: undefined }, [
      " has a problem: gpu is required unless cpu is given: an endpoint runs on exactly one of gpu or cpu",
    ]),
    row("gpu and cpu", { cpu: [{ id: "cpu3c", vcpuCount: 4 }] }, [
      " has a problem: cpu cannot be combined with gpu; give one of them",
    ]),
    row("gpu.pools empty", { gpu: { pools: [] } }, [
      " has a problem: gpu.pools: pools must list at least one pool",
    ]),
    row(
      "gpu with minCudaVersion and allowedCudaVersions",
      {
        gpu: { pools: ["ADA_24"], minCudaVersion: "12.1", allowedCudaVersions: ["12.4"] },
      },
      [
        " has a problem: gpu.minCudaVersion: minCudaVersion and a non-empty allowedCudaVersions are mutually exclusive; give one of them",
      ],
    ),
    row("cpu vcpuCount not a power of two", { cpu: [{ id: "cpu3c", vcpuCount: 6 }], gpu: undefined }, [
      " has a problem: cpu[0].vcpuCount: vcpuCount must be a power of two",
    ]),
    row("image missing without templateId", { image: undefined }, [
      " has a problem: image is required unless templateId is given",
    ]),
    row("an env value not a string (env is secret)", { env: secretValue({ HF_TOKEN: SECRET, PORT: 8000 }) }, [
      " has a problem: env.PORT: env value must be a string",
    ]),
    row("workers.min above workers.max", { workers: { min: 5, max: 2 } }, [
      " has a problem: workers.min: min must be at most max (got min 5, max 2): the fewest workers kept cannot exceed the most allowed",
    ]),
    row("workers.max past any quota", { workers: { max: 1e7 } }, [
      " has a problem: workers.max: max must be at most 10000 (the v2 document sets no upper bound; no account's worker quota comes near it), got 10000000",
    ]),
    row("a port without /http or /tcp", { ports: ["8000"] }, [
      ' has a problem: ports[0]: ports entries must be "<port>/http" or "<port>/tcp", e.g. "8000/http"',
    ]),
    row("workers.max negative", { workers: { max: -1 } }, [
      " has a problem: workers.max: max must be at least 0",
    ]),
    row("workers with an unknown key", { workers: { maximum: 3 } }, [
      " has a problem: workers: unknown key maximum",
    ]),
    row("timeout not positive", { timeout: 0 }, [
      ": property timeout value {0} has a problem: timeout must be a positive number of ms",
    ]),
    row("flashboot not a mode", { flashboot: "ON" }, [
      ": property flashboot value {ON} has a problem: flashboot must be OFF, FLASHBOOT or PRIORITY_FLASHBOOT",
    ]),
    row("dataCenterIds not strings", { dataCenterIds: [1] }, [
      " has a problem: dataCenterIds[0]: dataCenterIds must be a string",
    ]),
    row("networkVolumes a string", { networkVolumes: "vol1" }, [
      " has a problem: networkVolumes must be an array of strings, got a string",
    ]),
    row("rollout not wait or ignore", { rollout: "later" }, [
      ': property rollout value {later} has a problem: rollout must be "wait" or "ignore"',
    ]),
    row("rolloutTimeoutMs shorter than a rollout", { rolloutTimeoutMs: 1 }, [
      ": property rolloutTimeoutMs value {1} has a problem: rolloutTimeoutMs must be at least 30000 ms (30 s), got 1: " +
        "a rollout starts new workers, and a shorter wait ends before a good release is out (allowed: 30000 .. 86400000 ms (30 s .. 24 h))",
    ]),
    row("rolloutTimeoutMs above 24 h", { rolloutTimeoutMs: 86_400_001 }, [
      ": property rolloutTimeoutMs value {8.6400001e+07} has a problem: rolloutTimeoutMs must be at most 86400000 ms (24 h)",
    ]),
    row("smokeTest with an unknown key", { smokeTest: { input: { a: 1 }, inptu: 1 } }, [
      " has a problem: smokeTest.inptu is not a smokeTest argument (allowed: input, http, webhook, policy, mode, timeoutMs, cancelOnTimeout, expect, retries, secretOutput, runs, maxFailures, onFailure)",
    ]),
    row(
      "smokeTest without http on a load balancer",
      {
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
        smokeTest: { input: { a: 1 } },
      },
      [
        ' has a problem: smokeTest on a type "LOAD_BALANCER" endpoint needs smokeTest.http (method, path, body, headers, expectStatus): a load balancer serves its workers\' own HTTP paths, not queue jobs (/run), so its smoke test is an HTTP probe, e.g. http: { path: "/v1/models" }',
      ],
      { field: "smokeTest" },
    ),
    row("smokeTest.http on a queue endpoint", { smokeTest: { http: { path: "/ping" } } }, [
      ' has a problem: smokeTest.http probes type "LOAD_BALANCER" endpoints, and this endpoint is type "QUEUE": give smokeTest.input (the queue job to run) instead of smokeTest.http',
    ]),
    row(
      "smokeTest with input and http on a load balancer",
      {
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
        smokeTest: { input: { a: 1 }, http: { path: "/ping" } },
      },
      [
        " has a problem: smokeTest.input: input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one",
      ],
      { field: "smokeTest" },
    ),
    row(
      "smokeTest.http.headers with Authorization",
      {
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 2 },
        smokeTest: { http: { path: "/ping", headers: { Authorization: SECRET } } },
      },
      [
        " has a problem: smokeTest.http.headers.Authorization: Authorization may not be set (the client sends Authorization: Bearer with its API key)",
      ],
      { field: "smokeTest" },
    ),
    row(
      "smokeTest.expect.outputSchema not a JSON Schema",
      {
        smokeTest: { input: { a: 1 }, expect: { outputSchema: { type: "banana" } } },
      },
      [
        " has a problem: smokeTest.expect.outputSchema: type must be one of array, boolean, integer, null, number, object, string (or an array of them) (JSON Schema draft 2020-12)",
      ],
    ),
    row("smokeTest.timeoutMs zero", { smokeTest: { input: { a: 1 }, timeoutMs: 0 } }, [
      " has a problem: smokeTest.timeoutMs: timeoutMs must be at least 1 ms",
    ]),
    row("an unknown argument holding a secret", { secrets: secretValue(SECRET) }, [
      " has a problem: unknown property secrets; allowed: args, disk, env, image, ports, registry, cpu, dataCenterIds, flashboot, networkVolumes, timeout, workers, name, type, scaling, gpu, templateId, rollout, rolloutTimeoutMs, smokeTest, maxHourlyUsd",
    ]),
  ],
  JobRun: [
    row(
      "an http probe body of 2 MB",
      { ...PROBE, http: { path: "/", body: { text: "x".repeat(2_000_000) } } },
      [" has a problem: http.body must be at most 1000000 bytes (1 MB) as JSON, got 2000011"],
      { field: "http" },
    ),
    row("endpointId missing", { endpointId: undefined }, [
      ' has a problem: endpointId is required: the id of the serverless endpoint, a non-empty endpoint id without whitespace or slashes, other than "." and ".."',
    ]),
    row("endpointId with a slash", { endpointId: "ep/1" }, [
      ': property endpointId value {ep/1} has a problem: endpointId must be a non-empty endpoint id without whitespace or slashes, other than "." and ".."',
    ]),
    row("input missing", { input: undefined }, [
      " has a problem: input is required: the job input, a JSON object (or give http instead to probe a LOAD_BALANCER endpoint)",
    ]),
    row("input not an object", { input: [1, 2] }, [
      ": property input value {[{1} {2}]} has a problem: input must be a JSON object",
    ]),
    row("webhook not an http URL", { webhook: "ftp://x" }, [
      ": property webhook value {ftp://x} has a problem: webhook must be an http(s) URL",
    ]),
    row("policy.ttl below its minimum", { policy: { ttl: 5 } }, [
      " has a problem: policy.ttl must be at least 10000 ms",
    ]),
    row("policy with an unknown key", { policy: { priority: 1 } }, [
      " has a problem: unknown field policy.priority: not allowed here",
    ]),
    row(
      "s3Config.accessSecret blank (s3Config is secret)",
      {
        s3Config: secretValue({
          accessId: SECRET,
          accessSecret: "",
          bucketName: "b",
          endpointUrl: "https://s3.example.com",
        }),
      },
      [" has a problem: s3Config.accessSecret must not be empty"],
    ),
    row(
      "s3Config with an unknown key (s3Config is secret)",
      {
        s3Config: secretValue({
          accessId: "AKIA1",
          accessSecret: SECRET,
          bucketName: "b",
          endpointUrl: "https://s3.example.com",
          region: SECRET,
        }),
      },
      [" has a problem: unknown field s3Config.region: not allowed here"],
    ),
    row("mode not run or runsync", { mode: "async" }, [
      ': property mode value {async} has a problem: mode must be "run" or "runsync"',
    ]),
    row("timeoutMs zero", { timeoutMs: 0 }, [
      ": property timeoutMs value {0} has a problem: timeoutMs must be at least 1 ms",
    ]),
    row("timeoutMs over a week", { timeoutMs: 604_800_001 }, [
      ": property timeoutMs value {6.04800001e+08} has a problem: timeoutMs must be at most 604800000 ms (1 week)",
    ]),
    row("runsync with timeoutMs under 3000", { mode: "runsync", timeoutMs: 1000 }, [
      ': property timeoutMs value {1000} has a problem: timeoutMs must be at least 3000 ms with mode "runsync" (got 1000): the shortest runsync wait is 1000 ms and the service must answer with the job id before the deadline; raise timeoutMs or use mode "run"',
    ]),
    row("collectStream with runsync", { mode: "runsync", collectStream: true }, [
      ': property collectStream value {true} has a problem: collectStream needs mode "run": runsync answers only after the job has ended, when its stream chunks may already be gone',
    ]),
    row("cancelOnTimeout not a boolean", { cancelOnTimeout: "no" }, [
      ": property cancelOnTimeout value {no} has a problem: cancelOnTimeout must be a boolean",
    ]),
    row("rollout not wait or ignore", { rollout: "now" }, [
      ': property rollout value {now} has a problem: rollout must be "wait" or "ignore"',
    ]),
    row(
      "rollout wait on REST v1",
      { rollout: "wait" },
      [
        ': property rollout value {wait} has a problem: rollout "wait" reads the endpoint\'s workers over REST v2, and runpod:restUrl (or RUNPOD_REST_API_URL) is REST v1: set it to a /v2 URL (https://api.runpod.io/v2, the default), or set rollout: "ignore" to test without knowing the release',
      ],
      { dialect: "v1" },
    ),
    row("expect.status not terminal", { expect: { status: "IN_QUEUE" } }, [
      " has a problem: expect.status must be one of COMPLETED, FAILED, CANCELLED, TIMED_OUT",
    ]),
    row("expect.maxDelayMs zero", { expect: { maxDelayMs: 0 } }, [
      " has a problem: expect.maxDelayMs must be at least 1 ms",
    ]),
    row("expect.allowErrorOutput not a boolean", { expect: { allowErrorOutput: 1 } }, [
      " has a problem: expect.allowErrorOutput must be a boolean",
    ]),
    row("expect with an unknown key", { expect: { outptu: { ok: true } } }, [
      " has a problem: unknown field expect.outptu: not allowed here",
    ]),
    row("expect.outputSchema not a JSON Schema", { expect: { outputSchema: { type: "banana" } } }, [
      " has a problem: expect.outputSchema: type must be one of array, boolean, integer, null, number, object, string (or an array of them) (JSON Schema draft 2020-12)",
    ]),
    row("expect not an object", { expect: "COMPLETED" }, [
      ": property expect value {COMPLETED} has a problem: expect must be an object with optional status, output, allowErrorOutput, maxDelayMs, maxExecutionMs and outputSchema",
    ]),
    row("retries above 100", { retries: 101 }, [
      ": property retries value {101} has a problem: retries must be at most 100",
    ]),
    row("retries not an integer", { retries: 1.5 }, [
      ": property retries value {1.5} has a problem: retries must be an integer",
    ]),
    row("triggers not an array", { triggers: "always" }, [
      ": property triggers value {always} has a problem: triggers must be an array of values",
    ]),
    row("collectStream not a boolean", { collectStream: "yes" }, [
      ": property collectStream value {yes} has a problem: collectStream must be a boolean",
    ]),
    row("secretOutput not a boolean", { secretOutput: 1 }, [
      ": property secretOutput value {1} has a problem: secretOutput must be a boolean",
    ]),
    row("redact not strings (redact is secret)", { redact: secretValue([SECRET, 5]) }, [
      " has a problem: redact[1]: redact must be an array of strings (the secret values)",
    ]),
    row("an unknown argument holding a secret", { apiKey: secretValue(SECRET) }, [
      " has a problem: apiKey is not a JobRun argument (allowed: endpointId, input, http, webhook, policy, s3Config, mode, timeoutMs, cancelOnTimeout, rollout, expect, retries, triggers, collectStream, secretOutput, redact)",
    ]),
    row("an unknown argument holding a large value", { inputs: { text: LARGE } }, [
      " has a problem: inputs is not a JobRun argument (allowed: endpointId, input, http, webhook, policy, s3Config, mode, timeoutMs, cancelOnTimeout, rollout, expect, retries, triggers, collectStream, secretOutput, redact)",
    ]),
    row(
      "http with input",
      { http: { path: "/v1/models" }, s3Config: undefined },
      [
        ": property input value {map[prompt:{hello}]} has a problem: input and http are mutually exclusive: input runs a queue job, http probes a load-balancer endpoint; give one",
      ],
      {
        field: "input",
      },
    ),
    row(
      "http with s3Config (s3Config is secret)",
      { http: { path: "/v1/models" }, input: undefined },
      [
        " has a problem: s3Config does not apply to an http probe: storage settings are passed to queue jobs only; leave it out",
      ],
      {
        field: "s3Config",
      },
    ),
    row(
      "http with mode runsync",
      { ...PROBE, mode: "runsync" },
      [
        ': property mode value {runsync} has a problem: mode does not apply to an http probe: mode "runsync" is a way to submit a queue job; leave it out',
      ],
      { field: "mode" },
    ),
    row(
      "http with retries",
      { ...PROBE, retries: 2 },
      [
        ": property retries value {2} has a problem: retries does not apply to an http probe: it re-queues a FAILED job with the service's /retry, and a probe is sent once (once more only when another release answered); leave it out",
      ],
      { field: "retries" },
    ),
    row(
      "http with webhook",
      { ...PROBE, webhook: "https://hook.example/x" },
      [
        ": property webhook value {https://hook.example/x} has a problem: webhook does not apply to an http probe: a load balancer calls no webhook; leave it out",
      ],
      {
        field: "webhook",
      },
    ),
    row(
      "http with policy",
      { ...PROBE, policy: { ttl: 60_000 } },
      [
        ": property policy value {map[ttl:{60000}]} has a problem: policy does not apply to an http probe: the execution policy is a queue job's; leave it out",
      ],
      { field: "policy" },
    ),
    row(
      "http with collectStream",
      { ...PROBE, collectStream: true },
      [
        ": property collectStream value {true} has a problem: collectStream does not apply to an http probe: a probe has no job stream; leave it out",
      ],
      {
        field: "collectStream",
      },
    ),
    row(
      "http with expect.status",
      { ...PROBE, expect: { status: "FAILED" } },
      [
        " has a problem: expect.status (FAILED) does not apply to an http probe: set http.expectStatus, the HTTP status the answer must have",
      ],
      {
        field: "expect.status",
      },
    ),
    row(
      "http with expect.maxDelayMs",
      { ...PROBE, expect: { maxDelayMs: 5 } },
      [
        " has a problem: expect.maxDelayMs does not apply to an http probe (a load balancer reports no queue time): expect.maxExecutionMs bounds the request's latency",
      ],
      {
        field: "expect.maxDelayMs",
      },
    ),
    row(
      "http.path without a leading slash",
      { ...PROBE, http: { path: "v1/models" } },
      [' has a problem: http.path must be a string starting with "/", got "v1/models"'],
      {
        field: "http.path",
      },
    ),
    row(
      "http.path with a .. segment",
      { ...PROBE, http: { path: "/a/../b" } },
      [' has a problem: http.path must not contain "." or ".." segments'],
      {
        field: "http.path",
      },
    ),
    row(
      "http.path missing",
      { ...PROBE, http: { body: {} } },
      [' has a problem: http.path is required: the path on the endpoint, starting with "/"'],
      { field: "http.path" },
    ),
    row(
      "http.method not allowed",
      { ...PROBE, http: { path: "/x", method: "TRACE" } },
      [" has a problem: http.method must be one of GET, POST, PUT, PATCH, DELETE"],
      {
        field: "http.method",
      },
    ),
    row(
      "http.headers with Authorization",
      { ...PROBE, http: { path: "/x", headers: { Authorization: `Bearer ${SECRET}` } } },
      [
        " has a problem: http.headers.Authorization may not be set (the client sends Authorization: Bearer with its API key)",
      ],
      {
        field: "http.headers.Authorization",
      },
    ),
    row(
      "http.headers with a bad name",
      { ...PROBE, http: { path: "/x", headers: { "bad name": SECRET } } },
      [' has a problem: http.headers.bad name: "bad name" is not a valid header name'],
      {
        field: "http.headers",
      },
    ),
    row(
      "http.headers value not a string",
      { ...PROBE, http: { path: "/x", headers: { "X-A": 1 } } },
      [" has a problem: http.headers.X-A: header values must be strings"],
      {
        field: "http.headers",
      },
    ),
    row(
      "http.expectStatus out of range",
      { ...PROBE, http: { path: "/x", expectStatus: 700 } },
      [" has a problem: http.expectStatus must be at most 599"],
      {
        field: "http.expectStatus",
      },
    ),
    row(
      "http with an unknown key",
      { ...PROBE, http: { path: "/x", hedaers: {} } },
      [" has a problem: unknown field http.hedaers: not allowed here"],
      {
        field: "http.hedaers",
      },
    ),
    row(
      "http not an object",
      { ...PROBE, http: "/v1/models" },
      [
        " has a problem: http must be an object with path and optional method, body, headers and expectStatus",
      ],
      { field: "http" },
    ),
    row(
      "http on a REST v1 restUrl",
      PROBE,
      [
        " has a problem: an http probe reads the endpoint's requestUrls.base over REST v2, and runpod:restUrl (or RUNPOD_REST_API_URL) is REST v1: set it to a /v2 URL (https://api.runpod.io/v2, the default)",
      ],
      { field: "http", dialect: "v1" },
    ),
  ],
  Cluster: [
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: Cluster needs the REST v2 interface, but runpod:restUrl is http://127.0.0.1:9/v1, REST v1 (retired 2026-11-15; it never had Instant Clusters). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
      ],
      { dialect: "v1", field: "runpod:restUrl" },
    ),
    row("name missing", { name: undefined }, [" has a problem: name is required: a non-empty string"]),
    row("type not one of the four", { type: "BATCH" }, [
      ": property type value {BATCH} has a problem: type must be APPLICATION, TRAINING, SLURM or RAY",
    ]),
    row("compute missing", { compute: undefined }, [
      " has a problem: compute is required: { gpuTypeId, gpuCountPerPod, podCount }",
    ]),
    row(
      "podCount under 2",
      { compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 1 } },
      [" has a problem: compute.podCount: podCount must be at least 2"],
    ),
    row(
      "podCount over 250",
      { compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 251 } },
      [" has a problem: compute.podCount: podCount must be at most 250"],
    ),
    row(
      "gpuCountPerPod 0",
      { compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 0, podCount: 2 } },
      [" has a problem: compute.gpuCountPerPod: gpuCountPerPod must be at least 1"],
    ),
    row("registry (clusters take none)", { registry: "cred-1" }, [
      " has a problem: unknown property registry; allowed: name, type, compute, dataCenterIds, image, args, disk, env, ports, mounts, startJupyter, startSsh, waitFor, waitTimeoutMs, maxHourlyUsd",
    ]),
    row("waitFor ssh without startSsh", { waitFor: "ssh" }, [
      ': property waitFor value {ssh} has a problem: waitFor: "ssh" needs startSsh: true (the service gives the members an SSH endpoint only then); set startSsh: true or wait for "running"',
    ]),
    row("waitFor an HTTP port (pods only)", { waitFor: { port: 8888 } }, [
      ': property waitFor value {map[port:{8888}]} has a problem: waitFor must be "none", "running" or "ssh"',
    ]),
    row("waitTimeoutMs under a second", { waitTimeoutMs: 10 }, [
      ": property waitTimeoutMs value {10} has a problem: waitTimeoutMs must be at least 1000 ms",
    ]),
    row("maxHourlyUsd negative", { maxHourlyUsd: -1 }, [
      ": property maxHourlyUsd value {-1} has a problem: maxHourlyUsd must be a number of US dollars an hour, at least 0",
    ]),
    row("an env name with =", { env: secretValue({ "A=B": SECRET }) }, [
      ' has a problem: env names must be non-empty, without "=" or control characters, e.g. MODEL_ID (name 1 of 1 is not)',
    ]),
    row("an unknown argument holding a secret", { gpu: secretValue(SECRET) }, [
      " has a problem: unknown property gpu; allowed: name, type, compute, dataCenterIds, image, args, disk, env, ports, mounts, startJupyter, startSsh, waitFor, waitTimeoutMs, maxHourlyUsd",
    ]),
  ],
  Pod: [
    row(
      "dataCenterIds naming data centres the catalog does not list",
      { dataCenterIds: ["EU-RO-1", "MARS-1", "VENUS-2"] },
      [
        `: property dataCenterIds value {[{EU-RO-1} {MARS-1} {VENUS-2}]} has a problem: dataCenterIds has "MARS-1", "VENUS-2", not data centres ${KNOWN_CENTRES}`,
      ],
      { service: "emulator" },
    ),
    row("name missing", { name: undefined }, [" has a problem: name is required: a non-empty string"]),
    row("name with a NUL (its value not printed)", { name: "a\u0000b" }, [
      " has a problem: name must not contain control characters (NUL, newline, tab, ...)",
    ]),
    row(
      "both gpu and cpu",
      { cpu: { id: "cpu3c", vcpuCount: 2 } },
      [
        ": property cpu value {map[id:{cpu3c} vcpuCount:{2}]} has a problem: cpu cannot be combined with gpu; a pod runs on exactly one of them",
      ],
      { field: "cpu" },
    ),
    row(
      "neither gpu nor cpu",
      { gpu: undefined },
      [" has a problem: gpu is required unless cpu is given: a pod runs on exactly one of gpu or cpu"],
      { field: "gpu" },
    ),
    row(
      "mounts.persistent with cpu",
      {
        gpu: undefined,
        cpu: { id: "cpu3c", vcpuCount: 2 },
        mounts: { persistent: { size: 20, path: "/workspace" } },
      },
      [
        " has a problem: mounts.persistent is not allowed on a CPU pod; use a network volume (mounts.network)",
      ],
      { field: "mounts" },
    ),
    row(
      "allowedCudaVersions with minCudaVersion",
      { gpu: { id: "NVIDIA H100 80GB HBM3", allowedCudaVersions: ["12.8"], minCudaVersion: "12.4" } },
      [
        " has a problem: gpu.minCudaVersion: minCudaVersion and a non-empty allowedCudaVersions are mutually exclusive; give one of them",
      ],
      { field: "gpu" },
    ),
    row("a port without /http or /tcp", { ports: ["8888"] }, [
      ' has a problem: ports.0: ports entries must be "<port>/http" or "<port>/tcp", e.g. "8888/http"',
    ]),
    row(
      "waitFor.port not an exposed http port",
      { ports: ["22/tcp"], waitFor: { port: 8888 } },
      [' has a problem: waitFor.port 8888 is not an HTTP port of the pod: add "8888/http" to ports'],
      {
        field: "waitFor.port",
      },
    ),
    row("waitFor ssh without startSsh", { waitFor: "ssh" }, [
      ': property waitFor value {ssh} has a problem: waitFor: "ssh" needs startSsh: true (the service gives the pod an SSH endpoint only then); set startSsh: true or wait for "running"',
    ]),
    row("waitFor not one of the forms", { waitFor: "ready" }, [
      ': property waitFor value {ready} has a problem: waitFor must be "none", "running", "ssh" or { port, path?, expectStatus? }',
    ]),
    row("desiredStatus not RUNNING or EXITED", { desiredStatus: "STOPPED" }, [
      ': property desiredStatus value {STOPPED} has a problem: desiredStatus must be "RUNNING" or "EXITED"',
    ]),
    row("gpu.count over any machine (no catalog)", { gpu: { id: "NVIDIA H100 80GB HBM3", count: 1e6 } }, [
      " has a problem: gpu.count must be at most 16: no RunPod machine holds more GPUs (the catalog's maxCount of the GPU type bounds it further when it can be read)",
    ]),
    row(
      "gpu.count over the catalog's maxCount of a candidate",
      { gpu: { id: "NVIDIA H100 80GB HBM3", count: 12 } },
      [
        ': property gpu value {map[count:{12} id:{NVIDIA H100 80GB HBM3}]} has a problem: gpu.count 12 is more GPUs than one SECURE machine holds: the catalog\'s maxCount (GET /v2/catalog/gpus) gives "NVIDIA H100 80GB HBM3" at most 8. Lower gpu.count, or name GPU types whose machines hold that many (getGpuTypes() lists maxCount per cloud).',
      ],
      { service: "emulator" },
    ),
    row(
      "fallbackGpuIds on a CPU pod",
      { gpu: undefined, cpu: { id: "cpu3c", vcpuCount: 2 }, fallbackGpuIds: ["NVIDIA A100 80GB PCIe"] },
      [
        ": property fallbackGpuIds value {[{NVIDIA A100 80GB PCIe}]} has a problem: fallbackGpuIds applies to GPU pods only (gpu), and this pod runs on cpu: remove fallbackGpuIds, or give gpu instead of cpu",
      ],
      { field: "fallbackGpuIds" },
    ),
    row("waitTimeoutMs over 24 hours", { waitTimeoutMs: 1e12 }, [
      ": property waitTimeoutMs value {1e+12} has a problem: waitTimeoutMs must be at most 86400000 ms (24 hours)",
    ]),
    row(
      "waitFor.path starting another host",
      { ports: ["8888/http"], waitFor: { port: 8888, path: "//host/x" } },
      [
        ' has a problem: waitFor.path must be a path on the pod starting with one "/", e.g. "/health" ("//" starts another host)',
      ],
      {
        field: "waitFor.path",
      },
    ),
    row(
      "waitFor.path with a .. segment",
      { ports: ["8888/http"], waitFor: { port: 8888, path: "/a/../admin" } },
      [' has a problem: waitFor.path must be a normalised path, with no "." or ".." segment'],
      {
        field: "waitFor.path",
      },
    ),
    row("waitTimeoutMs under a second", { waitTimeoutMs: 10 }, [
      ": property waitTimeoutMs value {10} has a problem: waitTimeoutMs must be at least 1000 ms",
    ]),
    row("fallbackGpuIds not an array", { fallbackGpuIds: "NVIDIA A100 80GB PCIe" }, [
      ": property fallbackGpuIds value {NVIDIA A100 80GB PCIe} has a problem: fallbackGpuIds must be an array of GPU type ids, got a string",
    ]),
    row(
      "env value not a string (a secret)",
      { env: secretValue({ HF_TOKEN: 42, OTHER: SECRET }) },
      [" has a problem: env.HF_TOKEN: env value must be a string"],
      {
        field: "env",
      },
    ),
    row("an unknown argument holding a secret", { hfToken: secretValue(SECRET) }, [
      " has a problem: unknown property hfToken; allowed: name, args, disk, env, image, ports, registry, cloud, cpu, dataCenterIds, globalNetworking, gpu, mounts, startJupyter, startSsh, templateId, fallbackGpuIds, desiredStatus, waitFor, locked, waitTimeoutMs, maxHourlyUsd",
    ]),
    row("an unknown argument holding a large value", { notes: LARGE }, [
      " has a problem: unknown property notes; allowed: name, args, disk, env, image, ports, registry, cloud, cpu, dataCenterIds, globalNetworking, gpu, mounts, startJupyter, startSsh, templateId, fallbackGpuIds, desiredStatus, waitFor, locked, waitTimeoutMs, maxHourlyUsd",
    ]),
    row(
      "on a REST v1 restUrl",
      {},
      [
        " has a problem: Pod needs the REST v2 interface, but runpod:restUrl is http://127.0.0.1:9/v1 (REST v1). Set runpod:restUrl to a URL ending in /v2.",
      ],
      { field: "restUrl", dialect: "v1" },
    ),
  ],
};

function unwrap(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unwrap);
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    if (o[SECRET_SIG_KEY] === SECRET_SIG) return unwrap(o.value);
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, unwrap(x)]));
  }
  return v;
}

const CAPTURE = process.env.CAPTURE_CHECK_FAILURES === "1";

describe("every check failure of every resource, as the engine prints it (step_generator.go issueCheckFailures)", () => {
  const hosts: Partial<Record<"v1" | "v2" | "emulator", ProviderHost>> = {};
  const providers: Partial<Record<Kind, string>> = {};
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    for (const dialect of ["v1", "v2"] as const) {
      const host = await startProviderHost({ projectDir });
      await host.configure({
        "runpod:apiKey": "rpa_check_only_never_sent",
        "runpod:restUrl": `http://127.0.0.1:9/${dialect}`,
        "runpod:serverlessUrl": "http://127.0.0.1:9/v2",
      });
      hosts[dialect] = host;
    }
    emu = await startEmulator({ apiKeys: ["rpa_check_catalog_only"], rateLimits: false });
    hosts.emulator = await startProviderHost({ projectDir });
    await hosts.emulator.configure({
      "runpod:apiKey": "rpa_check_catalog_only",
      "runpod:restUrl": emu.restUrl,
      "runpod:serverlessUrl": emu.serverlessUrl,
    });
    for (const kind of Object.keys(BASE) as Kind[])
      providers[kind] = await serializedProvider(projectDir, kind);
  }, 120_000);
  afterAll(async () => {
    for (const host of Object.values(hosts)) await host?.close();
    await emu?.close();
  });

  /** The lines the CLI prints for these program inputs. */
  async function printedFor(kind: Kind, name: string, row: Row): Promise<string[]> {
    const program: Record<string, unknown> = { ...BASE[kind] };
    for (const [k, v] of Object.entries(row.change)) {
      if (v === undefined) delete program[k];
      else program[k] = v;
    }
    const host = hosts[row.service ?? row.dialect ?? "v2"]!;
    const news = { ...(unwrap(program) as Record<string, unknown>), __provider: providers[kind] };
    const olds = row.olds ? { ...row.olds, __provider: providers[kind] } : {};
    const { failures } = await host.check(urnFor(kind, name), olds, news);
    return failures.map((f) => checkFailureText(T(kind), name, program, f));
  }

  for (const kind of Object.keys(ROWS) as Kind[]) {
    it(`${kind}: the base inputs pass`, async () => {
      expect(await printedFor(kind, "ok", { what: "base", change: {}, printed: [] })).toEqual([]);
    });
    for (const row of ROWS[kind]) {
      it(`${kind}: ${row.what}`, async () => {
        const lines = await printedFor(kind, "bad", row);
        if (CAPTURE) {
          console.log(JSON.stringify({ kind, what: row.what, lines }));
          return;
        }
        expect(lines).toEqual(row.printed.map((p) => `${T(kind)} resource 'bad'${p}`));
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) {
          expect(line).toContain(row.field ?? Object.keys(row.change)[0]);
          expect(line).not.toContain(SECRET);
          expect(line).not.toContain("{<nil>}");
          expect(line).not.toContain("[object Object]");
          expect(line).not.toContain(LARGE.slice(0, 201));
          const value = line.match(/ value (.*) has a problem: /s)?.[1];
          if (value !== undefined) expect(value.length).toBeLessThanOrEqual(200);
        }
      });
    }
  }

  // The host echoes the inputs in its answer, and this harness's gRPC client takes at most 4 MB
  // (the engine's takes far more), so the payload limit is checked in process with the same code.
  it("JobRun: input over 10 MB with mode run (in process)", () => {
    const program = { ...BASE.JobRun, input: { blob: "y".repeat(10 * 1024 * 1024 + 10) } };
    const lines = checkJobRunArgs(unwrap(program) as Record<string, unknown>).map((f) =>
      checkFailureText(T("JobRun"), "bad", program, f),
    );
    expect(lines).toEqual([
      `${T("JobRun")} resource 'bad' has a problem: input makes the job request 10485916 bytes of JSON; mode "run" ` +
        'accepts at most 10 MB (10000000 bytes), mode "runsync" 20 MB. Pass large inputs by reference (for example ' +
        "a URL, or through s3Config).",
    ]);
  });
});

/**
 * Bad input, table-driven: malformed resource arguments (checked by the provider in Pulumi's real
 * dynamic-provider host, from the installed package), malformed lookup and client arguments,
 * bad configuration, and malformed answers from a scripted server. Every case must give a clear
 * error naming the field; none may crash the host or lose the state it already manages.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  ResponseValidationError,
  RunpodClient,
  type RunpodClientOptions,
  ValidationError,
} from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { getEndpointHealth } from "../../src/provider/endpointHealth";
import { getNetworkVolume, getNetworkVolumes } from "../../src/provider/networkVolume/lookups";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const API_KEY = "bad-input-key-9d2f";
const PASSWORD = "keeper-Pa55-77e1";
const SCRIPTED_KEY = "scripted-key-5e0b";
const projectDir = inject("installedProjectDir");

let emu: RunningEmulator;
let host: ProviderHost;
let client: RunpodClient;
let scripted: ScriptedServer;
/** Resources created before the bad input, which must survive it unchanged. */
let keeperAuth: { id: string; outs: any };
let keeperJob: { id: string; outs: any };

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], endpoints: ["echo:2"] });
  client = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, serverlessUrl: emu.serverlessUrl });
  host = await startProviderHost({ projectDir });
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:restUrl": emu.restUrlV2,
    "runpod:serverlessUrl": emu.serverlessUrl,
  });
  keeperAuth = await host.create(urnFor("ContainerRegistryAuth", "keeper"), {
    name: "keeper",
    username: "u",
    password: PASSWORD,
  });
  keeperJob = await host.create(urnFor("JobRun", "keeper"), {
    endpointId: "echo",
    input: { output: "kept" },
  });
  scripted = await startScriptedServer();
});

afterAll(async () => {
  await scripted?.close();
  await host?.close();
  await emu?.close();
});

/** JobRun arguments that `check` must refuse, with the property each failure must name. */
const JOB_RUN_ARGS: Array<[string, Record<string, unknown>, string]> = [
  ["endpointId missing", { input: {} }, "endpointId"],
  ["endpointId with a slash", { endpointId: "a/b", input: {} }, "endpointId"],
  ["endpointId a number", { endpointId: 42, input: {} }, "endpointId"],
  ["input missing", { endpointId: "echo" }, "input"],
  ["input a string", { endpointId: "echo", input: "prompt" }, "input"],
  ["policy.ttl below 10 s", { endpointId: "echo", input: {}, policy: { ttl: 5 } }, "policy.ttl"],
  [
    "policy.executionTimeout not above 5 s",
    { endpointId: "echo", input: {}, policy: { executionTimeout: 1000 } },
    "policy.executionTimeout",
  ],
  [
    "policy.lowPriority a string",
    { endpointId: "echo", input: {}, policy: { lowPriority: "yes" } },
    "policy.lowPriority",
  ],
  ["webhook not a URL", { endpointId: "echo", input: {}, webhook: "callback" }, "webhook"],
  ["mode unknown", { endpointId: "echo", input: {}, mode: "stream" }, "mode"],
  ["timeoutMs zero", { endpointId: "echo", input: {}, timeoutMs: 0 }, "timeoutMs"],
  ["timeoutMs fractional", { endpointId: "echo", input: {}, timeoutMs: 1.5 }, "timeoutMs"],
  ["cancelOnTimeout a string", { endpointId: "echo", input: {}, cancelOnTimeout: "true" }, "cancelOnTimeout"],
  ["expect.status unknown", { endpointId: "echo", input: {}, expect: { status: "DONE" } }, "expect.status"],
  ["expect a string", { endpointId: "echo", input: {}, expect: "COMPLETED" }, "expect"],
  ["retries negative", { endpointId: "echo", input: {}, retries: -1 }, "retries"],
  ["retries above 100", { endpointId: "echo", input: {}, retries: 101 }, "retries"],
  ["triggers not an array", { endpointId: "echo", input: {}, triggers: "always" }, "triggers"],
  [
    "collectStream with mode runsync",
    { endpointId: "echo", input: {}, mode: "runsync", collectStream: true },
    "collectStream",
  ],
  [
    "s3Config without accessSecret",
    {
      endpointId: "echo",
      input: {},
      s3Config: { accessId: "a", bucketName: "b", endpointUrl: "https://s3.example.com" },
    },
    "s3Config.accessSecret",
  ],
  ["unknown argument (typo)", { endpointId: "echo", input: {}, timeout: 5 }, "timeout"],
];

/** ContainerRegistryAuth arguments that `check` must refuse. */
const REGISTRY_AUTH_ARGS: Array<[string, Record<string, unknown>, string]> = [
  ["name missing", { username: "u", password: "p" }, "name"],
  ["name empty", { name: "", username: "u", password: "p" }, "name"],
  ["username a number", { name: "n", username: 5, password: "p" }, "username"],
  ["password missing", { name: "n", username: "u" }, "password"],
  [
    "adoptExisting a string",
    { name: "n", username: "u", password: "p", adoptExisting: "yes" },
    "adoptExisting",
  ],
  ["unknown property", { name: "n", username: "u", password: "p", registry: "ghcr.io" }, "registry"],
];

/**
 * The failure about `property`: named as the property when the engine may print its value (a
 * plain, short, top-level one that is given), else with no property and the field named in the
 * reason (a nested path, a secret, a large or missing value, an unknown argument: the engine
 * prints a named property's value whole).
 */
function failureAbout(failures: { property: string; reason: string }[], property: string) {
  const nestedOrSecret = property.includes(".") || property === "password" || property.startsWith("s3Config");
  const inReason = (f: { property: string; reason: string }) =>
    f.property === "" && f.reason.includes(property);
  const found = failures.find((f) => (nestedOrSecret ? inReason(f) : f.property === property || inReason(f)));
  expect(found, `a failure about ${property} in ${JSON.stringify(failures)}`).toBeDefined();
  return found as { property: string; reason: string };
}

describe("malformed resource arguments, checked in the provider host", () => {
  it.each(JOB_RUN_ARGS)("JobRun: %s fails check naming the field", async (_case, news, property) => {
    const { failures } = await host.check(urnFor("JobRun", "bad"), {}, news);
    expect(failureAbout(failures, property).reason).toContain(property.split(".").at(-1));
  });

  it.each(REGISTRY_AUTH_ARGS)(
    "ContainerRegistryAuth: %s fails check naming the field",
    async (_case, news, property) => {
      const { failures } = await host.check(urnFor("ContainerRegistryAuth", "bad"), {}, news);
      expect(failureAbout(failures, property).reason).toContain(property);
    },
  );
});

/** Calls that must reject before any network call, with the field their error names. */
const CALLS: Array<[string, () => Promise<unknown>, string]> = [
  ["getNetworkVolume with neither id nor name", () => getNetworkVolume({} as never, { client }), "name"],
  [
    "getNetworkVolume with both id and name",
    () => getNetworkVolume({ id: "v1", name: "data" } as never, { client }),
    "id",
  ],
  ["getNetworkVolume with an empty id", () => getNetworkVolume({ id: "" }, { client }), "id"],
  ["getNetworkVolume with a numeric name", () => getNetworkVolume({ name: 5 } as never, { client }), "name"],
  [
    "getNetworkVolumes with a numeric dataCenterId",
    () => getNetworkVolumes({ dataCenterId: 3 } as never, { client }),
    "dataCenterId",
  ],
  [
    "getEndpointHealth with an empty endpointId",
    () => getEndpointHealth({ endpointId: "" }, { client }),
    "endpointId",
  ],
  [
    "getEndpointHealth without arguments",
    () => getEndpointHealth(undefined as never, { client }),
    "endpointId",
  ],
  [
    "endpoint.run with policy.ttl too long",
    () => client.endpoint("echo").run({ input: {}, policy: { ttl: 10 ** 12 } }),
    "policy.ttl",
  ],
  [
    "endpoint.runSync with wait below 1 s",
    () => client.endpoint("echo").runSync({ input: {} }, { wait: 5 }),
    "wait",
  ],
  [
    "endpoint.waitForJob with a negative timeoutMs",
    () => client.endpoint("echo").waitForJob("j", { timeoutMs: -1 }),
    "timeoutMs",
  ],
  [
    "registryAuths.create without a password",
    () => client.registryAuths.create({ name: "n", username: "u" } as never),
    "password",
  ],
];

/** Client options that must be refused at construction, with the field their error names. */
const CONFIGS: Array<[string, RunpodClientOptions, string]> = [
  ["no API key anywhere", { env: {} }, "RUNPOD_API_KEY"],
  ["a blank API key", { apiKey: "  ", env: {} }, "apiKey"],
  ["restUrl not a URL", { apiKey: "k", restUrl: "rest.runpod.io" }, "restUrl"],
  ["restUrl with ftp", { apiKey: "k", restUrl: "ftp://rest.runpod.io/v1" }, "restUrl"],
  ["restUrl of an unknown version", { apiKey: "k", restUrl: "https://rest.runpod.io/v3" }, "restUrl"],
  ["serverlessUrl not a URL", { apiKey: "k", serverlessUrl: "api.runpod.ai" }, "serverlessUrl"],
  [
    "RUNPOD_REST_API_URL not a URL",
    { apiKey: "k", env: { RUNPOD_REST_API_URL: "nope" } },
    "RUNPOD_REST_API_URL",
  ],
  ["timeoutMs zero", { apiKey: "k", timeoutMs: 0 }, "timeoutMs"],
  ["maxRetries fractional", { apiKey: "k", maxRetries: 1.5 }, "maxRetries"],
];

describe("malformed arguments and configuration, refused before any request", () => {
  it.each(CALLS)("%s names the field", async (_case, call, field) => {
    const before = emu.stats().requests;
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(field);
    expect(emu.stats().requests).toBe(before);
  });

  it.each(CONFIGS)("a client with %s is refused naming it", (_case, options, field) => {
    expect(() => new RunpodClient(options)).toThrow(ValidationError);
    expect(() => new RunpodClient(options)).toThrow(field);
  });

  it("a provider host configured without an API key fails create naming runpod:apiKey and RUNPOD_API_KEY", async () => {
    const bare = await startProviderHost({ projectDir });
    try {
      await bare.configure({ "runpod:restUrl": emu.restUrlV2 });
      const error = await bare
        .create(urnFor("ContainerRegistryAuth", "nokey"), { name: "nokey", username: "u", password: "p" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(HostError);
      expect((error as Error).message).toMatch(/runpod:apiKey/);
      expect((error as Error).message).toMatch(/RUNPOD_API_KEY/);
      const bad = await bare.create(urnFor("JobRun", "nokey"), { endpointId: "echo", input: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((bad as Error).message).toMatch(/RUNPOD_API_KEY/);
    } finally {
      await bare.close();
    }
    expect((await client.registryAuths.list()).map((r) => r.name)).not.toContain("nokey");
  });

  it("a provider host configured with a malformed restUrl fails create naming restUrl", async () => {
    const bare = await startProviderHost({ projectDir });
    try {
      await bare.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": "not-a-url" });
      const error = await bare
        .create(urnFor("ContainerRegistryAuth", "badurl"), { name: "badurl", username: "u", password: "p" })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(HostError);
      expect((error as Error).message).toMatch(/restUrl/);
    } finally {
      await bare.close();
    }
  });
});

/** Malformed answers: what the scripted server sends, the call, and what the error must name. */
const ANSWERS: Array<
  [
    string,
    { status?: number; headers?: Record<string, string>; body: unknown },
    (c: RunpodClient) => Promise<unknown>,
    RegExp,
  ]
> = [
  [
    "status answers malformed JSON",
    { headers: { "content-type": "application/json" }, body: '{"id": "j", "status": ' },
    (c) => c.endpoint("ep").status("j"),
    /malformed JSON/,
  ],
  ["status answers without a status", { body: { id: "j" } }, (c) => c.endpoint("ep").status("j"), /status/],
  [
    "status answers a numeric status",
    { body: { id: "j", status: 5 } },
    (c) => c.endpoint("ep").status("j"),
    /status/,
  ],
  ["run answers an array", { body: [] }, (c) => c.endpoint("ep").run({ input: {} }), /body|id/],
  [
    "health answers a string count",
    { body: { jobs: { completed: "many" }, workers: {} } },
    (c) => c.endpoint("ep").health(),
    /jobs\.completed/,
  ],
  [
    "registry list (v2) answers without its wrapper",
    { body: [{ id: "r", name: "n" }] },
    (c) => c.registryAuths.list(),
    /registries|body/,
  ],
  [
    "registry create answers without an id",
    { status: 201, body: { name: "n" } },
    (c) => c.registryAuths.create({ name: "n", username: "u", password: "p" }),
    /id/,
  ],
  [
    "volume list answers a string size",
    { body: { networkVolumes: [{ id: "v", name: "n", size: "big", dataCenter: "EU-RO-1" }] } },
    (c) => c.networkVolumes.list(),
    /size/,
  ],
];

describe("malformed server answers", () => {
  it.each(ANSWERS)("%s: a ResponseValidationError naming the field", async (_case, reply, call, mentions) => {
    const c = new RunpodClient({
      apiKey: SCRIPTED_KEY,
      restUrl: `${scripted.url}/v2`,
      serverlessUrl: scripted.url,
      maxRetries: 0,
      rateLimits: false,
    });
    scripted.enqueue(reply);
    const error = await call(c).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toMatch(mentions);
    expect((error as Error).message).not.toContain(SCRIPTED_KEY);
    expect(scripted.pending).toBe(0);
  });
});

describe("after all the bad input", () => {
  it("the host still answers and the state it manages is intact", async () => {
    const auth = await host.read(keeperAuth.id, urnFor("ContainerRegistryAuth", "keeper"), keeperAuth.outs);
    expect(auth).toMatchObject({ id: keeperAuth.id, props: { name: "keeper" } });
    const job = await host.read(keeperJob.id, urnFor("JobRun", "keeper"), keeperJob.outs);
    expect(job).toMatchObject({ id: keeperJob.id, props: { status: "COMPLETED", output: "kept" } });
    expect((await client.registryAuths.list()).map((r) => r.name)).toEqual(["keeper"]);
    const fresh = await host.create(urnFor("JobRun", "after"), { endpointId: "echo", input: { output: 1 } });
    expect(fresh.outs).toMatchObject({ status: "COMPLETED", output: 1 });
    expect(host.stderr()).not.toContain(PASSWORD);
  });

  it("the table holds at least 40 cases", () => {
    const total =
      JOB_RUN_ARGS.length + REGISTRY_AUTH_ARGS.length + CALLS.length + CONFIGS.length + 2 + ANSWERS.length;
    expect(total).toBeGreaterThanOrEqual(40);
  });
});

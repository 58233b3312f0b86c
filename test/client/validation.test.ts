import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type JobRequest,
  MB,
  parseInput,
  RunpodClient,
  resolveRestUrl,
  ValidationError,
} from "../../src/client";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { API_KEY, clientFor, job } from "./helpers";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer({ fallback: () => ({ body: job("IN_QUEUE") }) });
});
afterAll(async () => {
  await server.close();
});

/** Runs `call`, expects a ValidationError with this path and message, and that nothing was sent. */
async function rejects(call: () => Promise<unknown>, path: (string | number)[], message: string | RegExp) {
  const before = server.requests.length;
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  const e = error as ValidationError;
  expect(e.code).toBe("validation_error");
  expect(e.path).toEqual(path);
  if (typeof message === "string") expect(e.message).toContain(message);
  else expect(e.message).toMatch(message);
  expect(server.requests.length).toBe(before);
}

describe("job request bodies", () => {
  const ep = () => clientFor(server).endpoint("ep");
  const run = (body: unknown) => () => ep().run(body as JobRequest);

  it("requires input", () => rejects(run({}), ["input"], "input is required"));
  it("requires input to be an object, not an array, string or null", async () => {
    for (const input of [[1, 2], "text", null, 3]) {
      await rejects(run({ input }), ["input"], "input must be a JSON object");
    }
  });
  it("requires the body to be an object", () => rejects(run("hello"), [], /object/));
  it("requires webhook to be an http(s) URL", async () => {
    await rejects(run({ input: {}, webhook: "not a url" }), ["webhook"], "webhook must be an http(s) URL");
    await rejects(run({ input: {}, webhook: "ftp://host/x" }), ["webhook"], "webhook must be an http(s) URL");
  });
  it("requires policy.executionTimeout to be an integer above 5000 ms", async () => {
    await rejects(
      run({ input: {}, policy: { executionTimeout: 5000 } }),
      ["policy", "executionTimeout"],
      "policy.executionTimeout must be greater than 5000 ms",
    );
    await rejects(
      run({ input: {}, policy: { executionTimeout: 6000.5 } }),
      ["policy", "executionTimeout"],
      "policy.executionTimeout must be an integer",
    );
  });
  it("requires policy.ttl between 10000 ms and one week", async () => {
    await rejects(
      run({ input: {}, policy: { ttl: 9999 } }),
      ["policy", "ttl"],
      "policy.ttl must be at least 10000 ms",
    );
    await rejects(
      run({ input: {}, policy: { ttl: 604_800_001 } }),
      ["policy", "ttl"],
      "policy.ttl must be at most 604800000 ms",
    );
  });
  it("requires policy.lowPriority to be a boolean", () =>
    rejects(
      run({ input: {}, policy: { lowPriority: "yes" } }),
      ["policy", "lowPriority"],
      "policy.lowPriority must be a boolean",
    ));
  it("rejects unknown policy fields by name", () =>
    rejects(run({ input: {}, policy: { tll: 20_000 } }), ["policy"], "unknown field policy.tll"));
  it("requires every s3Config field", async () => {
    const s3 = {
      accessId: "id",
      accessSecret: "secret-value",
      bucketName: "b",
      endpointUrl: "https://s3.example.com",
    };
    for (const field of ["accessId", "accessSecret", "bucketName", "endpointUrl"] as const) {
      const { [field]: _, ...rest } = s3;
      await rejects(run({ input: {}, s3Config: rest }), ["s3Config", field], `s3Config.${field}`);
    }
    await rejects(
      run({ input: {}, s3Config: { ...s3, bucketName: "" } }),
      ["s3Config", "bucketName"],
      "s3Config.bucketName must not be empty",
    );
    await rejects(
      run({ input: {}, s3Config: { ...s3, endpointUrl: "s3.example.com" } }),
      ["s3Config", "endpointUrl"],
      "s3Config.endpointUrl must be an http(s) URL",
    );
  });
  it("never puts the s3 accessSecret into a validation message", async () => {
    const e = await ep()
      .run({
        input: {},
        s3Config: { accessId: "id", accessSecret: "TOPSECRET", bucketName: "", endpointUrl: "x" },
      })
      .catch((x: unknown) => x as Error);
    expect((e as Error).message).not.toContain("TOPSECRET");
    expect(JSON.stringify(e)).not.toContain("TOPSECRET");
  });
  it("accepts valid bounds: executionTimeout 5001, ttl 10000 and one week", async () => {
    const before = server.requests.length;
    await ep().run({ input: {}, policy: { executionTimeout: 5001, ttl: 10_000 } });
    await ep().run({ input: {}, policy: { ttl: 604_800_000, lowPriority: true } });
    expect(server.requests.length).toBe(before + 2);
  });

  /** A body whose serialized JSON is exactly `bytes` long. */
  const bodyOf = (bytes: number) => {
    const overhead = JSON.stringify({ input: { s: "" } }).length;
    return { input: { s: "x".repeat(bytes - overhead) } };
  };
  it("limits run bodies to 10 MB (10,000,000 bytes of JSON)", async () => {
    expect(JSON.stringify(bodyOf(10 * MB)).length).toBe(10_000_000);
    await rejects(() => ep().run(bodyOf(10 * MB + 1)), [], "at most 10 MB (10000000 bytes) for /run");
    await ep().run(bodyOf(10 * MB));
    expect(server.requests.at(-1)?.body.length).toBe(10_000_000);
  });
  it("limits runSync bodies to 20 MB, counting UTF-8 bytes", async () => {
    await rejects(() => ep().runSync(bodyOf(20 * MB + 1)), [], "at most 20 MB (20000000 bytes) for /runsync");
    // 7 million 3-byte characters: 7 M string length, 21 MB on the wire.
    await rejects(() => ep().runSync({ input: { s: "€".repeat(7_000_000) } }), [], /20 MB/);
    await ep().runSync(bodyOf(20 * MB));
  });
});

describe("query and path parameters", () => {
  const ep = () => clientFor(server).endpoint("ep");
  it("requires runSync wait between 1000 and 300000 ms", async () => {
    await rejects(
      () => ep().runSync({ input: {} }, { wait: 999 }),
      ["wait"],
      "wait must be at least 1000 ms",
    );
    await rejects(
      () => ep().runSync({ input: {} }, { wait: 300_001 }),
      ["wait"],
      "wait must be at most 300000 ms",
    );
    await rejects(() => ep().runSync({ input: {} }, { wait: 1500.5 }), ["wait"], "wait must be an integer");
  });
  it("requires statusSync wait between 1000 and 300000 ms", () =>
    rejects(() => ep().statusSync("j", { wait: 10 }), ["wait"], "wait must be at least 1000 ms"));
  it("requires status ttl to be a positive integer", async () => {
    await rejects(() => ep().status("j", { ttl: 0 }), ["ttl"], "ttl must be positive");
    await rejects(() => ep().status("j", { ttl: 1.5 }), ["ttl"], "ttl must be an integer");
  });
  it('rejects "", "." and ".." as ids', async () => {
    for (const id of ["", ".", ".."]) {
      await rejects(() => ep().status(id), [], "path parameter must be a non-empty id");
      await rejects(() => ep().cancel(id), [], "path parameter");
      await rejects(() => clientFor(server).registryAuths.get(id), [], "path parameter");
    }
    expect(() => clientFor(server).endpoint("..")).toThrow(ValidationError);
    expect(() => clientFor(server).endpoint("")).toThrow(/endpointId must be a non-empty endpoint id/);
  });
  it("rejects per-call timeoutMs and maxRetries that make no sense", async () => {
    await rejects(() => ep().health({ timeoutMs: 0 }), ["timeoutMs"], "timeoutMs must be a positive number");
    await rejects(
      () => ep().status("j", { maxRetries: -1 }),
      ["maxRetries"],
      "maxRetries must be an integer >= 0",
    );
  });
  it("rejects waitForJob timeoutMs that is not positive", () =>
    rejects(() => ep().waitForJob("j", { timeoutMs: 0 }), ["timeoutMs"], "timeoutMs must be a positive"));
});

describe("management inputs", () => {
  const v1 = () => clientFor(server);
  const v2 = () => clientFor(server, { restUrl: `${server.url}/v2` });
  it("requires registry auth name, username and password", async () => {
    await rejects(
      () => v1().registryAuths.create({ name: "n", username: "u" } as never),
      ["password"],
      "password is required",
    );
    await rejects(
      () => v1().registryAuths.create({ name: "", username: "u", password: "p" }),
      ["name"],
      "name must not be empty",
    );
    await rejects(
      () => v2().registryAuths.create({ name: "n", username: 5 as never, password: "p" }),
      ["username"],
      "username must be a string",
    );
  });
  it("never puts the registry password into a validation message", async () => {
    const e = await v1()
      .registryAuths.create({ name: "n", username: "u", password: "hunter2-secret", extra: 1 } as never)
      .catch((x: unknown) => x as Error);
    expect(e).toBeInstanceOf(ValidationError);
    expect(JSON.stringify(e) + (e as Error).message).not.toContain("hunter2-secret");
  });
  it("checks v1 volume sizes 0..4000 GB and rejects type", async () => {
    await rejects(
      () => v1().networkVolumes.create({ name: "n", size: 4001, dataCenterId: "EU" }),
      ["size"],
      "size must be at most 4000 GB",
    );
    await rejects(
      () => v1().networkVolumes.create({ name: "n", size: -1, dataCenterId: "EU" }),
      ["size"],
      "size must be at least 0 GB",
    );
    await rejects(
      () => v1().networkVolumes.create({ name: "n", size: 10, dataCenterId: "EU", type: "STANDARD" }),
      ["type"],
      "type is only supported by the REST v2 interface",
    );
    await rejects(
      () => v1().networkVolumes.update("v", { size: 4001 }),
      ["size"],
      "size must be at most 4000 GB",
    );
  });
  it("checks v2 volume sizes 10..4096 GB and type", async () => {
    await rejects(
      () => v2().networkVolumes.create({ name: "n", size: 9, dataCenterId: "EU" }),
      ["size"],
      "size must be at least 10 GB",
    );
    await rejects(
      () => v2().networkVolumes.create({ name: "n", size: 4097, dataCenterId: "EU" }),
      ["size"],
      "size must be at most 4096 GB",
    );
    await rejects(
      () => v2().networkVolumes.create({ name: "n", size: 10, dataCenterId: "EU", type: "FAST" as never }),
      ["type"],
      "type must be STANDARD or HIGH_PERFORMANCE",
    );
    await rejects(
      () => v2().networkVolumes.create({ name: "n", size: 10 } as never),
      ["dataCenterId"],
      "dataCenterId is required",
    );
    await rejects(
      () => v2().networkVolumes.update("v", { size: 5 }),
      ["size"],
      "size must be at least 10 GB",
    );
  });
  it("requires an update to change something", () =>
    rejects(() => v2().networkVolumes.update("v", {}), [], "give name and/or size to update"));
});

describe("client options", () => {
  it("names the option and the variable when no key is given", () => {
    expect(() => new RunpodClient({ env: {} })).toThrow(ValidationError);
    expect(() => new RunpodClient({ env: {} })).toThrow(/apiKey.*RUNPOD_API_KEY/);
    expect(() => new RunpodClient({ apiKey: "  ", env: { RUNPOD_API_KEY: "" } })).toThrow(/RUNPOD_API_KEY/);
  });
  it("falls back to the environment, treating blank values as unset", () => {
    const client = new RunpodClient({
      env: { RUNPOD_API_KEY: API_KEY, RUNPOD_REST_API_URL: "http://h:1/v1", RUNPOD_SERVERLESS_API_URL: " " },
    });
    expect(client.restDialect).toBe("v1");
    expect(client.restUrl).toBe("http://h:1/v1");
    expect(client.serverlessUrl).toBe("https://api.runpod.ai");
  });
  it("prefers options over the environment and defaults to REST v2", () => {
    const client = new RunpodClient({
      apiKey: "k",
      env: { RUNPOD_REST_API_URL: "http://h:1/v1" },
      restUrl: "http://o:2/v2/",
    });
    expect(client.restUrl).toBe("http://o:2/v2");
    const defaults = new RunpodClient({ apiKey: "k", env: {} });
    expect(defaults.restUrl).toBe("https://api.runpod.io/v2");
    expect(defaults.restDialect).toBe("v2");
  });
  it("picks the dialect from the version segment, appending /v2 when there is none", () => {
    expect(resolveRestUrl("https://rest.runpod.io/v1")).toEqual({
      restUrl: "https://rest.runpod.io/v1",
      dialect: "v1",
    });
    expect(resolveRestUrl("https://api.runpod.io")).toEqual({
      restUrl: "https://api.runpod.io/v2",
      dialect: "v2",
    });
    expect(resolveRestUrl("http://127.0.0.1:9/prefix/")).toEqual({
      restUrl: "http://127.0.0.1:9/prefix/v2",
      dialect: "v2",
    });
    expect(() => resolveRestUrl("https://api.runpod.io/v3")).toThrow(/v3.*\/v1 or \/v2/);
    expect(() => resolveRestUrl("not a url")).toThrow(/restUrl must be an absolute http\(s\) URL/);
  });
  it("rejects bad numbers by option name", () => {
    expect(() => new RunpodClient({ apiKey: "k", timeoutMs: 0, env: {} })).toThrow(/timeoutMs/);
    expect(() => new RunpodClient({ apiKey: "k", maxRetries: 1.5, env: {} })).toThrow(/maxRetries/);
  });
});

describe("parseInput (shared with providers and the emulator)", () => {
  it("names nested paths and array indexes, with a prefix", () => {
    const schema = z.strictObject({
      items: z.array(z.strictObject({ size: z.int({ error: "size must be an integer" }) })),
    });
    try {
      parseInput(schema, { items: [{ size: 1 }, { size: "x" }] }, "thing", ["spec"]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      expect((e as ValidationError).path).toEqual(["spec", "items", 1, "size"]);
      expect((e as ValidationError).message).toBe("Invalid thing: spec.items[1].size must be an integer");
    }
  });
});

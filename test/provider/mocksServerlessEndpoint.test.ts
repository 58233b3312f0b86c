/**
 * `getServerlessEndpoint` / `getServerlessEndpointOutput` in a program under
 * `@pulumi/pulumi/testing` mocks, against the emulator's REST v2 serverless API: the version a
 * stack puts in a JobRun's `triggers`, the latest release, workers by status and stale workers
 * during a rolling update.
 */
import { inspect } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import {
  getServerlessEndpoint,
  getServerlessEndpointOutput,
} from "../../src/provider/serverlessEndpoint/lookup";
import { startScriptedServer } from "../support/scriptedServer";

let emu: RunningEmulator;
let client: RunpodClient;
const registeredInputs = new Map<string, Record<string, unknown>>();

/** A resource of some other provider that takes the endpoint's version (registered with the mocks). */
class Consumer extends pulumi.CustomResource {
  constructor(name: string, args: { triggers: pulumi.Input<unknown[]> }) {
    super("test:index:Consumer", name, args);
  }
}

beforeAll(async () => {
  // A long rollout, so the stale workers are still there when the lookup reads them.
  emu = await startEmulator({ apiKeys: ["emu-key-lookup14"], endpoints: ["echo:2"], rolloutMs: 60_000 });
  client = new RunpodClient({ apiKey: emu.apiKey, serverlessUrl: emu.serverlessUrl, restUrl: emu.restUrl });
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registeredInputs.set(args.name, args.inputs);
        return { id: `id-${args.name}`, state: args.inputs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await emu?.close();
});

const value = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));

describe("getServerlessEndpoint", () => {
  it("reads version, latest release and workers by status, then sees a release's stale workers", async () => {
    const before = await getServerlessEndpoint({ id: "echo" }, { client });
    const releases = await client.serverless.releases("echo");
    expect(before).toMatchObject({
      id: "echo",
      name: "echo",
      version: releases.endpointVersion,
      latestReleaseId: releases.releases[0]?.id,
      workers: { IDLE: 2 },
      staleWorkers: 0,
      rolloutInProgress: false,
      workersMax: 2,
    });
    expect(typeof before.version).toBe("number");

    await client.serverless.update("echo", { env: { MODEL: "v2" } });
    const after = await getServerlessEndpoint({ id: "echo" }, { client });
    expect(after.version).toBe((before.version as number) + 1);
    expect(after.latestReleaseId).not.toBe(before.latestReleaseId);
    expect(after).toMatchObject({ staleWorkers: 2, rolloutInProgress: true, workers: { IDLE: 2 } });
  });

  it("feeds a resource's triggers through getServerlessEndpointOutput", async () => {
    const ep = getServerlessEndpointOutput({ id: pulumi.output("echo") }, { client });
    new Consumer("smoke", { triggers: [ep.version] });
    const version = await value(ep.version);
    expect(version).toBe((await client.serverless.workers("echo")).endpointVersion);
    await value(pulumi.output(ep.version).apply(() => undefined));
    await new Promise((resolve) => setImmediate(resolve));
    expect(registeredInputs.get("smoke")).toEqual({ triggers: [version] });
  });

  it("rejects a missing id before any network call, and an unknown one with the service's answer", async () => {
    const offline = new RunpodClient({
      apiKey: "k-offline-0000",
      restUrl: "http://127.0.0.1:9/v2",
      maxRetries: 0,
    });
    const error = await getServerlessEndpoint({ id: "" }, { client: offline }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "validation_error", path: ["id"] });
    expect((error as Error).message).toContain("getServerlessEndpoint: id must be");
    // Ids with a slash or whitespace are refused locally too, as the other lookups do:
    // the offline client would fail with a connection error if they reached the network.
    for (const id of ["ep/../other", "my endpoint", ".."]) {
      const refused = await getServerlessEndpoint({ id }, { client: offline }).catch((e: unknown) => e);
      expect(refused, id).toMatchObject({ code: "validation_error", path: ["id"] });
      expect((refused as Error).message).toContain("without whitespace or slashes");
    }
    await expect(getServerlessEndpoint({ id: "nosuch" }, { client })).rejects.toThrow(/404|not found/i);
  });
});

describe("getServerlessEndpoint with a malformed /releases answer", () => {
  it("fails without carrying the releases' env values in the error, its inspection or its JSON", async () => {
    const TOKEN = "sk_live_env_value_that_must_not_leak_42";
    const server = await startScriptedServer({
      fallback: (req) => {
        if (req.pathname.endsWith("/releases")) {
          // `rollout` missing: the answer does not have the documented shape.
          return {
            body: {
              endpointVersion: 2,
              releases: [
                {
                  id: "rel_2",
                  version: 2,
                  diff: [
                    { field: "template.env", old: { API_TOKEN: "old" }, new: { API_TOKEN: TOKEN } },
                    { field: "env.API_TOKEN", old: null, new: TOKEN },
                    { field: 7, old: TOKEN, new: [TOKEN] },
                  ],
                },
              ],
            },
          };
        }
        if (req.pathname.endsWith("/workers")) return { body: { endpointVersion: 2, workers: [] } };
        return { body: { id: "ep1", name: "ep1", version: 2 } };
      },
    });
    try {
      const lookupClient = new RunpodClient({
        apiKey: "key-lookup-malformed",
        restUrl: `${server.url}/v2`,
        serverlessUrl: server.url,
        rateLimits: false,
        maxRetries: 0,
        env: {},
      });
      const error = await getServerlessEndpoint({ id: "ep1" }, { client: lookupClient }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain("/releases");
      for (const text of [inspect(error, { depth: 20 }), JSON.stringify(error), String(error)]) {
        expect(text).not.toContain(TOKEN);
      }
    } finally {
      await server.close();
    }
  });
});

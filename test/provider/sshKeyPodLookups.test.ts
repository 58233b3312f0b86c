/**
 * `getSshKeys` and `getPod` (and their Output forms) in a program under `@pulumi/pulumi/testing`
 * mocks, against the emulator's REST v2 `/v2/account/ssh-keys` and `/v2/pods`: what they read,
 * that a pod's env values never reach a plain Output, and that bad input and a missing API key
 * fail before any network call.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { getPod, getPodOutput } from "../../src/provider/pod/lookup";
import { getSshKeys, getSshKeysOutput } from "../../src/provider/sshKey/lookup";
import { KEYS } from "../fixtures/sshKeys";

const API_KEY = "lookup-key-sshpod-3f19";
const ENV_SECRET = "hf_pod-env-secret-77ab21";
let emu: RunningEmulator;
let client: RunpodClient;

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
  client = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
  await pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `id-${args.name}`, state: args.inputs }), call: () => ({}) },
    "project",
    "stack",
    false,
  );
});

afterAll(async () => {
  await emu?.close();
});

const value = <T>(output: pulumi.Output<T>): Promise<T> => new Promise((resolve) => output.apply(resolve));
/** Settings with no API key anywhere (the environment is not consulted when settings are given). */
const keyless = () => ({ restUrl: emu.restUrlV2 });

describe("getSshKeys", () => {
  it("lists the account's keys with type, comment and the fingerprint ssh-keygen prints", async () => {
    await client.account.setSshKeys([KEYS.ed25519.line, KEYS.rsa.line]);
    const keys = await getSshKeys({}, { client });
    expect(keys).toEqual([
      {
        publicKey: KEYS.ed25519.line,
        type: "ssh-ed25519",
        comment: "me@ed25519",
        fingerprint: KEYS.ed25519.fingerprint,
      },
      {
        publicKey: KEYS.rsa.line,
        type: "ssh-rsa",
        comment: "me@rsab2048",
        fingerprint: KEYS.rsa.fingerprint,
      },
    ]);
    expect(await value(getSshKeysOutput({}, { client }))).toEqual(keys);
  });

  it("answers an empty list for an account with no keys", async () => {
    await client.account.setSshKeys([]);
    expect(await getSshKeys(undefined, { client })).toEqual([]);
  });

  it("without an API key fails in one line naming runpod:apiKey and RUNPOD_API_KEY", async () => {
    const error = await getSshKeys({}, { settings: keyless() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as Error).message;
    expect(message).toContain("runpod:apiKey");
    expect(message).toContain("RUNPOD_API_KEY");
    expect(message).not.toContain("\n");
  });
});

describe("getPod", () => {
  it("reads the pod back, with the GPU type it landed on", async () => {
    const created = await client.pods.create({
      name: "lookup-dev",
      image: "runpod/pytorch:2",
      gpu: { id: "NVIDIA GeForce RTX 4090" },
      env: { HF_TOKEN: ENV_SECRET },
      ports: ["22/tcp"],
    });
    const pod = await getPod({ id: created.id }, { client });
    expect(pod).toMatchObject({ id: created.id, name: "lookup-dev", gpu: { id: "NVIDIA GeForce RTX 4090" } });
    expect(typeof pod.status).toBe("string");
  });

  it("the Output form is secret when the pod has env values, and plain when it has none", async () => {
    const withEnv = await client.pods.create({
      name: "lookup-env",
      image: "runpod/pytorch:2",
      cpu: { id: "cpu3c", vcpuCount: 2 },
      env: { HF_TOKEN: ENV_SECRET },
    });
    const output = getPodOutput({ id: withEnv.id }, { client });
    expect(await pulumi.isSecret(output)).toBe(true);
    expect(await pulumi.isSecret(output.status)).toBe(true);
    expect((await value(output)).id).toBe(withEnv.id);
    const plain = await client.pods.create({
      name: "lookup-plain",
      image: "x",
      cpu: { id: "cpu3c", vcpuCount: 2 },
    });
    const plainOutput = getPodOutput({ id: pulumi.output(plain.id) }, { client });
    expect(await pulumi.isSecret(plainOutput)).toBe(false);
    expect((await value(plainOutput)).name).toBe("lookup-plain");
  });

  it("refuses a malformed id before any network call, naming id and what is allowed", async () => {
    for (const id of ["", "a/b", "..", "has space"]) {
      const error = await getPod({ id }, { settings: keyless() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(/^getPod: id must be a non-empty pod id without whitespace/);
    }
  });

  it("fails with the service's 404 for an unknown pod", async () => {
    await expect(getPod({ id: "no-such-pod" }, { client })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("without an API key fails in one line naming runpod:apiKey and RUNPOD_API_KEY", async () => {
    const error = await getPod({ id: "abc" }, { settings: keyless() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/runpod:apiKey.*RUNPOD_API_KEY/);
  });
});

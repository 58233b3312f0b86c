/**
 * Program-side wiring of ContainerRegistryAuth under `@pulumi/pulumi/testing` mocks: what the
 * resource registers (type token, inputs, options) and what the program sees (outputs, secrecy).
 * Mocks never run the provider; the provider host tests cover its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it, vi } from "vitest";
import { RunpodProvider } from "../../src/provider/common/dynamicProvider";
import { ContainerRegistryAuth } from "../../src/provider/containerRegistryAuth/resource";
import {
  SECRET_SIG,
  SECRET_VALUE_SIG,
  useMockedProgram,
  outputValue as value,
} from "../support/mockedProgram";

const PASSWORD = "mock-registry-pass-7f3a9c";
const TOKEN = "pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;
const waitForRegistration = mocked.registration;
const seenOptions = mocked.options;

describe("ContainerRegistryAuth in a program (mocks)", () => {
  it("registers the dynamic type token and sends the password to the engine as a secret", async () => {
    await runProgram(
      () => new ContainerRegistryAuth("ghcr", { name: "ghcr", username: "octo", password: PASSWORD }),
    );
    await waitForRegistration("ghcr");
    const reg = registered.find((r) => r.name === "ghcr");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.inputs).toMatchObject({ name: "ghcr", username: "octo" });
    // The engine's wire form of a secret: { [SECRET_SIG]: SECRET_VALUE_SIG, value }.
    expect(reg?.inputs.password).toEqual({ [SECRET_SIG]: SECRET_VALUE_SIG, value: PASSWORD });
    expect(typeof reg?.inputs.__provider).toBe("string");
  });

  it("wires username and password through to outputs", async () => {
    const auth = await runProgram(
      () =>
        new ContainerRegistryAuth("wired", { name: "wired-name", username: "robot$ci", password: PASSWORD }),
    );
    expect(await value(auth.name)).toBe("wired-name");
    expect(await value(auth.username)).toBe("robot$ci");
    expect(await value(auth.password)).toBe(PASSWORD);
    expect(await value(auth.id)).toBe("id-wired");
  });

  it("makes password secret even when given as a plain string", async () => {
    const auth = await runProgram(
      () => new ContainerRegistryAuth("plain", { name: "plain", username: "u", password: PASSWORD }),
    );
    expect(await pulumi.isSecret(auth.password)).toBe(true);
    expect(await pulumi.isSecret(auth.username)).toBe(false);
    expect(await pulumi.isSecret(auth.name)).toBe(false);
  });

  it("accepts inputs that are outputs of other resources and keeps a secret password secret", async () => {
    const auth = await runProgram(
      () =>
        new ContainerRegistryAuth("from-outputs", {
          name: pulumi.output("from-outputs"),
          username: pulumi.output("deploy-bot"),
          password: pulumi.secret(PASSWORD),
        }),
    );
    expect(await value(auth.username)).toBe("deploy-bot");
    expect(await pulumi.isSecret(auth.password)).toBe(true);
  });

  it("registers password as an additional secret output, keeping the caller's options", async () => {
    await runProgram(
      () =>
        new ContainerRegistryAuth(
          "opts",
          { name: "opts", username: "u", password: PASSWORD },
          { protect: true, additionalSecretOutputs: ["username"] },
        ),
    );
    const opts = seenOptions.get("opts");
    expect(opts?.additionalSecretOutputs).toEqual(expect.arrayContaining(["password", "username"]));
    expect(opts?.protect).toBe(true);
  });

  it("passes adoptExisting through only when given", async () => {
    await runProgram(() => {
      new ContainerRegistryAuth("adopt", {
        name: "adopt",
        username: "u",
        password: PASSWORD,
        adoptExisting: true,
      });
      new ContainerRegistryAuth("no-adopt", { name: "no-adopt", username: "u", password: PASSWORD });
    });
    await waitForRegistration("no-adopt");
    expect(registered.find((r) => r.name === "adopt")?.inputs.adoptExisting).toBe(true);
    expect(registered.find((r) => r.name === "no-adopt")?.inputs).not.toHaveProperty("adoptExisting");
  });

  it("takes adoptExisting from another resource's output or config, like every other argument", async () => {
    await runProgram(
      () =>
        new ContainerRegistryAuth("adopt-output", {
          name: "adopt-output",
          username: "u",
          password: PASSWORD,
          adoptExisting: pulumi.output(true),
        }),
    );
    await waitForRegistration("adopt-output");
    expect(registered.find((r) => r.name === "adopt-output")?.inputs.adoptExisting).toBe(true);
  });

  it("reads an existing credential by id with ContainerRegistryAuth.get, as a read of the same type", async () => {
    const existing = await runProgram(() => ContainerRegistryAuth.get("existing", "reg-123"));
    await waitForRegistration("existing");
    const reg = registered.find((r) => r.name === "existing");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.id).toBe("reg-123");
    expect(await value(existing.id)).toBe("reg-123");
    expect(typeof reg?.inputs.__provider).toBe("string");
  });

  it("never puts the password into the serialized provider", async () => {
    await runProgram(
      () => new ContainerRegistryAuth("ser", { name: "ser", username: "u", password: PASSWORD }),
    );
    await waitForRegistration("ser");
    const provider = registered.find((r) => r.name === "ser")?.inputs.__provider as string;
    expect(provider.length).toBeGreaterThan(0);
    expect(provider).not.toContain(PASSWORD);
    expect(provider).toContain("pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/operations.js");
  });

  it("shares one provider object between instances, so Pulumi serializes it once (same __provider text)", async () => {
    // pulumi.dynamic.Resource looks each provider object up in its cache of serialized providers
    // (a WeakMap in @pulumi/pulumi/dynamic) and serializes it on a miss: one distinct key is one
    // serialization. Before: each instance built its own provider (100 instances: 100
    // serializations, 876 ms).
    const lookups = vi.spyOn(WeakMap.prototype, "get");
    try {
      await runProgram(() => {
        new ContainerRegistryAuth("shared-a", { name: "shared-a", username: "u", password: PASSWORD });
        new ContainerRegistryAuth("shared-b", { name: "shared-b", username: "u", password: PASSWORD });
      });
      await waitForRegistration("shared-b");
      const providers = lookups.mock.calls.map(([key]) => key).filter((key) => key instanceof RunpodProvider);
      expect(providers.length).toBeGreaterThanOrEqual(2);
      expect(new Set(providers).size).toBe(1);
      expect(providers[0]).toBe(ContainerRegistryAuth.provider);
    } finally {
      lookups.mockRestore();
    }
    const a = registered.find((r) => r.name === "shared-a")?.inputs.__provider;
    const b = registered.find((r) => r.name === "shared-b")?.inputs.__provider;
    expect(typeof a).toBe("string");
    expect(b).toBe(a);
  });
});

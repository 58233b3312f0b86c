/**
 * Program-side wiring of ContainerRegistryAuth under `@pulumi/pulumi/testing` mocks: what the
 * resource registers (type token, inputs, options) and what the program sees (outputs, secrecy).
 * Mocks never run the provider; the provider host tests cover its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { ContainerRegistryAuth } from "../../src/provider/registryAuth";

const PASSWORD = "mock-registry-pass-7f3a9c";
const TOKEN = "pulumi-nodejs:dynamic/runpod:ContainerRegistryAuth";
/** Pulumi's special signature key and the value marking a secret (`runtime/rpc.ts`). */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const SECRET_VALUE_SIG = "1b47061264138c4ac30d75fd1eb44270";

interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}

const registered: Registered[] = [];
const seenOptions = new Map<string, pulumi.CustomResourceOptions>();

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `id-${args.name}`, state: args.inputs };
      },
      call: () => ({}),
    },
    "project",
    "stack",
    false,
  );
});

/** Runs `program` as a stack whose transformation records each resource's options. */
async function runProgram<T>(program: () => T): Promise<T> {
  let result: T | undefined;
  await pulumi.runtime.runInPulumiStack(async () => {
    pulumi.runtime.registerStackTransformation((args) => {
      seenOptions.set(args.name, args.opts as pulumi.CustomResourceOptions);
      return undefined;
    });
    result = program();
    return {};
  });
  return result as T;
}

function value<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

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

  it("never puts the password into the serialized provider", async () => {
    await runProgram(
      () => new ContainerRegistryAuth("ser", { name: "ser", username: "u", password: PASSWORD }),
    );
    await waitForRegistration("ser");
    const provider = registered.find((r) => r.name === "ser")?.inputs.__provider as string;
    expect(provider.length).toBeGreaterThan(0);
    expect(provider).not.toContain(PASSWORD);
    expect(provider).toContain("pulumi-runpod-dynamic/dist/provider/registryAuth.js");
  });
});

/** Resolves once the mock monitor has seen a resource named `name` (registration is async). */
async function waitForRegistration(name: string): Promise<void> {
  for (let i = 0; i < 1000 && !registered.some((r) => r.name === name); i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!registered.some((r) => r.name === name)) throw new Error(`resource ${name} was never registered`);
}

/**
 * Program-side wiring of the ServerlessEndpoint resource under `@pulumi/pulumi/testing` mocks: the
 * type token, `env` sent and kept as one secret (also when given as plain strings), the
 * `additionalSecretOutputs`, every documented output present, and `.get` as a read. Mocks never
 * run the provider; the provider host tests cover its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ServerlessEndpoint } from "../../src/provider/serverlessEndpoint/resource";
import {
  SECRET_SIG,
  SECRET_VALUE_SIG,
  useMockedProgram,
  outputValue as value,
} from "../support/mockedProgram";

const TOKEN = "pulumi-nodejs:dynamic/runpod:ServerlessEndpoint";
const SECRET = "hf_mock-Endpoint-T0ken-3e8a";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;

const args = (name: string) => ({
  name,
  type: "QUEUE" as const,
  image: "acme/api:1",
  env: { HF_TOKEN: SECRET },
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY" as const, queueDelay: 4 },
});

describe("ServerlessEndpoint in a program (mocks)", () => {
  it("registers the dynamic type token and sends env to the engine as one secret", async () => {
    await runProgram(() => new ServerlessEndpoint("api", args("api")));
    await mocked.registration("api");
    const reg = registered.find((r) => r.name === "api");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.inputs).toMatchObject({
      name: "api",
      type: "QUEUE",
      image: "acme/api:1",
      gpu: { pools: ["ADA_24"] },
    });
    expect(reg?.inputs.env).toEqual({ [SECRET_SIG]: SECRET_VALUE_SIG, value: { HF_TOKEN: SECRET } });
    const provider = reg?.inputs.__provider as string;
    expect(provider).toContain("pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js");
    expect(provider).not.toContain(SECRET);
  });

  it("registers __urn as the resource's own URN, at the stack's root and under a component", async () => {
    await runProgram(() => new ServerlessEndpoint("urn-root", args("urn-root")));
    await mocked.registration("urn-root");
    const rootReg = registered.find((r) => r.name === "urn-root");
    // As the SDK's createUrn makes it (the mock monitor's own URNs add the stack's type; the
    // engine's do not: a stack child's URN has no parent type).
    expect(rootReg?.inputs.__urn).toBe(await value(pulumi.createUrn("urn-root", TOKEN)));
    expect(rootReg?.inputs.__urn).toBe(`urn:pulumi:stack::project::${TOKEN}::urn-root`);
    let parent: pulumi.ComponentResource | undefined;
    await runProgram(() => {
      parent = new pulumi.ComponentResource("acme:index:Service", "svc");
      return new ServerlessEndpoint("urn-child", args("urn-child"), { parent });
    });
    await mocked.registration("urn-child");
    const childReg = registered.find((r) => r.name === "urn-child");
    expect(childReg?.inputs.__urn).toBe(await value(pulumi.createUrn("urn-child", TOKEN, parent)));
    expect(childReg?.inputs.__urn).toMatch(
      /acme:index:Service\$pulumi-nodejs:dynamic\/runpod:ServerlessEndpoint::urn-child$/,
    );
  });

  it("keeps env secret in the program and registers it as an additional secret output, with the caller's options", async () => {
    const ep = await runProgram(
      () =>
        new ServerlessEndpoint("opts", args("opts"), { protect: true, additionalSecretOutputs: ["image"] }),
    );
    expect(await pulumi.isSecret(ep.env)).toBe(true);
    expect(await pulumi.isSecret(ep.image)).toBe(false);
    const opts = mocked.options.get("opts");
    expect(opts?.additionalSecretOutputs).toEqual(expect.arrayContaining(["env", "image"]));
    expect(opts?.protect).toBe(true);
  });

  it("declares every documented output as an Output, given or not", async () => {
    const ep = await runProgram(() => new ServerlessEndpoint("outs", args("outs")));
    for (const key of [
      "name",
      "type",
      "scaling",
      "gpu",
      "cpu",
      "templateId",
      "image",
      "args",
      "disk",
      "env",
      "ports",
      "registry",
      "dataCenterIds",
      "flashboot",
      "networkVolumes",
      "timeout",
      "workers",
      "rollout",
      "rolloutTimeoutMs",
      "createdAt",
      "version",
      "latestReleaseId",
      "requestUrls",
    ] as const) {
      expect(pulumi.Output.isInstance(ep[key]), key).toBe(true);
    }
    expect(await value(ep.image)).toBe("acme/api:1");
  });

  it("reads an existing endpoint by id with ServerlessEndpoint.get, as a read of the same type", async () => {
    const existing = await runProgram(() => ServerlessEndpoint.get("existing", "ep-123"));
    await mocked.registration("existing");
    const reg = registered.find((r) => r.name === "existing");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.id).toBe("ep-123");
    expect(await value(existing.id)).toBe("ep-123");
  });
});

/**
 * Program-side wiring of Template under `@pulumi/pulumi/testing` mocks: what the resource
 * registers (type token, inputs, options) and what the program sees (outputs, secrecy of `env`).
 * Mocks never run the provider; test/provider/templateHost.test.ts covers its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { Template } from "../../src/provider/template/resource";
import {
  SECRET_SIG,
  SECRET_VALUE_SIG,
  useMockedProgram,
  outputValue as value,
} from "../support/mockedProgram";

const ENV_VALUE = "mock-template-env-token-2b7e";
const TOKEN = "pulumi-nodejs:dynamic/runpod:Template";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;

describe("Template in a program (mocks)", () => {
  it("registers the type token and sends env to the engine as ONE secret, the rest plain", async () => {
    await runProgram(
      () =>
        new Template("tpl", {
          name: "worker",
          image: "me/worker:1",
          env: { HF_TOKEN: ENV_VALUE, MODE: "fast" },
          disk: 20,
          serverless: true,
        }),
    );
    await mocked.registration("tpl");
    const reg = registered.find((r) => r.name === "tpl");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.inputs).toMatchObject({ name: "worker", image: "me/worker:1", disk: 20, serverless: true });
    expect(reg?.inputs.env).toEqual({
      [SECRET_SIG]: SECRET_VALUE_SIG,
      value: { HF_TOKEN: ENV_VALUE, MODE: "fast" },
    });
    expect(reg?.inputs).not.toHaveProperty("args");
    expect(mocked.options.get("tpl")?.additionalSecretOutputs).toEqual(["env"]);
    const provider = reg?.inputs.__provider as string;
    expect(provider).toContain("pulumi-runpod-dynamic/dist/provider/template/operations.js");
    expect(provider).not.toContain(ENV_VALUE);
  });

  it("makes env secret in the program even when given as plain strings", async () => {
    const tpl = await runProgram(
      () => new Template("plain", { name: "p", image: "me/worker:1", env: { HF_TOKEN: ENV_VALUE } }),
    );
    expect(await pulumi.isSecret(tpl.env)).toBe(true);
    expect(await value(tpl.env)).toEqual({ HF_TOKEN: ENV_VALUE });
    expect(await pulumi.isSecret(tpl.image)).toBe(false);
    expect(await value(tpl.image)).toBe("me/worker:1");
  });

  it("reads an existing template by id with Template.get, as a read of the same type", async () => {
    const existing = await runProgram(() => Template.get("existing", "tpl-123"));
    await mocked.registration("existing");
    const reg = registered.find((r) => r.name === "existing");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.id).toBe("tpl-123");
    expect(await value(existing.id)).toBe("tpl-123");
  });
});

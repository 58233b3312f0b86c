/**
 * Program-side wiring of SshKey under `@pulumi/pulumi/testing` mocks: the type token, the one
 * input and the URN it passes (the owner mark of the entry it writes), and a `__provider` that
 * loads its operations module by name. Mocks never run the
 * provider; test/provider/sshKeyHost.test.ts covers its methods.
 */
import { describe, expect, it } from "vitest";
import { SshKey } from "../../src/provider/sshKey/resource";
import { KEYS } from "../fixtures/sshKeys";
import { useMockedProgram } from "../support/mockedProgram";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;

describe("SshKey in a program (mocks)", () => {
  it("registers pulumi-nodejs:dynamic/runpod:SshKey with publicKey as its only input, and its URN", async () => {
    await runProgram(() => new SshKey("me", { publicKey: KEYS.ed25519.line }));
    await mocked.registration("me");
    const reg = registered.find((r) => r.name === "me");
    expect(reg?.type).toBe("pulumi-nodejs:dynamic/runpod:SshKey");
    const { __provider, ...inputs } = reg?.inputs ?? {};
    expect(inputs).toEqual({
      publicKey: KEYS.ed25519.line,
      __urn: "urn:pulumi:stack::project::pulumi-nodejs:dynamic/runpod:SshKey::me",
    });
    expect(__provider as string).toContain("pulumi-runpod-dynamic/dist/provider/sshKey/operations.js");
  });
});

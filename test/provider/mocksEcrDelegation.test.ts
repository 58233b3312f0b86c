/**
 * Program-side wiring of EcrDelegation under `@pulumi/pulumi/testing` mocks: what the resource
 * registers (type token, inputs, output slots, no secret options) and what the program sees.
 * Mocks never run the provider; test/provider/ecrDelegationHost.test.ts covers its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { EcrDelegation } from "../../src/provider/ecrDelegation/resource";
import { useMockedProgram, outputValue as value } from "../support/mockedProgram";

const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";
const TOKEN = "pulumi-nodejs:dynamic/runpod:EcrDelegation";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;

describe("EcrDelegation in a program (mocks)", () => {
  it("registers the type token, its two inputs plain and a slot for every output", async () => {
    const deleg = await runProgram(() => new EcrDelegation("deleg", { resource: ARN, name: "deploy" }));
    await mocked.registration("deleg");
    const reg = registered.find((r) => r.name === "deleg");
    expect(reg?.type).toBe(TOKEN);
    const { __provider: provider, ...inputs } = reg?.inputs ?? {};
    expect(inputs).toEqual({ resource: ARN, name: "deploy" });
    expect(provider as string).toContain("pulumi-runpod-dynamic/dist/provider/ecrDelegation/operations.js");
    expect(mocked.options.get("deleg")?.additionalSecretOutputs ?? []).toEqual([]);
    expect(await pulumi.isSecret(deleg.resource)).toBe(false);
    expect(await value(deleg.resource)).toBe(ARN);
    for (const output of [
      deleg.delegatorUserId,
      deleg.awsUser,
      deleg.repository,
      deleg.tag,
      deleg.awsRegion,
      deleg.dockerRegistryUri,
      deleg.createdAt,
    ]) {
      expect(pulumi.Output.isInstance(output)).toBe(true);
    }
  });

  it("reads an existing delegation by id with EcrDelegation.get, as a read of the same type", async () => {
    const existing = await runProgram(() => EcrDelegation.get("existing", "deleg_abc123"));
    await mocked.registration("existing");
    const reg = registered.find((r) => r.name === "existing");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.id).toBe("deleg_abc123");
    expect(await value(existing.id)).toBe("deleg_abc123");
  });
});

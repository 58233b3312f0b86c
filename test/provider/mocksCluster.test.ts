/**
 * Program-side wiring of Cluster under `@pulumi/pulumi/testing` mocks: what the resource registers
 * (type token, inputs, `env` as a secret, the URN for the stack budget, output slots) and what the
 * program sees. Mocks never run the provider; test/provider/clusterHost.test.ts covers its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { Cluster } from "../../src/provider/cluster/resource";
import {
  SECRET_SIG,
  SECRET_VALUE_SIG,
  useMockedProgram,
  outputValue as value,
} from "../support/mockedProgram";

const TOKEN = "pulumi-nodejs:dynamic/runpod:Cluster";
const ENV_VALUE = "hf_mocked-cluster-secret";

const mocked = useMockedProgram();
const { registered, run: runProgram } = mocked;

describe("Cluster in a program (mocks)", () => {
  it("registers the type token, its inputs, env as a secret, its URN and a slot for every output", async () => {
    const compute = { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 };
    const cluster = await runProgram(
      () =>
        new Cluster("train", {
          name: "train",
          type: "TRAINING",
          compute,
          image: "acme/train:1",
          env: { HF_TOKEN: ENV_VALUE },
          maxHourlyUsd: 50,
        }),
    );
    await mocked.registration("train");
    const reg = registered.find((r) => r.name === "train");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.inputs).toMatchObject({
      name: "train",
      type: "TRAINING",
      compute,
      image: "acme/train:1",
      maxHourlyUsd: 50,
    });
    expect(reg?.inputs.env).toEqual({ [SECRET_SIG]: SECRET_VALUE_SIG, value: { HF_TOKEN: ENV_VALUE } });
    expect(reg?.inputs.__urn).toMatch(/::pulumi-nodejs:dynamic\/runpod:Cluster::train$/);
    expect(mocked.options.get("train")?.additionalSecretOutputs).toEqual(["env"]);
    const provider = reg?.inputs.__provider as string;
    expect(provider).toContain("pulumi-runpod-dynamic/dist/provider/cluster/operations.js");
    expect(provider).not.toContain(ENV_VALUE);
    expect(await pulumi.isSecret(cluster.env)).toBe(true);
    for (const output of [
      cluster.members,
      cluster.hourlyCost,
      cluster.primary,
      cluster.pods,
      cluster.network,
    ]) {
      expect(pulumi.Output.isInstance(output)).toBe(true);
    }
  });

  it("reads an existing cluster by id with Cluster.get, as a read of the same type", async () => {
    const existing = await runProgram(() => Cluster.get("existing", "c0ffee"));
    await mocked.registration("existing");
    const reg = registered.find((r) => r.name === "existing");
    expect(reg?.type).toBe(TOKEN);
    expect(reg?.id).toBe("c0ffee");
    expect(await value(existing.id)).toBe("c0ffee");
  });
});

/**
 * Program-side wiring of NetworkVolume under `@pulumi/pulumi/testing` mocks: what the resource
 * registers (type token, inputs) and what the program sees (outputs). Mocks never run the
 * provider; the provider host tests (networkVolumeHost.test.ts) cover its methods.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { NetworkVolume as FromRoot } from "../../src/index";
import { NetworkVolume } from "../../src/provider/networkVolume/resource";
import { useMockedProgram, outputValue as value } from "../support/mockedProgram";

const TOKEN = "pulumi-nodejs:dynamic/runpod:NetworkVolume";

const mocked = useMockedProgram();
const { run: runProgram } = mocked;

describe("NetworkVolume in a program (mocks)", () => {
  it("is exported from the package root", () => {
    expect(FromRoot).toBe(NetworkVolume);
  });

  it("registers the dynamic type token with the arguments as given, and no type when omitted", async () => {
    await runProgram(() => new NetworkVolume("data", { name: "data", size: 50, dataCenterId: "EU-RO-1" }));
    const reg = await mocked.registration("data");
    expect(reg.type).toBe(TOKEN);
    const { __provider, ...args } = reg.inputs;
    expect(args).toEqual({ name: "data", size: 50, dataCenterId: "EU-RO-1" });
    expect(__provider).toContain("pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js");
  });

  it("wires outputs, including type, and takes inputs that are outputs of other resources", async () => {
    const volume = await runProgram(
      () =>
        new NetworkVolume("wired", {
          name: pulumi.output("wired"),
          size: pulumi.output(20),
          dataCenterId: "US-KS-2",
          type: "HIGH_PERFORMANCE",
        }),
    );
    expect(await value(volume.name)).toBe("wired");
    expect(await value(volume.size)).toBe(20);
    expect(await value(volume.dataCenterId)).toBe("US-KS-2");
    expect(await value(volume.type)).toBe("HIGH_PERFORMANCE");
    expect(await value(volume.id)).toBe("id-wired");
  });

  it("reads an existing volume by id with NetworkVolume.get, as a read of the same type", async () => {
    const existing = await runProgram(() => NetworkVolume.get("existing", "agv6w2qcg7"));
    const reg = await mocked.registration("existing");
    expect(reg.type).toBe(TOKEN);
    expect(reg.id).toBe("agv6w2qcg7");
    expect(await value(existing.id)).toBe("agv6w2qcg7");
  });

  it("shares one provider object between instances (one __provider text)", async () => {
    await runProgram(() => {
      new NetworkVolume("shared-a", { name: "a", size: 10, dataCenterId: "EU-RO-1" });
      new NetworkVolume("shared-b", { name: "b", size: 10, dataCenterId: "EU-RO-1" });
    });
    const a = (await mocked.registration("shared-a")).inputs.__provider;
    const b = (await mocked.registration("shared-b")).inputs.__provider;
    expect(typeof a).toBe("string");
    expect(b).toBe(a);
  });
});

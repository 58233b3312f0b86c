/**
 * Scenarios through the deploy harness (previewing first, as `pulumi up` does):
 * inputs that take another resource's output, a credential moved under a component with and
 * without an alias, and key rotation followed by destroy. pulumiCli.test.ts runs the same ones
 * through the real CLI when it is on PATH.
 */
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import {
  dependentInputsScenario,
  type E2eEmulator,
  harnessDriver,
  keyRotationScenario,
  movedRegistryAuthScenario,
  startE2eEmulator,
  startRotatingEmulator,
} from "./scenarios";

const make = harnessDriver(inject("installedProjectDir"));

describe("engine scenarios through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  it("a JobRun input and a ContainerRegistryAuth name taken from another resource's output preview cleanly and deploy", async () => {
    await dependentInputsScenario(make, e);
  });

  it("a credential moved under a component with an alias is kept; without it the deploy fails and nothing is deleted", async () => {
    await movedRegistryAuthScenario(make, e);
  });

  it("after rotating runpod:apiKey, destroy uses the key stored at the last up until an up has run", async () => {
    const rotating = await startRotatingEmulator();
    try {
      await keyRotationScenario(make, rotating);
    } finally {
      await rotating.close();
    }
  });
});

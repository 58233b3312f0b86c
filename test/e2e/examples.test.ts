/**
 * registry-auth and volume-lookup examples, deployed through the deploy harness against the
 * emulator from the packed package: up, change, up, refresh, destroy (see `scenarios.ts`).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type E2eEmulator,
  expectNoSecrets,
  harnessDriver,
  registryAuthScenario,
  startE2eEmulator,
  type Transcript,
  volumeLookupScenario,
} from "./scenarios";

const make = harnessDriver(inject("installedProjectDir"));
const PASSWORD = "ghp_e2eRegistryPassw0rd-never-plaintext";

describe("examples through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  let registryTranscript: Transcript | undefined;
  it("registry-auth: create, unchanged, password change replaces it, refresh, destroy leaves none", async () => {
    registryTranscript = await registryAuthScenario(make, e, PASSWORD);
  });

  it("registry-auth: neither password (old or rotated) nor api key in plaintext in state, logs or errors", () => {
    expect(registryTranscript, "the registry-auth scenario did not complete").toBeDefined();
    expectNoSecrets(registryTranscript!, { registryPassword: PASSWORD, apiKey: e.emu.apiKey });
    expect(registryTranscript!.join("\n")).toContain("ciphertext");
  });

  it("volume-lookup: by name in EU-RO-1, then US-KS-2, a clear error for a missing name, refresh, destroy", async () => {
    await volumeLookupScenario(make, e);
  });
});

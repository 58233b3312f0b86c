/**
 * The demo stack (the whole serverless pipeline; the endpoint guards its own releases) through the
 * deploy harness against the emulator, then a scan of everything it left behind for the secrets it
 * was given.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DemoSecrets,
  demoScenario,
  type E2eEmulator,
  expectNoSecrets,
  harnessDriver,
  startE2eEmulator,
  type Transcript,
} from "./scenarios";

const projectDir = inject("installedProjectDir");
const make = harnessDriver(projectDir);
const SECRETS: DemoSecrets = {
  registryPassword: "demo-registry-passw0rd-e2e",
  hfToken: "hf_e2eDemoEndpointToken9c41",
};

describe("demo example through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  let transcript: Transcript | undefined;
  it("up creates the pipeline; a new image tag rolls a release smoke-tested by the endpoint; a larger volume grows in place alone; a broken release 3 fails its smoke test and is rolled back as version 4 (state = previous inputs at version 4, refresh clean); fixed, release 5 passes; destroy leaves nothing", async () => {
    transcript = await demoScenario(make, e, SECRETS);
  });

  it("no registry password, api key or endpoint env token in plaintext in the saved state, the logs or any error", () => {
    expect(transcript, "the demo scenario did not complete").toBeDefined();
    expectNoSecrets(transcript!, { ...SECRETS, apiKey: e.emu.apiKey });
    // The secrets were stored (encrypted), so the scan looked where they would be.
    expect(transcript!.join("\n")).toContain("ciphertext");
  });
});

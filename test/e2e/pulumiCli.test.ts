/**
 * The same end-to-end scenarios as the harness tests, run through the real `pulumi` CLI (local
 * file backend, passphrase secrets provider) when it is on PATH. The CLI cannot be installed on
 * every machine (it downloads at install time), so without it each test is skipped, and its name
 * says why.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { findPulumi } from "../support/pulumiCli.mts";
import {
  brokenEndpointScenario,
  cliDriver,
  type DemoSecrets,
  demoScenario,
  dependentInputsScenario,
  type E2eEmulator,
  expectNoSecrets,
  keyRotationScenario,
  movedRegistryAuthScenario,
  registryAuthScenario,
  smokeTestScenario,
  startE2eEmulator,
  startRotatingEmulator,
  volumeLookupScenario,
} from "./scenarios";

const hasPulumi = findPulumi() !== undefined;
const needs = "(requires the pulumi CLI on PATH)";
const SECRETS: DemoSecrets = {
  registryPassword: "cli-registry-passw0rd-e2e",
  hfToken: "hf_cliDemoEndpointToken-e2e",
};
const PASSWORD = "ghp_cliRegistryPassw0rd-e2e";

describe.skipIf(!hasPulumi)("examples through the pulumi CLI", () => {
  const make = cliDriver(inject("installedProjectDir"));
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  it(`registry-auth: create, unchanged, replace on a password change, refresh, destroy; no secret stored in plaintext ${needs}`, async () => {
    const transcript = await registryAuthScenario(make, e, PASSWORD);
    expectNoSecrets(transcript, { registryPassword: PASSWORD, apiKey: e.emu.apiKey });
  }, 180_000);

  it(`volume-lookup: by name and data centre, then another data centre, a missing name fails ${needs}`, async () => {
    await volumeLookupScenario(make, e);
  }, 180_000);

  it(`smoke-test: runs on create and after a redeploy of the endpoint only, on its new release ${needs}`, async () => {
    await smokeTestScenario(make, e);
  }, 180_000);

  it(`smoke-test: a broken endpoint fails the deploy naming endpoint, job, status and worker error; the next up passes once fixed ${needs}`, async () => {
    await brokenEndpointScenario(make, e);
  }, 180_000);

  it(`inputs from another resource's output preview cleanly and deploy ${needs}`, async () => {
    await dependentInputsScenario(make, e);
  }, 180_000);

  it(`a credential moved under a component with an alias is kept; without it nothing is deleted ${needs}`, async () => {
    await movedRegistryAuthScenario(make, e);
  }, 180_000);

  it(`key rotation then destroy: the key stored at the last up is used until an up has run ${needs}`, async () => {
    const rotating = await startRotatingEmulator();
    try {
      await keyRotationScenario(make, rotating);
    } finally {
      await rotating.close();
    }
  }, 180_000);

  it(`demo: every change touches only what it must; no registry password, api key or env token in the backend, logs or errors ${needs}`, async () => {
    const transcript = await demoScenario(make, e, SECRETS);
    expectNoSecrets(transcript, { ...SECRETS, apiKey: e.emu.apiKey });
    expect(transcript.join("\n")).toContain("ciphertext");
  }, 180_000);
});

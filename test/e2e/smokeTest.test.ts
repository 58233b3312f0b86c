/**
 * smoke-test example through the deploy harness against the emulator: when the job runs (create,
 * a redeploy of the endpoint, tested on its new release once rolled out) and when it does not
 * (unchanged up, refresh), and a broken endpoint failing the deploy until it is fixed.
 */
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import {
  brokenEndpointScenario,
  type E2eEmulator,
  harnessDriver,
  smokeTestScenario,
  startE2eEmulator,
} from "./scenarios";

const projectDir = inject("installedProjectDir");
const make = harnessDriver(projectDir);

describe("smoke-test example through the deploy harness", { timeout: 300_000 }, () => {
  let e: E2eEmulator;
  beforeAll(async () => {
    e = await startE2eEmulator();
  });
  afterAll(async () => {
    await e?.close();
  });

  it("runs the job on create and after a redeploy of the endpoint (update, same id, once the rollout ended, endpointVersion the new release), not on an unchanged up or refresh", async () => {
    await smokeTestScenario(make, e);
  });

  it("fails the deploy on a broken endpoint with the engine's text naming endpoint, job, status and worker error, then passes through update on the next up once fixed", async () => {
    await brokenEndpointScenario(make, e);
  });
});

/**
 * A program with HTTP probes of a load-balancer endpoint (a `ServerlessEndpoint` gated by
 * `smokeTest.http`, and a `JobRun` with `http`), deployed through the deploy harness (the program
 * in its own process, Pulumi's real dynamic-provider host, the packed package, the engine's secret
 * rules) against the emulator: the header value is a stack secret and must stay encrypted in the
 * state and out of every output, log and error, on a passing `up` and on a failing one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { createDeployHarness } from "../support/deployHarness.mts";

const projectDir = inject("installedProjectDir");
const HEADER = "hdr-s3cr3t-Harness-2f9b";
/** Written in the program as a plain string: only the resources can make it secret. */
const LITERAL = "hdr-l1teral-Harness-8c3e";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import { JobRun, ServerlessEndpoint } from "pulumi-runpod-dynamic";

const cfg = new pulumi.Config("harness");
const headers = { "X-Tenant-Token": cfg.requireSecret("tenantToken") };
const http = {
  path: "/v1/chat/completions",
  body: { model: "m", messages: [{ role: "user", content: "ping" }] },
  headers,
  expectStatus: Number(cfg.get("expectStatus") ?? "200"),
};
const lb = new ServerlessEndpoint("chat", {
  name: "chat",
  type: "LOAD_BALANCER",
  image: "acme/server:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "REQUEST_COUNT", requestCount: 2 },
  workers: { min: 1, max: 1 },
  smokeTest: { http: { path: "/v1/models", headers: { "X-Literal": "${LITERAL}" } }, timeoutMs: 60_000 },
});
const probe = new JobRun("probe", { endpointId: lb.id, http, timeoutMs: 60_000 });
new JobRun("literal", { endpointId: lb.id, http: { path: "/v1/models", headers: { "X-Literal": "${LITERAL}" } } });
export const httpStatus = probe.httpStatus;
export const passed = probe.passed;
export const lastSmokeTest = lb.lastSmokeTest;
`;

let emu: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
  dir = await mkdtemp(path.join(projectDir, "probe-secrets-"));
  await writeFile(path.join(dir, "index.mts"), PROGRAM);
});
afterAll(async () => {
  await emu?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("HTTP probes through the deploy harness", { timeout: 300_000 }, () => {
  it("keeps the header value encrypted in the state and out of outputs, logs and errors", async () => {
    const h = await createDeployHarness({
      projectDir,
      program: path.join(dir, "index.mts"),
      passphrase: "probe",
      config: {
        "runpod:apiKey": { secret: emu.apiKey },
        "runpod:restUrl": emu.restUrl,
        "runpod:serverlessUrl": emu.serverlessUrl,
        "harness:tenantToken": { secret: HEADER },
      },
    });
    try {
      const up = await h.up();
      expect(up.errors, up.logs.join("\n")).toEqual([]);
      expect(up.outputs).toMatchObject({
        httpStatus: 200,
        passed: true,
        lastSmokeTest: { passed: true, jobIds: [] },
      });
      const resources = (await h.state()).resources;
      const probe = resources.find((r) => r.name === "probe");
      const endpoint = resources.find((r) => r.name === "chat");
      expect(probe?.secretInputs).toContain("http");
      expect(probe?.secretOutputs).toContain("http");
      expect(endpoint?.secretInputs).toContain("smokeTest");
      expect(endpoint?.secretOutputs).toContain("smokeTest");
      expect(resources.find((r) => r.name === "literal")?.secretOutputs).toContain("http");
      for (const secret of [HEADER, LITERAL]) {
        expect(await h.rawState()).not.toContain(secret);
        expect(JSON.stringify(up)).not.toContain(secret);
      }

      // A probe that fails (another expected status): the failure is printed, the header is not.
      h.setConfig("harness:expectStatus", "201");
      const failed = await h.up();
      expect(failed.errors.join("\n")).toContain("the endpoint answered HTTP 200, expected 201");
      for (const secret of [HEADER, LITERAL]) {
        expect(JSON.stringify(failed)).not.toContain(secret);
        expect(await h.rawState()).not.toContain(secret);
      }

      const down = await h.destroy();
      expect(down.errors, down.logs.join("\n")).toEqual([]);
    } finally {
      await h.dispose();
    }
  });
});

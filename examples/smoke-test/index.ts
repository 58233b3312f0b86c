// Runs one job against a serverless endpoint during `pulumi up` and fails the deploy when the
// endpoint does not answer as expected. The job runs on the first `up`, and again whenever
// `endpointRevision` (or any other argument) changes: bump it when you redeploy the worker.
//   pulumi config set endpointId abc123xyz
//   pulumi config set endpointRevision 2024-06-01
import * as pulumi from "@pulumi/pulumi";
import { JobRun } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();

// The default input and expected output fit the emulator's built-in worker (it returns the
// input's `output`). For your worker, set both, e.g.:
//   pulumi config set --path 'smokeInput.prompt' 'Say OK'
//   pulumi config set --path 'expectOutput.text[0]' OK
const smoke = new JobRun("smoke", {
  endpointId: config.get("endpointId") ?? "echo",
  input: config.getObject<Record<string, unknown>>("smokeInput") ?? {
    prompt: "ping",
    output: { reply: "pong" },
  },
  expect: { status: "COMPLETED", output: config.getObject<unknown>("expectOutput") ?? { reply: "pong" } },
  timeoutMs: 5 * 60 * 1000,
  triggers: [config.get("endpointRevision") ?? "1"],
});

export const jobId = smoke.jobId;
export const jobStatus = smoke.status;
export const jobOutput = smoke.output;
export const jobTimeline = smoke.timeline;

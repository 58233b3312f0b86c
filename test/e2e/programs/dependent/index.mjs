// Inputs that take another resource's output: unknown in the preview, known in the update.
// `first`'s job id feeds the second job's input and the registry credential's name.
// JavaScript (not TypeScript) so the repo's typecheck, which cannot resolve the installed package, skips it.
import * as pulumi from "@pulumi/pulumi";
import { ContainerRegistryAuth, JobRun } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const prefix = config.require("namePrefix");

const first = new JobRun("first", {
  endpointId: "echo",
  input: { output: { reply: "first" } },
  expect: { status: "COMPLETED" },
});

const second = new JobRun("second", {
  endpointId: "echo",
  input: { upstream: first.jobId, output: { reply: "second" } },
  expect: { status: "COMPLETED" },
});

const registry = new ContainerRegistryAuth("registry", {
  name: pulumi.interpolate`${prefix}-${first.jobId}`,
  username: "ci-bot",
  password: config.requireSecret("registryPassword"),
});

export const firstJobId = first.jobId;
export const secondStatus = second.status;
export const registryName = registry.name;
export const registryAuthId = registry.id;

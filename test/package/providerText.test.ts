/**
 * What every resource's state stores as `__provider`, serialized from the INSTALLED package as
 * `pulumi.dynamic.Resource` does (DESIGN.md targets: at most 8 KB per resource; fact 1: the
 * provider loads its code from the package by name and captures nothing else).
 */
import { describe, expect, inject, it } from "vitest";
import {
  PROVIDER_MODULES,
  type ProviderKind,
  serializeProviderFrom,
} from "../support/serializedProvider.mts";

const OPERATIONS: Record<ProviderKind, string> = {
  ContainerRegistryAuth: "pulumi-runpod-dynamic/dist/provider/registryAuth/operations.js",
  JobRun: "pulumi-runpod-dynamic/dist/provider/jobRun/operations.js",
  NetworkVolume: "pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js",
  ServerlessEndpoint: "pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js",
  SshKey: "pulumi-runpod-dynamic/dist/provider/sshKey/operations.js",
  Template: "pulumi-runpod-dynamic/dist/provider/template/operations.js",
  Pod: "pulumi-runpod-dynamic/dist/provider/pod/operations.js",
};

describe.each([
  "ContainerRegistryAuth",
  "JobRun",
  "NetworkVolume",
  "ServerlessEndpoint",
  "SshKey",
  "Template",
  "Pod",
] as const)("the %s provider as stored in state", (kind) => {
  it("is at most 8 KB, holds no secret, and loads its operations module from the package by name", async () => {
    const { module, exportName } = PROVIDER_MODULES[kind];
    const { text, containsSecrets } = await serializeProviderFrom(
      inject("installedProjectDir"),
      module,
      exportName,
    );
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(8 * 1024);
    expect(containsSecrets).toBe(false);
    // Every method loads the operations module through the one path the instance holds
    // (`__p.operationsModule = "..."`), and the text names no other module of the package:
    // nothing is captured by value.
    const requires = [...text.matchAll(/require\(([^)]*)\)/g)].map((m) => m[1]);
    expect(new Set(requires)).toEqual(new Set(["this.operationsModule"]));
    for (const method of ["configure", "check", "diff", "create", "read", "update", "delete"]) {
      expect(text).toMatch(
        new RegExp(
          `async function /\\*${method}\\*/\\([^)]*\\) \\{\\s*(return )?(this\\.settings = )?this\\.operations\\(\\)\\.${method}\\(`,
        ),
      );
    }
    const paths = [...text.matchAll(/"(pulumi-runpod-dynamic\/[^"]*)"/g)].map((m) => m[1]);
    expect(new Set(paths)).toEqual(new Set([OPERATIONS[kind]]));
  });
});

/**
 * What every resource's state stores as `__provider`, serialized from the INSTALLED package as
 * `pulumi.dynamic.Resource` does (DESIGN.md targets: at most 8 KB per resource; fact 1: the
 * provider loads its code from the package by name and captures nothing else: not the resource
 * table its class reads, nor a schema).
 */
import { describe, expect, inject, it } from "vitest";
import { RESOURCE_ROWS } from "../../src/provider/resources";
import { serializeProviderFrom } from "../support/serializedProvider.mts";

/** Every resource of the resource table: its class, the class's module, the operations module it must load. */
const KINDS = RESOURCE_ROWS.map(
  (row) =>
    [
      row.className,
      `pulumi-runpod-dynamic/dist/provider/${row.folder}/resource.js`,
      row.operationsModule,
    ] as const,
);

describe.each(KINDS)("the %s provider as stored in state", (kind, module, operationsModule) => {
  it("is at most 8 KB, holds no secret, and loads its operations module from the package by name", async () => {
    const { text, containsSecrets } = await serializeProviderFrom(
      inject("installedProjectDir"),
      module,
      kind,
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
    expect(new Set(paths)).toEqual(new Set([operationsModule]));
  });
});

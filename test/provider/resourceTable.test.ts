/**
 * The resource table (`src/provider/resources.ts`) is the one list of resources and lookups: it
 * matches what the package root exports, keeps the type tokens and operations modules users'
 * states store, and each resource class registers from its row.
 */
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index";
import { RunpodResource } from "../../src/provider/common/resource";
import {
  LOOKUPS,
  loadArgsSchema,
  RESOURCE_ROWS,
  RESOURCES,
  type ResourceRow,
} from "../../src/provider/resources";

const REPO = path.resolve(__dirname, "..", "..");

/**
 * The resources shipped in a release: their class name, type token and operations module are in
 * users' states (each URN, each `__provider` text). The class name and type token never change; an
 * operations module that moved keeps its shipped path through an exact key in package.json
 * `exports` to a module under `dist/provider/compat/` exporting the same `operations`
 * (test/provider/mainState.test.ts replays such a state through the packed package). A new
 * resource need not be added here until it ships.
 */
const SHIPPED: ReadonlyArray<readonly [className: string, operationsModule: string]> = [
  ["ContainerRegistryAuth", "pulumi-runpod-dynamic/dist/provider/registryAuth/operations.js"],
  ["JobRun", "pulumi-runpod-dynamic/dist/provider/jobRun/operations.js"],
  ["NetworkVolume", "pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js"],
  ["ServerlessEndpoint", "pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js"],
  ["Template", "pulumi-runpod-dynamic/dist/provider/template/operations.js"],
  ["SshKey", "pulumi-runpod-dynamic/dist/provider/sshKey/operations.js"],
  ["Pod", "pulumi-runpod-dynamic/dist/provider/pod/operations.js"],
];

/** A root export's value. */
function plainValue(exports: object, name: string): unknown {
  return (exports as Record<string, unknown>)[name];
}

/** What the table and the root's exports disagree on. */
function disagreements(exports: object, rows: readonly ResourceRow[], lookups: readonly { fn: string }[]) {
  const names = Object.keys(exports);
  const classes = names.filter((name) => {
    const value = plainValue(exports, name);
    return typeof value === "function" && value.prototype instanceof RunpodResource;
  });
  const functions = names.filter(
    (name) => /^get[A-Z]/.test(name) && typeof plainValue(exports, name) === "function",
  );
  const listed = new Set(lookups.map((l) => l.fn));
  return {
    classesWithoutRow: classes.filter((name) => !rows.some((row) => row.className === name)),
    rowsNotExported: rows.map((row) => row.className).filter((name) => !classes.includes(name)),
    lookupsWithoutRow: functions.filter((fn) => !listed.has(fn.replace(/Output$/, ""))),
    lookupsNotExported: [...listed].filter(
      (fn) => !functions.includes(fn) || !functions.includes(`${fn}Output`),
    ),
  };
}

describe("the resource table", () => {
  it("lists every resource class and lookup the package root exports, and nothing it does not", () => {
    expect(disagreements(root, RESOURCE_ROWS, LOOKUPS)).toEqual({
      classesWithoutRow: [],
      rowsNotExported: [],
      lookupsWithoutRow: [],
      lookupsNotExported: [],
    });
    expect(RESOURCE_ROWS.map((row) => row.className)).toEqual(Object.keys(RESOURCES));
  });

  it("reports an exported class or lookup without a row, and a row the root does not export", () => {
    const withoutPod = RESOURCE_ROWS.filter((row) => row.className !== "Pod");
    const withoutGetPod = LOOKUPS.filter((lookup) => lookup.fn !== "getPod");
    expect(disagreements(root, withoutPod, withoutGetPod)).toEqual({
      classesWithoutRow: ["Pod"],
      rowsNotExported: [],
      lookupsWithoutRow: ["getPod", "getPodOutput"],
      lookupsNotExported: [],
    });
    const extraRow = { ...RESOURCES.Pod, className: "Deployment" };
    const extraLookup = { fn: "getDeployment" };
    expect(disagreements(root, [...RESOURCE_ROWS, extraRow], [...LOOKUPS, extraLookup])).toMatchObject({
      rowsNotExported: ["Deployment"],
      lookupsNotExported: ["getDeployment"],
    });
  });

  it("keeps the type token and operations module path of every shipped resource (stored in users' states)", async () => {
    const exportsMap = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")).exports;
    for (const [className, operationsModule] of SHIPPED) {
      const row = RESOURCE_ROWS.find((r) => r.className === className);
      expect(row, className).toMatchObject({ typeToken: `pulumi-nodejs:dynamic/runpod:${className}` });
      if (row?.operationsModule === operationsModule) continue;
      // Moved: the shipped path resolves, by an exact key, to a compat module with the same operations.
      const target = exportsMap[operationsModule.replace(/^pulumi-runpod-dynamic\//, "./")];
      expect(target, className).toMatch(/^\.\/dist\/provider\/compat\/.+\.js$/);
      const compatModule = path.join(REPO, "src", `${target.slice("./dist/".length, -".js".length)}.ts`);
      const compat = await import(/* @vite-ignore */ compatModule);
      const current = await import(`../../src/provider/${row?.folder}/operations.ts`);
      expect(compat.operations, className).toBe(current.operations);
    }
  });

  it.each(RESOURCE_ROWS.map((row) => [row.className, row] as const))(
    "%s: its class registers from its row, and every file the row names exists",
    async (className, row) => {
      const cls = plainValue(root, className) as { spec: { row: ResourceRow }; provider: unknown };
      expect(cls.spec.row).toBe(row);
      expect(cls.provider).toMatchObject({ operationsModule: row.operationsModule });
      const folder = path.join(REPO, "src/provider", row.folder);
      expect(existsSync(path.join(folder, "resource.ts"))).toBe(true);
      const operations = await import(`../../src/provider/${row.folder}/operations.ts`);
      expect(Object.keys(operations.operations).sort()).toEqual(
        ["check", "configure", "create", "delete", "diff", "read", "update"].sort(),
      );
      expect(existsSync(path.join(REPO, row.argsType))).toBe(true);
      expect(readFileSync(path.join(REPO, row.page), "utf8")).toMatch(new RegExp(`\`${className}\``));
    },
  );

  it.each(RESOURCE_ROWS.map((row) => [row.className, row] as const))(
    "%s: its secret fields are arguments of its schema",
    async (_className, row) => {
      const schema = await loadArgsSchema(row);
      const names = Object.keys(schema.shape);
      expect(row.secretInputs.filter((name) => !names.includes(name))).toEqual([]);
      expect(row.additionalSecretOutputs.filter((name) => !names.includes(name))).toEqual([]);
    },
  );

  it("names pages and modules that exist for every lookup", () => {
    for (const lookup of LOOKUPS) {
      expect(existsSync(path.join(REPO, "src/provider", `${lookup.module}.ts`)), lookup.fn).toBe(true);
      expect(readFileSync(path.join(REPO, lookup.page), "utf8"), lookup.fn).toContain(lookup.fn);
    }
  });
});

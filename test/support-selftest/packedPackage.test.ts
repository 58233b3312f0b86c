import { existsSync, lstatSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { PACKAGE_NAME, REPO_DIR } from "../support/packedPackage.mts";

describe("installed packed package", () => {
  const projectDir = inject("installedProjectDir");

  it("is a real copy of the tarball, not a link to the repo", () => {
    const packageDir = path.join(projectDir, "node_modules", PACKAGE_NAME);
    expect(lstatSync(packageDir).isSymbolicLink()).toBe(false);
    expect(existsSync(path.join(packageDir, "dist", "index.js"))).toBe(true);
    expect(existsSync(path.join(packageDir, "src"))).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8"));
    expect(manifest.name).toBe(PACKAGE_NAME);
  });

  it("has no install script: npm runs none for a user (npm 11 warns about each it finds)", () => {
    const manifest = JSON.parse(
      readFileSync(path.join(projectDir, "node_modules", PACKAGE_NAME, "package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    // npm's install lifecycle (docs.npmjs.com/cli/using-npm/scripts): what `npm install` of a
    // dependency may run, and what npm 11's install-scripts check lists.
    const installScripts = ["preinstall", "install", "postinstall", "prepare"];
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => installScripts.includes(name))).toEqual([]);
  });

  it("resolves @pulumi/pulumi from the package to the repo's single installed copy", () => {
    const fromPackage = createRequire(path.join(projectDir, "node_modules", PACKAGE_NAME, "package.json"));
    const fromRepo = createRequire(path.join(REPO_DIR, "package.json"));
    expect(realpathSync(fromPackage.resolve("@pulumi/pulumi"))).toBe(
      realpathSync(fromRepo.resolve("@pulumi/pulumi")),
    );
    expect(realpathSync(fromPackage.resolve("undici"))).toBe(realpathSync(fromRepo.resolve("undici")));
  });

  it("lets a program in the project require files under dist/ through the package's exports", () => {
    const fromProject = createRequire(path.join(projectDir, "package.json"));
    const resolved = fromProject.resolve(`${PACKAGE_NAME}/dist/client/errors.js`);
    expect(resolved.startsWith(path.join(projectDir, "node_modules", PACKAGE_NAME))).toBe(true);
  });
});

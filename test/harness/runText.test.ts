/**
 * Conformance: the run-level text the engine prints, read from pulumi/pulumi
 * (test/support/README.md, rule 9). Each test fails on a harness that gets one of these wrong:
 * - a Check or Diff error is the host's message as is (`rpcerror.Error`), reported by
 *   `deploymentExecutor.Execute` (`reportError`): no `check failed:` / `diff failed:` prefix;
 * - a step the executor applied that fails ends the run with `update failed` under the stack
 *   (`deploymentExecutor.reportExecResult`), in a preview `Preview failed: <text>` under the
 *   resource (`previewActions.OnResourceStepPost`, diag 2005) and `preview failed`; errors of the
 *   step generator and of the program are bails and print no summary;
 * - an error the program throws (a failing lookup) is printed by the Node language host's handler
 *   (`run` in @pulumi/pulumi cmd/run/run.js): `Running program '.' failed with an unhandled
 *   exception:` and the error with its stack; a `RunError` (a missing config value) its message alone.
 * They use the echo fixture (test/support/fixtures): `failCheck`, `failDiff`, `failRead`, `failCreate`.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";
import { renderStep } from "../support/render.mts";

const projectDir = inject("installedProjectDir");
const program = path.join(__dirname, "programs", "echo");
const T = "pulumi-nodejs:dynamic/runpod:Echo";

describe("deploy harness: the run-level text the engine prints", { timeout: 300_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  const setProgram = (h: DeployHarness, body: string) =>
    writeFile(
      path.join(h.workDir, "index.mjs"),
      `import * as pulumi from "@pulumi/pulumi";\nimport fixture from "runpod-echo-fixture";\nconst { Echo } = fixture;\n${body}\n`,
    );
  const make = async (code: string) => {
    const h = await createDeployHarness({ projectDir, program, passphrase: "text", skipPreview: true });
    await setProgram(h, code);
    cleanups.push(() => h.dispose());
    return h;
  };

  beforeAll(async () => {
    await installEchoFixture(projectDir);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it("a Check error prints the host's message as is, with no `check failed:` prefix and no summary (deploymentExecutor.Execute, reportError)", async () => {
    const h = await make('new Echo("a", { value: "v", failCheck: true });');
    for (const run of [await h.preview(), await h.up()]) {
      expect(run.errors).toEqual([`${T} a: echo: check refused (failCheck is set)`]);
      expect(run.resources[0]).toMatchObject({
        op: "failed",
        error: "echo: check refused (failCheck is set)",
      });
    }
  });

  it("a Diff error prints the host's message as is, with no `diff failed:` prefix and no summary (continueStepsFromDiff returns it)", async () => {
    const h = await make('new Echo("a", { value: "v1" });');
    const first = await h.up();
    const id = first.resources[0]!.id;
    await setProgram(h, 'new Echo("a", { value: "v2", failDiff: true });');
    const failed = await h.up();
    expect(failed.errors).toEqual([`${T} a: echo ${id}: diff refused (failDiff is set)`]);
  });

  it("a failed create ends the run with `update failed` under the stack (deploymentExecutor.reportExecResult)", async () => {
    const h = await make('new Echo("a", { value: "v", failCreate: true });');
    const failed = await h.up();
    const text = "echo: create refused (failCreate is set)";
    expect(failed.errors).toEqual([`${T} a: ${text}`, "update failed"]);
    expect(failed.resources).toEqual([expect.objectContaining({ op: "failed", error: text })]);
    // As the demo renders a result: the stack gets the errors that belong to no resource.
    const shown = renderStep({
      kind: "up",
      project: "p",
      stack: "dev",
      ...failed,
      errors: failed.errors.filter((e) => !failed.resources.some((r) => r.error && e.endsWith(r.error))),
      durationMs: 1,
    });
    expect(shown).toMatch(/pulumi:pulumi:Stack +p-dev +\*\*failed\*\* +1 error\n/);
    expect(shown).toContain(`Diagnostics:\n  ${T} (a):\n    error: ${text}\n`);
    expect(shown).toContain("  pulumi:pulumi:Stack (p-dev):\n    error: update failed\n");
    expect(shown).toContain("Resources:\n    1 unchanged\n    2 errored");
  });

  it("a step that fails in a preview reads `Preview failed: <text>`, and the run `preview failed` (previewActions.OnResourceStepPost)", async () => {
    const h = await make('new Echo("got", { failRead: true }, { id: "echo-x" });');
    const previewed = await h.preview();
    const text = "Preview failed: echo echo-x: read refused (failRead is set)";
    expect(previewed.errors).toEqual([`${T} got: ${text}`, "preview failed"]);
    expect(previewed.resources).toEqual([expect.objectContaining({ op: "failed", error: text })]);
    h.skipPreview = false;
    const up = await h.up();
    expect(up.preview?.errors).toEqual([`${T} got: ${text}`, "preview failed"]);
  });

  it("a failing lookup prints `Running program '.' failed with an unhandled exception:` and the error's stack, and no summary (cmd/run/run.js)", async () => {
    const h = await make(`new Echo("a", { value: "v" });
async function lookupVolume(name) {
  throw new Error(\`no network volume named \${name} in this account\`);
}
await lookupVolume("models");`);
    for (const run of [await h.preview(), await h.up()]) {
      expect(run.errors).toHaveLength(1);
      expect(run.errors[0]).toMatch(
        /^Running program '\.' failed with an unhandled exception:\nError: no network volume named models in this account\n {4}at lookupVolume \(file:\/\/\S+index\.mjs:\d+:\d+\)\n/,
      );
    }
  });

  it("a RunError (a missing config value) prints its message alone (cmd/run/run.js)", async () => {
    const h = await make('new pulumi.Config().require("volumeName");');
    const failed = await h.up();
    expect(failed.errors).toEqual([
      "Missing required configuration variable 'echo-harness:volumeName'\n" +
        "\tplease set a value using the command `pulumi config set echo-harness:volumeName <value>`",
    ]);
  });
});

/**
 * Conformance, the program in its own process (test/support/README.md, rule 13): the
 * engine keeps the program in the language host (the Node host, sdk/nodejs/cmd/run), apart from the
 * step generator and executor, and each registration crosses to the resource monitor
 * (`resmon.RegisterResource`, pkg/resource/deploy/source_eval.go). Before, the harness ran the
 * program inside its runner, the process the harness spawns from the test: the program's parent
 * was this test's process. Now the runner forks the program (`programHost.mts`): its parent is the
 * runner, and the registrations and outputs still arrive.
 */
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";

const projectDir = inject("installedProjectDir");
const program = path.join(__dirname, "programs", "echo");

describe("deploy harness: the program runs in its own process (language host, resmon.RegisterResource)", {
  timeout: 300_000,
}, () => {
  let h: DeployHarness;
  beforeAll(async () => {
    await installEchoFixture(projectDir);
    h = await createDeployHarness({ projectDir, program, passphrase: "proc", skipPreview: true });
    await writeFile(
      path.join(h.workDir, "index.mjs"),
      [
        'import fixture from "runpod-echo-fixture";',
        "const { Echo } = fixture;",
        'const a = new Echo("a", { value: "v" });',
        'const b = new Echo("b", { value: a.value.apply((v) => v + "+b") });',
        "export const values = [a.value, b.value];",
        "export const programPid = process.pid;",
        "export const programParent = process.ppid;",
      ].join("\n"),
    );
  });
  afterAll(async () => {
    await h?.dispose();
  });

  it("the program's process is not the runner the harness spawned, and its registrations and outputs arrive", async () => {
    const run = await h.up();
    expect(run.errors).toEqual([]);
    expect(run.resources.map((r) => r.op)).toEqual(["create", "create"]);
    expect(run.outputs.values).toEqual(["v", "v+b"]);
    // The runner is this process's child; the program is the runner's child, not this process's.
    expect(typeof run.outputs.programParent).toBe("number");
    expect(run.outputs.programParent).not.toBe(process.pid);
    expect(run.outputs.programPid).not.toBe(process.pid);
    // b's input came from a's output: the dependency the SDK sent reaches the state.
    const b = (await h.state()).resources.find((r) => r.name === "b");
    expect(b?.dependencies).toEqual([expect.stringMatching(/::a$/)]);
  });
});

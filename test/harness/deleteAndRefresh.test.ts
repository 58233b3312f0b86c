/**
 * Conformance (issue 21, items 5 to 7): how the engine deletes and refreshes, each test named by
 * the engine function it follows (pulumi/pulumi at the commit test/support/README.md cites).
 * Every test here failed on the harness before the fix it came with (see each commit message).
 * They use the echo fixture (test/support/fixtures) and read what the provider saw from its log
 * (env ECHO_LOG: one JSON line per check, diff, create, read, update, delete, delete-start).
 */
import { existsSync, readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness, type DeployResult } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";

const projectDir = inject("installedProjectDir");
const program = path.join(__dirname, "programs", "echo");
const ECHO = "pulumi-nodejs:dynamic/runpod:Echo";

const ops = (r: DeployResult) => r.resources.map((x) => `${x.urn.split("::").pop()}:${x.op}`);

interface LogLine {
  op: string;
  id: string;
  value?: string;
}

/** The engine's `deleteProtectedError` text (step.go), written out literally, with a POSIX `URN.Quote`. */
const protectedText = (urn: string) =>
  `resource "${urn}" cannot be deleted\n` +
  "because it is protected. To unprotect the resource, either remove the `protect` flag from the " +
  "resource in your Pulumi program and run `pulumi up`, or use the command:\n" +
  `\`pulumi state unprotect '${urn}'\``;

describe("deploy harness: deletes and refreshes as the engine schedules them", { timeout: 300_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  let n = 0;
  const make = async (code: string, opts: { parallel?: number } = {}) => {
    const log = path.join(projectDir, `echo-deletes-${process.pid}-${n++}.jsonl`);
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: "rules",
      env: { ...process.env, ECHO_LOG: log },
      skipPreview: true,
      ...(opts.parallel ? { parallel: opts.parallel } : {}),
    });
    await setProgram(h, code);
    cleanups.push(async () => {
      await h.dispose();
      await rm(log, { force: true });
    });
    const lines = (): LogLine[] =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l))
        : [];
    const clearLog = () => rm(log, { force: true });
    return { h, lines, clearLog };
  };
  const setProgram = (h: DeployHarness, body: string) =>
    writeFile(
      path.join(h.workDir, "index.mjs"),
      `import * as pulumi from "@pulumi/pulumi";\nimport fixture from "runpod-echo-fixture";\nconst { Echo } = fixture;\n${body}\n`,
    );
  const flagFile = async () => {
    const f = path.join(projectDir, `flag-${process.pid}-${n++}`);
    await writeFile(f, "x");
    cleanups.push(() => rm(f, { force: true }));
    return f;
  };

  beforeAll(async () => {
    await installEchoFixture(projectDir);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  describe("protect (item 5)", () => {
    it("deleteProtectedError (step.go DeleteStep.Apply): destroy prints the engine's text and, past it (cancelDueToError continues), deletes the rest", async () => {
      const { h, lines } = await make(
        'new Echo("a", { value: "a" }, { protect: true });\nnew Echo("b", { value: "b" });',
      );
      const up = await h.up();
      expect(up.errors).toEqual([]);
      const urnA = up.resources[0]!.urn;
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      expect(destroyed.errors).toEqual([`${ECHO} a: ${protectedText(urnA)}`]);
      expect(destroyed.resources.find((r) => r.op === "failed")).toEqual({
        urn: urnA,
        id: up.resources[0]!.id,
        op: "failed",
        error: protectedText(urnA),
      });
      expect(
        lines()
          .filter((l) => l.op === "delete")
          .map((l) => l.value),
      ).toEqual(["b"]);
      expect((await h.state()).resources.map((r) => r.name)).toEqual(["a"]);
    });

    it("PreviewThenPromptThenExecute (backend/apply.go): destroy previews first, so one protected resource means nothing is deleted", async () => {
      const { h, lines } = await make(
        'new Echo("a", { value: "a" }, { protect: true });\nnew Echo("b", { value: "b" });',
      );
      await h.up();
      h.skipPreview = false;
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      expect(destroyed.preview?.ok).toBe(false);
      expect(destroyed.errors).toEqual([
        `${ECHO} a: ${protectedText(destroyed.resources.find((r) => r.op === "failed")!.urn)}`,
      ]);
      expect(lines().filter((l) => l.op === "delete")).toEqual([]);
      expect((await h.state()).resources.map((r) => r.name)).toEqual(["a", "b"]);
    });

    it("PreviewThenPromptThenExecute: a clean destroy previews (no provider delete), then deletes", async () => {
      const { h, lines } = await make('new Echo("a", { value: "a" });');
      await h.up();
      h.skipPreview = false;
      const destroyed = await h.destroy();
      expect(destroyed.errors).toEqual([]);
      expect(ops(destroyed.preview!)).toEqual(["a:delete"]);
      expect(ops(destroyed)).toEqual(["a:delete"]);
      expect(lines().filter((l) => l.op === "delete")).toHaveLength(1);
      expect((await h.state()).resources).toEqual([]);
    });

    it("PreviewThenPromptThenExecute: refresh previews first (reads, writes nothing), so a failed read leaves the whole state as it was", async () => {
      const fail = await flagFile();
      const { h, lines } = await make(
        `new Echo("a", { value: "v1", changeOnRefresh: true });\nnew Echo("b", { value: "b", failReadWhileExists: ${JSON.stringify(fail)} });`,
      );
      await h.up();
      h.skipPreview = false;
      const refreshed = await h.refresh();
      expect(refreshed.ok).toBe(false);
      expect(refreshed.preview?.ok).toBe(false);
      expect(refreshed.errors).toEqual([
        `${ECHO} b: ${refreshed.resources.find((r) => r.op === "failed")!.error}`,
      ]);
      expect(refreshed.errors[0]).toMatch(/read refused/);
      // The preview read both; the refresh itself never ran.
      expect(lines().filter((l) => l.op === "read")).toHaveLength(2);
      expect((await h.state()).resources.find((r) => r.name === "a")!.outputs.value).toBe("v1");

      await rm(fail);
      const again = await h.refresh();
      expect(again.errors).toEqual([]);
      expect(ops(again.preview!).sort()).toEqual(["a:update", "b:same"]);
      expect((await h.state()).resources.find((r) => r.name === "a")!.outputs.value).toBe("v1-drifted");
    });
  });
  describe("retainOnDelete (item 6)", () => {
    it("DeleteStep.Apply (step.go): retainOnDelete also skips the provider's Delete in the delete half of a delete-before-replace", async () => {
      const program = (imm: string) =>
        `new Echo("a", { value: "v", immutable: "${imm}", deleteBeforeReplace: true }, { retainOnDelete: true });`;
      const { h, lines, clearLog } = await make(program("i1"));
      const first = await h.up();
      const oldId = first.resources[0]!.id;
      await setProgram(h, program("i2"));
      await clearLog();
      const replaced = await h.up();
      expect(replaced.errors).toEqual([]);
      expect(ops(replaced)).toEqual(["a:replace"]);
      expect(lines().map((l) => l.op)).toEqual(["check", "diff", "check", "create"]);
      const st = (await h.state()).resources;
      expect(st.map((r) => r.id)).toEqual([replaced.resources[0]!.id]);
      expect(st[0]!.id).not.toBe(oldId);
    });
  });
});

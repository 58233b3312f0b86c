import { rm } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { DeployResult } from "../support/deployHarness.mts";
import { type EchoLogLine, echoHarnessKit } from "./echoKit";

const ECHO = "pulumi-nodejs:dynamic/runpod:Echo";

const ops = (r: DeployResult) => r.resources.map((x) => `${x.urn.split("::").pop()}:${x.op}`);

type LogLine = EchoLogLine;

/** The engine's `deleteProtectedError` text (step.go), written out literally, with a POSIX `URN.Quote`. */
const protectedText = (urn: string) =>
  `resource "${urn}" cannot be deleted\n` +
  "because it is protected. To unprotect the resource, either remove the `protect` flag from the " +
  "resource in your Pulumi program and run `pulumi up`, or use the command:\n" +
  `\`pulumi state unprotect '${urn}'\``;

// Each run spawns a program and a fresh provider host, so runs are what a test costs: a test checks
// all it can on one run's outcome.
describe("deploy harness: deletes and refreshes as the engine schedules them", { timeout: 300_000 }, () => {
  const kit = echoHarnessKit("deletes");
  const make = (code: string, opts: { parallel?: number } = {}) => kit.make({ ...opts, code });
  const { flagFile, setProgram } = kit;

  describe("protect (item 5)", () => {
    it("PreviewThenPromptThenExecute (backend/apply.go): destroy previews first, so one protected resource means nothing is deleted; deleteProtectedError (step.go DeleteStep.Apply): without the preview destroy prints the engine's text and, past it (cancelDueToError continues), deletes the rest", async () => {
      const { h, lines } = await make(
        'new Echo("a", { value: "a" }, { protect: true });\nnew Echo("b", { value: "b" });',
      );
      const up = await h.up();
      expect(up.errors).toEqual([]);
      const urnA = up.resources[0]!.urn;

      h.skipPreview = false;
      const previewed = await h.destroy();
      expect(previewed.ok).toBe(false);
      expect(previewed.preview?.ok).toBe(false);
      // In the preview the step's text is prefixed, and the run ends with `preview failed` (README rule 9).
      expect(previewed.errors).toEqual([
        `${ECHO} a: Preview failed: ${protectedText(previewed.resources.find((r) => r.op === "failed")!.urn)}`,
        "preview failed",
      ]);
      expect(lines().filter((l) => l.op === "delete")).toEqual([]);
      expect((await h.state()).resources.map((r) => r.name)).toEqual(["a", "b"]);

      h.skipPreview = true;
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      // The run ends with `update failed` under the stack (reportExecResult, deployment_executor.go).
      expect(destroyed.errors).toEqual([`${ECHO} a: ${protectedText(urnA)}`, "update failed"]);
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
        "preview failed",
      ]);
      expect(refreshed.errors[0]).toMatch(/: Preview failed: /);
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
  /** Start and end of each delete, by resource name, in log order. */
  const deleteEvents = (lines: LogLine[], names: Map<string, string>) =>
    lines
      .filter((l) => l.op === "delete-start" || l.op === "delete")
      .map((l) => `${l.op === "delete" ? "end" : "start"}:${names.get(l.id)}`);
  const namesById = (r: DeployResult) =>
    new Map(r.resources.map((x) => [x.id, x.urn.split("::").pop()!] as [string, string]));

  describe("destroy's schedule (item 7)", () => {
    it("ScheduleDeletes (step_generator.go) + performPostSteps (deployment_executor.go): destroy deletes dependents first, each antichain in parallel", async () => {
      const { h, lines } = await make(
        `const a = new Echo("a", { value: "a", deleteSleepMs: 1000 });
new Echo("b", { value: "b", deleteSleepMs: 1000 }, { dependsOn: [a] });
new Echo("c", { value: pulumi.interpolate\`c-\${a.value}\`, deleteSleepMs: 1000 });
new Echo("d", { value: "d", deleteSleepMs: 1000 });`,
        { parallel: 8 },
      );
      const up = await h.up();
      expect(up.errors).toEqual([]);
      const st = await h.state();
      const urnA = st.resources.find((r) => r.name === "a")!.urn;
      const byName = [...st.resources].sort((x, y) => x.name.localeCompare(y.name));
      expect(byName.map((r) => [r.name, r.dependencies ?? []])).toEqual([
        ["a", []],
        ["b", [urnA]],
        ["c", [urnA]],
        ["d", []],
      ]);
      const destroyed = await h.destroy();
      expect(destroyed.errors).toEqual([]);
      const events = deleteEvents(lines(), namesById(up));
      // ScheduleDeletes peels off the resources with no condemned dependency ({a, d}), then the
      // rest ({b, c}), and reverses: antichain 1 = {b, c}, both started before either ended;
      // antichain 2 = {a, d}, started after both ended (d waits although it depends on nothing).
      expect(events.slice(0, 2).sort()).toEqual(["start:b", "start:c"]);
      expect(events.slice(2, 4).sort()).toEqual(["end:b", "end:c"]);
      expect(events.slice(4, 6).sort()).toEqual(["start:a", "start:d"]);
      expect(events.slice(6).sort()).toEqual(["end:a", "end:d"]);
      expect(destroyed.maxConcurrentSteps).toBe(2);
      expect((await h.state()).resources).toEqual([]);
    });

    it("ExecuteParallel is bounded by --parallel: an antichain of three runs at most two at once with parallel 2", async () => {
      const { h, lines } = await make(
        ["a", "b", "c"].map((x) => `new Echo("${x}", { value: "${x}", deleteSleepMs: 800 });`).join("\n"),
        { parallel: 2 },
      );
      const up = await h.up();
      const destroyed = await h.destroy();
      expect(destroyed.errors).toEqual([]);
      let open = 0;
      let most = 0;
      for (const e of deleteEvents(lines(), namesById(up))) {
        if (e.startsWith("start")) most = Math.max(most, ++open);
        else open--;
      }
      expect(most).toBe(2);
      expect(destroyed.maxConcurrentSteps).toBe(2);
    });
  });

  describe("destroy's failures and refresh (item 7)", () => {
    it("cancelDueToError (step_executor.go): after a failed delete no later antichain is scheduled, and the state keeps what was not deleted", async () => {
      const { h, lines } = await make(
        `const a = new Echo("a", { value: "a" });
new Echo("b", { value: "b", failDelete: true }, { dependsOn: [a] });
new Echo("c", { value: "c", deleteSleepMs: 1000 }, { dependsOn: [a] });`,
      );
      const up = await h.up();
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      expect(destroyed.errors).toEqual([
        `${ECHO} b: echo ${up.resources.find((r) => r.urn.endsWith("::b"))!.id}: delete refused (failDelete is set)`,
        "update failed",
      ]);
      // Antichains [b, c], [a]: b and c ran together (c, already running, finished); a never ran.
      expect(
        lines()
          .filter((l) => l.op === "delete")
          .map((l) => namesById(up).get(l.id))
          .sort(),
      ).toEqual(["b", "c"]);
      expect((await h.state()).resources.map((r) => r.name).sort()).toEqual(["a", "b"]);
    });

    it("performPostSteps erroredDeps: past a protected delete the executor goes on, but keeps what the protected resource depends on", async () => {
      const { h, lines } = await make(
        `const a = new Echo("a", { value: "a" });
new Echo("b", { value: "b" }, { dependsOn: [a], protect: true });
new Echo("c", { value: "c" });`,
      );
      const up = await h.up();
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      expect(destroyed.errors).toHaveLength(2);
      expect(destroyed.errors[0]).toMatch(
        /^pulumi-nodejs:dynamic\/runpod:Echo b: resource ".*::b" cannot be deleted\n/,
      );
      expect(destroyed.errors[1]).toBe("update failed");
      expect(
        lines()
          .filter((l) => l.op === "delete")
          .map((l) => namesById(up).get(l.id)),
      ).toEqual(["c"]);
      expect((await h.state()).resources.map((r) => r.name).sort()).toEqual(["a", "b"]);
    });

    it("RefreshStep.Apply (step.go): refresh returns a resource pending replacement unchanged, without a read", async () => {
      const program = (extra: string) =>
        `new Echo("a", { value: "v", immutable: "i2", deleteBeforeReplace: true${extra} });`;
      const { h, lines, clearLog } = await make(
        'new Echo("a", { value: "v", immutable: "i1", deleteBeforeReplace: true });',
      );
      const first = await h.up();
      await setProgram(h, program(", failCreate: true"));
      expect((await h.up()).ok).toBe(false);
      const pending = (await h.state()).resources;
      expect(pending.map((r) => [r.id, r.pendingReplacement])).toEqual([[first.resources[0]!.id, true]]);
      await clearLog();
      const refreshed = await h.refresh();
      expect(refreshed.errors).toEqual([]);
      expect(lines()).toEqual([]);
      expect((await h.state()).resources).toEqual(pending);
    });

    it("deploymentExecutor.refresh runs its steps with ignoreErrors: a failed read stops nothing; the other resources are read and stored", async () => {
      const fail = await flagFile();
      const { h, lines } = await make(
        `new Echo("a", { value: "a", failReadWhileExists: ${JSON.stringify(fail)} });
new Echo("b", { value: "v1", changeOnRefresh: true });
new Echo("c", { value: "c" });`,
        { parallel: 1 },
      );
      await h.up();
      const refreshed = await h.refresh();
      expect(refreshed.ok).toBe(false);
      expect(refreshed.errors).toHaveLength(2);
      expect(refreshed.errors[0]).toMatch(/^pulumi-nodejs:dynamic\/runpod:Echo a: echo .*: read refused/);
      expect(refreshed.errors[1]).toBe("update failed");
      expect(lines().filter((l) => l.op === "read")).toHaveLength(3);
      const st = (await h.state()).resources.sort((x, y) => x.name.localeCompare(y.name));
      expect(st.map((r) => [r.name, r.outputs.value])).toEqual([
        ["a", "a"],
        ["b", "v1-drifted"],
        ["c", "c"],
      ]);
    });

    it("deploymentExecutor.refresh: the old half of a replacement still pending delete is read too", async () => {
      const { h, lines, clearLog } = await make(
        'new Echo("a", { value: "v", immutable: "i1", failDelete: true });',
      );
      const first = await h.up();
      const oldId = first.resources[0]!.id;
      await setProgram(h, 'new Echo("a", { value: "v", immutable: "i2" });');
      const replaced = await h.up();
      expect(replaced.ok).toBe(false);
      expect((await h.state()).pendingDeletes.map((r) => r.id)).toEqual([oldId]);
      await clearLog();
      const refreshed = await h.refresh();
      expect(refreshed.errors).toEqual([]);
      expect(
        lines()
          .filter((l) => l.op === "read")
          .map((l) => l.id)
          .sort(),
      ).toEqual([oldId, replaced.resources[0]!.id].sort());
    });
  });
});

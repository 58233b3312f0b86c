/**
 * Conformance: the deploy harness follows Pulumi's engine rule by rule (test/support/README.md
 * lists each rule with the engine function it comes from). Each test fails on a harness that
 * breaks its rule. They use the echo fixture (test/support/fixtures), not src/, and read what the
 * provider saw from the fixture's log (env ECHO_LOG: one JSON line per check, diff, create, read,
 * update and delete in the host).
 *
 * Each run spawns a program and a fresh provider host (as the engine loads fresh plugins for every
 * operation), so runs are what a test costs: a test proves several rules on one run's outcome
 * where they do not interfere.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { DeployResult } from "../support/deployHarness.mts";
import { deleteProtectedText, initErrorText } from "../support/deployRunner.mts";
import { UNKNOWN } from "../support/providerHost.mts";
import { echoHarnessKit } from "./echoKit";

const ops = (r: DeployResult) => r.resources.map((x) => `${x.urn.split("::").pop()}:${x.op}`);

describe("deploy harness: the engine's rules", { timeout: 300_000 }, () => {
  const { make, setProgram, flagFile: failFile } = echoHarnessKit("rules");

  describe("rules 1 to 4: init errors, partial failures, refresh, preview, stored config", () => {
    it("prints the engine's multierror text for reasons and 'resource init failed' without them", () => {
      expect(initErrorText([])).toBe("resource init failed");
      expect(initErrorText(["a"])).toBe("1 error occurred:\n\t* a");
      expect(initErrorText(["a", "b"])).toBe("2 errors occurred:\n\t* a\n\t* b");
    });

    it("rule 1: a partial failure without reasons shows 'resource init failed', records no init errors, and the next unchanged up does not re-run it; rule 2: a partially failed update then keeps the old inputs with the new outputs", async () => {
      const fail = await failFile();
      const { h, lines } = await make({ config: { "echo:failWhileExists": fail } });
      const first = await h.up();
      expect(first.resources[0]).toMatchObject({ op: "failed", error: "resource init failed" });
      expect(first.errors).toEqual([
        "pulumi-nodejs:dynamic/runpod:Echo a: resource init failed",
        "update failed",
      ]);
      expect((await h.state()).resources[0]!.initErrors).toBeUndefined();
      await rm(fail);
      const second = await h.up();
      expect(ops(second)).toEqual(["a:same"]);
      expect(lines().filter((l) => l.op === "update")).toEqual([]);

      // The resource now stands clean with value v1: a partially failed update of it.
      const failUpdate = await failFile();
      h.setConfig("echo:value", "v2");
      h.setConfig("echo:failWhileExists", failUpdate);
      h.setConfig("echo:failReasons", JSON.stringify(["boom"]));
      const failed = await h.up();
      expect(ops(failed)).toEqual(["a:failed"]);
      const [entry] = (await h.state()).resources;
      expect(entry!.inputs.value).toBe("v1");
      expect(entry!.outputs.value).toBe("v2");
      expect(entry!.initErrors).toEqual(["boom"]);
    });

    it("rule 2: refresh clears init errors and calls Diff with the read outputs as olds and the old inputs as news", async () => {
      const fail = await failFile();
      const { h, lines, clearLog } = await make({
        config: {
          "echo:failWhileExists": fail,
          "echo:failReasons": JSON.stringify(["boom"]),
          "echo:value": "v1",
        },
      });
      await h.up();
      expect((await h.state()).resources[0]!.initErrors).toEqual(["boom"]);
      await clearLog();
      const refreshed = await h.refresh();
      expect(refreshed.errors).toEqual([]);
      expect((await h.state()).resources[0]!.initErrors).toBeUndefined();
      expect(lines().map((l) => l.op)).toEqual(["read", "diff"]);
    });

    it("rule 2: refresh shows an update when the provider's Diff finds drift", async () => {
      const { h } = await make({ code: 'new Echo("a", { value: "v1", changeOnRefresh: true });' });
      await h.up();
      const refreshed = await h.refresh();
      expect(ops(refreshed)).toEqual(["a:update"]);
      expect((await h.state()).resources[0]!.outputs.value).toBe("v1-drifted");
    });

    const dependent = `
const a = new Echo("a", { value: "v1" });
const b = new Echo("b", { value: a.id });
export const bValue = b.value;`;

    it("rule 3: previews with unknowns for outputs not yet known: Check and no Create, and writes no state", async () => {
      const { h, lines } = await make({ code: dependent });
      const preview = await h.preview();
      expect(preview.errors).toEqual([]);
      expect(ops(preview)).toEqual(["a:create", "b:create"]);
      expect(lines().map((l) => l.op)).toEqual(["check", "check"]);
      expect(lines()[1]!.value).toBe(UNKNOWN);
      expect(existsSync(h.stateFile)).toBe(false);
    });

    it("rule 3: up previews first (Diff, no Update), then deploys", async () => {
      const { h, lines, clearLog } = await make({ code: dependent });
      h.skipPreview = false;
      const first = await h.up();
      expect(first.errors).toEqual([]);
      expect(ops(first.preview!)).toEqual(["a:create", "b:create"]);
      expect(ops(first)).toEqual(["a:create", "b:create"]);
      expect(first.outputs.bValue).toMatch(/^echo-/);

      await setProgram(h, dependent.replace('"v1"', '"v2"'));
      await clearLog();
      const preview = await h.preview();
      expect(ops(preview)).toEqual(["a:update", "b:same"]);
      expect(lines().map((l) => l.op)).toEqual(["check", "diff", "check", "diff"]);
    });

    it("rule 3: a failing preview stops up before any step", async () => {
      const { h, lines } = await make({ code: 'new Echo("bad", { value: 42 });' });
      h.skipPreview = false;
      const result = await h.up();
      expect(result.ok).toBe(false);
      expect(result.preview?.ok).toBe(false);
      expect(lines().map((l) => l.op)).toEqual(["check"]);
    });

    it("rule 4: destroy configures the provider from the config stored at the last up: an up after a change stores the new config, a change after the last up does not count", async () => {
      const { h, lines } = await make({ config: { "echo:greeting": "first" } });
      await h.up();
      h.setConfig("echo:greeting", "from-last-up");
      await h.up();
      h.setConfig("echo:greeting", "changed-after");
      const destroyed = await h.destroy();
      expect(destroyed.errors).toEqual([]);
      expect(lines().find((l) => l.op === "delete")?.greeting).toBe("from-last-up");
    });
  });

  describe("rule 5: parallelism", () => {
    it("runs at most `parallel` steps at once", async () => {
      const names = ["a", "b", "c", "d", "e", "f"];
      const { h, lines } = await make({
        parallel: 2,
        code: names.map((x) => `new Echo("${x}", { value: "${x}", sleepMs: 150 });`).join("\n"),
      });
      const result = await h.up();
      expect(result.errors).toEqual([]);
      let open = 0;
      let most = 0;
      for (const l of lines()) {
        if (l.op === "create-start") most = Math.max(most, ++open);
        if (l.op === "create") open--;
      }
      expect(most).toBeLessThanOrEqual(2);
      expect(result.maxConcurrentSteps).toBeLessThanOrEqual(2);
      expect(lines().filter((l) => l.op === "create")).toHaveLength(6);
    });

    // deploymentExecutor.handleSingleEvent hands each registration's steps to the executor with
    // stepExecutor.ExecuteSerial, a send on the unbuffered `incomingChains` that only a free worker
    // receives; the next registration (and its Check) waits for that, rather than every Check
    // running ahead of the workers.
    it("checks a registration only once a worker has taken the one before it", async () => {
      // One worker: a's step runs, b is checked and waits for the worker (its ExecuteSerial blocks
      // the event loop), so c's Check comes only after a's step has ended.
      const { h, lines } = await make({
        parallel: 1,
        code: ["a", "b", "c"].map((x) => `new Echo("${x}", { value: "v${x}", sleepMs: 300 });`).join("\n"),
      });
      const result = await h.up();
      expect(result.errors).toEqual([]);
      // The SDK may register them in any order; the steps run in the order they were checked.
      const ops = lines().map((l) => `${l.op} ${l.value}`);
      const [first, second, third] = ops.filter((o) => o.startsWith("check ")).map((o) => o.slice(6));
      expect([first, second, third].sort()).toEqual(["va", "vb", "vc"]);
      expect(ops).toEqual([
        `check ${first}`,
        `create-start ${first}`,
        `check ${second}`,
        `create ${first}`,
        `create-start ${second}`,
        `check ${third}`,
        `create ${second}`,
        `create-start ${third}`,
        `create ${third}`,
      ]);
    });

    it("checks ahead while a worker is free", async () => {
      // Two workers: a and b run at once, so c is checked (and waits) before either step ends.
      const { h, lines } = await make({
        parallel: 2,
        code: ["a", "b", "c"].map((x) => `new Echo("${x}", { value: "v${x}", sleepMs: 300 });`).join("\n"),
      });
      const result = await h.up();
      expect(result.errors).toEqual([]);
      const ops = lines().map((l) => `${l.op} ${l.value}`);
      const checks = ops.filter((o) => o.startsWith("check ")).map((o) => o.slice(6));
      const firstEnd = ops.findIndex((o) => o.startsWith("create v"));
      expect(ops.indexOf(`check ${checks[2]}`)).toBeLessThan(firstEnd);
      expect(ops.indexOf(`create-start ${checks[2]}`)).toBeGreaterThan(firstEnd);
      expect(ops.filter((o) => o.startsWith("create v"))).toHaveLength(3);
    });

    it("schedules no new step after the first failure", async () => {
      const fail = await failFile();
      // The failing resource registers first and its create takes a while; the others register
      // while it runs (the program waits for its create to start: the program is in its own
      // process, so no fixed delay says when its registration reached the step executor) and
      // wait for the one slot.
      const { h, lines } = await make({
        parallel: 1,
        code: `new Echo("bad", { value: "vbad", sleepMs: 1500, failWhileExists: ${JSON.stringify(fail)} });
const { existsSync, readFileSync } = await import("node:fs");
const started = () => existsSync(process.env.ECHO_LOG) && readFileSync(process.env.ECHO_LOG, "utf8").includes('"create-start"');
while (!started()) await new Promise((resolve) => setTimeout(resolve, 20));
for (const x of ["a", "b", "c"]) new Echo(x, { value: "v" + x });`,
      });
      const result = await h.up();
      expect(result.ok).toBe(false);
      const created = lines()
        .filter((l) => l.op === "create")
        .map((l) => l.value);
      expect(created).toEqual(["vbad"]);
      expect((await h.state()).resources.map((r) => r.name)).toEqual(["bad"]);
    });
  });

  describe("rules 6 and 7: replacement and resource options", () => {
    it("rule 6: an explicit deleteBeforeReplace: false wins over the provider's answer, and Check re-runs with no olds before the replacement's Create", async () => {
      const program = (imm: string) =>
        `new Echo("a", { value: "v", immutable: "${imm}", deleteBeforeReplace: true }, { deleteBeforeReplace: false });`;
      const { h, lines, clearLog } = await make({ code: program("i1") });
      await h.up();
      await setProgram(h, program("i2"));
      await clearLog();
      const replaced = await h.up();
      expect(replaced.errors).toEqual([]);
      expect(
        lines()
          .map((l) => l.op)
          .filter((op) => op === "create" || op === "delete"),
      ).toEqual(["create", "delete"]);
      const seq = lines().map((l) => (l.op === "check" ? (l.olds ? "check(olds)" : "check(no olds)") : l.op));
      expect(seq.slice(0, 4)).toEqual(["check(olds)", "diff", "check(no olds)", "create"]);
    });

    it("rule 6: after a failed create in a delete-before-replace the old entry stays, pending replacement, and the next up only creates", async () => {
      const program = (extra: string) =>
        `new Echo("a", { value: "v", immutable: "i2", deleteBeforeReplace: true${extra} });`;
      const { h, lines, clearLog } = await make({
        code: 'new Echo("a", { value: "v", immutable: "i1", deleteBeforeReplace: true });',
      });
      const first = await h.up();
      const oldId = first.resources[0]!.id;
      await setProgram(h, program(", failCreate: true"));
      const failed = await h.up();
      expect(failed.ok).toBe(false);
      expect(
        lines()
          .filter((l) => l.op === "delete")
          .map((l) => l.id),
      ).toEqual([oldId]);
      const kept = (await h.state()).resources;
      expect(kept.map((r) => [r.id, r.pendingReplacement])).toEqual([[oldId, true]]);

      await setProgram(h, program(""));
      await clearLog();
      const fixed = await h.up();
      expect(fixed.errors).toEqual([]);
      expect(ops(fixed)).toEqual(["a:replace"]);
      expect(lines().filter((l) => l.op === "delete")).toEqual([]);
      const st = (await h.state()).resources;
      expect(st).toHaveLength(1);
      expect(st[0]!.id).not.toBe(oldId);
      expect(st[0]!.pendingReplacement).toBeUndefined();
    });

    it("rule 7: protect refuses the delete and keeps the resource", async () => {
      const { h, lines } = await make({ code: 'new Echo("a", { value: "v" }, { protect: true });' });
      await h.up();
      await setProgram(h, "");
      const removed = await h.up();
      expect(removed.ok).toBe(false);
      expect(removed.resources[0]!.error).toBe(deleteProtectedText(removed.resources[0]!.urn));
      const destroyed = await h.destroy();
      expect(destroyed.ok).toBe(false);
      expect((await h.state()).resources).toHaveLength(1);
      expect(lines().filter((l) => l.op === "delete")).toEqual([]);
    });

    it("rule 7: retainOnDelete drops the resource from the state without calling the provider's delete; ignoreChanges keeps the old input for the ignored key", async () => {
      // Two resources, one option each: the retained one leaves the program, the other changes
      // only its ignored key.
      const ignoring = (v: string) => `new Echo("i", { value: "${v}" }, { ignoreChanges: ["value"] });`;
      const { h, lines } = await make({
        code: `new Echo("r", { value: "v" }, { retainOnDelete: true });\n${ignoring("v1")}`,
      });
      expect((await h.up()).errors).toEqual([]);
      await setProgram(h, ignoring("v2"));
      const again = await h.up();
      expect(ops(again)).toEqual(["i:same", "r:delete"]);
      const st = await h.state();
      expect(st.resources.map((r) => r.name)).toEqual(["i"]);
      expect(st.resources[0]!.inputs.value).toBe("v1");
      expect(lines().filter((l) => l.op === "delete")).toEqual([]);
    });

    it("rule 7: Resource.get reads through the provider, never creates, and destroy does not delete it", async () => {
      const { h: owner } = await make();
      const first = await owner.up();
      const id = first.resources[0]!.id;
      const { h, lines } = await make({
        code: `const got = new Echo("got", {}, { id: ${JSON.stringify(id)} });\nexport const gotId = got.id;`,
      });
      const read = await h.up();
      expect(read.errors).toEqual([]);
      expect(ops(read)).toEqual(["got:read"]);
      expect(read.outputs.gotId).toBe(id);
      await h.destroy();
      expect(lines().map((l) => l.op)).toEqual(["read"]);
    });

    it("rule 7: a parent's type is in the URN; an alias carries a resource moved under a component (neither replaced nor deleted); without the alias the move is a create of the new URN and a delete of the old one", async () => {
      // Two resources move under one component: `a` with an alias to its old place, `b` without.
      const { h, lines, clearLog } = await make({
        code: 'new Echo("a", { value: "v" });\nnew Echo("b", { value: "v" });',
      });
      const first = await h.up();
      expect(first.errors).toEqual([]);
      const idOf = (r: DeployResult, name: string) =>
        r.resources.find((x) => x.urn.endsWith(`::${name}`))!.id;
      await setProgram(
        h,
        `const c = new pulumi.ComponentResource("my:pkg:Group", "g");
new Echo("a", { value: "v" }, { parent: c, aliases: [{ parent: pulumi.rootStackResource }] });
new Echo("b", { value: "v" }, { parent: c });`,
      );
      await clearLog();
      const moved = await h.up();
      expect(moved.errors).toEqual([]);
      // The SDK may register a and b in either order; b's delete comes after the registrations.
      expect(ops(moved).slice(0, 2).sort()).toEqual(["a:same", "b:create"]);
      expect(ops(moved).slice(2)).toEqual(["b:delete"]);
      for (const r of moved.resources.slice(0, 2)) {
        expect(r.urn).toMatch(/::my:pkg:Group\$pulumi-nodejs:dynamic\/runpod:Echo::[ab]$/);
      }
      // Only b's create and its old URN's delete reached the provider, in that order.
      expect(
        lines()
          .filter((l) => l.op === "create" || l.op === "delete")
          .map((l) => [l.op, l.id === idOf(first, "b") || l.id === idOf(moved, "b")]),
      ).toEqual([
        ["create", true],
        ["delete", true],
      ]);
      const st = await h.state();
      expect(st.resources).toHaveLength(2);
      expect(st.resources.map((r) => [r.name, r.id, r.urn.includes("my:pkg:Group$")]).sort()).toEqual([
        ["a", idOf(first, "a"), true],
        ["b", idOf(moved, "b"), true],
      ]);
    });
  });
});

import { existsSync, readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";

const projectDir = inject("installedProjectDir");
const program = path.join(__dirname, "programs", "echo");
const SECRET = "pa55-w0rd-that-must-stay-encrypted";

/** Ops by resource name, in run order. */
const ops = (r: { resources: Array<{ urn: string; op: string }> }) =>
  r.resources.map((x) => `${x.urn.split("::").pop()}:${x.op}`);

// Each run spawns a program and a fresh provider host, so runs are what a test costs: a test checks
// all it can on one run's outcome.
describe("deploy harness with the echo fixture", { timeout: 300_000 }, () => {
  const harnesses: DeployHarness[] = [];
  const make = async (config: Record<string, string | { secret: string }> = {}, env?: NodeJS.ProcessEnv) => {
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: "correct horse",
      config: { "echo:secret": { secret: SECRET }, ...config },
      ...(env ? { env } : {}),
    });
    harnesses.push(h);
    return h;
  };

  beforeAll(async () => {
    await installEchoFixture(projectDir);
  });
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.dispose();
  });

  it("creates, leaves unchanged, updates, replaces and deletes across runs", async () => {
    const h = await make({ "echo:names": "a,b" });
    const first = await h.up();
    expect(first.errors).toEqual([]);
    expect(ops(first)).toEqual(["a:create", "b:create"]);
    expect(first.outputs.values).toEqual(["v1", "v1"]);

    const second = await h.up();
    expect(ops(second)).toEqual(["a:same", "b:same"]);
    expect(second.outputs.ids).toEqual(first.outputs.ids);

    h.setConfig("echo:value", "v2");
    const third = await h.up();
    expect(ops(third)).toEqual(["a:update", "b:update"]);
    expect(third.outputs.ids).toEqual(first.outputs.ids);
    expect(third.outputs.values).toEqual(["v2", "v2"]);

    h.setConfig("echo:immutable", "i2");
    h.setConfig("echo:names", "a");
    const fourth = await h.up();
    expect(fourth.errors).toEqual([]);
    // b and the old a depend on nothing condemned, so they are
    // one antichain (ScheduleDeletes) deleted in parallel, in no fixed order.
    expect(ops(fourth)[0]).toBe("a:replace");
    expect(ops(fourth).slice(1).sort()).toEqual(["a:delete", "b:delete"]);
    expect((fourth.outputs.ids as string[])[0]).not.toBe((first.outputs.ids as string[])[0]);
    const state = await h.state();
    expect(state.resources.map((r) => r.name)).toEqual(["a"]);
    expect(state.pendingDeletes).toEqual([]);
  });

  it("registers the given resources instead of running the program (registrations), a step each", async () => {
    // The echo resources' inputs as the program registered them (`__provider` included).
    // This up only records those inputs (its preview is not what the test is about).
    const first = await make({ "echo:names": "a" });
    expect((await first.up({ skipPreview: true })).errors).toEqual([]);
    const [a] = (await first.state()).resources;
    const { secretInput: _secret, ...plain } = a!.inputs;
    const inputs = { ...plain, value: "from-registrations" };
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: "correct horse",
      skipPreview: true,
      registrations: ["r1", "r2", "r3"].map((name) => ({ type: a!.type, name, inputs })),
    });
    harnesses.push(h);
    const result = await h.up();
    expect(result.errors).toEqual([]);
    expect(ops(result).sort()).toEqual(["r1:create", "r2:create", "r3:create"]);
    const state = await h.state();
    expect(state.resources.map((r) => [r.name, r.outputs.value])).toEqual(
      expect.arrayContaining([
        ["r1", "from-registrations"],
        ["r2", "from-registrations"],
        ["r3", "from-registrations"],
      ]),
    );
    // A second up with the same registrations changes nothing.
    expect(ops(await h.up()).sort()).toEqual(["r1:same", "r2:same", "r3:same"]);
  });

  it("reports a registration the harness cannot deploy as that resource's error (registrations)", async () => {
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: "correct horse",
      skipPreview: true,
      registrations: [{ type: "aws:s3/bucket:Bucket", name: "b", inputs: {} }],
    });
    harnesses.push(h);
    const result = await h.up();
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([
      "aws:s3/bucket:Bucket b: deploy harness: only dynamic resources (pulumi-nodejs:dynamic/...) are deployed; b is a aws:s3/bucket:Bucket",
    ]);
    expect((await h.state()).resources).toEqual([]);
  });

  it("deletes the old resource first when the diff asks for deleteBeforeReplace", async () => {
    const log = path.join(projectDir, `echo-log-${Date.now()}.jsonl`);
    const h = await make({ "echo:deleteBeforeReplace": "true" }, { ...process.env, ECHO_LOG: log });
    await h.up();
    h.setConfig("echo:immutable", "i2");
    const second = await h.up();
    expect(ops(second)).toEqual(["a:replace"]);
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).op)
      .filter((op) => op !== "check" && op !== "diff");
    expect(lines).toEqual(["create", "delete", "create"]);
    await rm(log, { force: true });
  });

  it("keeps secrets encrypted in the state, never plaintext, marks secret outputs, and refuses to read the state with another passphrase; refresh drops resources the provider reports gone, and destroy deletes everything", async () => {
    const h = await make({ "echo:names": "a,b" });
    const result = await h.up();
    expect(result.errors).toEqual([]);
    expect(result.secretOutputs.sort()).toEqual(["secretEcho", "token"]);
    expect(result.outputs.token).toBe("[secret]");
    const raw = await h.rawState();
    expect(raw).not.toContain(SECRET);
    const [resource] = (await h.state()).resources;
    expect(raw).not.toContain(resource!.outputs.token as string);
    expect(resource!.secretInputs).toEqual(["secretInput"]);
    expect(resource!.secretOutputs.sort()).toEqual(["secretInput", "token"]);
    expect(resource!.outputs.secretInput).toBe(SECRET);
    expect((await h.stackOutputs({ showSecrets: true })).secretEcho).toBe(SECRET);
    expect(JSON.stringify(result)).not.toContain(SECRET);

    const other = await createDeployHarness({
      projectDir,
      program,
      passphrase: "wrong",
      stateFile: h.stateFile,
    });
    harnesses.push(other);
    await expect(other.state()).rejects.toThrow(/incorrect passphrase/);

    const refreshed = await h.refresh();
    expect(refreshed.errors).toEqual([]);
    // Refresh shows an update only when the provider's Diff
    // (new outputs against the old inputs) reports one (RefreshStep.Apply); `refreshed` is not
    // an input the fixture diffs.
    expect(refreshed.resources.map((r) => r.op)).toEqual(["same", "same"]);
    expect((await h.state()).resources[0]!.outputs.refreshed).toBe(true);

    const destroyed = await h.destroy();
    // One antichain (no dependencies between a and b): deleted in parallel, in no fixed order.
    expect(ops(destroyed).sort()).toEqual(["a:delete", "b:delete"]);
    expect((await h.state()).resources).toEqual([]);
  });

  // The engine prints only the error's `reasons` and records init errors only from them
  // (plugin.InitError, CreateStep.Apply), never e.message.
  it("records a partial failure's reasons as init errors, prints them as the engine does, and re-runs it through update on the next up", async () => {
    const failFile = path.join(projectDir, `fail-${Date.now()}`);
    await writeFile(failFile, "x");
    const h = await make({
      "echo:failWhileExists": failFile,
      "echo:failReasons": JSON.stringify(["worker crashed", "job j-1 FAILED"]),
    });
    const first = await h.up({ skipPreview: true });
    expect(ops(first)).toEqual(["a:failed"]);
    expect(first.ok).toBe(false);
    expect(first.resources[0]!.error).toBe("2 errors occurred:\n\t* worker crashed\n\t* job j-1 FAILED");
    const [failed] = (await h.state()).resources;
    expect(failed!.initErrors).toEqual(["worker crashed", "job j-1 FAILED"]);

    const again = await h.up({ skipPreview: true });
    expect(ops(again)).toEqual(["a:failed"]);

    await rm(failFile);
    const third = await h.up({ skipPreview: true });
    expect(third.errors).toEqual([]);
    expect(ops(third)).toEqual(["a:update"]);
    const [fixed] = (await h.state()).resources;
    expect(fixed!.id).toBe(failed!.id);
    expect(fixed!.initErrors).toBeUndefined();
    expect((await h.up({ skipPreview: true })).resources.map((r) => r.op)).toEqual(["same"]);
  });

  it("reports check failures as the engine prints them: type, name, property, its value whole, the reason", async () => {
    const h = await make();
    await writeFile(
      path.join(h.workDir, "index.mjs"),
      'import fixture from "runpod-echo-fixture";\nnew fixture.Echo("bad", { value: 42 });\n',
    );
    const result = await h.up();
    expect(result.ok).toBe(false);
    // step_generator.go `issueCheckFailures`, diag 2003: the property's value printed as Go's %v
    // prints a PropertyValue, `{42}`.
    expect(result.errors).toEqual([
      expect.stringMatching(
        / bad: \S+ resource 'bad': property value value \{42\} has a problem: value must be a string$/,
      ),
    ]);
    expect(existsSync(h.stateFile) ? (await h.state()).resources : []).toEqual([]);
  });
});

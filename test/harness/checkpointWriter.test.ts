/**
 * The runner's checkpoints (`CheckpointWriter`, test/support/harnessState.mts): one write at a time,
 * as the engine's `SnapshotManager.mutate` (pkg/backend/snapshot.go) serializes them, and a step is
 * reported done only once a write holding its change is on disk. Saves made while a write runs share
 * the next write (the engine writes once per mutation; the harness coalesces, which keeps a deploy of
 * 128 resources from writing 128 copies of the whole state).
 */
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CheckpointWriter,
  Crypter,
  emptyState,
  type HarnessState,
  loadState,
  type ResourceState,
} from "../support/harnessState.mts";

const entry = (name: string, secret?: string): ResourceState => ({
  urn: `urn:pulumi:dev::proj::pulumi-nodejs:dynamic:Resource::${name}`,
  type: "pulumi-nodejs:dynamic:Resource",
  name,
  id: `id-${name}`,
  inputs: secret ? { password: secret } : {},
  outputs: secret ? { password: secret } : { n: name },
  secretInputs: secret ? ["password"] : [],
  secretOutputs: secret ? ["password"] : [],
});

describe("CheckpointWriter", () => {
  let dir: string;
  let file: string;
  let state: HarnessState;
  let writer: CheckpointWriter;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "checkpoints-"));
    file = path.join(dir, "stack.json");
    state = emptyState("proj", "dev");
    writer = new CheckpointWriter(file, state, new Crypter("pass"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  /** A save's write starts (and takes the state's text) within the microtasks after the call. */
  const started = () => new Promise((resolve) => setImmediate(resolve));
  const names = async () => (await loadState(file, "pass", "proj", "dev")).state.resources.map((r) => r.name);

  it("resolves a save only once a write holding the change made before it is on disk", async () => {
    state.resources.push(entry("a"));
    const first = writer.save();
    await started();
    // The first write has started (its text is taken): a change made now needs the next one.
    state.resources.push(entry("b"));
    const second = writer.save();
    await first;
    await second;
    expect(await names()).toEqual(["a", "b"]);
    expect(writer.writes).toBe(2);
  });

  it("makes the saves asked for while a write runs share the next write", async () => {
    state.resources.push(entry("r0"));
    const saves = [writer.save()];
    await started();
    for (let i = 1; i < 64; i++) {
      state.resources.push(entry(`r${i}`));
      saves.push(writer.save());
    }
    await Promise.all(saves);
    // The first save's write was running: the other 63 share the one after it.
    expect(writer.writes).toBe(2);
    expect(await names()).toHaveLength(64);
  });

  it("writes an entry again when one of its fields changed, and the entries left as they were", async () => {
    state.resources.push(entry("a"), entry("b"), entry("c"));
    await writer.save();
    const [a, b] = state.resources as [ResourceState, ResourceState];
    a.dependencies = [b.urn];
    a.pendingReplacement = true;
    state.resources[1] = { ...b, id: "id-b2", outputs: { n: "b2" } };
    state.pendingDeletes.push(b);
    await writer.save();
    const saved = (await loadState(file, "pass", "proj", "dev")).state;
    expect(saved.resources).toEqual([
      { ...entry("a"), dependencies: [b.urn], pendingReplacement: true },
      { ...entry("b"), id: "id-b2", outputs: { n: "b2" } },
      entry("c"),
    ]);
    expect(saved.pendingDeletes).toEqual([entry("b")]);
  });

  it("writes the secrets sealed and the file for its owner only", async () => {
    state.resources.push(entry("cred", "hunter2-secret"));
    await writer.save();
    const text = await readFile(file, "utf8");
    expect(text).not.toContain("hunter2-secret");
    expect(text).toContain("ciphertext");
    expect((await loadState(file, "pass", "proj", "dev")).state.resources[0]?.outputs).toEqual({
      password: "hunter2-secret",
    });
  });

  it("rejects the savers of a failed write, reports it from written(), and writes again on the next save", async () => {
    // A directory where the file goes: the rename onto it fails.
    await mkdir(file);
    state.resources.push(entry("a"));
    await expect(writer.save()).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST|EPERM/);
    await expect(writer.written()).rejects.toThrow();
    await rm(file, { recursive: true });
    await writer.save();
    await expect(writer.written()).resolves.toBeUndefined();
    expect(await names()).toEqual(["a"]);
  });
});

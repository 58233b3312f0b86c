/**
 * States written by pulumi-runpod-dynamic 0.1.0 keep working with the current package: create,
 * read, diff, update and delete of every resource kind from a stored state.
 *
 * `test/fixtures/state-0.1.0/state.json` holds what a 0.1.0 state stores (see the README there):
 * the `__provider` text of each resource kind, which names module paths and operation names of
 * the package (`require("pulumi-runpod-dynamic/dist/provider/jobRun/lifecycle.js").createJobRun`),
 * and the inputs and outputs of one ContainerRegistryAuth and three JobRuns. This file drives the
 * CURRENT package, packed and installed (`inject("installedProjectDir")`), through Pulumi's own
 * dynamic-provider host with those texts and values exactly as stored.
 *
 * Which `__provider` the host runs (`@pulumi/pulumi/cmd/dynamic-provider/index.js`): Read and
 * Delete take it from the stored outputs (`props`); Check, Diff and Update from `news`. So the
 * 0.1.0 text runs on every `pulumi refresh` (Read, then Diff with the stored inputs as news:
 * `RefreshStep.Apply` in pkg/resource/deploy/step.go), on every `pulumi destroy` (Delete with the
 * stored outputs: `DeleteStep.Apply`), and for as long as a resource stays unchanged: a `pulumi up`
 * that finds no diff keeps the old outputs, `__provider` included (`SameStep.Apply`:
 * `s.new.Outputs = s.old.Outputs`). A `pulumi up` after the upgrade sends the program's new
 * `__provider` in news against the 0.1.0 olds; the "program" tests run both texts in news.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type * as Package from "../../src/index";
import { HostError, type ProviderHost, startProviderHost } from "../support/providerHost.mts";
import { type ProviderKind as AnyProviderKind, serializedProvider } from "../support/serializedProvider.mts";

/** The kinds 0.1.0 shipped: later kinds have no 0.1.0 state to honour. */
type ProviderKind = Extract<AnyProviderKind, "ContainerRegistryAuth" | "JobRun">;

const execFileAsync = promisify(execFile);
const FIXTURE_PATH = path.join(__dirname, "..", "fixtures", "state-0.1.0", "state.json");

type Props = Record<string, any>;
interface StoredResource {
  about: string;
  urn: string;
  type: string;
  id: string;
  inputs: Props;
  outputs: Props;
  secretInputs: string[];
  additionalSecretOutputs: string[];
}
interface Fixture {
  package: { name: string; version: string; commit: string };
  providers: Record<ProviderKind, { bytes: number; sha256: string; text: string }>;
  resources: Record<"registry" | "passed" | "failed" | "running", StoredResource>;
}

const fixture = JSON.parse(readFileSync(FIXTURE_PATH, "utf8")) as Fixture;
const OLD: Record<ProviderKind, string> = {
  ContainerRegistryAuth: fixture.providers.ContainerRegistryAuth.text,
  JobRun: fixture.providers.JobRun.text,
};
const projectDir = inject("installedProjectDir");
/**
 * The current package's public root, from the installed copy (client, errors, emulator): the test
 * depends on nothing inside `src/` but what users import.
 */
const pkg = createRequire(path.join(projectDir, "package.json"))("pulumi-runpod-dynamic") as typeof Package;
const { NotFoundError } = pkg;

/** A deep copy of a stored resource, so no test edits another's state. */
function stored(name: keyof Fixture["resources"]): StoredResource {
  return structuredClone(fixture.resources[name]);
}

/** The stored inputs without `__provider`: what the program still declares. */
function args(resource: StoredResource): Props {
  const { __provider: _ignored, ...rest } = resource.inputs;
  return rest;
}

describe("the 0.1.0 fixture", () => {
  it("is the state 0.1.0 wrote: both __provider texts stored unchanged in every input and output", () => {
    expect(fixture.package).toMatchObject({ name: "pulumi-runpod-dynamic", version: "0.1.0" });
    for (const resource of Object.values(fixture.resources)) {
      const kind = resource.type.split(":").at(-1) as ProviderKind;
      expect(resource.inputs.__provider).toBe(OLD[kind]);
      expect(resource.outputs.__provider).toBe(OLD[kind]);
    }
    expect(fixture.resources.passed.outputs.s3ConfigDigest).toMatch(
      /^hmac-sha256:[0-9a-f]{32}:[0-9a-f]{64}$/,
    );
    expect(fixture.resources.failed.outputs).toMatchObject({ status: "FAILED", passed: false });
    expect(fixture.resources.running.outputs).toMatchObject({ status: "IN_PROGRESS", passed: false });
  });
});

// ---------------------------------------------------------------------------------------------
// Every module path and export the stored texts call must still exist
// ---------------------------------------------------------------------------------------------

/**
 * The operations each 0.1.0 provider method calls, by module and export name: the compatibility
 * contract a stored state holds the package to. A refactor may move the code, but these paths must
 * stay requireable and export these functions with the 0.1.0 arguments (thin modules are fine).
 *
 * The engine reaches configure, read, delete and diff with a stored text (see the file header);
 * check and diff also fall back to the stored inputs' text when the program's is unknown. Create
 * and update always get the program's text, so theirs are unreachable from a state today; they are
 * held to anyway, since a thin export costs nothing and the probe then needs no engine knowledge.
 */
const REGISTRY_MODULE = "pulumi-runpod-dynamic/dist/provider/registryAuth.js";
const LIFECYCLE_MODULE = "pulumi-runpod-dynamic/dist/provider/jobRun/lifecycle.js";
const CALLED_BY_0_1_0: Record<ProviderKind, Record<string, string[]>> = {
  ContainerRegistryAuth: {
    configure: [`${REGISTRY_MODULE} settingsFromConfigure`],
    check: [`${REGISTRY_MODULE} checkRegistryAuth`],
    diff: [`${REGISTRY_MODULE} diffRegistryAuth`],
    create: [`${REGISTRY_MODULE} createRegistryAuth`],
    read: [`${REGISTRY_MODULE} readRegistryAuth`],
    update: [`${REGISTRY_MODULE} updateRegistryAuth`],
    delete: [`${REGISTRY_MODULE} deleteRegistryAuth`],
  },
  JobRun: {
    configure: [`${LIFECYCLE_MODULE} resolveSettings`],
    check: [`${LIFECYCLE_MODULE} checkJobRunArgs`],
    diff: [`${LIFECYCLE_MODULE} diffJobRun`],
    create: [`${LIFECYCLE_MODULE} contextFromSettings`, `${LIFECYCLE_MODULE} createJobRun`],
    read: [`${LIFECYCLE_MODULE} contextFromSettings`, `${LIFECYCLE_MODULE} readJobRun`],
    update: [`${LIFECYCLE_MODULE} contextFromSettings`, `${LIFECYCLE_MODULE} updateJobRun`],
    delete: [`${LIFECYCLE_MODULE} contextFromSettings`, `${LIFECYCLE_MODULE} deleteJobRun`],
  },
};

/**
 * Runs in a child process with cwd = the installed project. Loads each stored text the way the
 * host does (`require-from-string`, then `.handler()`), with `require` of this package answered by
 * a recorder, and calls every provider method once: that lists the (module, export) pairs each
 * method uses, whatever shape the text has. Then requires each module from the CURRENT package
 * and reports every module that fails to load and every export that is not a function.
 * argv: the fixture path. Prints one JSON line `{ used, problems }`.
 */
const PROBE_SCRIPT = `
const fs = require("node:fs");
const path = require("node:path");
const Module = require("node:module");
const req = Module.createRequire(path.join(process.cwd(), "package.json"));
const fromPulumi = Module.createRequire(req.resolve("@pulumi/pulumi/package.json"));
const requireFromString = fromPulumi("require-from-string");
const fixture = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const PKG = "pulumi-runpod-dynamic";
const ours = (request) => request === PKG || request.startsWith(PKG + "/");
(async () => {
  const used = {};
  let calls = [];
  const load = Module._load;
  Module._load = function (request, ...rest) {
    if (typeof request === "string" && ours(request)) {
      return new Proxy({}, {
        get(_target, name) {
          if (typeof name === "string") calls.push(request + " " + name);
          return () => undefined;
        },
      });
    }
    return load.call(this, request, ...rest);
  };
  const arg = { config: { get: () => undefined } };
  for (const [kind, { text }] of Object.entries(fixture.providers)) {
    const provider = requireFromString(text).handler();
    used[kind] = {};
    for (const method of ["configure", "check", "diff", "create", "read", "update", "delete"]) {
      calls = [];
      if (typeof provider[method] !== "function") { used[kind][method] = "missing"; continue; }
      try { await provider[method](arg, arg, arg); } catch (e) { calls.push("threw: " + e.message); }
      used[kind][method] = [...new Set(calls)];
    }
  }
  Module._load = load;
  const problems = [];
  const needed = new Map();
  for (const [kind, methods] of Object.entries(used)) {
    for (const [method, pairs] of Object.entries(methods)) {
      for (const pair of Array.isArray(pairs) ? pairs : []) {
        const [spec, name] = pair.split(" ");
        if (!ours(spec)) continue;
        if (!needed.has(spec)) needed.set(spec, []);
        needed.get(spec).push({ kind, method, name });
      }
    }
  }
  for (const [spec, uses] of needed) {
    let mod;
    try { mod = req(spec); } catch (e) {
      const methods = [...new Set(uses.map((u) => u.kind + "." + u.method))].join(", ");
      problems.push("require(" + JSON.stringify(spec) + ") fails in the current package (" +
        String(e.message).split("\\n")[0] + "), but the 0.1.0 __provider stored in users' states loads it in " +
        methods + ". Keep a module at that path (a thin one re-exporting the operations is enough).");
      continue;
    }
    for (const { kind, method, name } of uses) {
      if (typeof mod[name] === "function") continue;
      problems.push("The 0.1.0 __provider of " + kind + " stored in users' states calls require(" +
        JSON.stringify(spec) + ")." + name + " in its " + method + " method, but the current package's " +
        "module there has no function " + name + " (its exports: " + Object.keys(mod).join(", ") +
        "). Export it again, with the 0.1.0 arguments, from that path.");
    }
  }
  process.stdout.write(JSON.stringify({ used, problems }));
})().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
`;

describe("the 0.1.0 __provider texts against the current package's modules", () => {
  let probe: { used: Record<string, Record<string, string[] | "missing">>; problems: string[] };

  beforeAll(async () => {
    const { stdout } = await execFileAsync(process.execPath, ["-e", PROBE_SCRIPT, FIXTURE_PATH], {
      cwd: projectDir,
      maxBuffer: 16 * 1024 * 1024,
    });
    probe = JSON.parse(stdout);
  });

  it("call exactly the operations of the documented compatibility contract", () => {
    expect(probe.used).toEqual(CALLED_BY_0_1_0);
  });

  it("find every module path and export they call in the installed package", () => {
    expect(
      probe.problems,
      `States written by 0.1.0 would break:\n- ${probe.problems.join("\n- ")}\n`,
    ).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Every operation through the real host
// ---------------------------------------------------------------------------------------------

const API_KEY = "old-state-test-key-5e1f";
let emu: Package.RunningEmulator;
let client: Package.RunpodClient;
let host: ProviderHost;
/** The current package's `__provider` texts: what a program sends after upgrading. */
const CURRENT = {} as Record<ProviderKind, string>;

beforeAll(async () => {
  emu = await pkg.startEmulator({ apiKeys: [API_KEY], endpoints: ["echo:3"], rateLimits: false });
  // The 0.1.0 default dialect (REST v2); the stored config's keys, pointing at this emulator.
  const restUrl = `${emu.serverlessUrl}/v2`;
  client = new pkg.RunpodClient({
    apiKey: API_KEY,
    restUrl,
    serverlessUrl: emu.serverlessUrl,
    maxRetries: 0,
  });
  host = await startProviderHost({ projectDir });
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:restUrl": restUrl,
    "runpod:serverlessUrl": emu.serverlessUrl,
  });
  CURRENT.ContainerRegistryAuth = await serializedProvider(projectDir, "ContainerRegistryAuth");
  CURRENT.JobRun = await serializedProvider(projectDir, "JobRun");
});

afterAll(async () => {
  const stderr = host?.stderr() ?? "";
  await host?.close();
  await emu?.close();
  for (const secret of [API_KEY, registryPassword(), s3Secret()]) expect(stderr).not.toContain(secret);
});

function registryPassword(): string {
  return fixture.resources.registry.inputs.password;
}
function s3Secret(): string {
  return fixture.resources.passed.inputs.s3Config.accessSecret;
}

/** The texts a program may send in news: the current package's, and 0.1.0's as stored. */
const PROGRAM_TEXTS = [
  ["the current package's __provider (pulumi up after upgrading)", "current"],
  [
    "the 0.1.0 __provider as stored (as refresh's Diff sends it; the host's fallback when the program's is unknown)",
    "0.1.0",
  ],
] as const;
const textOf = (kind: ProviderKind, which: "current" | "0.1.0") =>
  which === "current" ? CURRENT[kind] : OLD[kind];

describe("a ContainerRegistryAuth stored by 0.1.0", () => {
  /**
   * The stored credential, existing on this emulator: created with the stored name, username and
   * password, and the stored id rewritten to the one the emulator gave it. Deleted afterwards.
   */
  async function withStoredCredential(fn: (state: StoredResource) => Promise<void>): Promise<void> {
    const state = stored("registry");
    const created = await client.registryAuths.create({
      name: state.outputs.name,
      username: state.outputs.username,
      password: state.outputs.password,
    });
    state.id = created.id;
    try {
      await fn(state);
    } finally {
      await client.registryAuths.delete(created.id).catch((e: unknown) => {
        if (!(e instanceof NotFoundError)) throw e;
      });
    }
  }

  it("refreshes: Read with the 0.1.0 __provider keeps the stored outputs, and the refresh's Diff finds no change", async () => {
    await withStoredCredential(async (state) => {
      const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
      expect(read.id).toBe(state.id);
      expect(read.props).toMatchObject(state.outputs);
      // RefreshStep.Apply (step.go): diffResource with the refreshed outputs as olds and the
      // stored inputs, 0.1.0 __provider included, as news.
      const diff = await host.diff(state.id, state.urn, read.props, state.inputs);
      expect(diff).toMatchObject({ changes: false, replaces: [] });
    });
  });

  it("refreshes a credential deleted outside Pulumi as gone (empty id)", async () => {
    await withStoredCredential(async (state) => {
      await client.registryAuths.delete(state.id);
      const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
      expect(read.id).toBe("");
    });
  });

  it("destroys: Delete with the 0.1.0 __provider deletes the credential, and a second Delete succeeds", async () => {
    await withStoredCredential(async (state) => {
      await host.delete(state.id, state.urn, state.outputs);
      await expect(client.registryAuths.get(state.id)).rejects.toBeInstanceOf(NotFoundError);
      await host.delete(state.id, state.urn, state.outputs);
    });
  });

  it("creates with the 0.1.0 __provider (no engine step does; it holds createRegistryAuth to its 0.1.0 arguments)", async () => {
    const state = stored("registry");
    const props = { ...state.inputs, name: "fixture-registry-created-by-0-1-0-text" };
    const { id, outs } = await host.create(state.urn, props);
    try {
      expect(outs).toEqual(props);
      expect(await client.registryAuths.get(id)).toMatchObject({ id, name: props.name });
    } finally {
      await host.delete(id, state.urn, outs);
    }
  });

  it("refreshes and destroys with a stored restUrl of REST v1 (retired, still served)", async () => {
    const v1 = await startProviderHost({ projectDir });
    try {
      await v1.configure({
        "runpod:apiKey": API_KEY,
        "runpod:restUrl": `${emu.serverlessUrl}/v1`,
        "runpod:serverlessUrl": emu.serverlessUrl,
      });
      await withStoredCredential(async (state) => {
        const read = await v1.read(state.id, state.urn, state.outputs, state.inputs);
        expect(read).toMatchObject({ id: state.id, props: state.outputs });
        await v1.delete(state.id, state.urn, state.outputs);
        await expect(client.registryAuths.get(state.id)).rejects.toBeInstanceOf(NotFoundError);
      });
      expect(v1.stderr()).not.toContain(registryPassword());
    } finally {
      await v1.close();
    }
  });

  describe.each(PROGRAM_TEXTS)("with %s in news", (_label, which) => {
    const news = (extra: Props = {}) => ({
      ...args(fixture.resources.registry),
      ...extra,
      __provider: textOf("ContainerRegistryAuth", which),
    });
    /** The engine's Check of the program's inputs against the stored inputs, before Diff and Update. */
    async function checked(state: StoredResource, extra: Props = {}): Promise<Props> {
      const { inputs, failures } = await host.check(state.urn, state.inputs, news(extra));
      expect(failures).toEqual([]);
      return inputs;
    }

    it("checks the program's inputs against the stored inputs without failures", async () => {
      const state = stored("registry");
      expect(await checked(state)).toMatchObject(news());
      expect(await checked(state, { adoptExisting: true })).toMatchObject(news({ adoptExisting: true }));
    });

    it("diffs against the stored outputs: no change, adoptExisting an update, a new password or name a replacement", async () => {
      const state = stored("registry");
      const diff = async (extra: Props) =>
        host.diff(state.id, state.urn, state.outputs, await checked(state, extra));
      expect(await diff({})).toMatchObject({ changes: false, replaces: [] });
      expect(await diff({ adoptExisting: true })).toMatchObject({ changes: true, replaces: [] });
      expect(await diff({ password: "rotated-fixture-password" })).toMatchObject({
        changes: true,
        replaces: ["password"],
        deleteBeforeReplace: true,
      });
      expect(await diff({ name: "renamed-fixture-registry" })).toMatchObject({
        changes: true,
        replaces: ["name"],
        deleteBeforeReplace: false,
      });
    });

    it("updates adoptExisting in place over the stored outputs, then deletes with the new outputs", async () => {
      await withStoredCredential(async (state) => {
        const inputs = await checked(state, { adoptExisting: true });
        const { outs } = await host.update(state.id, state.urn, state.outputs, inputs);
        expect(outs).toMatchObject(news({ adoptExisting: true }));
        await host.delete(state.id, state.urn, outs);
        await expect(client.registryAuths.get(state.id)).rejects.toBeInstanceOf(NotFoundError);
      });
    });
  });
});

describe("JobRuns stored by 0.1.0", () => {
  /** Runs a real job on this emulator and returns its id (to stand in for a stored job id). */
  async function realJob(input: Props, wait: boolean): Promise<string> {
    const endpoint = client.endpoint("echo");
    const job = await endpoint.run({ input });
    if (wait) await endpoint.waitForJob(job.id, { timeoutMs: 30_000 });
    return job.id;
  }

  describe.each(["passed", "failed", "running"] as const)("the %s JobRun", (name) => {
    it("refreshes with the 0.1.0 __provider once the service has forgotten the job: the recorded result stays", async () => {
      const state = stored(name);
      const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
      expect(read.id).toBe(state.id);
      expect(read.props).toEqual(state.outputs);
    });

    it("destroys with the 0.1.0 __provider when the service has forgotten the job", async () => {
      const state = stored(name);
      await host.delete(state.id, state.urn, state.outputs);
    });
  });

  it("refreshes the passed JobRun from its job on the service, and the refresh's Diff finds no change", async () => {
    const state = stored("passed");
    state.outputs.jobId = await realJob(state.inputs.input, true);
    const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
    expect(read.id).toBe(state.id);
    // The service's figures of the live job replace the recorded ones; the rest is kept.
    const { delayTime: _d, executionTime: _e, ...recorded } = state.outputs;
    expect(read.props).toMatchObject({ ...recorded, status: "COMPLETED", output: state.inputs.input.output });
    expect(read.props).toMatchObject({ delayTime: expect.any(Number), executionTime: expect.any(Number) });
    const diff = await host.diff(state.id, state.urn, read.props, state.inputs);
    expect(diff).toMatchObject({ changes: false, replaces: [] });
  });

  it("creates with the 0.1.0 __provider (no engine step does; it holds createJobRun to its 0.1.0 arguments)", async () => {
    const state = stored("passed");
    const { id, outs } = await host.create(state.urn, state.inputs);
    expect(id).not.toBe(state.id);
    expect(outs).toMatchObject({
      status: "COMPLETED",
      passed: true,
      output: state.inputs.input.output,
      triggers: state.inputs.triggers,
      __provider: OLD.JobRun,
    });
    expect(outs.s3ConfigDigest).toEqual(expect.any(String));
    expect(JSON.stringify(outs)).not.toContain(s3Secret());
  });

  it("refreshes the failed and the running JobRun, and the refresh's Diff asks to run them again", async () => {
    for (const name of ["failed", "running"] as const) {
      const state = stored(name);
      const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
      const diff = await host.diff(state.id, state.urn, read.props, state.inputs);
      expect(diff, name).toMatchObject({ changes: true, replaces: [] });
    }
  });

  it("refreshes the running JobRun from its live job, destroys it by cancelling the job, and sends nothing for a finished one", async () => {
    const running = stored("running");
    running.outputs.jobId = await realJob(running.inputs.input, false);
    const read = await host.read(running.id, running.urn, running.outputs, running.inputs);
    expect(read).toMatchObject({ id: running.id, props: { jobId: running.outputs.jobId } });
    expect(read.props.status).toMatch(/IN_QUEUE|IN_PROGRESS/);
    await host.delete(running.id, running.urn, running.outputs);
    expect((await client.endpoint("echo").status(running.outputs.jobId)).status).toBe("CANCELLED");

    const passed = stored("passed");
    const before = emu.stats().requests;
    await host.delete(passed.id, passed.urn, passed.outputs);
    expect(emu.stats().requests).toBe(before);
  });

  describe.each(PROGRAM_TEXTS)("with %s in news", (_label, which) => {
    const news = (state: StoredResource, extra: Props = {}) => ({
      ...args(state),
      ...extra,
      __provider: textOf("JobRun", which),
    });
    /** The engine's Check of the program's inputs against the stored inputs, before Diff and Update. */
    async function checked(state: StoredResource, extra: Props = {}): Promise<Props> {
      const { inputs, failures } = await host.check(state.urn, state.inputs, news(state, extra));
      expect(failures, state.urn).toEqual([]);
      return inputs;
    }

    it("checks each program's inputs against the stored inputs without failures", async () => {
      for (const name of ["passed", "failed", "running"] as const) {
        const state = stored(name);
        expect(await checked(state), name).toMatchObject(news(state));
      }
    });

    it("diffs the passed JobRun: the same s3Config matches the 0.1.0 digest, a new trigger or secret runs it again", async () => {
      const state = stored("passed");
      const diff = async (extra: Props) =>
        host.diff(state.id, state.urn, state.outputs, await checked(state, extra));
      expect(await diff({})).toMatchObject({ changes: false, replaces: [] });
      expect(await diff({ triggers: ["release-2"] })).toMatchObject({ changes: true, replaces: [] });
      const rotated = { ...state.inputs.s3Config, accessSecret: "rotated-fixture-secret" };
      expect(await diff({ s3Config: rotated })).toMatchObject({ changes: true, replaces: [] });
    });

    it("diffs the failed JobRun with unchanged arguments as a re-run (passed: false)", async () => {
      const state = stored("failed");
      const diff = await host.diff(state.id, state.urn, state.outputs, await checked(state));
      expect(diff).toMatchObject({ changes: true, replaces: [] });
    });

    it("updates the passed JobRun over its stored outputs: a new job, same resource id", async () => {
      const state = stored("passed");
      const { outs } = await host.update(
        state.id,
        state.urn,
        state.outputs,
        await checked(state, { triggers: ["release-2"] }),
      );
      expect(outs).toMatchObject({
        endpointId: "echo",
        status: "COMPLETED",
        passed: true,
        output: state.inputs.input.output,
        triggers: ["release-2"],
        __provider: textOf("JobRun", which),
      });
      expect(outs.jobId).not.toBe(state.outputs.jobId);
      expect(outs.s3ConfigDigest).toEqual(expect.any(String));
      expect(JSON.stringify(outs)).not.toContain(s3Secret());
    });

    it("re-runs the failed JobRun through Update under its stored id", async () => {
      const state = stored("failed");
      const again = await host.update(state.id, state.urn, state.outputs, await checked(state)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(again).toBeInstanceOf(HostError);
      expect((again as HostError).id).toBe(state.id);
      // The engine stores these properties as the outputs: they must carry a __provider to load later.
      expect((again as HostError).properties).toMatchObject({
        status: "FAILED",
        passed: false,
        __provider: textOf("JobRun", which),
      });
      const fixed = await checked(state, { input: { output: { ok: true } } });
      const { outs } = await host.update(state.id, state.urn, state.outputs, fixed);
      expect(outs).toMatchObject({ status: "COMPLETED", passed: true, output: { ok: true } });
    });

    it("updates the running JobRun whose recorded job the service has forgotten", async () => {
      const state = stored("running");
      const fixed = await checked(state, { input: { output: "done" }, timeoutMs: 30_000 });
      const { outs } = await host.update(state.id, state.urn, state.outputs, fixed);
      expect(outs).toMatchObject({ status: "COMPLETED", passed: true, output: "done" });
      expect(outs.jobId).not.toBe(state.outputs.jobId);
    });
  });
});

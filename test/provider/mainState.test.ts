/**
 * States written before every resource shared one provider class keep working with the current
 * package: check, create, read, diff and delete of each resource kind with the `__provider` text
 * stored then.
 *
 * `test/fixtures/state-main-2026-11/state.json` holds, for ContainerRegistryAuth, NetworkVolume,
 * Template, ServerlessEndpoint and JobRun, the `__provider` text serialized from the packed package
 * of that time, and the inputs and outputs of one resource of each kind (see the README there).
 * This file drives the CURRENT package, packed and installed (`inject("installedProjectDir")`),
 * through Pulumi's own dynamic-provider host with those texts exactly as stored. Read and Delete
 * run the text stored in the outputs (refresh, destroy); Check, Diff and Update the one in news
 * (the stored inputs' text when a refresh diffs, or when the program's is unknown).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type * as Package from "../../src/index";
import { type ProviderHost, startProviderHost } from "../support/providerHost.mts";
import { type ProviderKind, serializedProvider } from "../support/serializedProvider.mts";

const FIXTURE_PATH = path.join(__dirname, "..", "fixtures", "state-main-2026-11", "state.json");

type Props = Record<string, any>;
interface StoredResource {
  urn: string;
  type: string;
  id: string;
  inputs: Props;
  outputs: Props;
}
interface Fixture {
  package: { name: string };
  providers: Record<ProviderKind, { bytes: number; sha256: string; text: string }>;
  resources: Record<ProviderKind, StoredResource>;
}

const fixture = JSON.parse(readFileSync(FIXTURE_PATH, "utf8")) as Fixture;
const KINDS = ["ContainerRegistryAuth", "NetworkVolume", "Template", "ServerlessEndpoint", "JobRun"] as const;
/** Each kind's operations module, the one path its stored text requires. */
const OPERATIONS: Record<(typeof KINDS)[number], string> = {
  ContainerRegistryAuth: "pulumi-runpod-dynamic/dist/provider/registryAuth/operations.js",
  JobRun: "pulumi-runpod-dynamic/dist/provider/jobRun/operations.js",
  NetworkVolume: "pulumi-runpod-dynamic/dist/provider/networkVolume/operations.js",
  ServerlessEndpoint: "pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/operations.js",
  Template: "pulumi-runpod-dynamic/dist/provider/template/operations.js",
};
/** Kinds whose object the test makes live on the emulator (a JobRun's job is gone anyway). */
const MANAGED = ["ContainerRegistryAuth", "NetworkVolume", "Template", "ServerlessEndpoint"] as const;

const projectDir = inject("installedProjectDir");
const pkg = createRequire(path.join(projectDir, "package.json"))("pulumi-runpod-dynamic") as typeof Package;
const API_KEY = "main-state-test-key-7c2d";
const SECRETS = [
  API_KEY,
  fixture.resources.ContainerRegistryAuth.inputs.password,
  fixture.resources.Template.inputs.env.HF_TOKEN,
];

let emu: Package.RunningEmulator;
let host: ProviderHost;

beforeAll(async () => {
  emu = await pkg.startEmulator({
    apiKeys: [API_KEY],
    endpoints: ["echo:3"],
    rateLimits: false,
    rolloutMs: 50,
  });
  host = await startProviderHost({ projectDir });
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:restUrl": emu.restUrl,
    "runpod:serverlessUrl": emu.serverlessUrl,
  });
});

afterAll(async () => {
  const stderr = host?.stderr() ?? "";
  await host?.close();
  await emu?.close();
  for (const secret of SECRETS) expect(stderr).not.toContain(secret);
});

/** A deep copy of a stored resource, so no test edits another's state. */
function stored(kind: ProviderKind): StoredResource {
  return structuredClone(fixture.resources[kind]);
}
const OLD = (kind: ProviderKind) => fixture.providers[kind].text;

describe("the November 2026 fixture", () => {
  it.each(KINDS)(
    "stores the %s __provider text in the inputs and outputs, requiring only its operations module",
    (kind) => {
      const state = stored(kind);
      expect(state.inputs.__provider).toBe(OLD(kind));
      expect(state.outputs.__provider).toBe(OLD(kind));
      const paths = [...OLD(kind).matchAll(/"(pulumi-runpod-dynamic\/[^"]*)"/g)].map((m) => m[1]);
      expect(new Set(paths)).toEqual(new Set([OPERATIONS[kind]]));
    },
  );
});

describe.each(KINDS)("a %s stored with its own provider class", (kind) => {
  it("checks the stored inputs against themselves without failures, keeping the stored text", async () => {
    const state = stored(kind);
    const { inputs, failures } = await host.check(state.urn, state.inputs, state.inputs);
    expect(failures).toEqual([]);
    expect(inputs.__provider).toBe(OLD(kind));
  });

  it("diffs the stored outputs against the stored inputs as no change", async () => {
    const state = stored(kind);
    const diff = await host.diff(state.id, state.urn, state.outputs, state.inputs);
    expect(diff).toMatchObject({ changes: false, replaces: [] });
  });
});

/** Outputs added since the fixture was captured, per kind. */
const ADDED_OUTPUTS: Record<(typeof MANAGED)[number], string[]> = {
  ContainerRegistryAuth: [],
  NetworkVolume: ["monthlyCostUsd"],
  Template: [],
  ServerlessEndpoint: ["hourlyCost"],
};

describe.each(MANAGED)("a live %s run by its stored text", (kind) => {
  it("plans no change when today's check meets the stored outputs", async () => {
    const state = stored(kind);
    const { inputs: news, failures } = await host.check(state.urn, state.inputs, state.inputs);
    expect(failures).toEqual([]);
    expect(await host.diff(state.id, state.urn, state.outputs, news)).toMatchObject({ changes: false });
  });

  it("creates, refreshes with no diff, destroys, and then refreshes as gone", async () => {
    const state = stored(kind);
    const { inputs: news, failures } = await host.check(state.urn, {}, state.inputs);
    expect(failures).toEqual([]);
    const { id, outs } = await host.create(state.urn, news);
    expect(outs.__provider).toBe(OLD(kind));
    // Every output the stored state has is still written; newer code may add outputs (the cost figures).
    expect(Object.keys(outs)).toEqual(expect.arrayContaining(Object.keys(state.outputs)));
    expect(
      Object.keys(outs)
        .filter((key) => !(key in state.outputs))
        .sort(),
    ).toEqual(ADDED_OUTPUTS[kind]);

    const read = await host.read(id, state.urn, outs, news);
    expect(read.id).toBe(id);
    expect(read.props.__provider).toBe(OLD(kind));
    expect(await host.diff(id, state.urn, read.props, news)).toMatchObject({ changes: false, replaces: [] });

    await host.delete(id, state.urn, read.props);
    expect((await host.read(id, state.urn, read.props, news)).id).toBe("");
  });
});

describe("the stored JobRun", () => {
  it("refreshes once the service has forgotten its job: the recorded result stays", async () => {
    const state = stored("JobRun");
    const read = await host.read(state.id, state.urn, state.outputs, state.inputs);
    expect(read.id).toBe(state.id);
    expect(read.props).toEqual(state.outputs);
  });

  it("destroys without a request when its job is over", async () => {
    const state = stored("JobRun");
    const before = emu.stats().requests;
    await host.delete(state.id, state.urn, state.outputs);
    expect(emu.stats().requests).toBe(before);
  });

  it("runs again under its stored id when a trigger changes", async () => {
    const state = stored("JobRun");
    const changed = { ...state.inputs, triggers: ["release-2"] };
    const { inputs, failures } = await host.check(state.urn, state.inputs, changed);
    expect(failures).toEqual([]);
    expect(await host.diff(state.id, state.urn, state.outputs, inputs)).toMatchObject({ changes: true });
    const { outs } = await host.update(state.id, state.urn, state.outputs, inputs);
    expect(outs).toMatchObject({
      status: "COMPLETED",
      passed: true,
      triggers: ["release-2"],
      __provider: OLD("JobRun"),
    });
    expect(outs.jobId).not.toBe(state.outputs.jobId);
  });
});

/**
 * ContainerRegistryAuth's operations lived in `registryAuth/` until the folder was named for its
 * class. A state written by the shared provider class (`src/provider/common/dynamicProvider.ts`)
 * before that stores today's text with the old path: the class is unchanged, only the path its row
 * derives moved. package.json `exports` maps the old path to `compat/registryAuth/operations.js`.
 */
describe("a ContainerRegistryAuth stored by the shared provider class under registryAuth/", () => {
  const STORED_PATH = "pulumi-runpod-dynamic/dist/provider/registryAuth/operations.js";
  const CURRENT_PATH = "pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/operations.js";

  it("creates, refreshes with no diff, destroys, and then refreshes as gone, all by its stored text", async () => {
    const current = await serializedProvider(projectDir, "ContainerRegistryAuth");
    expect(current.split(CURRENT_PATH)).toHaveLength(2);
    const text = current.replace(CURRENT_PATH, STORED_PATH);
    const state = stored("ContainerRegistryAuth");
    const given: Props = { ...state.inputs, name: `${state.inputs.name}-shared`, __provider: text };

    const { inputs: news, failures } = await host.check(state.urn, {}, given);
    expect(failures).toEqual([]);
    expect(news.__provider).toBe(text);
    const { id, outs } = await host.create(state.urn, news);
    expect(outs).toEqual({
      name: given.name,
      username: given.username,
      password: given.password,
      __provider: text,
    });

    const read = await host.read(id, state.urn, outs, news);
    expect(read).toMatchObject({ id, props: outs });
    expect(await host.diff(id, state.urn, read.props, news)).toMatchObject({ changes: false, replaces: [] });

    await host.delete(id, state.urn, read.props);
    expect((await host.read(id, state.urn, read.props, news)).id).toBe("");
    const client = new pkg.RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrl });
    expect((await client.registryAuths.list()).map((r) => r.name)).not.toContain(given.name);
  });
});

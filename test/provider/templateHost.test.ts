/**
 * Template through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized from
 * the INSTALLED package (test/support/globalSetup.ts), against the emulator over REST v2 (templates
 * do not exist in v1: a v1 `runpod:restUrl` fails check).
 *
 * The host reaches the emulator through a small pass-through proxy that a test can arm to lose an
 * answer after the emulator acted, or to answer in the emulator's place. Every env value is a
 * secret: the afterAll scans every output but `env`, every error and the host's stderr for each,
 * in the forms a leak would take (plain, JSON-escaped, base64).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NotFoundError, type RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import type { FaultProxy } from "../support/faultProxy.mts";
import {
  HostError,
  type ProviderHost,
  startProviderHost,
  UNKNOWN,
  urnFor,
} from "../support/providerHost.mts";
import { type ResourceHostRig, startResourceHostRig } from "./resourceHostKit";

const API_KEY = "template-host-key-5c1e9a";
const ENV_SECRET = "hf_Env-Secret-Token-0a9b8c7d";
const ENV_SECRET_2 = "rotated-Env-Secret-71f3e2aa";
const ENV_SECRETS = [ENV_SECRET, ENV_SECRET_2];
const SECRETS = [...ENV_SECRETS, API_KEY];

const projectDir = inject("installedProjectDir");
const urn = (name: string) => urnFor("Template", name);

/** Every text a user could see, for the secret scan in afterAll. */
const seenTexts: [string, string][] = [];

/** The forms an env value would take in a leak. */
function leakForms(secret: string): string[] {
  return [secret, JSON.stringify(secret).slice(1, -1), Buffer.from(secret).toString("base64")];
}

function expectNoSecret(where: string, text: string): void {
  for (const secret of SECRETS) {
    for (const form of leakForms(secret)) expect(text, `${where} holds a secret`).not.toContain(form);
  }
}

/** Records the outputs (minus `env`, the secret output itself) for the scan, and returns them. */
function recordOuts<T extends Record<string, unknown>>(where: string, outs: T): T {
  const { env: _env, ...rest } = outs;
  seenTexts.push([where, JSON.stringify(rest)]);
  return outs;
}

/** Runs `fn`, expecting a HostError; records its message for the scan. */
async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  const e = error as HostError;
  // `env` is the secret output itself (the engine re-marks it): every other property is scanned.
  const { env: _env, ...properties } = e.properties ?? {};
  seenTexts.push(["error", `${e.message} ${JSON.stringify(e.reasons ?? [])} ${JSON.stringify(properties)}`]);
  return e;
}

describe("Template in the provider host (REST v2)", () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let __provider: string;
  let n = 0;
  const fresh = (base: string) => `${base}-${++n}`;

  let rig: ResourceHostRig | undefined;

  beforeAll(async () => {
    rig = await startResourceHostRig({ apiKey: API_KEY, className: "Template", folder: "template" });
    ({ emu, proxy, host, client, __provider } = rig);
  });

  afterAll(async () => {
    const stderr = (await rig?.close()) ?? "";
    expectNoSecret("host stderr", stderr);
    for (const [where, text] of seenTexts) expectNoSecret(where, text);
  });

  const withProvider = (props: Record<string, unknown>) => ({ ...props, __provider });

  async function checked(name: string, props: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { inputs, failures } = await host.check(urn(name), {}, withProvider(props));
    expect(failures).toEqual([]);
    return inputs;
  }

  async function create(resource: string, props: Record<string, unknown>) {
    const inputs = await checked(resource, props);
    const result = await host.create(urn(resource), inputs);
    recordOuts(`create ${resource}`, result.outs);
    return { ...result, inputs };
  }

  const named = async (name: string) => (await client.templates.list()).filter((t) => t.name === name);
  const base = (name: string) => ({
    name,
    image: "acme/worker:1",
    env: { HF_TOKEN: ENV_SECRET },
    serverless: true,
  });

  it("creates the template with every field and outputs it as read back, env as given", async () => {
    const name = fresh("full");
    const args = {
      name,
      image: "acme/worker:1",
      args: "--port 8000",
      disk: 30,
      env: { HF_TOKEN: ENV_SECRET, MODE: "prod-mode" },
      ports: ["8000/http"],
      registry: "cred-123",
      mounts: { persistent: { size: 20, path: "/workspace" } },
      allowedCudaVersions: ["12.4"],
      category: "AMD",
      public: false,
      serverless: true,
      startJupyter: false,
      startSsh: false,
    };
    const { id, outs } = await create("full", args);
    const live = await client.templates.get(id);
    expect(live).toEqual({ id, ...args });
    const { __provider: provider, ...fields } = outs;
    expect(typeof provider).toBe("string");
    // DESIGN: __provider <= 8 KB, and it loads its operations module by name, capturing nothing else.
    expect(Buffer.byteLength(provider as string, "utf8")).toBeLessThanOrEqual(8 * 1024);
    const paths = [...(provider as string).matchAll(/"(pulumi-runpod-dynamic\/[^"]*)"/g)].map((m) => m[1]);
    expect(new Set(paths)).toEqual(new Set(["pulumi-runpod-dynamic/dist/provider/template/operations.js"]));
    expect(fields).toEqual({ id, ...args });
    expect(await named(name)).toHaveLength(1);
  });

  it("outputs the service's values for the fields the program leaves out", async () => {
    const name = fresh("minimal");
    const { id, outs } = await create("minimal", { name, image: "acme/worker:1" });
    const { __provider: _p, ...fields } = outs;
    expect(fields).toEqual(await client.templates.get(id));
    expect(fields).toMatchObject({ env: {}, ports: [], args: "", registry: null, category: "NVIDIA" });
  });

  it("reports no change when nothing changed, and an in-place change for every mutable field", async () => {
    const name = fresh("diff");
    const { id, outs, inputs } = await create("diff", base(name));
    const d = (news: Record<string, unknown>) => host.diff(id, urn("diff"), outs, withProvider(news));
    expect(await d(inputs)).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    const edits: Record<string, unknown>[] = [
      { name: `${name}-renamed` },
      { image: "acme/worker:2" },
      { args: "--x" },
      { disk: 50 },
      { env: { HF_TOKEN: ENV_SECRET_2 } },
      { ports: ["22/tcp"] },
      { registry: "cred-9" },
      { mounts: { persistent: { size: 20, path: "/data" } } },
      { allowedCudaVersions: ["12.8"] },
      { category: "CPU" },
      { public: true },
      { serverless: false },
      { startJupyter: false },
      { startSsh: false },
      { image: UNKNOWN },
      { env: UNKNOWN },
    ];
    for (const edit of edits) {
      expect(await d({ ...inputs, ...edit }), JSON.stringify(edit)).toMatchObject({
        changes: true,
        replaces: [],
      });
    }
    // Removing env (set before) is a change: the template must lose its variables.
    const { env: _env, ...withoutEnv } = inputs;
    expect(await d(withoutEnv)).toMatchObject({ changes: true, replaces: [] });
    // Leaving disk out keeps the service's disk: no change.
    expect(outs.disk).toBeGreaterThan(0);
    expect(await d({ ...inputs, disk: undefined })).toMatchObject({ changes: false, replaces: [] });
  });

  it("updates in place with one PATCH of the changed fields, keeping the id", async () => {
    const name = fresh("update");
    const { id, outs } = await create("update", base(name));
    const news = await checked("update", {
      ...base(name),
      image: "acme/worker:2",
      env: { HF_TOKEN: ENV_SECRET_2 },
    });
    const before = proxy.seen.length;
    const { outs: updated } = await host.update(id, urn("update"), outs, news);
    recordOuts("update", updated);
    const sent = proxy.seen.slice(before);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`PATCH /v2/templates/${id}`]);
    expect(JSON.parse(sent[0]?.body ?? "{}")).toEqual({
      image: "acme/worker:2",
      env: { HF_TOKEN: ENV_SECRET_2 },
    });
    expect(updated).toMatchObject({ id, image: "acme/worker:2", env: { HF_TOKEN: ENV_SECRET_2 } });
    expect(await client.templates.get(id)).toMatchObject({
      image: "acme/worker:2",
      env: { HF_TOKEN: ENV_SECRET_2 },
    });
    expect(await named(name)).toHaveLength(1);
  });

  it("fails naming the fields a PATCH answer did not apply, and how to replace instead", async () => {
    const name = fresh("ignored");
    const { id, outs } = await create("ignored", base(name));
    const news = await checked("ignored", {
      ...base(name),
      startSsh: false,
      env: { HF_TOKEN: ENV_SECRET_2 },
    });
    // A service that answers 200 with the template unchanged.
    proxy.arm("PATCH", /\/v2\/templates\/[^/]+$/, {
      kind: "reply",
      status: 200,
      body: await client.templates.get(id),
    });
    const error = await hostFailure(() => host.update(id, urn("ignored"), outs, news));
    expect(error.message).toBe(
      `RunPod answered the update of template "${name}" (id ${id}) without applying env (values not shown), ` +
        "startSsh (sent false, the template has true). The service may not let these fields change on an " +
        "existing template. To have Pulumi make a new template with them instead, add replaceOnChanges: " +
        '["env","startSsh"] to this Template\'s resource options and run pulumi up again.',
    );
    expect(error.id).toBe(id);
    expect(error.reasons).toEqual([error.message]);
    // What the engine stores as the outputs and passes, exactly, to the next read, update and
    // delete: the template as answered, env whole (re-marked secret), and the provider to load.
    expect(error.properties).toMatchObject({ id, name, startSsh: true, env: { HF_TOKEN: ENV_SECRET } });
    expect(error.properties.__provider).toBe(__provider);
    const read = await host.read(id, urn("ignored"), error.properties, news);
    expect(read).toMatchObject({ id, props: { id, name, __provider } });
    await host.delete(id, urn("ignored"), error.properties);
    expect(await named(name)).toEqual([]);
  });

  it("drops what the program no longer gives: env {}, ports [], args '', registry null, defaults back", async () => {
    const name = fresh("dropped");
    const { id, outs } = await create("dropped", {
      ...base(name),
      ports: ["8000/http"],
      args: "--fast",
      registry: "cred-1",
      allowedCudaVersions: ["12.4"],
      category: "AMD",
      public: true,
      startSsh: false,
      disk: 40,
    });
    const news = await checked("dropped", { name, image: "acme/worker:1" });
    const before = proxy.seen.length;
    const { outs: updated } = await host.update(id, urn("dropped"), outs, news);
    recordOuts("update dropped", updated);
    const patch = JSON.parse(proxy.seen.slice(before).find((r) => r.method === "PATCH")?.body ?? "{}");
    expect(patch).toEqual({
      env: {},
      ports: [],
      args: "",
      registry: null,
      allowedCudaVersions: [],
      category: "NVIDIA",
      public: false,
      serverless: false,
      startSsh: true,
    });
    const live = await client.templates.get(id);
    expect(live).toMatchObject({ ...patch, disk: 40 });
    expect(updated).toMatchObject({ ...patch, disk: 40 });
    expect(await host.diff(id, urn("dropped"), updated, news)).toMatchObject({ changes: false });
  });

  it("replaces the template when the persistent mount is removed (a PATCH cannot remove it)", async () => {
    const name = fresh("mount");
    const old = await create("mount", {
      ...base(name),
      mounts: { persistent: { size: 20, path: "/workspace" } },
    });
    const news = await checked("mount", base(name));
    const diff = await host.diff(old.id, urn("mount"), old.outs, news);
    expect(diff).toMatchObject({ changes: true, replaces: ["mounts"], deleteBeforeReplace: false });
    // The engine's order for create-before-delete:
    const replacement = await host.create(urn("mount"), news);
    recordOuts("replacement", replacement.outs);
    await host.delete(old.id, urn("mount"), old.outs);
    expect(replacement.outs.mounts).toEqual({});
    expect((await named(name)).map((t) => t.id)).toEqual([replacement.id]);
  });

  it("refreshes: no drift keeps state, an image changed elsewhere shows in outputs and inputs, gone is gone", async () => {
    const name = fresh("refresh");
    const { id, outs, inputs } = await create("refresh", base(name));
    const same = await host.read(id, urn("refresh"), outs);
    expect(same.id).toBe(id);
    expect(same.props).toEqual(outs);
    await client.templates.update(id, { image: "acme/worker:console", env: { HF_TOKEN: ENV_SECRET_2 } });
    const drifted = await host.read(id, urn("refresh"), outs);
    recordOuts("read drifted", drifted.props);
    seenTexts.push(["read inputs", JSON.stringify(drifted.inputs)]);
    expect(drifted.props).toMatchObject({ image: "acme/worker:console", env: { HF_TOKEN: ENV_SECRET_2 } });
    expect(drifted.inputs).toMatchObject({ name, image: "acme/worker:console" });
    expect(drifted.inputs).not.toHaveProperty("env");
    const diff = await host.diff(id, urn("refresh"), drifted.props, withProvider(inputs));
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    await client.templates.delete(id);
    expect((await host.read(id, urn("refresh"), outs)).id).toBe("");
  });

  it("keeps an env value the program also writes in a plain argument, and redacts one the service echoes", async () => {
    const name = fresh("shared-value");
    const args = {
      ...base(name),
      env: { HF_TOKEN: ENV_SECRET, HF_HOME: "/workspace/cache" },
      mounts: { persistent: { size: 20, path: "/workspace/cache" } },
    };
    const { id, outs, inputs } = await create("shared-value", args);
    expect(outs.mounts).toEqual(args.mounts);
    expect(await host.diff(id, urn("shared-value"), outs, withProvider(inputs))).toMatchObject({
      changes: false,
    });
    // A service that copies a secret env value into a plain field: the output shows it redacted.
    const live = await client.templates.get(id);
    proxy.arm("GET", /\/v2\/templates\/[^/]+$/, {
      kind: "reply",
      status: 200,
      body: { ...live, args: `--token ${ENV_SECRET}` },
    });
    const read = await host.read(id, urn("shared-value"), outs);
    recordOuts("read echoed", read.props);
    expect(read.props.args).toBe("--token [redacted]");
    expect(read.props.env).toEqual(args.env);
  });

  it("reads a template by id alone, as Template.get does, and names a wrong id", async () => {
    const name = fresh("get");
    const { id } = await create("get", base(name));
    const read = await host.read(id, urn("get"), withProvider({}));
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ id, name, image: "acme/worker:1", env: { HF_TOKEN: ENV_SECRET } });
    recordOuts("get", read.props);
    const error = await hostFailure(() => host.read("no-such-template", urn("get"), withProvider({})));
    expect(error.message).toContain("No template with id no-such-template in this account");
  });

  it("deletes, a second delete succeeds, and so does a delete after its endpoint took it along", async () => {
    const name = fresh("twice");
    const { id, outs } = await create("twice", base(name));
    await host.delete(id, urn("twice"), outs);
    await expect(client.templates.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await host.delete(id, urn("twice"), outs);

    // Destroy order with an endpoint bound to the template: the endpoint first (the service
    // deletes its bound template with it), then the template, whose 404 counts as deleted.
    const bound = await create("bound", base(fresh("bound")));
    const ep = await client.serverless.create({
      name: "bound-ep",
      type: "QUEUE",
      templateId: bound.id,
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    });
    await client.serverless.delete(ep.id);
    await host.delete(bound.id, urn("bound"), bound.outs);
    await expect(client.templates.get(bound.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("says which endpoint holds a template whose delete is refused, and what to do", async () => {
    const { id, outs } = await create("held", base(fresh("held")));
    const ep = await client.serverless.create({
      name: "holder",
      type: "QUEUE",
      templateId: id,
      gpu: { pools: ["ADA_24"] },
      scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    });
    const error = await hostFailure(() => host.delete(id, urn("held"), outs));
    expect(error.message).toContain(`RunPod refused to delete template "${outs.name}" (id ${id})`);
    expect(error.message).toContain("a serverless endpoint is bound to it");
    expect(error.message).toContain(`used by endpoint ${ep.id}`);
    expect(error.message).toContain("Delete that endpoint or pod first");
    expect((await client.templates.get(id)).id).toBe(id);
    await client.serverless.delete(ep.id);
  });

  it.each([
    ["the answer is lost after the service created it", "lose-after"],
    ["the service answers 500 after creating it", "fail-after"],
  ] as const)("records exactly one template when %s", async (_what, kind) => {
    const name = fresh(`lost-${kind}`);
    proxy.arm("POST", /\/v2\/templates$/, { kind });
    const before = proxy.seen.filter((r) => r.method === "POST").length;
    const { id, outs } = await create(`lost-${kind}`, base(name));
    expect(proxy.seen.filter((r) => r.method === "POST").length - before).toBe(1);
    const all = await named(name);
    expect(all.map((t) => t.id)).toEqual([id]);
    expect(outs).toMatchObject({ id, name, env: { HF_TOKEN: ENV_SECRET } });
    expect(host.stderr()).toContain(`warning: Creating template "${name}" failed`);
  });

  it("redacts an env value a service error echoes, from the error and its reasons", async () => {
    proxy.arm("POST", /\/v2\/templates$/, {
      kind: "reply",
      status: 422,
      body: { title: "Unprocessable", status: 422, detail: `env HF_TOKEN=${ENV_SECRET} is not allowed` },
    });
    const error = await hostFailure(() => create("echoed", base(fresh("echoed"))));
    expect(error.message).toContain("env HF_TOKEN=[redacted] is not allowed");
  });

  it("rejects bad input in check, field by field, without any request and without an env value", async () => {
    const before = proxy.seen.length;
    const { failures } = await host.check(
      urn("bad"),
      {},
      withProvider({
        name: "",
        disk: 0,
        env: { HF_TOKEN: ENV_SECRET, BAD: 5 },
        ports: "8000",
        registry: 7,
        mounts: { persistent: { size: 5, path: "/w" } },
        allowedCudaVersions: ["12"],
        category: "TPU",
        public: "yes",
        serverless: 1,
        startJupyter: "no",
        startSsh: null,
        colour: "red",
      }),
    );
    seenTexts.push(["check failures", JSON.stringify(failures)]);
    expect(failures).toEqual([
      { property: "name", reason: "name must not be empty" },
      { property: "", reason: "image is required: a non-empty string" },
      { property: "disk", reason: "disk must be at least 1 GB" },
      { property: "", reason: "env.BAD: env value must be a string" },
      { property: "", reason: "ports must be an array of strings, got a string" },
      { property: "registry", reason: "registry must be a string, got a number" },
      {
        property: "",
        reason:
          'allowedCudaVersions.0: allowedCudaVersions must be a CUDA version as major.minor, e.g. "12.4"',
      },
      { property: "category", reason: "category must be CPU, NVIDIA or AMD" },
      { property: "", reason: "mounts.persistent.size: size must be at least 10 GB" },
      { property: "public", reason: "public must be true or false, got a string" },
      { property: "serverless", reason: "serverless must be true or false, got a number" },
      { property: "startJupyter", reason: "startJupyter must be true or false, got a string" },
      {
        property: "",
        reason:
          "unknown property colour; allowed: name, image, args, disk, env, ports, registry, " +
          "allowedCudaVersions, category, mounts, public, serverless, startJupyter, startSsh",
      },
    ]);
    expect(proxy.seen.length).toBe(before);
  });

  it("accepts unknown values in check (preview) and passes them through", async () => {
    const { inputs, failures } = await host.check(
      urn("preview"),
      {},
      withProvider({
        name: UNKNOWN,
        image: UNKNOWN,
        env: UNKNOWN,
        disk: UNKNOWN,
        mounts: { persistent: UNKNOWN },
      }),
    );
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({ name: UNKNOWN, image: UNKNOWN, env: UNKNOWN, disk: UNKNOWN });
  });

  it("fails check on a REST v1 runpod:restUrl, saying templates need REST v2", async () => {
    const v1Host = await startProviderHost({ projectDir });
    try {
      await v1Host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": emu.restUrlV1 });
      const { failures } = await v1Host.check(urn("v1"), {}, withProvider(base("v1")));
      expect(failures).toEqual([
        {
          property: "",
          reason:
            `Template needs the REST v2 interface, but runpod:restUrl is ${emu.restUrlV1}, REST v1 (retired ` +
            "2026-11-15; it never had templates). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
        },
      ]);
      expectNoSecret("v1 host stderr", v1Host.stderr());
    } finally {
      await v1Host.close();
    }
  });
});

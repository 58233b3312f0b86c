/**
 * ContainerRegistryAuth through Pulumi's own dynamic-provider host over gRPC, with `__provider`
 * serialized from the INSTALLED package (test/support/globalSetup.ts), against the emulator, in
 * both REST dialects with the same assertions.
 *
 * The host reaches the emulator through a small pass-through proxy (below) that a test can arm
 * to lose an answer after the emulator acted, refuse a request, or rewrite an answer; unarmed it
 * forwards everything unchanged.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { NotFoundError, RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import {
  HostError,
  type ProviderHost,
  startProviderHost,
  UNKNOWN,
  urnFor,
} from "../support/providerHost.mts";
import { serializedProvider } from "../support/serializedProvider.mts";
import { engineText } from "./engineText";

const API_KEY = "host-test-key-8d21e6";
const PASSWORD = "s3cr3t-Registry-Pa55-c0ffee";
const PASSWORD_2 = "rotated-Registry-Pa55-beef42";
const SECRETS = [PASSWORD, PASSWORD_2, API_KEY];

const projectDir = inject("installedProjectDir");

const errorsSeen: string[] = [];

/** Runs `fn`, expecting a HostError; records its message for the secret scan. */
async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  errorsSeen.push((error as HostError).message);
  return error as HostError;
}

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe.each([
  ["v1", (emu: RunningEmulator) => emu.restUrlV1],
  ["v2", (emu: RunningEmulator) => emu.restUrlV2],
] as const)("ContainerRegistryAuth in the provider host, REST %s", (dialect, restUrlOf) => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let restUrl: string;
  let n = 0;
  const registryPath = dialect === "v1" ? /\/v1\/containerregistryauth$/ : /\/v2\/registries$/;
  const registryIdPath =
    dialect === "v1" ? /\/v1\/containerregistryauth\/[^/]+$/ : /\/v2\/registries\/[^/]+$/;

  /** A fresh name per test: the emulator is shared by the tests of this dialect. */
  const fresh = (base: string) => `${base}-${dialect}-${++n}`;

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    restUrl = `${proxy.url}/${dialect}`;
    expect(restUrlOf(emu)).toBe(`http://127.0.0.1:${emu.port}/${dialect}`);
    client = new RunpodClient({ apiKey: API_KEY, restUrl: restUrlOf(emu), maxRetries: 0 });
    host = await startProviderHost({ projectDir });
    await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": restUrl });
  });

  afterAll(async () => {
    const stderr = host?.stderr() ?? "";
    await host?.close();
    await proxy?.close();
    await emu?.close();
    expectNoSecret(stderr);
    for (const message of errorsSeen) expectNoSecret(message);
  });

  async function checked(name: string, props: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { inputs, failures } = await host.check(urnFor("ContainerRegistryAuth", name), {}, props);
    expect(failures).toEqual([]);
    return inputs;
  }

  async function create(resource: string, props: Record<string, unknown>) {
    const inputs = await checked(resource, props);
    const result = await host.create(urnFor("ContainerRegistryAuth", resource), inputs);
    return { ...result, inputs };
  }

  async function named(name: string) {
    return (await client.registryAuths.list()).filter((r) => r.name === name);
  }

  it("creates the credential and uses the service's id as the resource id", async () => {
    const name = fresh("ghcr");
    const { id, outs } = await create("ghcr", { name, username: "octo", password: PASSWORD });
    expect(await client.registryAuths.get(id)).toMatchObject({ id, name });
    expect(outs).toMatchObject({ name, username: "octo", password: PASSWORD });
    expect(typeof outs.__provider).toBe("string");
    expect(await named(name)).toHaveLength(1);
    const { password: _pw, ...rest } = outs;
    expectNoSecret(JSON.stringify(rest));
  });

  it("reports no change when nothing changed, and no replacement for adoptExisting alone", async () => {
    const name = fresh("noop");
    const { id, outs, inputs } = await create("noop", { name, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "noop");
    const same = await host.diff(id, urn, outs, inputs);
    expect(same).toMatchObject({ changes: false, changesReported: "none", replaces: [] });
    const adopt = await host.diff(id, urn, outs, { ...inputs, adoptExisting: true });
    expect(adopt).toMatchObject({ changes: true, replaces: [] });
    const { outs: updated } = await host.update(id, urn, outs, { ...inputs, adoptExisting: true });
    expect(updated).toMatchObject({ name, username: "u", password: PASSWORD, adoptExisting: true });
  });

  it("replaces on a name change, creating the new credential before deleting the old", async () => {
    const oldName = fresh("rename-old");
    const newName = fresh("rename-new");
    const old = await create("rename", { name: oldName, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "rename");
    const news = await checked("rename", { name: newName, username: "u", password: PASSWORD });
    const diff = await host.diff(old.id, urn, old.outs, news);
    expect(diff).toMatchObject({ changes: true, replaces: ["name"], deleteBeforeReplace: false });
    // The engine's order for create-before-delete:
    const replacement = await host.create(urn, news);
    await host.delete(old.id, urn, old.outs);
    expect(replacement.id).not.toBe(old.id);
    expect(await named(newName)).toEqual([{ id: replacement.id, name: newName }]);
    expect(await named(oldName)).toEqual([]);
  });

  it("replaces on a password change with the same name by deleting the old credential first", async () => {
    const name = fresh("rotate");
    const old = await create("rotate", { name, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "rotate");
    const news = await checked("rotate", { name, username: "u", password: PASSWORD_2 });
    const diff = await host.diff(old.id, urn, old.outs, news);
    expect(diff).toMatchObject({ changes: true, replaces: ["password"], deleteBeforeReplace: true });
    // Creating first would collide with the old credential's name, which is why the diff asks for
    // delete-before-replace:
    const collision = await hostFailure(() => host.create(urn, news));
    expect(collision.message).toContain(`named "${name}" already exists (id ${old.id})`);
    // The engine's order for delete-before-replace:
    await host.delete(old.id, urn, old.outs);
    const replacement = await host.create(urn, news);
    expect(replacement.outs.password).toBe(PASSWORD_2);
    expect(await named(name)).toEqual([{ id: replacement.id, name }]);
  });

  it("replaces on a username change and when a credential field is unknown in preview", async () => {
    const name = fresh("user");
    const old = await create("user", { name, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "user");
    expect(await host.diff(old.id, urn, old.outs, { ...old.inputs, username: "v" })).toMatchObject({
      replaces: ["username"],
      deleteBeforeReplace: true,
    });
    expect(await host.diff(old.id, urn, old.outs, { ...old.inputs, password: UNKNOWN })).toMatchObject({
      replaces: ["password"],
      deleteBeforeReplace: true,
    });
    expect(await host.diff(old.id, urn, old.outs, { ...old.inputs, name: UNKNOWN })).toMatchObject({
      replaces: ["name"],
      deleteBeforeReplace: true,
    });
  });

  it("refreshes: keeps state when nothing drifted, shows a rename, and reports a deleted credential gone", async () => {
    const name = fresh("refresh");
    const { id, outs } = await create("refresh", { name, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "refresh");
    const same = await host.read(id, urn, outs);
    expect(same).toMatchObject({ id, props: { name, username: "u", password: PASSWORD } });
    // No rename API exists; the proxy plays a rename made in the console on the next GET.
    proxy.arm("GET", registryIdPath, {
      kind: "rewrite",
      edit: (body) => ({ ...body, name: `${name}-renamed` }),
    });
    const drifted = await host.read(id, urn, outs);
    expect(drifted).toMatchObject({
      id,
      props: { name: `${name}-renamed`, username: "u", password: PASSWORD },
    });
    const diff = await host.diff(
      id,
      urn,
      drifted.props,
      await checked("refresh", { name, username: "u", password: PASSWORD }),
    );
    expect(diff).toMatchObject({ changes: true, replaces: ["name"] });
    await client.registryAuths.delete(id);
    const gone = await host.read(id, urn, outs);
    expect(gone.id).toBe("");
  });

  it("reads a credential by id alone, as ContainerRegistryAuth.get does", async () => {
    const name = fresh("get");
    const { id } = await create("get", { name, username: "u", password: PASSWORD });
    const read = await host.read(id, urnFor("ContainerRegistryAuth", "get"), {});
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ name });
    expect(read.props).not.toHaveProperty("password");
  });

  it("fails ContainerRegistryAuth.get with a wrong id clearly, instead of adopting an empty resource", async () => {
    const error = await host
      .read("no-such-credential", urnFor("ContainerRegistryAuth", "get-wrong"), {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).message).toContain(
      "There is no container registry auth with id no-such-credential in this account (ContainerRegistryAuth.get)",
    );
  });

  it("deletes, and a second delete of the same credential succeeds", async () => {
    const name = fresh("twice");
    const { id, outs } = await create("twice", { name, username: "u", password: PASSWORD });
    const urn = urnFor("ContainerRegistryAuth", "twice");
    await host.delete(id, urn, outs);
    await expect(client.registryAuths.get(id)).rejects.toBeInstanceOf(NotFoundError);
    await host.delete(id, urn, outs);
    expect(await named(name)).toEqual([]);
  });

  it("rejects bad input in check, field by field, without any request", async () => {
    const before = proxy.seen.length;
    const urn = urnFor("ContainerRegistryAuth", "bad");
    const { failures } = await host.check(
      urn,
      {},
      { name: "", password: 42, adoptExisting: "yes", colour: "red" },
    );
    // A password failure names no property: the engine prints a named property's value whole;
    // nor does a missing value (`{<nil>}`) or an unknown argument (its value may be a secret).
    expect(failures).toEqual(
      expect.arrayContaining([
        { property: "name", reason: "name must not be empty" },
        { property: "", reason: "username is required: a non-empty string" },
        { property: "", reason: "password must be a string, got a number" },
        {
          property: "adoptExisting",
          reason: "adoptExisting must be a boolean (true or false), got a string",
        },
        { property: "", reason: "unknown property colour; allowed: name, username, password, adoptExisting" },
      ]),
    );
    expect(failures).toHaveLength(5);
    const { failures: blank } = await host.check(urn, {}, { name: "n", username: "   ", password: PASSWORD });
    expect(blank).toEqual([{ property: "username", reason: "username must not be empty" }]);
    expect(proxy.seen.length).toBe(before);
  });

  it("accepts unknown values in check (preview) and passes them through", async () => {
    const urn = urnFor("ContainerRegistryAuth", "preview");
    const { inputs, failures } = await host.check(
      urn,
      {},
      {
        name: UNKNOWN,
        username: UNKNOWN,
        password: UNKNOWN,
        adoptExisting: UNKNOWN,
      },
    );
    expect(failures).toEqual([]);
    expect(inputs).toMatchObject({
      name: UNKNOWN,
      username: UNKNOWN,
      password: UNKNOWN,
      adoptExisting: UNKNOWN,
    });
  });

  it("refuses a name taken by a credential this stack did not create, saying how to resolve it", async () => {
    const name = fresh("taken");
    const theirs = await client.registryAuths.create({
      name,
      username: "them",
      password: "their-password-1",
    });
    const error = await hostFailure(() => create("taken", { name, username: "u", password: PASSWORD }));
    expect(error.message).toContain(
      `A container registry auth named "${name}" already exists (id ${theirs.id})`,
    );
    expect(error.message).toContain("give this resource another name");
    expect(error.message).toContain(`delete the existing one (id ${theirs.id})`);
    expect(error.message).toContain("set adoptExisting: true");
    expect(error.message).toContain("cannot be verified");
    expect(await named(name)).toEqual([{ id: theirs.id, name }]);
  });

  it("refuses a name taken between its list and its POST with the same advice, not the raw 400", async () => {
    const name = fresh("race");
    let theirs = { id: "" };
    proxy.arm("POST", registryPath, {
      kind: "before",
      run: async () => {
        theirs = await client.registryAuths.create({ name, username: "them", password: "their-password-3" });
      },
    });
    const error = await hostFailure(() => create("race", { name, username: "u", password: PASSWORD }));
    expect(error.message).toContain(
      `A container registry auth named "${name}" already exists (id ${theirs.id})`,
    );
    expect(error.message).toContain("set adoptExisting: true");
    expect(await named(name)).toEqual([{ id: theirs.id, name }]);
  });

  it("adopts an existing credential with adoptExisting: true, and then owns it", async () => {
    const name = fresh("adopt");
    const theirs = await client.registryAuths.create({
      name,
      username: "them",
      password: "their-password-2",
    });
    const posts = proxy.seen.filter((r) => r.method === "POST").length;
    const { id, outs } = await create("adopt", {
      name,
      username: "u",
      password: PASSWORD,
      adoptExisting: true,
    });
    expect(id).toBe(theirs.id);
    expect(outs).toMatchObject({ name, adoptExisting: true });
    expect(proxy.seen.filter((r) => r.method === "POST").length).toBe(posts);
    await host.delete(id, urnFor("ContainerRegistryAuth", "adopt"), outs);
    expect(await named(name)).toEqual([]);
  });

  it("takes its own credential when the create's answer is lost after the service stored it", async () => {
    const name = fresh("lost");
    proxy.arm("POST", registryPath, { kind: "lose-after" });
    const { id, outs } = await create("lost", { name, username: "u", password: PASSWORD });
    expect(await named(name)).toEqual([{ id, name }]);
    // The adoption after an ambiguous create is visible in the outputs (state) and the host log.
    expect(outs.adoptedAfterAmbiguousCreate).toBe(true);
    expect(outs.adoptionNote).toContain(`named "${name}" (id ${id})`);
    expect(outs.adoptionNote).toContain("may instead be one another client created");
    expect(host.stderr()).toContain(`warning: Creating container registry auth "${name}" failed`);
    // An update (adoptExisting only) keeps the record of how the credential was taken.
    const urn = urnFor("ContainerRegistryAuth", "lost");
    const { outs: updated } = await host.update(id, urn, outs, { ...outs, adoptExisting: true });
    expect(updated).toMatchObject({ adoptedAfterAmbiguousCreate: true, adoptionNote: outs.adoptionNote });
    expect(
      proxy.seen.filter((r) => r.method === "POST" && registryPath.test(r.path) && r.body.includes(name)),
    ).toHaveLength(1);
  });

  it("takes its own credential when the service stored it but answered 500", async () => {
    const name = fresh("500");
    proxy.arm("POST", registryPath, { kind: "fail-after" });
    const { id, outs } = await create("five-hundred", { name, username: "u", password: PASSWORD });
    expect(await named(name)).toEqual([{ id, name }]);
    expect(outs.adoptedAfterAmbiguousCreate).toBe(true);
  });

  it("records no adoption flag for a create that got its answer", async () => {
    const { outs } = await create("plain", { name: fresh("plain"), username: "u", password: PASSWORD });
    expect(outs.adoptedAfterAmbiguousCreate).toBeUndefined();
    expect(outs.adoptionNote).toBeUndefined();
  });

  it("the residual race: a POST lost before the service while another client creates the name is adopted, visibly", async () => {
    // Stack A lists (name free); A's POST is lost on its way (reset before forwarding); stack B
    // creates the same name; A lists again and finds one credential of that name. The list shows
    // only id and name (both OpenAPI documents), so A cannot tell it from its own: it records it,
    // and says so in its outputs. README: "ContainerRegistryAuth: the residual race".
    const name = fresh("race");
    let theirs = "";
    proxy.arm("POST", registryPath, {
      kind: "lose-before",
      run: async () => {
        theirs = (await client.registryAuths.create({ name, username: "b", password: "stack-b-pass-91" })).id;
      },
    });
    const { id, outs } = await create("race", { name, username: "u", password: PASSWORD });
    expect(id).toBe(theirs);
    expect(outs.adoptedAfterAmbiguousCreate).toBe(true);
    expect(outs.adoptionNote).toContain(`check that credential (id ${theirs}) before destroying`);
  });

  it("takes its own credential when the service stored it but answered 408", async () => {
    const name = fresh("408");
    proxy.arm("POST", registryPath, { kind: "fail-after", status: 408 });
    const { id } = await create("four-oh-eight", { name, username: "u", password: PASSWORD });
    expect(await named(name)).toEqual([{ id, name }]);
  });

  it("fails without creating anything when the connection drops before the service acts", async () => {
    const name = fresh("dropped");
    proxy.arm("POST", registryPath, { kind: "lose-before" });
    const error = await hostFailure(() => create("dropped", { name, username: "u", password: PASSWORD }));
    expect(error.message).toContain(`Creating container registry auth "${name}" failed`);
    expect(error.message).toContain("nothing was created");
    expect(await named(name)).toEqual([]);
    // The next `pulumi up` succeeds: the name is still free.
    const { id } = await create("dropped", { name, username: "u", password: PASSWORD });
    expect(await named(name)).toEqual([{ id, name }]);
  });

  it("explains a delete the service refuses because the credential is in use", async () => {
    const name = fresh("inuse");
    const { id, outs } = await create("inuse", { name, username: "u", password: PASSWORD });
    const said = "Registry credential is in use by pod pod-7x2k and cannot be deleted";
    proxy.arm(
      "DELETE",
      registryIdPath,
      dialect === "v1"
        ? { kind: "reply", status: 400, contentType: "application/json", body: { message: said } }
        : {
            kind: "reply",
            status: 400,
            contentType: "application/problem+json",
            body: { title: "Bad Request", status: 400, detail: said },
          },
    );
    const error = await hostFailure(() => host.delete(id, urnFor("ContainerRegistryAuth", "inuse"), outs));
    expect(error.message).toContain(
      `RunPod refused to delete container registry auth "${name}" (id ${id}): `,
    );
    expect(error.message).toContain(said);
    expect(error.message).toContain("then run the destroy or update again");
    expect(await named(name)).toEqual([{ id, name }]);
  });

  it("never repeats the password when the service echoes it in an error", async () => {
    const name = fresh("echo");
    proxy.arm("POST", registryPath, {
      kind: "reply",
      status: 400,
      contentType: "application/json",
      body: {
        message: `password ${PASSWORD} is too weak`,
        title: "Bad Request",
        detail: `password ${PASSWORD}`,
      },
    });
    const error = await hostFailure(() => create("echo", { name, username: "u", password: PASSWORD }));
    expect(error.message).toContain("[redacted]");
    expectNoSecret(error.message);
  });
});

describe("ContainerRegistryAuth secrets scan: everything the provider returns or throws", () => {
  const USERNAME = "robot$leak-scan";
  /** A password that URL-encoding, form-encoding and HTML escaping each change. */
  const LEAK_PASSWORD = 'p@ss+w/rd&<leak>=7 "q"';
  const forms = (secret: string): Record<string, string> => ({
    raw: secret,
    json: JSON.stringify(secret).slice(1, -1),
    url: encodeURIComponent(secret),
    form: new URLSearchParams({ k: secret }).toString().slice(2),
    html: secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;"),
  });
  /** Docker's auth form of the credential. */
  const dockerAuth = Buffer.from(`${USERNAME}:${LEAK_PASSWORD}`, "utf8").toString("base64");
  const echo = () =>
    [...Object.values(forms(LEAK_PASSWORD)), ...Object.values(forms(API_KEY)), dockerAuth].join(" | ");
  const texts: { what: string; text: string }[] = [];
  const record = (what: string, value: unknown) =>
    texts.push({ what, text: typeof value === "string" ? value : (JSON.stringify(value) ?? "") });
  /** Outputs without `password`, the secret input itself (the engine re-marks it secret). */
  const withoutPassword = (outs: Record<string, unknown>) => {
    const { password: _password, ...rest } = outs;
    return rest;
  };

  beforeAll(async () => {
    const emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    const proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    const host = await startProviderHost({ projectDir });
    try {
      await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${proxy.url}/v2` });
      const failed = async (what: string, fn: () => Promise<unknown>) => {
        const error = await fn().then(
          () => undefined,
          (e: unknown) => e as HostError,
        );
        expect(error).toBeInstanceOf(HostError);
        const e = error as HostError;
        record(`${what}: message`, e.message);
        record(`${what}: properties (gRPC details)`, e.properties);
        record(`${what}: reasons (gRPC details)`, e.reasons);
        record(`${what}: engine text`, engineText(e));
      };
      const props = { name: "leak-scan", username: USERNAME, password: LEAK_PASSWORD };
      const urn = urnFor("ContainerRegistryAuth", "leak");
      const { inputs } = await host.check(urn, {}, props);
      const problem = (status: number) => ({
        kind: "reply" as const,
        status,
        contentType: "application/problem+json",
        body: { title: "Bad Request", status, detail: `rejected: ${echo()}` },
      });
      // create refused with an echo; create after an ambiguous 500 (adoption note); create OK
      proxy.arm("POST", /\/v2\/registries$/, problem(400));
      await failed("create (400 echo)", () => host.create(urn, inputs));
      proxy.arm("POST", /\/v2\/registries$/, { kind: "fail-after" });
      const created = await host.create(urn, inputs);
      record("create (after a 500): outs", withoutPassword(created.outs));
      // read: the service's answer echoes the secrets in the name; then a refused read
      proxy.arm("GET", /\/v2\/registries\/[^/]+$/, {
        kind: "rewrite",
        edit: (body) => ({ ...body, name: `leak-scan ${echo()}` }),
      });
      const read = await host.read(created.id, urn, created.outs);
      record("read: props", withoutPassword(read.props));
      proxy.arm("GET", /\/v2\/registries\/[^/]+$/, problem(403));
      await failed("read (403 echo)", () => host.read(created.id, urn, created.outs));
      // update; delete refused with an echo; delete
      const updated = await host.update(created.id, urn, created.outs, { ...inputs, adoptExisting: true });
      record("update: outs", withoutPassword(updated.outs));
      proxy.arm("DELETE", /\/v2\/registries\/[^/]+$/, problem(400));
      await failed("delete (400 echo)", () => host.delete(created.id, urn, created.outs));
      await host.delete(created.id, urn, created.outs);
      record("host stderr", host.stderr());
      record("__provider", await serializedProvider(projectDir, "ContainerRegistryAuth"));
    } finally {
      await host.close();
      await proxy.close();
      await emu.close();
    }
  }, 120_000);

  const leaks = (names: readonly string[]) => {
    const found: string[] = [];
    const needles: [string, string][] = [];
    for (const [secretName, secret] of [
      ["password", LEAK_PASSWORD],
      ["API key", API_KEY],
    ] as const) {
      const all = forms(secret);
      for (const form of names)
        if (all[form] !== undefined) needles.push([`${secretName} (${form})`, all[form]]);
    }
    if (names.includes("base64")) needles.push(["base64(username:password)", dockerAuth]);
    for (const [label, needle] of needles) {
      for (const { what, text } of texts) if (text.includes(needle)) found.push(`${label} in ${what}`);
    }
    return found;
  };

  it("the scan saw the service's echoes (it is not vacuous)", () => {
    expect(texts.length).toBeGreaterThan(10);
    expect(texts.some(({ text }) => text.includes("[redacted]"))).toBe(true);
  });

  it("finds no secret in raw, JSON-escaped or Docker base64 form anywhere", () => {
    expect(leaks(["raw", "json", "base64"])).toEqual([]);
  });

  // The client's one redaction module also covers the URL-encoded, form-encoded and HTML-escaped forms.
  it("finds no secret in URL-encoded, form-encoded or HTML-escaped form anywhere", () => {
    expect(leaks(["url", "form", "html"])).toEqual([]);
  });
});

describe("ContainerRegistryAuth provider: serialization and credentials", () => {
  it("keeps __provider small and free of secrets when serialized from the installed package", async () => {
    const text = await serializedProvider(projectDir, "ContainerRegistryAuth");
    const bytes = Buffer.byteLength(text, "utf8");
    console.info(`__provider of ContainerRegistryAuth from the installed package: ${bytes} bytes`);
    expect(bytes).toBeLessThanOrEqual(8 * 1024);
    expect(text).toContain(
      'operationsModule = "pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/operations.js"',
    );
    expectNoSecret(text);
  });

  it("falls back to RUNPOD_API_KEY and RUNPOD_REST_API_URL when stack config has none", async () => {
    const emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    const host = await startProviderHost({
      projectDir,
      env: { ...process.env, RUNPOD_API_KEY: API_KEY, RUNPOD_REST_API_URL: emu.restUrlV2 },
    });
    try {
      await host.configure({});
      const urn = urnFor("ContainerRegistryAuth", "env");
      const { inputs } = await host.check(urn, {}, { name: "from-env", username: "u", password: PASSWORD });
      const { id } = await host.create(urn, inputs);
      const client = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrl });
      expect(await client.registryAuths.get(id)).toMatchObject({ name: "from-env" });
      expectNoSecret(host.stderr());
    } finally {
      await host.close();
      await emu.close();
    }
  });

  it("fails naming the stack config key and the environment variable when no key is set", async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RUNPOD_")));
    const host = await startProviderHost({ projectDir, env });
    try {
      await host.configure({ "runpod:restUrl": "http://127.0.0.1:1/v2" });
      const urn = urnFor("ContainerRegistryAuth", "nokey");
      const { inputs } = await host.check(urn, {}, { name: "n", username: "u", password: PASSWORD });
      const error = await host.create(urn, inputs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HostError);
      expect((error as Error).message).toMatch(/runpod:apiKey.*RUNPOD_API_KEY/s);
    } finally {
      await host.close();
    }
  });
});

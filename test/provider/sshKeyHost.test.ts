/**
 * SshKey through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized from the
 * INSTALLED package, against the emulator's `/v2/account/ssh-keys` (whose PUT replaces the whole
 * set). The host reaches the emulator through a pass-through proxy that a test arms to run another
 * writer's request at a chosen step, or to count the writes. Each resource passes its URN as
 * `__urn`, as the resource class does; the entry it writes is its line and that URN. The host's
 * settle interval is 0 ms (`RUNPOD_SSH_KEY_SETTLE_MS`): the proxy, not time, orders the other
 * writer's requests; `sshKeySettle.test.ts` drives the interval on a fake clock. Its client's retry
 * backoff starts at 5 ms (`retryBackoffMs`): a write answered 500 five times is resent by the
 * policy without 11 s of real backoff.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { SSH_PUBLIC_KEY } from "../../src/wire/pods";
import { KEYS, PRIVATE_KEY_BODY } from "../fixtures/sshKeys";
import { FaultProxy } from "../support/faultProxy.mts";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { serializedProvider } from "../support/serializedProvider.mts";

const API_KEY = "sshkey-host-key-8d41c2";
const KEYS_PATH = /\/v2\/account\/ssh-keys$/;
const urn = (name: string) => urnFor("SshKey", name);
/** The entry a resource named `name` writes for `line`: the line, then its URN. */
const entryOf = (line: string, owner: string) => `${line} ${owner}`;
/** The URN of an SshKey named `name` in another stack of the same project. */
const otherStackUrn = (name: string) => urn(name).replace("urn:pulumi:test::", "urn:pulumi:other-stack::");
/** The provider host's environment: this process's, without RUNPOD_*, with a settle interval of 0 ms. */
function hostEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("RUNPOD_")) env[k] = v;
  return { ...env, RUNPOD_SSH_KEY_SETTLE_MS: "0" };
}

describe("SshKey in the provider host (REST v2)", () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let host: ProviderHost;
  /** Another writer of the account's set, straight to the emulator (not through the proxy). */
  let other: RunpodClient;

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    other = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    host = await startProviderHost({
      projectDir: inject("installedProjectDir"),
      env: hostEnv(),
      retryBackoffMs: 5,
    });
    await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${proxy.url}/v2` });
  });

  afterAll(async () => {
    const stderr = host?.stderr() ?? "";
    await host?.close();
    await proxy?.close();
    await emu?.close();
    expect(stderr).not.toContain(API_KEY);
  });

  beforeEach(async () => {
    await other.account.setSshKeys([]);
    proxy.seen.length = 0;
  });

  const writes = () => proxy.seen.filter((r) => r.method === "PUT" && KEYS_PATH.test(r.path));

  /** Check then create, as the engine does, with the URN the resource class passes (`owner`). */
  async function create(name: string, publicKey: string, owner = urn(name)) {
    const { inputs, failures } = await host.check(owner, {}, { publicKey, __urn: owner });
    expect(failures).toEqual([]);
    return host.create(owner, inputs);
  }

  it("create adds the key and keeps the keys others registered, with fingerprint, type and comment", async () => {
    await other.account.setSshKeys([KEYS.rsa.line, KEYS.nistp256.line]);
    const { id, outs } = await create("mine", KEYS.ed25519.line);
    expect(id).toBe(KEYS.ed25519.fingerprint);
    const { __provider, ...fields } = outs;
    const entry = entryOf(KEYS.ed25519.line, urn("mine"));
    expect(entry).toBe(
      `${KEYS.ed25519.line} urn:pulumi:test::proj::pulumi-nodejs:dynamic/runpod:SshKey::mine`,
    );
    expect(fields).toEqual({
      publicKey: KEYS.ed25519.line,
      fingerprint: KEYS.ed25519.fingerprint,
      type: "ssh-ed25519",
      comment: "me@ed25519",
      entry,
    });
    expect(Buffer.byteLength(__provider as string, "utf8")).toBeLessThanOrEqual(8 * 1024);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp256.line, entry]);
  });

  it("the same key registered under another comment stays someone else's entry: create and delete leave it", async () => {
    const [type, base64] = KEYS.ed25519.line.split(" ");
    const theirs = `${type} ${base64} old@laptop`;
    await other.account.setSshKeys([theirs, KEYS.rsa.line]);
    const { id, outs } = await create("beside", KEYS.ed25519.line);
    expect(id).toBe(KEYS.ed25519.fingerprint);
    const entry = entryOf(KEYS.ed25519.line, urn("beside"));
    expect(await other.account.sshKeys()).toEqual([theirs, KEYS.rsa.line, entry]);
    await host.delete(id, urn("beside"), outs);
    expect(await other.account.sshKeys()).toEqual([theirs, KEYS.rsa.line]);
  });

  it("two stacks declaring one key write two entries, and destroying one leaves the other's", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const a = await create("laptop", KEYS.ed25519.line, urn("laptop"));
    const b = await create("laptop", KEYS.ed25519.line, otherStackUrn("laptop"));
    expect([a.id, b.id]).toEqual([KEYS.ed25519.fingerprint, KEYS.ed25519.fingerprint]);
    const entryA = entryOf(KEYS.ed25519.line, urn("laptop"));
    const entryB = entryOf(KEYS.ed25519.line, otherStackUrn("laptop"));
    expect(entryB).toContain("urn:pulumi:other-stack::proj::");
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, entryA, entryB]);
    await host.delete(a.id, urn("laptop"), a.outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, entryB]);
    const stillThere = await host.read(b.id, otherStackUrn("laptop"), b.outs);
    expect(stillThere.id).toBe(KEYS.ed25519.fingerprint);
    expect(stillThere.props).toMatchObject({ publicKey: KEYS.ed25519.line, entry: entryB });
    await host.delete(b.id, otherStackUrn("laptop"), b.outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line]);
  });

  it("delete removes only its key, and a key already gone is done without a write", async () => {
    const { id, outs } = await create("deleted", KEYS.ed25519.line);
    await other.account.setSshKeys([
      KEYS.rsa.line,
      entryOf(KEYS.ed25519.line, urn("deleted")),
      KEYS.nistp384.line,
    ]);
    await host.delete(id, urn("deleted"), outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp384.line]);
    proxy.seen.length = 0;
    await host.delete(id, urn("deleted"), outs);
    expect(writes()).toHaveLength(0);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp384.line]);
  });

  it("a writer that read before this create's write and wrote after it is repaired by one more write", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    // The other writer reads the set while this create's PUT is on its way, and writes its own
    // edit of that older set right after the PUT (dropping this key), before the verifying read.
    proxy.arm("PUT", KEYS_PATH, {
      kind: "before",
      run: async () => {
        const seen = await other.account.sshKeys();
        proxy.arm("GET", KEYS_PATH, {
          kind: "before",
          run: () => other.account.setSshKeys([...seen, KEYS.nistp521.line]),
        });
      },
    });
    const { id } = await create("raced", KEYS.ed25519.line);
    expect(id).toBe(KEYS.ed25519.fingerprint);
    expect(writes()).toHaveLength(2);
    expect(await other.account.sshKeys()).toEqual([
      KEYS.rsa.line,
      KEYS.nistp521.line,
      entryOf(KEYS.ed25519.line, urn("raced")),
    ]);
  });

  it("a writer that read before this create's write and writes its stale set after the verifying read is repaired after the settle interval", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    // The other writer reads the set while this create's PUT is on its way, and writes its stale
    // copy (plus its own key) once this create has read its key back: at this create's next read
    // of the set, or, with no such read, as soon as the create has returned.
    let seen: string[] = [];
    let stale: Promise<unknown> | undefined;
    const writeStale = () => {
      stale ??= other.account.setSshKeys([...seen, KEYS.nistp521.line]);
      return stale;
    };
    proxy.arm("PUT", KEYS_PATH, {
      kind: "before",
      run: async () => {
        seen = await other.account.sshKeys();
        proxy.arm("GET", KEYS_PATH, {
          kind: "before",
          run: async () => proxy.arm("GET", KEYS_PATH, { kind: "before", run: writeStale }),
        });
      },
    });
    const { id, outs } = await create("settled", KEYS.ed25519.line);
    await writeStale();
    expect(id).toBe(KEYS.ed25519.fingerprint);
    const entry = entryOf(KEYS.ed25519.line, urn("settled"));
    expect(outs.entry).toBe(entry);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp521.line, entry]);
    // Read, write, read, read after the interval (miss), then the same again: 8 requests, 2 writes.
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET", "GET", "GET", "PUT", "GET", "GET"]);
  });

  it("a writer that re-adds the key right after this delete's write is undone by one more write", async () => {
    const { id, outs } = await create("raced-delete", KEYS.ed25519.line);
    await other.account.setSshKeys([KEYS.rsa.line, entryOf(KEYS.ed25519.line, urn("raced-delete"))]);
    proxy.arm("PUT", KEYS_PATH, {
      kind: "before",
      run: async () => {
        const seen = await other.account.sshKeys();
        proxy.arm("GET", KEYS_PATH, {
          kind: "before",
          run: () => other.account.setSshKeys([...seen, KEYS.nistp256.line]),
        });
      },
    });
    proxy.seen.length = 0;
    await host.delete(id, urn("raced-delete"), outs);
    expect(writes()).toHaveLength(2);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp256.line]);
  });

  it("a create whose key is dropped after both writes fails naming the key, with no third write", async () => {
    const dropAfterWrite = () =>
      proxy.arm("GET", KEYS_PATH, { kind: "before", run: () => other.account.setSshKeys([KEYS.rsa.line]) });
    proxy.arm("PUT", KEYS_PATH, { kind: "before", run: async () => dropAfterWrite() });
    const { inputs } = await host.check(
      urn("lost"),
      {},
      { publicKey: KEYS.ed25519.line, __urn: urn("lost") },
    );
    // The second attempt: arm again once its PUT goes out.
    proxy.arm("PUT", KEYS_PATH, { kind: "before", run: async () => dropAfterWrite() });
    const error = await host.create(urn("lost"), inputs).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HostError);
    expect((error as HostError).message).toMatch(
      new RegExp(`adding SSH key ${KEYS.ed25519.fingerprint.replace(/[+/]/g, "\\$&")} did not hold`),
    );
    expect(writes()).toHaveLength(2);
  });

  it("a replacement under one URN (pulumi up --replace: create, then delete the old) keeps the new entry", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const old = await create("forced", KEYS.ed25519.line);
    const fresh = await create("forced", KEYS.ed25519.line);
    const oldEntry = entryOf(KEYS.ed25519.line, urn("forced"));
    expect(old.outs.entry).toBe(oldEntry);
    // The new resource writes an entry of its own beside the old one's, never taking the old one over.
    expect(fresh.outs.entry).toBe(`${oldEntry}#2`);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, oldEntry, `${oldEntry}#2`]);
    await host.delete(old.id, urn("forced"), old.outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, `${oldEntry}#2`]);
    const read = await host.read(fresh.id, urn("forced"), fresh.outs);
    expect(read).toMatchObject({ id: KEYS.ed25519.fingerprint, props: { entry: `${oldEntry}#2` } });
    await host.delete(fresh.id, urn("forced"), fresh.outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line]);
  });

  it("a create whose write acted but was answered 500 keeps the resource, and the next up writes nothing more", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const owner = urn("half");
    const { inputs } = await host.check(owner, {}, { publicKey: KEYS.ed25519.line, __urn: owner });
    // The first PUT acts and is answered 500; the client's five resends are answered 500 unforwarded.
    proxy.arm("PUT", KEYS_PATH, { kind: "fail-after", status: 500 });
    for (let i = 0; i < 5; i++) {
      proxy.arm("PUT", KEYS_PATH, {
        kind: "reply",
        status: 500,
        body: { title: "Internal Server Error", status: 500 },
        headers: { "retry-after": "0" },
      });
    }
    const error = await host.create(owner, inputs).then(
      () => undefined,
      (e: unknown) => e as HostError,
    );
    expect(error).toBeInstanceOf(HostError);
    const entry = entryOf(KEYS.ed25519.line, owner);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, entry]);
    // A partial failure: the engine records the entry written, so no later create writes a second one.
    expect(error?.id).toBe(KEYS.ed25519.fingerprint);
    expect(error?.properties).toMatchObject({ publicKey: KEYS.ed25519.line, entry });
    expect(typeof error?.properties?.__provider).toBe("string");
    expect(error?.message).toMatch(/kept in the stack/);
    // The next up runs update (init error) with the stored properties: the entry is there, no write.
    const before = writes().length;
    const { outs } = await host.update(KEYS.ed25519.fingerprint, owner, error?.properties ?? {}, inputs);
    expect(outs.entry).toBe(entry);
    expect(writes()).toHaveLength(before);
    await host.delete(KEYS.ed25519.fingerprint, owner, outs);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line]);
  });

  it("two SshKeys created at once in one host both end up in the set", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const [a, b] = await Promise.all([create("a", KEYS.ed25519.line), create("b", KEYS.nistp384.line)]);
    expect([a.id, b.id]).toEqual([KEYS.ed25519.fingerprint, KEYS.nistp384.fingerprint]);
    expect(new Set(await other.account.sshKeys())).toEqual(
      new Set([KEYS.rsa.line, entryOf(KEYS.ed25519.line, urn("a")), entryOf(KEYS.nistp384.line, urn("b"))]),
    );
  });

  it("a new key replaces: the new key is added, then the old removed, others kept", async () => {
    const old = await create("replaced", KEYS.ed25519.line);
    await other.account.setSshKeys([KEYS.rsa.line, entryOf(KEYS.ed25519.line, urn("replaced"))]);
    const { inputs } = await host.check(urn("replaced"), old.outs, {
      publicKey: KEYS.nistp256.line,
      __urn: urn("replaced"),
    });
    const diff = await host.diff(old.id, urn("replaced"), old.outs, inputs);
    expect(diff).toMatchObject({ changes: true, replaces: ["publicKey"] });
    // The engine's create-before-delete replacement.
    const next = await host.create(urn("replaced"), inputs);
    await host.delete(old.id, urn("replaced"), old.outs);
    expect(next.id).toBe(KEYS.nistp256.fingerprint);
    expect(await other.account.sshKeys()).toEqual([
      KEYS.rsa.line,
      entryOf(KEYS.nistp256.line, urn("replaced")),
    ]);
  });

  it("a new comment on the same key updates its entry in place", async () => {
    const old = await create("renamed", KEYS.ed25519.line);
    const line = KEYS.ed25519.line.replace("me@ed25519", "me@new-laptop");
    const { inputs } = await host.check(urn("renamed"), old.outs, { publicKey: line, __urn: urn("renamed") });
    const diff = await host.diff(old.id, urn("renamed"), old.outs, inputs);
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    const { outs } = await host.update(old.id, urn("renamed"), old.outs, inputs);
    const entry = entryOf(line, urn("renamed"));
    expect(outs).toMatchObject({ publicKey: line, comment: "me@new-laptop", fingerprint: old.id, entry });
    expect(await other.account.sshKeys()).toEqual([entry]);
  });

  it("refresh keeps its own entry, and finds it gone (empty id) when only other entries of the key are left", async () => {
    const { id, outs } = await create("refreshed", KEYS.ed25519.line);
    const read = await host.read(id, urn("refreshed"), outs);
    expect(read.id).toBe(id);
    expect(read.props).toEqual(outs);
    expect(read.inputs).toEqual({ publicKey: KEYS.ed25519.line, __provider: outs.__provider });
    // Another stack's stale write dropped this entry; that stack's own entry of the key remains.
    const theirs = entryOf(KEYS.ed25519.line, otherStackUrn("refreshed"));
    await other.account.setSshKeys([KEYS.rsa.line, theirs]);
    // The host adds `__provider` to what read returned; the engine drops the outputs of an empty id.
    expect(await host.read(id, urn("refreshed"), outs)).toEqual({
      id: "",
      props: { __provider: outs.__provider },
    });
    // A comment edited outside: the edited line is no longer the one this resource wrote.
    await other.account.setSshKeys([
      entryOf(KEYS.ed25519.line.replace("me@ed25519", "edited@console"), urn("refreshed")),
    ]);
    expect((await host.read(id, urn("refreshed"), outs)).id).toBe("");
  });

  it("SshKey.get reads a registered key by fingerprint, and names a fingerprint the account lacks", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const read = await host.read(KEYS.rsa.fingerprint, urn("got"), {});
    expect(read.props).toMatchObject({ publicKey: KEYS.rsa.line, type: "ssh-rsa", comment: "me@rsab2048" });
    const error = await host.read(KEYS.ed25519.fingerprint, urn("got"), {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toContain(`No SSH key with fingerprint ${KEYS.ed25519.fingerprint}`);
  });

  it("a malformed key fails check naming publicKey, and nothing reaches the service", async () => {
    const cut = KEYS.rsa.line.slice(0, 120);
    const { failures } = await host.check(urn("bad"), {}, { publicKey: cut });
    expect(failures).toEqual([
      { property: "", reason: expect.stringMatching(/^publicKey has a key whose data is cut short/) },
    ]);
    expect(proxy.seen).toHaveLength(0);
  });

  it("a private key's base64 body pasted by mistake is refused without quoting any of it", async () => {
    const body = PRIVATE_KEY_BODY;
    const { failures } = await host.check(urn("pasted"), {}, { publicKey: body, __urn: urn("pasted") });
    expect(failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(
          /^publicKey does not start with a key type \(its first word is not shown/,
        ),
      },
    ]);
    const reason = failures[0]?.reason ?? "";
    for (let at = 0; at + 8 <= body.length; at++) expect(reason).not.toContain(body.slice(at, at + 8));
    expect(proxy.seen).toHaveLength(0);
  });

  it("a state from before owner marks: refresh and delete act on exactly the line it wrote, nothing else", async () => {
    // What create stored before owner marks: the line, with no `entry` output, and the serialized
    // provider the engine passes back with the stored outputs (read and delete get them as they are).
    const fields = {
      publicKey: KEYS.ed25519.line,
      fingerprint: KEYS.ed25519.fingerprint,
      type: "ssh-ed25519",
      comment: "me@ed25519",
    };
    const legacy = {
      ...fields,
      __provider: await serializedProvider(inject("installedProjectDir"), "SshKey"),
    };
    const [type, base64] = KEYS.ed25519.line.split(" ");
    const sameKeyOtherComment = `${type} ${base64} colleague@desk`;
    const otherStack = entryOf(KEYS.ed25519.line, otherStackUrn("old"));
    await other.account.setSshKeys([sameKeyOtherComment, KEYS.ed25519.line, otherStack, KEYS.rsa.line]);
    const read = await host.read(KEYS.ed25519.fingerprint, urn("old"), legacy);
    expect(read.id).toBe(KEYS.ed25519.fingerprint);
    const { __provider: _p, ...props } = read.props;
    expect(props).toEqual(fields);
    await host.delete(KEYS.ed25519.fingerprint, urn("old"), legacy);
    expect(await other.account.sshKeys()).toEqual([sameKeyOtherComment, otherStack, KEYS.rsa.line]);
    expect((await host.read(KEYS.ed25519.fingerprint, urn("old"), legacy)).id).toBe("");
  });
});

describe("SshKey in the provider host, with an entry the service's PUT would refuse", () => {
  let server: ScriptedServer;
  let host: ProviderHost;
  /** The account's set as this scripted service holds it. */
  let keys: string[] = [];

  beforeAll(async () => {
    // GET answers the set; PUT stores it, refusing (422) an entry outside the document's pattern,
    // as the service does.
    server = await startScriptedServer({
      fallback: (req) => {
        if (req.pathname !== "/v2/account/ssh-keys") return { status: 404, body: { detail: "not found" } };
        if (req.method === "GET") return { body: { keys } };
        const sent = (JSON.parse(req.body) as { keys: string[] }).keys;
        if (!sent.every((line) => SSH_PUBLIC_KEY.test(line)))
          return { status: 422, body: { detail: "keys" } };
        keys = sent;
        return { body: { keys } };
      },
    });
    host = await startProviderHost({ projectDir: inject("installedProjectDir"), env: hostEnv() });
    await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${server.url}/v2` });
  });

  afterAll(async () => {
    await host?.close();
    await server?.close();
  });

  it("an entry someone else stored ending in \\r does not block a create or a delete, and keeps its key and comment", async () => {
    const theirs = `${KEYS.rsa.line}\r`;
    keys = [theirs];
    const { inputs, failures } = await host.check(
      urn("beside-cr"),
      {},
      {
        publicKey: KEYS.ed25519.line,
        __urn: urn("beside-cr"),
      },
    );
    expect(failures).toEqual([]);
    const { id, outs } = await host.create(urn("beside-cr"), inputs);
    const entry = entryOf(KEYS.ed25519.line, urn("beside-cr"));
    expect(id).toBe(KEYS.ed25519.fingerprint);
    expect(keys).toEqual([KEYS.rsa.line, entry]);
    keys = [theirs, entry];
    await host.delete(id, urn("beside-cr"), outs);
    expect(keys).toEqual([KEYS.rsa.line]);
    expect(server.requests.filter((r) => r.method === "PUT").map((r) => r.status)).toEqual([200, 200]);
  });
});

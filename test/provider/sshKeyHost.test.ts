/**
 * SshKey through Pulumi's own dynamic-provider host over gRPC, with `__provider` serialized from the
 * INSTALLED package, against the emulator's `/v2/account/ssh-keys` (whose PUT replaces the whole
 * set). The host reaches the emulator through a pass-through proxy that a test arms to run another
 * writer's request at a chosen step, or to count the writes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { KEYS } from "../fixtures/sshKeys";
import { FaultProxy } from "../support/faultProxy.mts";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";

const API_KEY = "sshkey-host-key-8d41c2";
const KEYS_PATH = /\/v2\/account\/ssh-keys$/;
const urn = (name: string) => urnFor("SshKey", name);

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
    host = await startProviderHost({ projectDir: inject("installedProjectDir") });
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

  async function create(name: string, publicKey: string) {
    const { inputs, failures } = await host.check(urn(name), {}, { publicKey });
    expect(failures).toEqual([]);
    return host.create(urn(name), inputs);
  }

  it("create adds the key and keeps the keys others registered, with fingerprint, type and comment", async () => {
    await other.account.setSshKeys([KEYS.rsa.line, KEYS.nistp256.line]);
    const { id, outs } = await create("mine", KEYS.ed25519.line);
    expect(id).toBe(KEYS.ed25519.fingerprint);
    const { __provider, ...fields } = outs;
    expect(fields).toEqual({
      publicKey: KEYS.ed25519.line,
      fingerprint: KEYS.ed25519.fingerprint,
      type: "ssh-ed25519",
      comment: "me@ed25519",
    });
    expect(Buffer.byteLength(__provider as string, "utf8")).toBeLessThanOrEqual(8 * 1024);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp256.line, KEYS.ed25519.line]);
  });

  it("create adopts the same key registered under another comment instead of adding it twice", async () => {
    const [type, base64] = KEYS.ed25519.line.split(" ");
    await other.account.setSshKeys([`${type} ${base64} old@laptop`, KEYS.rsa.line]);
    const { id } = await create("adopted", KEYS.ed25519.line);
    expect(id).toBe(KEYS.ed25519.fingerprint);
    expect(await other.account.sshKeys()).toEqual([KEYS.ed25519.line, KEYS.rsa.line]);
  });

  it("delete removes only its key, and a key already gone is done without a write", async () => {
    const { id, outs } = await create("deleted", KEYS.ed25519.line);
    await other.account.setSshKeys([KEYS.rsa.line, KEYS.ed25519.line, KEYS.nistp384.line]);
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
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp521.line, KEYS.ed25519.line]);
  });

  it("a writer that re-adds the key right after this delete's write is undone by one more write", async () => {
    const { id, outs } = await create("raced-delete", KEYS.ed25519.line);
    await other.account.setSshKeys([KEYS.rsa.line, KEYS.ed25519.line]);
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
    const { inputs } = await host.check(urn("lost"), {}, { publicKey: KEYS.ed25519.line });
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

  it("two SshKeys created at once in one host both end up in the set", async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    const [a, b] = await Promise.all([create("a", KEYS.ed25519.line), create("b", KEYS.nistp384.line)]);
    expect([a.id, b.id]).toEqual([KEYS.ed25519.fingerprint, KEYS.nistp384.fingerprint]);
    expect(new Set(await other.account.sshKeys())).toEqual(
      new Set([KEYS.rsa.line, KEYS.ed25519.line, KEYS.nistp384.line]),
    );
  });

  it("a new key replaces: the new key is added, then the old removed, others kept", async () => {
    const old = await create("replaced", KEYS.ed25519.line);
    await other.account.setSshKeys([KEYS.rsa.line, KEYS.ed25519.line]);
    const { inputs } = await host.check(urn("replaced"), old.outs, { publicKey: KEYS.nistp256.line });
    const diff = await host.diff(old.id, urn("replaced"), old.outs, inputs);
    expect(diff).toMatchObject({ changes: true, replaces: ["publicKey"] });
    // The engine's create-before-delete replacement.
    const next = await host.create(urn("replaced"), inputs);
    await host.delete(old.id, urn("replaced"), old.outs);
    expect(next.id).toBe(KEYS.nistp256.fingerprint);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp256.line]);
  });

  it("a new comment on the same key updates its entry in place", async () => {
    const old = await create("renamed", KEYS.ed25519.line);
    const line = KEYS.ed25519.line.replace("me@ed25519", "me@new-laptop");
    const { inputs } = await host.check(urn("renamed"), old.outs, { publicKey: line });
    const diff = await host.diff(old.id, urn("renamed"), old.outs, inputs);
    expect(diff).toMatchObject({ changes: true, replaces: [] });
    const { outs } = await host.update(old.id, urn("renamed"), old.outs, inputs);
    expect(outs).toMatchObject({ publicKey: line, comment: "me@new-laptop", fingerprint: old.id });
    expect(await other.account.sshKeys()).toEqual([line]);
  });

  it("refresh finds a key removed elsewhere gone, and shows a comment edited elsewhere", async () => {
    const { id, outs } = await create("refreshed", KEYS.ed25519.line);
    const edited = KEYS.ed25519.line.replace("me@ed25519", "edited@console");
    await other.account.setSshKeys([edited]);
    const read = await host.read(id, urn("refreshed"), outs);
    expect(read.id).toBe(id);
    expect(read.props).toMatchObject({ publicKey: edited, comment: "edited@console" });
    expect(read.inputs).toMatchObject({ publicKey: edited });
    await other.account.setSshKeys([KEYS.rsa.line]);
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
});

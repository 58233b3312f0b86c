/**
 * SshKey's settle interval on the settings' clock: the operations run in this process against the
 * emulator (through a counting proxy) with a fake clock, so the test decides when the interval has
 * passed and what another writer does meanwhile, with no real waits. The same rules through
 * Pulumi's provider host: `sshKeyHost.test.ts`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { DeploymentCancelledError } from "../../src/provider/clock";
import type { RunpodSettings } from "../../src/provider/config";
import { operations, SSH_KEY_SETTLE_MS } from "../../src/provider/sshKey/operations";
import { KEYS } from "../fixtures/sshKeys";
import { FakeClock, settle } from "../support/fakeClock";
import { FaultProxy } from "../support/faultProxy.mts";

const API_KEY = "sshkey-settle-key-5e0a";
const URN = "urn:pulumi:dev::proj::pulumi-nodejs:dynamic/runpod:SshKey::laptop";
const ENTRY = `${KEYS.ed25519.line} ${URN}`;
/** Longest real time the operation may take to reach its next timer before the test calls it stuck, ms. */
const STALL_MS = 5_000;

/** A fake clock that resolves {@link timerSet} when the operation sets its next timer. */
class WatchedClock extends FakeClock {
  #next: (() => void) | undefined;
  override setTimeout(fn: () => void, ms: number): unknown {
    const handle = super.setTimeout(fn, ms);
    this.#next?.();
    this.#next = undefined;
    return handle;
  }
  /** Resolves when the next timer is set; rejects after {@link STALL_MS} of real time. */
  timerSet(): Promise<void> {
    return new Promise((resolve, reject) => {
      const stall = setTimeout(() => reject(new Error("no timer was set on the test's clock")), STALL_MS);
      this.#next = () => {
        clearTimeout(stall);
        resolve();
      };
    });
  }
}

describe("SshKey's settle interval (fake clock)", () => {
  let emu: RunningEmulator;
  let proxy: FaultProxy;
  let other: RunpodClient;

  beforeAll(async () => {
    emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    other = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
  });
  afterAll(async () => {
    await proxy?.close();
    await emu?.close();
  });
  beforeEach(async () => {
    await other.account.setSshKeys([KEYS.rsa.line]);
    proxy.seen.length = 0;
  });

  const settingsOn = (clock: FakeClock): RunpodSettings => ({
    apiKey: API_KEY,
    restUrl: `${proxy.url}/v2`,
    clock,
  });

  it("a create returns only after the interval and a last read; a stale set written meanwhile is repaired", async () => {
    const clock = new WatchedClock();
    // Another writer reads the set before this create's write; it writes its stale copy later.
    let seen: string[] = [];
    proxy.arm("PUT", /\/v2\/account\/ssh-keys$/, {
      kind: "before",
      run: async () => {
        seen = await other.account.sshKeys();
      },
    });
    let returned = false;
    const firstTimer = clock.timerSet();
    const created = operations
      .create(settingsOn(clock), { publicKey: KEYS.ed25519.line, __urn: URN })
      .finally(() => {
        returned = true;
      });
    await firstTimer;
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, ENTRY]);
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    // Within the interval: the other writer's stale set lands, dropping this entry.
    await other.account.setSshKeys([...seen, KEYS.nistp256.line]);
    await clock.advance(SSH_KEY_SETTLE_MS - 1);
    expect(returned).toBe(false);
    const secondTimer = clock.timerSet();
    await clock.advance(1);
    // The last read missed the entry: one more round, then the interval again.
    await secondTimer;
    expect(returned).toBe(false);
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, KEYS.nistp256.line, ENTRY]);
    await clock.advance(SSH_KEY_SETTLE_MS);
    const { id, outs } = await created;
    expect({ id, entry: outs.entry }).toEqual({ id: KEYS.ed25519.fingerprint, entry: ENTRY });
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET", "GET", "GET", "PUT", "GET", "GET"]);
    expect(clock.now()).toBe(2 * SSH_KEY_SETTLE_MS);
  });

  it("a delete waits the interval too, and removes its entry again when a stale set brought it back", async () => {
    await other.account.setSshKeys([KEYS.rsa.line, ENTRY]);
    const clock = new WatchedClock();
    const firstTimer = clock.timerSet();
    const props = { publicKey: KEYS.ed25519.line, entry: ENTRY };
    const deleted = operations.delete(settingsOn(clock), KEYS.ed25519.fingerprint, props);
    await firstTimer;
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line]);
    // A writer that read before this delete's write puts the entry back with its stale set.
    await other.account.setSshKeys([KEYS.rsa.line, ENTRY]);
    const secondTimer = clock.timerSet();
    await clock.advance(SSH_KEY_SETTLE_MS);
    await secondTimer;
    await clock.advance(SSH_KEY_SETTLE_MS);
    await deleted;
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line]);
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET", "GET", "GET", "PUT", "GET", "GET"]);
  });

  it("an unchanged set costs one read and no wait: an update whose entry is there (the up after a create that failed partially), a delete whose entry is gone", async () => {
    await other.account.setSshKeys([KEYS.rsa.line, ENTRY]);
    const clock = new WatchedClock();
    const { outs } = await operations.update(
      settingsOn(clock),
      KEYS.ed25519.fingerprint,
      { publicKey: KEYS.ed25519.line, entry: ENTRY },
      { publicKey: KEYS.ed25519.line, __urn: URN },
    );
    expect(outs?.entry).toBe(ENTRY);
    await other.account.setSshKeys([KEYS.rsa.line]);
    await operations.delete(settingsOn(clock), KEYS.ed25519.fingerprint, {
      publicKey: KEYS.ed25519.line,
      entry: ENTRY,
    });
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "GET"]);
    expect(clock.pending()).toBe(0);
  });
  it("a cancel during the interval ends the edit at once as done: its write was verified, no last read", async () => {
    const clock = new WatchedClock();
    const cancellation = new AbortController();
    let returned = false;
    const firstTimer = clock.timerSet();
    const created = operations
      .create(
        { ...settingsOn(clock), signal: cancellation.signal },
        { publicKey: KEYS.ed25519.line, __urn: URN },
      )
      .finally(() => {
        returned = true;
      });
    await firstTimer;
    expect([returned, proxy.seen.map((r) => r.method)]).toEqual([false, ["GET", "PUT", "GET"]]);
    // The engine cancels (the first Ctrl-C) while the create waits out its interval: the clock never moves.
    cancellation.abort(new DeploymentCancelledError());
    await settle();
    expect(returned).toBe(true);
    const { id, outs } = await created;
    expect({ id, entry: outs.entry }).toEqual({ id: KEYS.ed25519.fingerprint, entry: ENTRY });
    expect(await other.account.sshKeys()).toEqual([KEYS.rsa.line, ENTRY]);
    expect(proxy.seen.map((r) => r.method)).toEqual(["GET", "PUT", "GET"]);
    expect([clock.now(), clock.pending()]).toEqual([0, 0]);
  });
});

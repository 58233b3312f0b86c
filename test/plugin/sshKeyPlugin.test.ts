/**
 * The native plugin serving SshKey: the URN the resource class registers as `__urn` in a program
 * comes here from Check's request (the engine's URN), so a key written from any language carries
 * its owner mark. Driven over gRPC against the emulator. Needs the build (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import * as pkg from "../../src/index";
import { URN_INPUT_CLASSES } from "../../src/plugin/resources";
import { RESOURCE_ROWS } from "../../src/provider/resources";
import { KEYS } from "../fixtures/sshKeys";
import {
  type PluginRig,
  pb,
  type providerClient,
  resourceCalls,
  secret,
  startPluginRig,
  UNKNOWN,
} from "./pluginKit";

const API_KEY = "plugin-ssh-key-6b2e90";
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

it("the resources given their URN in Check are those whose class registers __urn", () => {
  const registering = RESOURCE_ROWS.map((r) => r.className).filter(
    (name) => ((pkg as Record<string, any>)[name] as { spec?: { urn?: boolean } }).spec?.urn === true,
  );
  expect([...URN_INPUT_CLASSES].sort()).toEqual(registering.sort());
});

describe("pulumi-resource-runpod-native: SshKey over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    ({ emu, rpc } = rig);
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrlV2 });
  });

  afterAll(async () => {
    await rig?.close();
  });

  it("preview, up with the owner mark from the request's URN, a new comment in place, refresh, destroy", async () => {
    const key = resourceCalls(rpc, "runpod-native:index:SshKey", "laptop");
    const others = [KEYS.rsa.line];
    await service.account.setSshKeys(others);
    const before = emu.stats().requestsByInterface.management;

    // preview: the key not known yet; Check adds the URN all the same, and nothing is written.
    const previewed = await key.check({ publicKey: UNKNOWN });
    expect(previewed).toEqual({ inputs: { publicKey: UNKNOWN, __urn: key.urn }, failures: [] });
    expect(await key.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(emu.stats().requestsByInterface.management).toBe(before);

    // up: a program in another language gives no __urn; the entry carries the engine's URN.
    const { inputs, failures } = await key.check({ publicKey: KEYS.ed25519.line });
    expect(failures).toEqual([]);
    expect(inputs).toEqual({ publicKey: KEYS.ed25519.line, __urn: key.urn });
    const made = await key.create(inputs);
    const entry = `${KEYS.ed25519.line} ${key.urn}`;
    expect(made).toEqual({
      id: KEYS.ed25519.fingerprint,
      outs: {
        publicKey: KEYS.ed25519.line,
        fingerprint: KEYS.ed25519.fingerprint,
        type: "ssh-ed25519",
        comment: "me@ed25519",
        entry,
      },
    });
    expect(await service.account.sshKeys()).toEqual([...others, entry]);

    // a new comment: an update in place (the key is the same); `__urn` is no change of its own.
    const recommented = KEYS.ed25519.line.replace("me@ed25519", "me@desk");
    const news = (await key.check({ publicKey: recommented }, inputs)).inputs;
    expect(await key.diff(made.id, made.outs, news, inputs)).toEqual({
      changes: D.DIFF_SOME,
      replaces: [],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { publicKey: K.UPDATE },
    });
    const updated = await key.update(made.id, made.outs, news);
    expect(updated).toEqual({
      ...made.outs,
      publicKey: recommented,
      comment: "me@desk",
      entry: `${recommented} ${key.urn}`,
    });
    expect(await service.account.sshKeys()).toEqual([...others, `${recommented} ${key.urn}`]);
    // Unchanged: no change planned, though the state's outputs have no `__urn`.
    expect((await key.diff(made.id, updated, news, news)).changes).toBe(D.DIFF_NONE);

    // refresh, then destroy: only this resource's entry goes.
    expect(await key.read(made.id, updated)).toEqual({ id: made.id, props: updated });
    await key.delete(made.id, updated);
    expect(await service.account.sshKeys()).toEqual(others);
  });
});

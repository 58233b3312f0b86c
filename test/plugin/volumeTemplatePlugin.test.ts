/**
 * The native plugin serving NetworkVolume and Template, started as the engine starts it and driven
 * against the emulator through the sequences a program's preview, up, change, refresh and destroy
 * produce: Check, Diff, Create, Read, Update, Delete. Template's `env` is secret in and out.
 * Needs the build (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import {
  type PluginRig,
  pb,
  type providerClient,
  resourceCalls,
  secret,
  startPluginRig,
  UNKNOWN,
} from "./pluginKit";

const API_KEY = "plugin-vt-key-2c9d41";
const ENV_SECRET = "hf_Plugin-Token-9f8e7d";
const ENV_SECRET_2 = "hf_Rotated-Token-1a2b3c";
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

describe("pulumi-resource-runpod-native: NetworkVolume and Template over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let rpc: ReturnType<typeof providerClient>;
  let service: RunpodClient;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    ({ emu, rpc } = rig);
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrl, maxRetries: 0 });
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrl });
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    for (const s of [API_KEY, ENV_SECRET, ENV_SECRET_2]) {
      expect(stderr).not.toContain(s);
      expect(JSON.stringify(logs)).not.toContain(s);
    }
  });

  const managementRequests = () => emu.stats().requestsByInterface.management;

  it("NetworkVolume: preview, up, grow, refresh, a refused move, destroy", async () => {
    const vol = resourceCalls(rpc, "runpod-native:index:NetworkVolume", "data");
    const before = managementRequests();

    // preview: the size is not known yet; the monthly figure is unknown too, and nothing is written.
    const previewed = await vol.check({ name: "data", size: UNKNOWN, dataCenterId: "EU-RO-1" });
    expect(previewed).toEqual({
      inputs: { name: "data", size: UNKNOWN, dataCenterId: "EU-RO-1", monthlyCostUsd: UNKNOWN },
      failures: [],
    });
    expect(await vol.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    // Check read the data-centre catalog once (the only network a check takes); no write.
    expect(managementRequests() - before).toBe(1);
    expect(await service.networkVolumes.list()).toEqual([]);

    // up: 50 GB at the list price of $0.07 per GB-month.
    const v1 = { name: "data", size: 50, dataCenterId: "EU-RO-1" };
    const { inputs } = await vol.check(v1);
    expect(inputs).toEqual({ ...v1, monthlyCostUsd: 3.5 });
    const made = await vol.create(inputs);
    expect(made.outs).toEqual({ ...v1, type: "STANDARD", monthlyCostUsd: 3.5 });
    expect((await service.networkVolumes.list()).map((v) => [v.id, v.name, v.size])).toEqual([
      [made.id, "data", 50],
    ]);

    // grow: an update in place, the figure with it.
    const grown = (await vol.check({ ...v1, size: 60 }, inputs)).inputs;
    expect(await vol.diff(made.id, made.outs, grown, inputs)).toEqual({
      changes: D.DIFF_SOME,
      replaces: [],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { size: K.UPDATE, monthlyCostUsd: K.UPDATE },
    });
    const updated = await vol.update(made.id, made.outs, grown);
    expect(updated).toEqual({ ...v1, size: 60, type: "STANDARD", monthlyCostUsd: 4.2 });
    expect((await service.networkVolumes.get(made.id)).size).toBe(60);

    // refresh: read back as it is.
    expect(await vol.read(made.id, updated)).toEqual({ id: made.id, props: updated });

    // another data centre without the opt-in: Check refuses it (it would delete the data), no write.
    const atMove = managementRequests();
    const moved = await vol.check({ ...v1, size: 60, dataCenterId: "US-KS-2" }, grown);
    expect(moved.failures).toEqual([
      {
        property: "",
        reason: expect.stringMatching(
          /^dataCenterId EU-RO-1 -> US-KS-2: the service cannot change this on network volume "data".*set allowReplaceDeletingData: true/,
        ),
      },
    ]);
    expect(managementRequests()).toBe(atMove); // the catalog was read once, by the first check
    expect((await service.networkVolumes.get(made.id)).dataCenterId).toBe("EU-RO-1");

    // destroy; then a refresh finds it gone (empty id: the engine drops it).
    await vol.delete(made.id, updated);
    expect(await service.networkVolumes.list()).toEqual([]);
    expect(await vol.read(made.id, updated)).toEqual({ id: "", props: {} });
  });

  it("Template: preview, up, change env, refresh, destroy, with env secret in and out", async () => {
    const tpl = resourceCalls(rpc, "runpod-native:index:Template", "tpl");
    const before = managementRequests();

    // preview: env not known yet, secret all the same (the row keeps it secret); nothing written.
    const previewed = await tpl.check({ name: "tpl", image: "img:1", env: UNKNOWN });
    expect(previewed).toEqual({
      inputs: { name: "tpl", image: "img:1", env: secret(UNKNOWN) },
      failures: [],
    });
    expect(await tpl.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(managementRequests()).toBe(before);

    // up: env given plain (a program that forgot pulumi.secret) comes back secret, in and out.
    const { inputs } = await tpl.check({ name: "tpl", image: "img:1", env: { HF_TOKEN: ENV_SECRET } });
    expect(inputs).toEqual({ name: "tpl", image: "img:1", env: secret({ HF_TOKEN: ENV_SECRET }) });
    const made = await tpl.create(inputs);
    const serviceDefaults = {
      allowedCudaVersions: [],
      args: "",
      category: "NVIDIA",
      disk: 20,
      mounts: {},
      ports: [],
      public: false,
      registry: null,
      serverless: false,
      startJupyter: true,
      startSsh: true,
    };
    // The id is the answer's id, not an output (the schema declares none: `id` is reserved).
    expect(made.outs).toEqual({
      ...serviceDefaults,
      name: "tpl",
      image: "img:1",
      env: secret({ HF_TOKEN: ENV_SECRET }),
    });
    expect((await service.templates.get(made.id)).env).toEqual({ HF_TOKEN: ENV_SECRET });

    // a rotated token: an update in place, still secret.
    const changed = (
      await tpl.check({ name: "tpl", image: "img:1", env: secret({ HF_TOKEN: ENV_SECRET_2 }) }, inputs)
    ).inputs;
    expect(await tpl.diff(made.id, made.outs, changed, inputs)).toEqual({
      changes: D.DIFF_SOME,
      replaces: [],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { env: K.UPDATE },
    });
    const updated = await tpl.update(made.id, made.outs, changed);
    expect(updated).toEqual({ ...made.outs, env: secret({ HF_TOKEN: ENV_SECRET_2 }) });
    expect((await service.templates.get(made.id)).env).toEqual({ HF_TOKEN: ENV_SECRET_2 });

    // refresh, then destroy.
    expect(await tpl.read(made.id, updated)).toEqual({ id: made.id, props: updated });
    await tpl.delete(made.id, updated);
    expect(await service.templates.list()).toEqual([]);
  });
});

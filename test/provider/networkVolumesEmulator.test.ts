/**
 * Network volume lookups against the emulator with seeded volumes, in both REST dialects (same
 * assertions): 0, 1 and many matches, and the errors for each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { getNetworkVolume, getNetworkVolumes } from "../../src/provider/networkVolume/lookups";

const API_KEY = "volumes-test-key-5b7c";

const SEEDED = [
  { id: "nv-eu-models", name: "models", size: 50, dataCenterId: "EU-RO-1" },
  { id: "nv-us-models", name: "models", size: 100, dataCenterId: "US-KS-2" },
  { id: "nv-eu-data", name: "datasets", size: 20, dataCenterId: "EU-RO-1" },
];

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], volumes: SEEDED, rateLimits: false });
});

afterAll(async () => {
  await emu?.close();
});

describe.each(["v1", "v2"] as const)("network volume lookups against the emulator, REST %s", (dialect) => {
  const opts = () => ({
    client: new RunpodClient({ apiKey: API_KEY, restUrl: dialect === "v1" ? emu.restUrl : emu.restUrlV2 }),
  });

  it("finds one volume by id, in the one user-facing shape", async () => {
    expect(await getNetworkVolume({ id: "nv-us-models" }, opts())).toMatchObject({
      id: "nv-us-models",
      name: "models",
      size: 100,
      dataCenterId: "US-KS-2",
    });
  });

  it("finds one volume by a unique name, and one of several by name and data centre", async () => {
    expect((await getNetworkVolume({ name: "datasets" }, opts())).id).toBe("nv-eu-data");
    expect((await getNetworkVolume({ name: "models", dataCenterId: "EU-RO-1" }, opts())).id).toBe(
      "nv-eu-models",
    );
  });

  it("fails on several matches, listing their ids and data centres", async () => {
    await expect(getNetworkVolume({ name: "models" }, opts())).rejects.toThrow(
      '2 network volumes are named "models": nv-eu-models (EU-RO-1), nv-us-models (US-KS-2). Pass `id`, or `dataCenterId` to choose one.',
    );
  });

  it("fails on no match, listing what exists", async () => {
    await expect(getNetworkVolume({ name: "models", dataCenterId: "CA-MTL-1" }, opts())).rejects.toThrow(
      'No network volume is named "models" in data centre CA-MTL-1. Existing volumes (3): ' +
        'nv-eu-models "models" (EU-RO-1), nv-us-models "models" (US-KS-2), nv-eu-data "datasets" (EU-RO-1).',
    );
  });

  it("lists 0, 1 and many volumes by filter", async () => {
    expect(await getNetworkVolumes({ dataCenterId: "CA-MTL-1" }, opts())).toEqual([]);
    expect((await getNetworkVolumes({ name: "datasets" }, opts())).map((v) => v.id)).toEqual(["nv-eu-data"]);
    expect((await getNetworkVolumes({ name: "models" }, opts())).map((v) => v.id).sort()).toEqual([
      "nv-eu-models",
      "nv-us-models",
    ]);
  });

  it("reads a volume created through the API in the same call", async () => {
    const client = opts().client;
    const created = await client.networkVolumes.create({
      name: `fresh-${dialect}`,
      size: 20,
      dataCenterId: "EU-SE-1",
    });
    try {
      expect(await getNetworkVolume({ name: `fresh-${dialect}` }, { client })).toMatchObject({
        id: created.id,
        dataCenterId: "EU-SE-1",
      });
    } finally {
      await client.networkVolumes.delete(created.id);
    }
  });
});

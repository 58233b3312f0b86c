/**
 * Data centres judged in `check` through Pulumi's own dynamic-provider host, with `__provider` from
 * the INSTALLED package, against the emulator's catalog (REST v2) behind a proxy that sees every
 * request: an unknown id fails naming the field, the id and the catalog's ids; one host reads the
 * catalog once for every check of every resource; a catalog read that fails judges nothing and is
 * not tried again.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { FaultProxy } from "../support/faultProxy.mts";
import { type ProviderHost, startProviderHost, UNKNOWN, urnFor } from "../support/providerHost.mts";

const API_KEY = "dc-host-key-5b1e7c";
let emu: RunningEmulator;
let proxy: FaultProxy;
const hosts: ProviderHost[] = [];

/** A host configured against the proxy, fresh (its own catalog reads). */
async function freshHost(): Promise<ProviderHost> {
  const host = await startProviderHost({ projectDir: inject("installedProjectDir") });
  hosts.push(host);
  await host.configure({
    "runpod:apiKey": API_KEY,
    "runpod:restUrl": `${proxy.url}/v2`,
    "runpod:serverlessUrl": emu.serverlessUrl,
  });
  return host;
}

const catalogReads = () =>
  proxy.seen.filter((r) => r.method === "GET" && r.path === "/v2/catalog/datacenters");
const writes = () => proxy.seen.filter((r) => r.method !== "GET");

const endpoint = (dataCenterIds: unknown) => ({
  name: "ep",
  type: "QUEUE",
  image: "acme/api:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  dataCenterIds,
});
const pod = (dataCenterIds: unknown) => ({
  name: "box",
  image: "acme/dev:1",
  gpu: { id: "NVIDIA GeForce RTX 4090" },
  dataCenterIds,
});
const volume = (dataCenterId: unknown) => ({ name: "vol", size: 20, dataCenterId });

/** The emulator's catalog: five data centres, all listed. */
const KNOWN =
  "of the catalog (GET /v2/catalog/datacenters), which lists US-KS-2, US-GA-1, CA-MTL-1, EU-RO-1, EU-SE-1 " +
  "(in any letter case). Use one of those ids; getDataCenters() lists them with their regions.";

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
  proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
}, 120_000);
afterAll(async () => {
  for (const host of hosts) {
    expect(host.stderr()).not.toContain(API_KEY);
    await host.close();
  }
  await proxy?.close();
  await emu?.close();
});

describe("data centres judged in check, in the provider host", () => {
  it("refuses unknown ids of every resource with one catalog read for all checks, and no write", async () => {
    const host = await freshHost();
    const readsBefore = catalogReads().length;
    const ep = await host.check(urnFor("ServerlessEndpoint", "ep"), {}, endpoint(["EU-RO-1", "MARS-1"]));
    expect(ep.failures).toEqual([
      { property: "dataCenterIds", reason: `dataCenterIds has "MARS-1", not a data centre ${KNOWN}` },
    ]);
    const box = await host.check(urnFor("Pod", "box"), {}, pod(["VENUS-2"]));
    expect(box.failures).toEqual([
      { property: "dataCenterIds", reason: `dataCenterIds has "VENUS-2", not a data centre ${KNOWN}` },
    ]);
    const vol = await host.check(urnFor("NetworkVolume", "vol"), {}, volume("US-TX-3"));
    expect(vol.failures).toEqual([
      { property: "dataCenterId", reason: `dataCenterId has "US-TX-3", not a data centre ${KNOWN}` },
    ]);
    // Ids the catalog lists, in another letter case, pass, as the service compares them.
    expect(
      (await host.check(urnFor("ServerlessEndpoint", "ok"), {}, endpoint(["eu-ro-1"]))).failures,
    ).toEqual([]);
    expect((await host.check(urnFor("Pod", "ok"), {}, pod(["US-KS-2"]))).failures).toEqual([]);
    expect((await host.check(urnFor("NetworkVolume", "ok"), {}, volume("eu-se-1"))).failures).toEqual([]);
    expect(catalogReads().length - readsBefore).toBe(1);
    expect(writes()).toEqual([]);
  });

  it("does not read the catalog for values unknown in a preview", async () => {
    const host = await freshHost();
    const readsBefore = catalogReads().length;
    expect((await host.check(urnFor("ServerlessEndpoint", "ep"), {}, endpoint(UNKNOWN))).failures).toEqual(
      [],
    );
    expect((await host.check(urnFor("NetworkVolume", "vol"), {}, volume(UNKNOWN))).failures).toEqual([]);
    expect(catalogReads().length).toBe(readsBefore);
  });

  it("passes check when the catalog read fails, and does not read it again on that host", async () => {
    const host = await freshHost();
    const readsBefore = catalogReads().length;
    proxy.arm("GET", /^\/v2\/catalog\/datacenters$/, {
      kind: "reply",
      status: 503,
      body: { title: "Service Unavailable", status: 503 },
    });
    expect((await host.check(urnFor("ServerlessEndpoint", "ep"), {}, endpoint(["MARS-1"]))).failures).toEqual(
      [],
    );
    expect((await host.check(urnFor("Pod", "box"), {}, pod(["MARS-1"]))).failures).toEqual([]);
    expect((await host.check(urnFor("NetworkVolume", "vol"), {}, volume("MARS-1"))).failures).toEqual([]);
    expect(catalogReads().length - readsBefore).toBe(1);
  });
});

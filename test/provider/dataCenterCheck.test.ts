/**
 * `check` judges the data centres a program names against the catalog, in process, against a
 * scripted REST v2 service on 127.0.0.1 that counts its catalog reads: an unknown id fails naming
 * the field, the id and (briefly) the ids the catalog has; the catalog is read once per host and
 * account, and never when there is nothing to judge; a failed read judges nothing and is not
 * tried again; REST v1 has no catalog.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { resolveSettings } from "../../src/provider/config";
import { resetLedger } from "../../src/provider/cost/budget";
import { resetCatalogCache } from "../../src/provider/cost/catalog";
import { operations as volumeOperations } from "../../src/provider/networkVolume/operations";
import { operations as podOperations } from "../../src/provider/pod/operations";
import { operations as endpointOperations } from "../../src/provider/serverlessEndpoint/operations";

/** 14 data centres: more than a failure lists. */
const CENTRES = [
  "EU-RO-1",
  "EU-SE-1",
  "EU-NL-1",
  "EU-CZ-1",
  "EU-FR-1",
  "US-KS-2",
  "US-TX-3",
  "US-CA-2",
  "US-GA-1",
  "US-IL-1",
  "CA-MTL-1",
  "AP-JP-1",
  "OC-AU-1",
  "SA-BR-1",
];

let server: http.Server;
let base = "";
/** How the next catalog reads answer: 200 with CENTRES, or this status. */
let failWith: number | undefined;
const reads: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/v2/catalog/datacenters") {
      reads.push(String(req.headers.authorization));
      if (failWith !== undefined) {
        res.writeHead(failWith, { "content-type": "application/problem+json" });
        res.end(JSON.stringify({ title: "unavailable", status: failWith }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          dataCenters: CENTRES.map((id) => ({
            id,
            name: id,
            region: "EUROPE",
            globalNetwork: false,
            networkVolumeTypes: ["STANDARD"],
            compliance: [],
          })),
        }),
      );
      return;
    }
    res.writeHead(404, { "content-type": "application/problem+json" }).end('{"title":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  resetCatalogCache();
  resetLedger();
  reads.length = 0;
  failWith = undefined;
});

const settings = (apiKey = "dc-check-key", dialect: "v1" | "v2" = "v2") =>
  resolveSettings(
    { get: (key: string) => ({ "runpod:apiKey": apiKey, "runpod:restUrl": `${base}/${dialect}` })[key] },
    {},
  );

const endpoint = (dataCenterIds?: unknown) => ({
  name: "ep",
  type: "QUEUE",
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
  gpu: { pools: ["ADA_24"] },
  image: "acme/worker:1",
  ...(dataCenterIds === undefined ? {} : { dataCenterIds }),
});
const pod = (dataCenterIds?: unknown) => ({
  name: "pod",
  image: "acme/dev:1",
  gpu: { id: "NVIDIA H100 80GB HBM3" },
  ...(dataCenterIds === undefined ? {} : { dataCenterIds }),
});
const volume = (dataCenterId: unknown) => ({ name: "vol", size: 20, dataCenterId });

const KNOWN_TEXT =
  "of the catalog (GET /v2/catalog/datacenters), which lists EU-RO-1, EU-SE-1, EU-NL-1, EU-CZ-1, EU-FR-1, " +
  "US-KS-2, US-TX-3, US-CA-2, US-GA-1, US-IL-1 and 4 more (in any letter case). Use one of those ids; " +
  "getDataCenters() lists them with their regions.";

describe("check of data centres against the catalog", () => {
  it("refuses an endpoint's dataCenterIds naming an id the catalog does not list, naming the field, the id and the known ids", async () => {
    const { failures } = await endpointOperations.check(settings(), {}, endpoint(["EU-RO-1", "MARS-1"]));
    expect(failures).toEqual([
      { property: "dataCenterIds", reason: `dataCenterIds has "MARS-1", not a data centre ${KNOWN_TEXT}` },
    ]);
  });

  it("refuses a pod's dataCenterIds and a volume's dataCenterId the same way", async () => {
    const s = settings();
    const podResult = await podOperations.check(s, {}, pod(["MARS-1", "VENUS-2"]));
    expect(podResult.failures).toEqual([
      {
        property: "dataCenterIds",
        reason: `dataCenterIds has "MARS-1", "VENUS-2", not data centres ${KNOWN_TEXT}`,
      },
    ]);
    const volumeResult = await volumeOperations.check(s, {}, volume("EU-XX-9"));
    expect(volumeResult.failures).toEqual([
      { property: "dataCenterId", reason: `dataCenterId has "EU-XX-9", not a data centre ${KNOWN_TEXT}` },
    ]);
  });

  it("accepts ids the catalog lists in any letter case, as the service compares them", async () => {
    const s = settings();
    expect((await endpointOperations.check(s, {}, endpoint(["eu-ro-1", "Us-Ks-2"]))).failures).toEqual([]);
    expect((await podOperations.check(s, {}, pod(["ca-mtl-1"]))).failures).toEqual([]);
    expect((await volumeOperations.check(s, {}, volume("eu-se-1"))).failures).toEqual([]);
  });

  it("reads the catalog once for many checks of every resource on one host and account", async () => {
    const s = settings();
    for (let i = 0; i < 3; i++) {
      await endpointOperations.check(s, {}, endpoint(["EU-RO-1"]));
      await podOperations.check(s, {}, pod(["MARS-1"]));
      await volumeOperations.check(s, {}, volume("EU-RO-1"));
    }
    expect(reads).toHaveLength(1);
    // Another account on the same host reads its own catalog.
    await volumeOperations.check(settings("another-key"), {}, volume("EU-RO-1"));
    expect(reads).toHaveLength(2);
  });

  it("does not read the catalog when the argument is absent, empty or unknown in a preview", async () => {
    const s = settings();
    expect((await endpointOperations.check(s, {}, endpoint())).failures).toEqual([]);
    expect((await endpointOperations.check(s, {}, endpoint([]))).failures).toEqual([]);
    expect((await endpointOperations.check(s, {}, endpoint(UNKNOWN))).failures).toEqual([]);
    expect((await podOperations.check(s, {}, pod([UNKNOWN]))).failures).toEqual([]);
    expect((await volumeOperations.check(s, {}, volume(UNKNOWN))).failures).toEqual([]);
    expect(reads).toEqual([]);
  });

  it("judges the known ids of a list that also holds an unknown one", async () => {
    const { failures } = await endpointOperations.check(settings(), {}, endpoint([UNKNOWN, "MARS-1"]));
    expect(failures).toEqual([
      { property: "dataCenterIds", reason: `dataCenterIds has "MARS-1", not a data centre ${KNOWN_TEXT}` },
    ]);
  });

  it("does not judge again ids the previous inputs already named, so a data centre the catalog dropped blocks no update", async () => {
    const s = settings();
    const olds = volume("EU-GONE-1");
    expect((await volumeOperations.check(s, olds, { ...olds, name: "renamed" })).failures).toEqual([]);
    const oldPod = pod(["EU-GONE-1"]);
    expect((await podOperations.check(s, oldPod, pod(["eu-gone-1", "EU-RO-1"]))).failures).toEqual([]);
    expect((await podOperations.check(s, oldPod, pod(["EU-GONE-1", "MARS-1"]))).failures).toEqual([
      { property: "dataCenterIds", reason: `dataCenterIds has "MARS-1", not a data centre ${KNOWN_TEXT}` },
    ]);
  });

  it("passes check when the catalog cannot be read, and does not read it again on this host", async () => {
    failWith = 500;
    const s = settings();
    expect((await endpointOperations.check(s, {}, endpoint(["MARS-1"]))).failures).toEqual([]);
    expect((await podOperations.check(s, {}, pod(["MARS-1"]))).failures).toEqual([]);
    expect((await volumeOperations.check(s, {}, volume("MARS-1"))).failures).toEqual([]);
    // One try: a 500 on a GET is not retried here, and the failure is kept for the host's life.
    expect(reads).toHaveLength(1);
  });

  it("never names the API key in a failure", async () => {
    const key = "rpa_dc_secret_7f3k";
    const { failures } = await endpointOperations.check(settings(key), {}, endpoint([key]));
    expect(failures).toHaveLength(1);
    expect(JSON.stringify(failures)).not.toContain(key);
  });

  it("judges nothing over REST v1, which has no catalog", async () => {
    const { failures } = await volumeOperations.check(settings("dc-check-key", "v1"), {}, volume("MARS-1"));
    expect(failures).toEqual([]);
    expect(reads).toEqual([]);
  });

  it("lists at most a few of many unknown ids", async () => {
    const many = Array.from({ length: 40 }, (_, i) => `XX-${i}`);
    const { failures } = await endpointOperations.check(settings(), {}, endpoint(many));
    expect(failures).toHaveLength(1);
    expect(failures?.[0]?.reason).toContain('"XX-9" and 30 more, not data centres of the catalog');
    expect(failures?.[0]?.reason).not.toContain("XX-10");
  });
});

/**
 * A pod's `gpu.count` judged against the catalog's `maxCount` (`checkGpuCount`), on a scripted
 * catalog on 127.0.0.1: each GPU type the pod may land on must hold the count in the pod's cloud;
 * a count and candidates the previous inputs already had are not judged again (no read); a catalog
 * that cannot be read judges nothing (the static bound of `check` is then the only one).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { checkGpuCount } from "../../src/provider/catalog/gpuCountCheck";
import type { RunpodSettings } from "../../src/provider/config";
import { CATALOG_READ_RETRIES, resetCatalogCache } from "../../src/provider/cost/catalog";
import { type ScriptedServer, startScriptedServer } from "../support/scriptedServer";

const H100 = "NVIDIA H100 80GB HBM3";
const A40 = "NVIDIA A40";
const CATALOG = {
  body: {
    gpus: [
      { id: H100, name: "H100", pool: "HOPPER_80", maxCount: { secure: 8, community: 2 } },
      { id: A40, name: "A40", pool: "AMPERE_48", maxCount: { secure: 4, community: 0 } },
    ],
  },
};

let server: ScriptedServer;
let settings: RunpodSettings;
beforeAll(async () => {
  server = await startScriptedServer();
  settings = { apiKey: "rpa_gpu_count_check", restUrl: `${server.url}/v2` };
});
beforeEach(() => {
  resetCatalogCache();
  server.requests.length = 0;
  server.fallback = undefined;
});
afterAll(async () => {
  await server?.close();
});

describe("checkGpuCount", () => {
  it("refuses a count over the maxCount of any candidate in the pod's cloud, naming each, in one read", async () => {
    server.enqueue(CATALOG);
    const failures = await checkGpuCount(settings, { gpu: { id: H100, count: 6 }, fallbackGpuIds: [A40] });
    expect(failures).toEqual([
      {
        property: "gpu",
        reason:
          "gpu.count 6 is more GPUs than one SECURE machine holds: the catalog's maxCount (GET /v2/catalog/gpus) " +
          `gives "${A40}" at most 4. Lower gpu.count, or name GPU types whose machines hold that many ` +
          "(getGpuTypes() lists maxCount per cloud).",
      },
    ]);
    expect(server.requests.map((r) => `${r.method} ${r.pathname}`)).toEqual(["GET /v2/catalog/gpus"]);
  });

  it("judges the community cloud by its own maxCount, and leaves a type not offered there to the service", async () => {
    server.enqueue(CATALOG);
    const failures = await checkGpuCount(settings, {
      gpu: { id: H100, count: 3 },
      fallbackGpuIds: [A40],
      cloud: "community",
    });
    expect(failures.map((f) => f.reason)).toEqual([
      "gpu.count 3 is more GPUs than one COMMUNITY machine holds: the catalog's maxCount (GET /v2/catalog/gpus) " +
        `gives "${H100}" at most 2. Lower gpu.count, or name GPU types whose machines hold that many ` +
        "(getGpuTypes() lists maxCount per cloud).",
    ]);
  });

  it("passes a count every candidate holds", async () => {
    server.enqueue(CATALOG);
    expect(await checkGpuCount(settings, { gpu: { id: H100, count: 8 } })).toEqual([]);
  });

  it("reads nothing for no count, a count of 1, or a count and candidates the previous inputs had", async () => {
    const pod = { gpu: { id: H100, count: 12 } };
    expect(await checkGpuCount(settings, { gpu: { id: H100 } })).toEqual([]);
    expect(await checkGpuCount(settings, { gpu: { id: H100, count: 1 } })).toEqual([]);
    expect(await checkGpuCount(settings, pod, pod)).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it("judges nothing when the catalog cannot be read, and keeps that outcome for the host", async () => {
    server.fallback = () => ({ status: 500, body: { message: "down" } });
    expect(await checkGpuCount(settings, { gpu: { id: H100, count: 12 } })).toEqual([]);
    // The prices' one bounded read (a try and its quick retries), shared with the price check.
    const read = Array(1 + CATALOG_READ_RETRIES).fill("/v2/catalog/gpus");
    expect(server.requests.map((r) => r.pathname)).toEqual(read);
    expect(await checkGpuCount(settings, { gpu: { id: A40, count: 6 } })).toEqual([]);
    expect(server.requests.map((r) => r.pathname)).toEqual(read);
  });
});

/**
 * What the prices cost a preview: `check` works out each priced resource's `hourlyCost` (and
 * the budgets) from the catalog, and DESIGN.md asks for at most one catalog read per provider
 * host, however many resources the deployment has.
 *
 * Method: the packed package installed into a temp project (`test/support/packedPackage.mts`),
 * Pulumi's own dynamic-provider host over gRPC (`test/support/providerHost.mts`), configured as
 * the engine does (`runpod:apiKey`, `runpod:restUrl`, `runpod:maxHourlyUsd` set so the stack
 * budget runs too) with its REST URL pointing at a recording proxy in front of an in-process
 * emulator. Then one `Check` per resource, as a preview sends them (no olds; all at once, the
 * harshest case for a per-host cache): {@link ENDPOINTS} `ServerlessEndpoint`s (half on GPU
 * pools, half on a CPU flavour), {@link PODS} `Pod`s (half GPU, half CPU) and {@link CLUSTERS}
 * `Cluster`s (2 to 6 pods of 8 GPUs, priced from the same GPU list), each with
 * `maxHourlyUsd` and the `__urn` its constructor adds. Counted at the proxy: requests to
 * `/v2/catalog/*` (by route), and every other request (must be none: check makes no writes and
 * no other reads). A check that fails or has no `hourlyCost` throws.
 *
 * `node bench/previewCost.mts` (after `npm run build`) runs this section alone, about 20 s
 * (mostly packing and installing the package).
 */
import type { RunningEmulator } from "../src/emulator/index.ts";
import { FaultProxy } from "../test/support/faultProxy.mts";
import { installPackedPackage } from "../test/support/packedPackage.mts";
import { startProviderHost, urnFor } from "../test/support/providerHost.mts";
import { pkg, progress, type ResultRow } from "./lib.mts";

const API_KEY = "bench-preview-cost-key";
export const ENDPOINTS = 20;
export const PODS = 20;
export const CLUSTERS = 5;

export async function benchPreviewCost(): Promise<ResultRow[]> {
  progress(
    `preview cost: ${ENDPOINTS} endpoints, ${PODS} pods and ${CLUSTERS} clusters checked through one provider host`,
  );
  const installed = await installPackedPackage({ build: false });
  const emu: RunningEmulator = await pkg.startEmulator({ apiKeys: [API_KEY], rateLimits: false });
  const proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
  const host = await startProviderHost({ projectDir: installed.projectDir });
  try {
    // Ids from the catalog, read directly (not through the proxy, so not counted).
    const direct = new pkg.RunpodClient({
      apiKey: API_KEY,
      restUrl: emu.restUrl,
      serverlessUrl: emu.serverlessUrl,
    });
    const cpu = (await direct.catalog.cpus())[0];
    const gpu = (await direct.catalog.gpus()).find((g) => g.price?.secure !== undefined && g.pool);
    if (!cpu || !gpu)
      throw new Error("preview cost: the emulator's catalog has no CPU flavour or priced GPU");
    await host.configure({
      "runpod:apiKey": API_KEY,
      "runpod:restUrl": `${proxy.url}/v2`,
      "runpod:serverlessUrl": emu.serverlessUrl,
      "runpod:maxHourlyUsd": "100000",
    });
    const checks: Array<Promise<{ kind: string; inputs: Record<string, unknown> }>> = [];
    const check = (
      kind: "ServerlessEndpoint" | "Pod" | "Cluster",
      name: string,
      props: Record<string, unknown>,
    ) => {
      const urn = urnFor(kind, name);
      checks.push(
        host.check(urn, {}, { ...props, maxHourlyUsd: 100000, __urn: urn }).then(({ inputs, failures }) => {
          if (failures.length > 0)
            throw new Error(`preview cost: ${kind} ${name}: ${JSON.stringify(failures)}`);
          return { kind, inputs };
        }),
      );
    };
    for (let i = 0; i < ENDPOINTS; i++) {
      check("ServerlessEndpoint", `ep${i}`, {
        name: `ep-${i}`,
        type: "QUEUE",
        image: `acme/api:${i}`,
        scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
        workers: { min: 0, max: 1 + (i % 4) },
        ...(i % 2 === 0 ? { gpu: { pools: [gpu.pool] } } : { cpu: [{ id: cpu.id, vcpuCount: 2 }] }),
      });
    }
    for (let i = 0; i < PODS; i++) {
      check("Pod", `pod${i}`, {
        name: `pod-${i}`,
        image: "runpod/pytorch:2",
        ...(i % 2 === 0 ? { gpu: { id: gpu.id, count: 1 } } : { cpu: { id: cpu.id, vcpuCount: 2 } }),
      });
    }
    for (let i = 0; i < CLUSTERS; i++) {
      check("Cluster", `cluster${i}`, {
        name: `cluster-${i}`,
        type: "TRAINING",
        image: "runpod/pytorch:2",
        compute: { gpuTypeId: gpu.id, gpuCountPerPod: 8, podCount: 2 + i },
      });
    }
    const results = await Promise.all(checks);
    for (const { kind, inputs } of results) {
      const cost = inputs.hourlyCost as { ceilingUsd?: unknown } | undefined;
      if (typeof cost?.ceilingUsd !== "number")
        throw new Error(`preview cost: a ${kind} check gave no hourlyCost: ${JSON.stringify(cost)}`);
    }
    const catalog = proxy.seen.filter((r) => r.path.startsWith("/v2/catalog/"));
    const other = proxy.seen.length - catalog.length;
    const byRoute = new Map<string, number>();
    for (const r of catalog) byRoute.set(r.path, (byRoute.get(r.path) ?? 0) + 1);
    const maxPerRoute = Math.max(0, ...byRoute.values());
    const routes = [...byRoute].map(([p, n]) => `${p} ${n}`).join(", ");
    return [
      {
        name: `Preview cost: catalog requests while one provider host checks ${results.length} priced resources (${ENDPOINTS} ServerlessEndpoints, ${PODS} Pods, GPU and CPU, ${CLUSTERS} Clusters; ${routes})`,
        value: catalog.length,
        unit: "req",
        target: "<= 1 per catalog route per provider host",
        meetsTarget: maxPerRoute <= 1,
      },
      {
        name: "Preview cost: other requests during those checks (writes or non-catalog reads)",
        value: other,
        unit: "req",
        target: "0",
        meetsTarget: other === 0,
      },
    ];
  } finally {
    await host.close();
    await proxy.close();
    await emu.close();
    await installed.cleanup();
  }
}

if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchPreviewCost())}\n`);
}

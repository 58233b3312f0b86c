/**
 * What a serverless worker of an endpoint costs per hour, from the emulator's catalog: the first
 * pool's GPU price (`price.serverless` of the first GPU type of that pool, catalog order) x
 * `gpu.count`, or the CPU flavour's `price.serverlessPerVcpu` x `vcpuCount`. The `EMULATOR` pool
 * has no GPU type and no price: $0.
 */
import { getCpuType, listGpuTypes } from "../catalog";
import type { ServerlessStore } from "../serverless";
import type { ServerlessRate } from "./meter";

/** The rate of each endpoint of `store`, as it is configured when asked. */
export function serverlessRates(store: ServerlessStore): ServerlessRate {
  return (endpointId) => {
    const record = store.getEndpoint(endpointId)?.record;
    if (!record) return undefined;
    if (record.cpu && record.cpu.length > 0) {
      const cpu = record.cpu[0];
      const price = cpu ? getCpuType(cpu.id, {})?.price?.serverlessPerVcpu : undefined;
      return { component: "cpu", ratePerHour: (price ?? 0) * (cpu?.vcpuCount ?? 0) };
    }
    const pool = record.gpu?.pools[0];
    const type = pool === undefined ? undefined : listGpuTypes({}).find((g) => g.pool === pool);
    return { component: "gpu", ratePerHour: (type?.price?.serverless ?? 0) * (record.gpu?.count ?? 1) };
  };
}

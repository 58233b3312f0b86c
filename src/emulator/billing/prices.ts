/**
 * What a serverless worker of an endpoint costs per hour, from the emulator's catalog: the price of
 * the GPU type its workers are placed on (`price.serverless` of `placedGpuType`: the first type of
 * the first pool, catalog order, not excluded) x `gpu.count`, or the CPU flavour's `price.serverlessPerVcpu` x `vcpuCount`. The `EMULATOR` pool
 * has no GPU type and no price: $0.
 */
import { getCpuType, placedGpuType } from "../catalog";
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
    const type = placedGpuType(record.gpu);
    return { component: "gpu", ratePerHour: (type?.price?.serverless ?? 0) * (record.gpu?.count ?? 1) };
  };
}

/**
 * A pod's price arithmetic and budget, with no network: pod rates of its cloud × GPUs, the floor
 * at the cheapest candidate and the ceiling at the dearest, a stopped pod's floor, prices the
 * catalog does not give.
 */
import { afterEach, describe, expect, it } from "vitest";
import { UNKNOWN } from "../../src/provider/common/unknown";
import { resetLedger } from "../../src/provider/cost/budget";
import { podHourlyCost } from "../../src/provider/cost/prices";

const gpus = [
  { id: "NVIDIA GeForce RTX 4090", pool: "ADA_24", price: { secure: 0.69, community: 0.34 } },
  { id: "NVIDIA RTX A5000", pool: "AMPERE_24", price: { secure: 0.27, community: 0.16 } },
  { id: "NVIDIA H200", pool: "HOPPER_141", price: { serverless: 5.58 } },
];
const cpus = [{ id: "cpu3c", price: { securePerVcpu: 0.04, serverlessPerVcpu: 0.03 } }];

afterEach(() => resetLedger());

describe("a pod's hourly cost", () => {
  it("is the secure pod price times gpu.count, one machine: floor and ceiling alike without fallbacks", () => {
    const cost = podHourlyCost({ gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 } }, { gpus });
    expect(cost).toEqual({ floorUsd: 1.38, ceilingUsd: 1.38, ratePerWorkerUsd: 1.38 });
  });

  it("takes the community price on the community cloud", () => {
    const cost = podHourlyCost({ gpu: { id: "NVIDIA GeForce RTX 4090" }, cloud: "COMMUNITY" }, { gpus });
    expect(cost).toEqual({ floorUsd: 0.34, ceilingUsd: 0.34, ratePerWorkerUsd: 0.34 });
  });

  it("puts the floor at the cheapest candidate and the ceiling at the dearest of gpu.id and fallbackGpuIds", () => {
    const cost = podHourlyCost(
      { gpu: { id: "NVIDIA RTX A5000", count: 2 }, fallbackGpuIds: ["NVIDIA GeForce RTX 4090"] },
      { gpus },
    );
    expect(cost).toEqual({ floorUsd: 0.54, ceilingUsd: 1.38, ratePerWorkerUsd: 1.38 });
  });

  it("has a floor of 0 while the pod is asked to be EXITED, and keeps the ceiling it may be started at", () => {
    const cost = podHourlyCost({ gpu: { id: "NVIDIA RTX A5000" }, desiredStatus: "EXITED" }, { gpus });
    expect(cost).toEqual({ floorUsd: 0, ceilingUsd: 0.27, ratePerWorkerUsd: 0.27 });
  });

  it("prices a CPU pod by its flavour's secure vCPU price times vcpuCount", () => {
    const cost = podHourlyCost({ cpu: { id: "cpu3c", vcpuCount: 4 } }, { cpus });
    expect(cost).toEqual({ floorUsd: 0.16, ceilingUsd: 0.16, ratePerWorkerUsd: 0.16 });
  });

  it("says plainly which candidate has no pod price, with null figures rather than 0", () => {
    const cost = podHourlyCost(
      { gpu: { id: "NVIDIA RTX A5000" }, fallbackGpuIds: ["NVIDIA H200", "NVIDIA B200"] },
      { gpus },
    );
    expect(cost).toEqual({
      floorUsd: null,
      ceilingUsd: null,
      ratePerWorkerUsd: null,
      note: 'no list price for GPU type "NVIDIA H200": the catalog gives it no secure pod price',
    });
  });

  it("is unknown, not 0, when the GPU or its fallbacks are unknown in a preview", () => {
    expect(podHourlyCost({ gpu: { id: UNKNOWN } }, { gpus })).toBe(UNKNOWN);
    expect(podHourlyCost({ gpu: { id: "NVIDIA RTX A5000" }, fallbackGpuIds: UNKNOWN }, { gpus })).toBe(
      UNKNOWN,
    );
  });
});

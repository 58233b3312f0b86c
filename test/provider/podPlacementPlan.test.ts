/**
 * A Pod's `dataCenterIds` edit replaces it only when the data centre it runs in is no longer asked
 * for, compared in any letter case (as check and the service take ids): `eu-ro-1` still holds a
 * pod in `EU-RO-1`.
 */
import { describe, expect, it } from "vitest";
import type { PodInputs } from "../../src/provider/pod/args";
import { plannedChanges } from "../../src/provider/pod/changes";

const olds = { imageName: "runpod/base:1", dataCenterIds: ["EU-RO-1"], dataCenterId: "EU-RO-1" };
const plan = (dataCenterIds: string[]) =>
  plannedChanges(olds, { imageName: "runpod/base:1", dataCenterIds } as unknown as PodInputs);

describe("a Pod's dataCenterIds edit", () => {
  it("keeps the pod when its data centre is still asked for, in another letter case", () => {
    const p = plan(["eu-ro-1", "US-KS-2"]);
    expect(p.replaces).not.toContain("dataCenterIds");
    expect(p.other).toContain("dataCenterIds");
  });

  it("replaces the pod when its data centre is no longer asked for", () => {
    expect(plan(["US-KS-2"]).replaces).toContain("dataCenterIds");
  });
});

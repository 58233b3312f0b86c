/**
 * ContainerRegistryAuth operations without a network: check's wording, and how create explains
 * the outcomes a host test cannot produce cheaply (a client timeout, duplicate names appearing).
 */
import { describe, expect, it } from "vitest";
import { findMismatches } from "../../src/provider/jobRun/match";
import { checkRegistryAuth } from "../../src/provider/registryAuth";

describe("registry auth check", () => {
  it("describes a wrong type with the same words as JobRun's output diff", async () => {
    const { failures } = await checkRegistryAuth({}, { name: ["a", "b"], username: "u", password: "p" });
    const jobRunWords = findMismatches("x", ["a", "b"]).mismatches[0]?.actual;
    expect(jobRunWords).toMatch(/^an array of 2 items/);
    expect(failures).toEqual([
      { property: "name", reason: "name must be a string, got an array of 2 items" },
    ]);
  });
});

/** The pulumi-style summary the demo prints when it runs without the CLI (`test/support/render.mts`). */
import { describe, expect, it } from "vitest";
import { formatDuration, renderStep, renderValue } from "../support/render.mts";

const urn = (type: string, name: string) =>
  `urn:pulumi:dev::p::pulumi-nodejs:dynamic/runpod:${type}::${name}`;

describe("renderStep", () => {
  it("shows each op with its symbol, the stack row, counts and duration", () => {
    const text = renderStep({
      kind: "up",
      project: "p",
      stack: "dev",
      resources: [
        { urn: urn("JobRun", "smoke"), op: "update", diffKeys: ["triggers"] },
        { urn: urn("ContainerRegistryAuth", "a"), op: "replace" },
        { urn: urn("ContainerRegistryAuth", "b"), op: "delete" },
        { urn: urn("ContainerRegistryAuth", "c"), op: "same" },
      ],
      outputs: {},
      errors: [],
      durationMs: 2400,
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("Updating (dev):");
    expect(lines).toContainEqual(expect.stringMatching(/^ {5}pulumi:pulumi:Stack +p-dev$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^ ~ +├─ .*:JobRun +smoke +updated +\[diff: ~triggers\]$/),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ \+- +├─ .*:ContainerRegistryAuth +a +replaced$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ - +└─ .*:ContainerRegistryAuth +b +deleted$/));
    expect(text).not.toMatch(/ c /);
    expect(text).toContain(
      // Two kinds of change or more: `N changes` and `N unchanged` on one line (renderSummaryEvent).
      "Resources:\n    ~ 1 updated\n    +- 1 replaced\n    - 1 deleted\n    3 changes. 2 unchanged\n\nDuration",
    );
    expect(text.endsWith("Duration: 2s")).toBe(true);
  });

  it("marks changed, added and removed outputs against the previous ones; secrets stay [secret]", () => {
    const text = renderStep({
      kind: "up",
      project: "p",
      stack: "dev",
      resources: [],
      outputs: { jobId: "j2", id: "x", token: "[secret]", added: 1 },
      previousOutputs: { jobId: "j1", id: "x", token: "[secret]", gone: true },
      errors: [],
      durationMs: 10,
    });
    expect(text).toContain('  ~ jobId: "j1" => "j2"');
    expect(text).toContain('    id   : "x"');
    expect(text).toContain("    token: [secret]");
    expect(text).toContain("  + added: 1");
    expect(text).toContain("  - gone : true");
  });

  it("a first preview prints every printable stack output, sorted, a value not known yet as [unknown] (getResourceOutputsPropertiesString while planning)", () => {
    const text = renderStep({
      kind: "preview",
      project: "p",
      stack: "dev",
      resources: [{ urn: urn("ServerlessEndpoint", "api"), op: "create" }],
      outputs: {
        endpointId: "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        cost: { floorUsd: 0, ceilingUsd: 2.2 },
        empty: "",
        none: [],
        token: "[secret]",
      },
      errors: [],
      durationMs: 0,
    });
    expect(text).toContain(
      "Outputs:\n    cost      : {\n        ceilingUsd: 2.2\n        floorUsd  : 0\n    }\n    endpointId: [unknown]\n    token     : [secret]\n\nResources:\n    + 2 to create",
    );
  });

  it("a later preview prints only the outputs that change, and none that only become unknown (massageStackPreviewOutputDiff)", () => {
    const view = {
      kind: "preview" as const,
      project: "p",
      stack: "dev",
      resources: [{ urn: urn("ServerlessEndpoint", "api"), op: "update" as const }],
      errors: [],
      durationMs: 0,
      previousOutputs: { version: 1, cost: { ceilingUsd: 2.2 }, url: "http://a", gone: "x" },
    };
    const text = renderStep({
      ...view,
      outputs: {
        version: "04da6b54-80e4-46f7-96ec-b56ff0331ba9",
        cost: { ceilingUsd: 22 },
        url: "http://a",
        added: 3,
      },
    });
    expect(text).toContain(
      'Outputs:\n  + added: 3\n  ~ cost : {\n        ceilingUsd: 22\n    }\n  - gone : "x"\n\nResources:',
    );
    expect(text).not.toContain("version");
    expect(text).not.toContain("url");
    // Nothing but unknowns and sames: no Outputs section at all.
    const quiet = renderStep({
      ...view,
      previousOutputs: { version: 1 },
      outputs: { version: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" },
    });
    expect(quiet).not.toContain("Outputs:");
  });

  it("lists a failed resource and the run's `update failed` under Diagnostics, and the stack as failed", () => {
    const text = renderStep({
      kind: "up",
      project: "p",
      stack: "dev",
      resources: [
        { urn: urn("JobRun", "smoke"), op: "failed", error: "job ended FAILED\nWorker error: boom" },
      ],
      outputs: {},
      errors: ["update failed"],
      durationMs: 10,
    });
    // The stack's row counts its own errors; `N errored` counts every row with one (progress.go).
    expect(text).toMatch(/pulumi:pulumi:Stack +p-dev +\*\*failed\*\* +1 error\n/);
    expect(text).toContain("Resources:\n    1 unchanged\n    2 errored");
    expect(text).toContain(
      "Diagnostics:\n  pulumi-nodejs:dynamic/runpod:JobRun (smoke):\n    error: job ended FAILED\n    Worker error: boom",
    );
    expect(text).toContain("  pulumi:pulumi:Stack (p-dev):\n    error: update failed");
  });
});

describe("the Resources summary, in display/diff.go renderSummaryEvent's order", () => {
  it("prints the kinds of change, then unchanged, then errored last", () => {
    const text = renderStep({
      kind: "up",
      project: "p",
      stack: "dev",
      resources: [
        { urn: urn("JobRun", "smoke"), op: "update", diffKeys: ["triggers"] },
        { urn: urn("JobRun", "broken"), op: "failed", error: "job ended FAILED" },
        { urn: urn("ContainerRegistryAuth", "c"), op: "same" },
      ],
      outputs: {},
      errors: ["update failed"],
      durationMs: 10,
    });
    expect(text).toContain("Resources:\n    ~ 1 updated\n    2 unchanged\n    2 errored\n");
  });
});

describe("renderValue and formatDuration", () => {
  it("renders nested values in Pulumi's notation", () => {
    expect(renderValue([{ atMs: 1, status: "DONE" }], "")).toBe(
      '[\n    [0]: {\n        atMs  : 1\n        status: "DONE"\n    }\n]',
    );
    expect(renderValue([], "")).toBe("[]");
    expect(renderValue(null, "")).toBe("<null>");
  });

  it("formats durations like the CLI", () => {
    expect([formatDuration(850), formatDuration(2400), formatDuration(64_000)]).toEqual([
      "850ms",
      "2s",
      "1m4s",
    ]);
  });
});

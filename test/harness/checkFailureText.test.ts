/**
 * The check-failure text the harness prints, against the engine's rule (`issueCheckFailures` in
 * pkg/resource/deploy/step_generator.go, diag 2002/2003 in sdk/go/common/diag/errors.go, and
 * `PropertyValue.String` in sdk/go/common/resource/properties.go, at pulumi/pulumi 1b5949891b3c).
 */
import { describe, expect, it } from "vitest";
import { checkFailureText, goPropertyValue } from "../support/deployRunner.mts";
import { SECRET_SIG, SECRET_SIG_KEY, UNKNOWN } from "../support/providerHost.mts";

const T = "pulumi-nodejs:dynamic/runpod:JobRun";

describe("check failures as the engine prints them", () => {
  it("names the property and prints the program's value under that top-level key whole", () => {
    expect(
      checkFailureText(T, "smoke", { timeoutMs: 0 }, { property: "timeoutMs", reason: "too small" }),
    ).toBe(`${T} resource 'smoke': property timeoutMs value {0} has a problem: too small`);
  });

  it("prints {<nil>} for a nested path, which is no top-level key", () => {
    const inputs = { expect: { timeoutMs: -1 } };
    expect(checkFailureText(T, "smoke", inputs, { property: "expect.timeoutMs", reason: "r" })).toBe(
      `${T} resource 'smoke': property expect.timeoutMs value {<nil>} has a problem: r`,
    );
  });

  it("prints a secret's value (the engine does: &{...}), and no property at all when none is named", () => {
    const inputs = { password: { [SECRET_SIG_KEY]: SECRET_SIG, value: "hunter22" } };
    expect(checkFailureText(T, "creds", inputs, { property: "password", reason: "r" })).toBe(
      `${T} resource 'creds': property password value {&{{hunter22}}} has a problem: r`,
    );
    expect(checkFailureText(T, "creds", inputs, { property: "", reason: "password must be a string" })).toBe(
      `${T} resource 'creds' has a problem: password must be a string`,
    );
  });

  it("prints objects as Go maps sorted by key, arrays space-separated, numbers as Go's %v, unknowns as outputs", () => {
    expect(goPropertyValue({ b: [1, "x"], a: true, c: null })).toBe(
      "{map[a:{true} b:{[{1} {x}]} c:{<nil>}]}",
    );
    expect(goPropertyValue(0.00001)).toBe("{1e-05}");
    expect(goPropertyValue(1e21)).toBe("{1e+21}");
    expect(goPropertyValue(1.5)).toBe("{1.5}");
    expect(goPropertyValue(UNKNOWN)).toBe("output<string>{}");
  });
});

/**
 * The check-failure text the harness prints, against the engine's rule (`issueCheckFailures` in
 * pkg/resource/deploy/step_generator.go, diag 2002/2003 in sdk/go/common/diag/errors.go, and
 * `PropertyValue.String` in sdk/go/common/resource/properties.go, at pulumi/pulumi 1b5949891b3c).
 */
import { describe, expect, it } from "vitest";
import { checkFailureText, goFloat, goPropertyValue } from "../support/deployRunner.mts";
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

  // Go's %v of a float64 ('g', shortest: strconv/ftoa.go formatDigits, eprec 6): exponent form
  // below 1e-4 and from 1e6, never JavaScript's 1e21 threshold.
  it.each([
    [0, "0"],
    [123456.7, "123456.7"],
    [999999, "999999"],
    [1e6, "1e+06"],
    [1000001, "1.000001e+06"],
    [-1234567, "-1.234567e+06"],
    [86400001, "8.6400001e+07"],
    [1e20, "1e+20"],
    [1e21, "1e+21"],
    [1.5e300, "1.5e+300"],
    [0.0001, "0.0001"],
    [0.00012, "0.00012"],
    [0.00009, "9e-05"],
    [0.00001, "1e-05"],
    [-0.5, "-0.5"],
    [5e-324, "5e-324"],
  ])("prints %s as the engine's Go formatting (verb v) does: %s", (n, go) => {
    expect(goFloat(n)).toBe(go);
    expect(goPropertyValue(n)).toBe(`{${go}}`);
  });

  it("prints a number past 1e6 in a check failure in exponent form, as the engine does", () => {
    expect(checkFailureText(T, "job", { timeoutMs: 86400001 }, { property: "timeoutMs", reason: "r" })).toBe(
      `${T} resource 'job': property timeoutMs value {8.6400001e+07} has a problem: r`,
    );
  });
});

/**
 * The pieces of a flat `check` that resources share: an opt-in flag, the blank rule, the wording
 * of a wrong or missing argument, and the one-step check of a flat schema.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkFlatArgs, describeArgIssue, notBlank, optInFlag } from "../../src/provider/common/checkArgs";

const schema = z.strictObject({
  name: notBlank(z.string({ error: "name must be a string" }), "name"),
  force: optInFlag("force must be true or false", "Do it even when it hurts."),
});
const NAMES = Object.keys(schema.shape);
const reasonFor = (issue: z.core.$ZodIssue, property: string, value: unknown) =>
  describeArgIssue(issue, property, value, "a non-empty string");

describe("checkFlatArgs with the shared wording", () => {
  it("passes given arguments and leaves out the provider reference and nulls", () => {
    const result = checkFlatArgs(schema, { name: "a", force: null, __provider: "p" }, NAMES, reasonFor);
    expect(result.failures).toEqual([]);
    expect(result.inputs).toEqual({ name: "a" });
  });

  it("says a missing argument is required and what it takes", () => {
    expect(checkFlatArgs(schema, {}, NAMES, reasonFor).failures).toEqual([
      { property: "name", reason: "name is required: a non-empty string" },
    ]);
  });

  it("says what was given for a wrong type", () => {
    expect(checkFlatArgs(schema, { name: 3 }, NAMES, reasonFor).failures).toEqual([
      { property: "name", reason: "name must be a string, got a number" },
    ]);
  });

  it("refuses a name of spaces with the field's name", () => {
    expect(checkFlatArgs(schema, { name: "  " }, NAMES, reasonFor).failures).toEqual([
      { property: "name", reason: "name must not be empty" },
    ]);
  });

  it("refuses an opt-in flag that is no boolean with the flag's own message", () => {
    expect(checkFlatArgs(schema, { name: "a", force: "yes" }, NAMES, reasonFor).failures).toEqual([
      { property: "force", reason: "force must be true or false, got a string" },
    ]);
  });

  it("names an unknown argument without its value", () => {
    expect(checkFlatArgs(schema, { name: "a", colour: "secret-ish" }, NAMES, reasonFor).failures).toEqual([
      { property: "", reason: "unknown property colour; allowed: name, force" },
    ]);
  });
});

describe("optInFlag", () => {
  it("is optional and documented as false when omitted", () => {
    const flag = optInFlag("x must be true or false", "Turns x on.");
    expect(flag.safeParse(undefined).success).toBe(true);
    expect(z.globalRegistry.get(flag)).toEqual({ description: "Turns x on.", default: "false" });
  });
});

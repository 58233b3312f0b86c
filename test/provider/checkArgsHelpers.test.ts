/**
 * The pieces of a `check` that resources share: an opt-in flag, the blank rule, the wording of a
 * wrong or missing argument (flat, and where arguments nest), the one-step check of a flat schema,
 * and the failure of a resource REST v1 cannot manage.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  checkFlatArgs,
  describeArgIssue,
  describeNestedArgIssue,
  notBlank,
  optInFlag,
} from "../../src/provider/common/checkArgs";
import { v1RestUrlReason } from "../../src/provider/common/needsV2";

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

describe("describeNestedArgIssue", () => {
  const nested = z.strictObject({
    name: z.string({ error: "name must be a string" }),
    env: z.record(z.string(), z.string({ error: "env values must be strings" })).optional(),
    mounts: z.strictObject({ size: z.number({ error: "size must be a number" }) }).optional(),
  });
  /** The reason of the first issue of `args`, as Template and Pod word it. */
  const reasonOf = (args: Record<string, unknown>, required: readonly string[] = ["name"]) => {
    const issue = nested.safeParse(args).error?.issues[0];
    if (!issue) throw new Error("expected an issue");
    const where = issue.path.map(String).join(".");
    const field = String(issue.path[0]);
    return describeNestedArgIssue(issue, field, where, args[field], required);
  };

  it("says a missing required argument is required, and only for the names given as required", () => {
    expect(reasonOf({})).toBe("name is required: a non-empty string");
    expect(reasonOf({}, [])).toBe("name must be a string, got missing");
  });

  it("says what was given for a wrong type at the top level", () => {
    expect(reasonOf({ name: 3 })).toBe("name must be a string, got a number");
  });

  it("puts the dotted path first inside a nested value, and never its value", () => {
    const reason = reasonOf({ name: "a", env: { HF_TOKEN: 12345 } });
    expect(reason).toBe("env.HF_TOKEN: env values must be strings");
    expect(reason).not.toContain("12345");
  });

  it("names an unknown key inside a nested value by its path", () => {
    expect(reasonOf({ name: "a", mounts: { size: 1, colour: "red" } })).toBe("mounts: unknown key colour");
  });
});

describe("v1RestUrlReason", () => {
  it("says nothing on REST v2, or with no restUrl set", () => {
    expect(v1RestUrlReason({ apiKey: "k", restUrl: "https://api.runpod.io/v2" }, "Pod")).toBeUndefined();
    expect(v1RestUrlReason({ apiKey: "k" }, "Pod")).toBeUndefined();
    expect(v1RestUrlReason(undefined, "Pod")).toBeUndefined();
  });

  it("names the config key, the URL, and what REST v1 never had", () => {
    expect(
      v1RestUrlReason({ apiKey: "k", restUrl: "https://api.runpod.io/v1" }, "Template", "templates"),
    ).toBe(
      "Template needs the REST v2 interface, but runpod:restUrl is https://api.runpod.io/v1, REST v1 (retired " +
        "2026-11-15; it never had templates). Set runpod:restUrl to a URL ending in /v2, e.g. https://api.runpod.io/v2.",
    );
  });

  it("names the environment variable when the URL came from it, and says only v1 when v1 had the object", () => {
    const settings = {
      apiKey: "k",
      restUrl: "https://api.runpod.io/v1",
      sources: { restUrl: "env" as const },
    };
    expect(v1RestUrlReason(settings, "Pod")).toBe(
      "Pod needs the REST v2 interface, but RUNPOD_REST_API_URL is https://api.runpod.io/v1 (REST v1). " +
        "Set RUNPOD_REST_API_URL to a URL ending in /v2.",
    );
  });
});

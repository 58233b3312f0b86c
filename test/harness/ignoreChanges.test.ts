import { describe, expect, it } from "vitest";
import { parsePropertyPath, processIgnoreChanges } from "../support/propertyPath.mts";
import { echoHarnessKit } from "./echoKit";

describe("property paths (ParsePropertyPath, PropertyPath.Reset, processIgnoreChanges)", () => {
  it("parses the engine's path forms", () => {
    expect(parsePropertyPath("expect.timeoutMs")).toEqual(["expect", "timeoutMs"]);
    expect(parsePropertyPath("triggers[0]")).toEqual(["triggers", 0]);
    expect(parsePropertyPath('root["key with a ."][100]')).toEqual(["root", "key with a .", 100]);
    expect(parsePropertyPath('["a \\"q\\""].b')).toEqual(['a "q"', "b"]);
    expect(parsePropertyPath("env[*].value")).toEqual(["env", "*", "value"]);
    expect(parsePropertyPath("foo-bar")).toEqual(["foo-bar"]);
    expect(() => parsePropertyPath(".a")).toThrow();
    expect(() => parsePropertyPath("a[x]")).toThrow();
  });

  it("resets nested keys and array elements to their old values, and reports added or removed elements", () => {
    const old = { expect: { timeoutMs: 1, status: "COMPLETED" }, triggers: ["a", "b"], gone: 1 };
    const news = { expect: { timeoutMs: 2, status: "FAILED" }, triggers: ["x", "y", "z"], added: 1 };
    expect(processIgnoreChanges(news, old, ["expect.timeoutMs", "triggers[0]", "gone", "added"])).toEqual({
      inputs: { expect: { timeoutMs: 1, status: "FAILED" }, triggers: ["a", "y", "z"], gone: 1 },
      invalidPaths: [],
    });
    expect(processIgnoreChanges(news, old, ["triggers[2]", "triggers[*]", "bad[", "missing.deep"])).toEqual({
      inputs: { ...news, triggers: ["a", "b", "z"] },
      invalidPaths: ["triggers[2]", "triggers[*]"],
    });
    expect(news.triggers).toEqual(["x", "y", "z"]); // a copy: the program's inputs stay as they are
  });
});

describe("deploy harness: ignoreChanges paths and the replacement's second Check", {
  timeout: 300_000,
}, () => {
  const kit = echoHarnessKit("ignore");
  const make = (code: string) => kit.make({ code });
  const { setProgram } = kit;

  it("keeps the old value at a nested path and at an array index; the rest of the value changes (processIgnoreChanges)", async () => {
    const code = (timeoutMs: number, retries: number, triggers: string[]) =>
      `new Echo("a", { value: "v", expect: { timeoutMs: ${timeoutMs}, retries: ${retries} }, triggers: ${JSON.stringify(triggers)} },
  { ignoreChanges: ["expect.timeoutMs", "triggers[0]"] });`;
    const { h } = await make(code(1000, 1, ["a", "b"]));
    expect((await h.up()).errors).toEqual([]);
    await setProgram(h, code(5000, 2, ["x", "y"]));
    const again = await h.up();
    expect(again.errors).toEqual([]);
    const inputs = (await h.state()).resources[0]!.inputs;
    expect(inputs.expect).toEqual({ timeoutMs: 1000, retries: 2 });
    expect(inputs.triggers).toEqual(["a", "y"]);
  });

  it("a path through an added element is reported and the new value kept", async () => {
    const code = (triggers: string[]) =>
      `new Echo("a", { value: "v", triggers: ${JSON.stringify(triggers)} }, { ignoreChanges: ["triggers[1]"] });`;
    const { h } = await make(code(["a"]));
    await h.up();
    await setProgram(h, code(["a", "b"]));
    const again = await h.up();
    expect(again.errors).toEqual([]);
    expect(again.logs).toContain(
      'info: pulumi-nodejs:dynamic/runpod:Echo a: cannot ignore changes in added or removed elements of the path: "triggers[1]"',
    );
    expect((await h.state()).resources[0]!.inputs.triggers).toEqual(["a", "b"]);
  });

  it("a replacement's second Check runs in the step generator in a preview, with no olds, on the raw program inputs (continueStepsFromDiff)", async () => {
    const code = (value: string, immutable: string) =>
      `new Echo("a", { value: "${value}", immutable: "${immutable}" }, { ignoreChanges: ["value"] });`;
    const { h, lines, clearLog } = await make(code("v1", "i1"));
    await h.up();
    await setProgram(h, code("v2", "i2"));
    await clearLog();
    const preview = await h.preview();
    expect(preview.errors).toEqual([]);
    expect(preview.resources.map((r) => r.op)).toEqual(["replace"]);
    expect(
      lines().map((l) => (l.op === "check" ? [l.op, l.olds ? "olds" : "no olds", l.value] : [l.op, l.news])),
    ).toEqual([
      ["check", "olds", "v1"], // ignoreChanges keeps the old value for the first Check
      ["diff", "v1"],
      ["check", "no olds", "v2"], // the program's own value: the replacement does not ignore it
    ]);

    await clearLog();
    const replaced = await h.up();
    expect(replaced.errors).toEqual([]);
    expect(lines().map((l) => l.op)).toEqual(["check", "diff", "check", "create", "delete"]);
    expect((await h.state()).resources[0]!.inputs.value).toBe("v2");
  });
});

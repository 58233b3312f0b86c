/**
 * The examples in other languages (`examples/python-serverless/`, `examples/yaml-pod/`) cannot run
 * here (no Pulumi CLI, no Python SDK generated), so this test holds them to the package schema the
 * plugin serves: every resource type, property, nested type, output and config key they use exists
 * there under the name the language's SDK gives it. A renamed argument, a resource left out of the
 * schema or a misspelled property in an example fails here, before a user finds it.
 *
 * Names per language, as Pulumi's code generators derive them from the schema:
 * - YAML uses the tokens and the schema's property names as they are (`runpod-native:index:Pod`,
 *   `fallbackGpuIds`).
 * - Python (`pkg/codegen/python`): the module `pulumi_runpod_native`, a resource's class as its
 *   token's last part, a nested input type `<Type>Args`, and properties in snake_case
 *   (`fallback_gpu_ids`), which this test turns back into the schema's camelCase.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse as loadYaml } from "yaml";
import { servedResources } from "../../src/plugin/resources";
import { packageSchema } from "../../src/plugin/schema";
import { RESOURCES, type ResourceName } from "../../src/provider/resources";

const EXAMPLES = path.resolve(__dirname, "..", "..", "examples");
const PACKAGE = "runpod-native";
const tok = (name: string) => `${PACKAGE}:index:${name}`;

type Json = Record<string, any>;

/** `fallback_gpu_ids` → `fallbackGpuIds`. */
const camel = (snake: string) => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * What is wrong with `value` as the schema property `prop` (at `where`): a key the type does not
 * have, followed into nested types (`$ref`), array items and unions (`oneOf`, where one member must
 * take every key). Interpolations (`${...}`) and plain values are the language's business.
 */
function mismatches(schema: Json, value: unknown, prop: Json, where: string): string[] {
  if (Array.isArray(value) && prop.items)
    return value.flatMap((v, i) => mismatches(schema, v, prop.items, `${where}[${i}]`));
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const typeOf = (p: Json): Json | undefined =>
    typeof p.$ref === "string" && p.$ref.startsWith("#/types/") ? schema.types[p.$ref.slice(8)] : undefined;
  if (prop.oneOf) {
    const fits = (prop.oneOf as Json[]).map((member) =>
      objectMismatches(schema, value, typeOf(member), where),
    );
    return fits.some((f) => f.length === 0)
      ? []
      : [`${where}: fits none of its ${fits.length} forms (${fits.flat().join("; ")})`];
  }
  const type = typeOf(prop);
  if (type) return objectMismatches(schema, value, type, where);
  return []; // a map (`env`) or free JSON (`smokeTest.input`)
}

function objectMismatches(schema: Json, value: object, type: Json | undefined, where: string): string[] {
  if (!type) return [`${where}: no such type in the schema`];
  return Object.entries(value).flatMap(([key, v]) =>
    key in (type.properties ?? {})
      ? mismatches(schema, v, type.properties[key], `${where}.${key}`)
      : [`${where}.${key}: no such property (has ${Object.keys(type.properties ?? {}).join(", ")})`],
  );
}

describe("the examples in other languages use only names the schema has", () => {
  let schema: Json;
  beforeAll(async () => {
    schema = JSON.parse(await packageSchema(servedResources(Object.keys(RESOURCES) as ResourceName[])));
  });

  it("examples/yaml-pod: its types, properties, nested keys, outputs and config keys", () => {
    const program = loadYaml(readFileSync(path.join(EXAMPLES, "yaml-pod", "Pulumi.yaml"), "utf8")) as Json;
    const problems: string[] = [];
    const types = new Map<string, string>();
    for (const [name, resource] of Object.entries<Json>(program.resources)) {
      const spec = schema.resources[resource.type];
      if (!spec) {
        problems.push(`${name}: type ${resource.type} is not in the schema`);
        continue;
      }
      types.set(name, resource.type);
      const inputs = { type: "object", properties: spec.inputProperties };
      problems.push(...objectMismatches(schema, resource.properties ?? {}, inputs, name));
      for (const required of spec.requiredInputs ?? [])
        if (!(required in (resource.properties ?? {})))
          problems.push(`${name}: required ${required} is missing`);
    }
    // `${resource.output}` anywhere in the program: an output the resource's type has.
    for (const [, name, output] of JSON.stringify(program).matchAll(/\$\{(\w+)\.(\w+)\}/g)) {
      const type = types.get(name);
      if (type && output !== "id" && output !== "urn" && !(output in schema.resources[type].properties))
        problems.push(`\${${name}.${output}}: ${type} has no output ${output}`);
    }
    // `fn::invoke` in variables: a function of the schema, its arguments and the output it returns.
    const invokes = Object.entries<Json>(program.variables ?? {}).flatMap(([name, v]) =>
      v["fn::invoke"] ? [[name, v["fn::invoke"]] as const] : [],
    );
    for (const [name, invoke] of invokes) {
      const fn = schema.functions?.[invoke.function];
      if (!fn) {
        problems.push(`${name}: function ${invoke.function} is not in the schema`);
        continue;
      }
      for (const argument of Object.keys(invoke.arguments ?? {}))
        if (!(argument in (fn.inputs?.properties ?? {})))
          problems.push(`${name}: ${invoke.function} takes no ${argument}`);
      if (invoke.return && !(invoke.return in fn.outputs.properties))
        problems.push(`${name}: ${invoke.function} returns no ${invoke.return}`);
    }
    expect(invokes.map(([, invoke]) => invoke.function)).toEqual([tok("getDataCenters")]);
    for (const key of Object.keys(program.config ?? {}).filter((k) => k.startsWith(`${PACKAGE}:`)))
      if (!(key.slice(PACKAGE.length + 1) in schema.config.variables))
        problems.push(`config ${key} is not a provider key`);
    expect(problems).toEqual([]);
    expect([...types.values()].sort()).toEqual([tok("NetworkVolume"), tok("Pod"), tok("SshKey")]);
    expect(program.packages?.[PACKAGE]).toMatch(/pulumi-resource-runpod-native$/);
  });

  it("examples/python-serverless: its classes, keyword arguments, Args types and outputs", () => {
    const source = readFileSync(path.join(EXAMPLES, "python-serverless", "__main__.py"), "utf8");
    expect(source).toContain("import pulumi_runpod_native as runpod");
    const problems: string[] = [];
    const calls = pythonCalls(source, "runpod");
    const resourcesByVariable = new Map<string, string>();
    /** What each variable holds whose attributes can be checked: the properties of its schema type. */
    const propertiesByVariable = new Map<string, { of: string; properties: Record<string, Json> }>();
    const functionsUsed: string[] = [];
    for (const call of calls) {
      // A function: `get_gpu_types(...)` (or its `_output` form) is `getGpuTypes`.
      const fn = /^get_\w+$/.test(call.name) ? tok(camel(call.name.replace(/_output$/, ""))) : undefined;
      const invoked = fn ? schema.functions?.[fn] : undefined;
      const resource = schema.resources[tok(call.name)];
      const argsType = call.name.endsWith("Args") ? schema.types[tok(call.name.slice(0, -4))] : undefined;
      const properties =
        resource?.inputProperties ??
        argsType?.properties ??
        invoked?.inputs?.properties ??
        (invoked ? {} : undefined);
      if (!properties) {
        problems.push(`runpod.${call.name}: neither a resource, an input type nor a function of the schema`);
        continue;
      }
      if (resource && call.variable) {
        resourcesByVariable.set(call.variable, tok(call.name));
        propertiesByVariable.set(call.variable, { of: tok(call.name), properties: resource.properties });
      }
      if (invoked && fn) {
        functionsUsed.push(fn);
        if (call.variable)
          propertiesByVariable.set(call.variable, { of: fn, properties: invoked.outputs.properties });
      }
      for (const keyword of call.keywords.filter((k) => !(resource && k === "opts")))
        if (!(camel(keyword) in properties))
          problems.push(`runpod.${call.name}(${keyword}=): no property ${camel(keyword)}`);
      for (const required of resource?.requiredInputs ?? invoked?.inputs?.required ?? [])
        if (!call.keywords.map(camel).includes(required))
          problems.push(`runpod.${call.name}: required ${required} is missing`);
    }
    const code = source.replace(/"""[\s\S]*?"""|"[^"\n]*"|'[^'\n]*'/g, '""'); // strings and docstrings blanked
    // `for t in catalog.gpu_types`: `t` holds an item of that list output.
    for (const [, item, variable, attribute] of code.matchAll(/\bfor\s+(\w+)\s+in\s+(\w+)\.(\w+)/g)) {
      const listed = propertiesByVariable.get(variable)?.properties[camel(attribute)];
      const itemType = listed?.items?.$ref?.startsWith("#/types/") ? listed.items.$ref.slice(8) : undefined;
      if (itemType && schema.types[itemType])
        propertiesByVariable.set(item, { of: itemType, properties: schema.types[itemType].properties });
    }
    for (const [, variable, attribute] of code.matchAll(/\b(\w+)\.(\w+)\b/g)) {
      const holder = propertiesByVariable.get(variable);
      if (holder && !["id", "urn", "apply"].includes(attribute) && !(camel(attribute) in holder.properties))
        problems.push(`${variable}.${attribute}: ${holder.of} has no output ${camel(attribute)}`);
    }
    expect(functionsUsed).toEqual([tok("getGpuTypes")]);
    expect(propertiesByVariable.get("t")?.of).toBe(tok("GetGpuTypesResultItem"));
    expect(problems).toEqual([]);
    expect([...new Set(resourcesByVariable.values())].sort()).toEqual(
      ["ContainerRegistryAuth", "Pod", "ServerlessEndpoint", "SshKey"].map(tok),
    );
  });

  it("the Python reading finds every call and keyword, nested ones included", () => {
    const calls = pythonCalls(
      'x = runpod.A("a", b=runpod.BArgs(c_d=1, e=[{"f": (2, 3)}]), g="h(i=")\n',
      "runpod",
    );
    expect(calls).toEqual([
      { variable: "x", name: "A", keywords: ["b", "g"] },
      { variable: undefined, name: "BArgs", keywords: ["c_d", "e"] },
    ]);
  });
});

/** A call `module.Name(...)`: the variable it is assigned to, and its keyword arguments' names. */
interface PythonCall {
  variable: string | undefined;
  name: string;
  keywords: string[];
}

/** Every `module.Name(...)` call in a Python source, with its top-level keywords (strings skipped). */
function pythonCalls(source: string, module: string): PythonCall[] {
  const calls: PythonCall[] = [];
  for (const match of source.matchAll(new RegExp(`(?:(\\w+)\\s*=\\s*)?\\b${module}\\.(\\w+)\\(`, "g"))) {
    const keywords: string[] = [];
    let depth = 0;
    let atArgument = true;
    for (let i = match.index + match[0].length; i < source.length; i++) {
      const c = source[i];
      if (c === '"' || c === "'") {
        i = source.indexOf(c, i + 1);
        atArgument = false;
        continue;
      }
      if ("([{".includes(c)) depth++;
      else if (")]}".includes(c)) {
        if (depth-- === 0) break;
      } else if (depth === 0 && c === ",") atArgument = true;
      else if (depth === 0 && atArgument && /\w/.test(c)) {
        const keyword = /^(\w+)\s*=(?!=)/.exec(source.slice(i));
        if (keyword) keywords.push(keyword[1]);
        atArgument = false;
      }
    }
    // A call assigned at the start of a statement names the resource; `x=runpod.B(...)` inside a call is a keyword.
    const assigned = match[1] !== undefined && /(^|\n)\s*$/.test(source.slice(0, match.index));
    calls.push({ variable: assigned ? match[1] : undefined, name: match[2], keywords });
  }
  return calls;
}

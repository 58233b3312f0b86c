/**
 * The native plugin's function schemas (`functions` of its package schema), from the lookups'
 * own declarations: each lookup's argument type and the type its promise resolves to, with the doc
 * comment of every member, read through TypeScript's checker. The same declarations and comments
 * give the reference pages' lookup tables (`gen-types.mts`) and what a TypeScript user sees on
 * hover, so a function's schema cannot drift from its TypeScript signature. A function's own
 * description is its doc comment's first sentence ({@link summaryOf}).
 *
 * Types map as the plugin's resource schemas do (`src/plugin/schema.ts`): strings (string literal
 * unions too), numbers, booleans; arrays; a record without named members a map; an object with
 * members a named type `<Function><Path>` in the schema's `types`; `unknown` Pulumi's Any.
 * `null` in a union means "absent", so such a member is optional. A union of object forms (the
 * `{ id } | { name, dataCenterId? }` of `getNetworkVolume`) becomes one object of their members,
 * none required (the lookup checks the form and its failure says which). A member without a doc
 * comment is an error naming it: every property of the schema has a description.
 */
import * as path from "node:path";
import ts from "typescript";

/** What a lookup row gives (`LookupRow` in `src/provider/resources.ts`). */
export interface FunctionRow {
  fn: string;
  module: string;
  args?: string;
  listResult?: { property: string; description: string };
  secretOutputs?: readonly string[];
}

type Spec = Record<string, unknown>;

/** The functions' schemas and the object types they refer to, keyed by token; problems to fix. */
export interface FunctionSchemas {
  functions: Record<string, Spec>;
  types: Record<string, Spec>;
  problems: string[];
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const flat = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * A function's description: the first sentence of its doc comment, its summary (what follows says
 * how the TypeScript function behaves: its error classes, its `Output` form). A sentence ends at a
 * period outside backticks followed by a capital letter.
 */
export function summaryOf(doc: string): string {
  let quoted = false;
  for (let i = 0; i < doc.length; i++) {
    if (doc[i] === "`") quoted = !quoted;
    else if (!quoted && doc[i] === "." && doc[i + 1] === " " && /[A-Z]/.test(doc[i + 2] ?? "")) {
      return doc.slice(0, i + 1);
    }
  }
  return doc;
}

/** The schemas of `rows`' functions, under `<packageName>:index:<fn>`. */
export function functionSchemas(
  repoDir: string,
  rows: readonly FunctionRow[],
  packageName: string,
): FunctionSchemas {
  const files = [...new Set(rows.map((r) => path.join(repoDir, "src/provider", `${r.module}.ts`)))];
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const functions: Record<string, Spec> = {};
  const { types, problems, docOf, given, objectOf, typeOf } = schemaTyper(checker, packageName);
  const token = (name: string) => `${packageName}:index:${name}`;
  for (const row of rows) {
    const file = program.getSourceFile(path.join(repoDir, "src/provider", `${row.module}.ts`));
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    const fnSymbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((e) => e.name === row.fn);
    if (!fnSymbol) {
      problems.push(`src/provider/${row.module}.ts exports no ${row.fn}`);
      continue;
    }
    const signature = checker.getTypeOfSymbol(fnSymbol).getCallSignatures()[0] as ts.Signature;
    const base = pascal(row.fn);
    const [argsParameter] = signature.getParameters();
    const argsType = argsParameter ? checker.getTypeOfSymbol(argsParameter) : undefined;
    const inputs = argsType ? objectOf(given(argsType), `${base}Args`) : { properties: {}, required: [] };
    // A union of forms: none of its members is required on its own.
    if (argsType && given(argsType).length > 1) inputs.required = [];
    const result = checker.getAwaitedType(signature.getReturnType()) as ts.Type;
    let outputs: { properties: Record<string, Spec>; required: string[] };
    if (row.listResult) {
      const { property, description } = row.listResult;
      outputs = {
        properties: { [property]: { ...typeOf(result, `${base}Result`, description), description } },
        required: [property],
      };
    } else {
      outputs = objectOf(given(result), `${base}Result`, row.secretOutputs);
    }
    const description = summaryOf(docOf(fnSymbol));
    if (description === "") problems.push(`${row.fn} has no doc comment`);
    functions[token(row.fn)] = {
      description,
      inputs: { type: "object", ...inputs },
      outputs: { type: "object", ...outputs },
    };
  }
  return { functions, types, problems };
}

/**
 * Maps TypeScript types to schema types through `checker`, collecting the named object types met
 * (`types`, keyed by token) and the members without a doc comment (`problems`). With `declaredNames`,
 * an object type declared under a name (an interface or a type alias: `PodSsh`, `HourlyCost`) is
 * the schema type of that name, so a type two resources share is one schema type; otherwise each
 * is named by where it is met (`GetPodResultSsh`). A member tagged `@integer` in its doc comment
 * is an `integer` (TypeScript has only `number`).
 */
export function schemaTyper(checker: ts.TypeChecker, packageName: string, declaredNames = false) {
  const types: Record<string, Spec> = {};
  const problems: string[] = [];
  const token = (name: string) => `${packageName}:index:${name}`;
  /** The named type given to each object type met, so one TypeScript type is one schema type. */
  const named = new Map<ts.Type, string>();

  const docOf = (symbol: ts.Symbol) => flat(ts.displayPartsToString(symbol.getDocumentationComment(checker)));
  const given = (type: ts.Type) =>
    type.isUnion()
      ? type.types.filter(
          (t) => !(t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)),
        )
      : [type];

  /** The members of an object type, or of each form of a union of object types (first declaration wins). */
  const membersOf = (types: readonly ts.Type[]): { symbol: ts.Symbol; everywhere: boolean }[] => {
    const seen = new Map<string, { symbol: ts.Symbol; count: number }>();
    for (const t of types) {
      for (const p of checker.getPropertiesOfType(t)) {
        const known = seen.get(p.name);
        if (known) known.count += 1;
        else seen.set(p.name, { symbol: p, count: 1 });
      }
    }
    return [...seen.values()].map(({ symbol, count }) => ({ symbol, everywhere: count === types.length }));
  };

  /** An object's members as schema properties, its required ones, at `where` (`GetPodSsh`). */
  const objectOf = (forms: readonly ts.Type[], where: string, secret: readonly string[] = []) => {
    const properties: Record<string, Spec> = {};
    const required: string[] = [];
    for (const { symbol, everywhere } of membersOf(forms)) {
      const type = checker.getTypeOfSymbol(symbol);
      const description = docOf(symbol);
      if (description === "") problems.push(`${where}.${symbol.name} has no doc comment`);
      const mapped = typeOf(type, `${where}${pascal(symbol.name)}`, description);
      const integer = symbol.getJsDocTags().some((tag) => tag.name === "integer");
      properties[symbol.name] = {
        ...(integer && mapped.type === "number" ? { ...mapped, type: "integer" } : mapped),
        description,
        ...(secret.includes(symbol.name) ? { secret: true } : {}),
      };
      const optional =
        (symbol.flags & ts.SymbolFlags.Optional) !== 0 ||
        given(type).length !== (type.isUnion() ? type.types.length : 1);
      if (everywhere && !optional) required.push(symbol.name);
    }
    return { properties, required };
  };

  /** The name an object type is declared under (an interface or a type alias), if any. */
  const declaredNameOf = (t: ts.Type): string | undefined => {
    const name = t.aliasSymbol?.name ?? t.getSymbol()?.name;
    return name === undefined || name.startsWith("__") ? undefined : name;
  };

  /** The schema type of `type` at `where`; `description` describes a named type made for it. */
  function typeOf(type: ts.Type, where: string, description: string): Spec {
    const parts = given(type);
    if (parts.length === 0) throw new Error(`${where}: a value that is always absent`);
    if (parts.every((t) => t.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral)))
      return { type: "string" };
    if (parts.every((t) => t.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)))
      return { type: "number" };
    if (parts.every((t) => t.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)))
      return { type: "boolean" };
    if (parts.every((t) => t.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)))
      return { $ref: "pulumi.json#/Any" };
    if (parts.length > 1) throw new Error(`${where}: no schema type for ${checker.typeToString(type)}`);
    const [t] = parts as [ts.Type];
    if (checker.isArrayType(t)) {
      const [item] = checker.getTypeArguments(t as ts.TypeReference);
      return { type: "array", items: typeOf(item as ts.Type, `${where}Item`, description) };
    }
    if (t.flags & ts.TypeFlags.Object) {
      if (checker.getPropertiesOfType(t).length === 0) {
        const values = checker.getIndexInfoOfType(t, ts.IndexKind.String)?.type;
        return {
          type: "object",
          additionalProperties: values ? typeOf(values, where, description) : { $ref: "pulumi.json#/Any" },
        };
      }
      let name = named.get(t);
      if (name === undefined) {
        const declaredName = declaredNames ? declaredNameOf(t) : undefined;
        name = declaredName ?? where;
        named.set(t, name);
        // A declared type is described by its own doc comment (not by the first member met).
        const own = declaredName === undefined ? "" : docOf((t.aliasSymbol ?? t.getSymbol()) as ts.Symbol);
        types[token(name)] = {
          type: "object",
          description: own || description || `${name}: its fields.`,
          ...objectOf([t], name),
        };
      }
      return { $ref: `#/types/${token(name)}` };
    }
    throw new Error(`${where}: no schema type for ${checker.typeToString(type)}`);
  }

  return { types, problems, docOf, given, objectOf, typeOf };
}

/** The generated module `src/plugin/functions.generated.ts`. */
export function functionSchemasModule(schemas: FunctionSchemas): string {
  return [
    "/**",
    " * The package schema's `functions` and the object types they refer to, from the lookups'",
    " * declarations and doc comments. Generated by `npm run gen:types` (scripts/functionSchemas.mts):",
    " * do not edit.",
    " */",
    `export const FUNCTIONS: Record<string, Record<string, unknown>> = ${JSON.stringify(schemas.functions, null, 2)};`,
    "",
    `export const FUNCTION_TYPES: Record<string, Record<string, unknown>> = ${JSON.stringify(schemas.types, null, 2)};`,
    "",
  ].join("\n");
}

/** What a resource row gives for its outputs' schema. */
export interface ResourceOutputRow {
  className: string;
  folder: string;
  /** The argument names (the schema's input properties). */
  inputNames: readonly string[];
}

/** Each resource's outputs beyond its arguments (by class name) and the object types they refer to. */
export interface ResourceOutputSchemas {
  outputs: Record<string, Record<string, Spec>>;
  types: Record<string, Spec>;
  problems: string[];
}

/**
 * The outputs of each resource beyond its arguments, from its class's declarations (what a
 * TypeScript user sees on hover): every `declare readonly <name>: pulumi.Output<T>` of the class in
 * `src/provider/<folder>/resource.ts` whose name is no argument, typed from `T` with its doc
 * comment; and an argument's output whose shape differs from the argument's (a pod's
 * `globalNetworking`: a boolean given, an object read back), tagged `@outputShape`. An object type
 * declared under a name is the schema type of that name (`HourlyCost`, shared by Pod and
 * ServerlessEndpoint); `@integer` makes a number an integer.
 */
export function resourceOutputSchemas(
  repoDir: string,
  rows: readonly ResourceOutputRow[],
  packageName: string,
): ResourceOutputSchemas {
  const fileOf = (row: ResourceOutputRow) => path.join(repoDir, "src/provider", row.folder, "resource.ts");
  const program = ts.createProgram(rows.map(fileOf), {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const { types, problems, docOf, typeOf } = schemaTyper(checker, packageName, true);
  const outputs: Record<string, Record<string, Spec>> = {};
  for (const row of rows) {
    const file = program.getSourceFile(fileOf(row));
    const declaration = file?.statements.find(
      (s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === row.className,
    );
    if (!declaration) {
      problems.push(`${path.relative(repoDir, fileOf(row))} declares no class ${row.className}`);
      continue;
    }
    const properties: Record<string, Spec> = {};
    for (const member of declaration.members) {
      if (!ts.isPropertyDeclaration(member) || !ts.isIdentifier(member.name)) continue;
      const declared = member.modifiers?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
      const node = member.type;
      if (!declared || !node || !ts.isTypeReferenceNode(node) || !node.typeArguments?.[0]) continue;
      if (!node.typeName.getText(file).endsWith("Output")) continue;
      const symbol = checker.getSymbolAtLocation(member.name) as ts.Symbol;
      const name = member.name.text;
      const reshaped = symbol.getJsDocTags().some((tag) => tag.name === "outputShape");
      if (row.inputNames.includes(name) && !reshaped) continue;
      const description = docOf(symbol);
      if (description === "") problems.push(`${row.className}.${name} has no doc comment`);
      const mapped = typeOf(
        checker.getTypeFromTypeNode(node.typeArguments[0]),
        `${row.className}${pascal(name)}`,
        description,
      );
      const integer = symbol.getJsDocTags().some((tag) => tag.name === "integer");
      properties[name] = {
        ...(integer && mapped.type === "number" ? { ...mapped, type: "integer" } : mapped),
        description,
      };
    }
    outputs[row.className] = properties;
  }
  return { outputs, types, problems };
}

/** The generated module `src/plugin/outputs.generated.ts`. */
export function resourceOutputsModule(schemas: ResourceOutputSchemas): string {
  return [
    "/**",
    " * Each resource's outputs beyond its arguments (by class name) and the object types they refer to,",
    " * from the resource classes' declarations and doc comments. Generated by `npm run gen:types`",
    " * (scripts/functionSchemas.mts): do not edit.",
    " */",
    `export const RESOURCE_OUTPUTS: Record<string, Record<string, Record<string, unknown>>> = ${JSON.stringify(schemas.outputs, null, 2)};`,
    "",
    `export const OUTPUT_TYPES: Record<string, Record<string, unknown>> = ${JSON.stringify(schemas.types, null, 2)};`,
    "",
  ].join("\n");
}

/**
 * `npm run gen:types` (also run by `npm ci` as `prepare`, and the first step of `npm run build`):
 * writes each resource's documented argument type, `src/provider/<resource>/args.generated.ts`,
 * from its zod argument schema, the one source of the resource's arguments. Which resources and
 * lookups there are, where their schemas are and which page documents them: the resource table,
 * `src/provider/resources.ts`. The generated types
 * are not committed (git ignores them): every checkout writes them from the schemas, so they cannot
 * fall behind. The reference pages' tables are committed, since people read them on the web.
 *
 * Why generated: a type derived with `z.input` is right but loses the fields' doc comments in the
 * shipped `.d.ts` (declaration emit keeps no comments of inferred members), so a user hovering an
 * argument sees nothing. The schema carries each field's documentation as zod metadata
 * (`.meta({ description, default?, replaces? })`, `replaces` being `true` or the condition under which
 * a change replaces); this script turns it into an interface whose
 * every member has that comment, while the member's TYPE stays derived from the schema by
 * TypeScript (`InputOf<Plain["field"]>`), so names, optionality and value types cannot drift.
 * Objects (and arrays of objects) are spelled out member by member, so nested fields keep their
 * comments too.
 *
 * It also writes `docs/reference/facts.json`, what a reference page needs of each argument, from
 * the same schemas: per resource, each argument's path (nested ones dotted, array items `[]`), type
 * text, whether it is required, its description and default, and whether a change updates the
 * resource in place or replaces it (and when); and from those facts the argument table of each
 * resource's page, `docs/resources/<name>.md`, between its `<!-- arguments:start ... -->` and
 * `<!-- arguments:end -->` markers (the page's prose stays outside them, written by hand).
 *
 * It loads the schemas from `src/` directly (TypeScript transpiled on the fly by the project's own
 * `typescript`), so it runs before `tsc`. `--check` writes nothing and exits 1 when a generated file
 * (or page table) is missing or differs from what the schemas give (a test runs it).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { registerHooks } from "node:module";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import {
  functionSchemas,
  functionSchemasModule,
  resourceOutputSchemas,
  resourceOutputsModule,
} from "./functionSchemas.mts";

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** One resource's argument type to write. */
interface Target {
  /** The interface's name (a public name: keep it). */
  name: string;
  /** Doc comment of the interface. */
  summary: string;
  /** The module holding the schema, from the repo root. */
  module: string;
  /** The export holding the schema (a zod object). */
  schema: string;
  /** The exported type of the plain arguments (`z.input` of the schema), in `module`. */
  plainType: string;
  /** The generated file, from the repo root. */
  out: string;
  /** Fields given a fixed type instead of `InputOf<...>` (a plain value fixed at construction). */
  plainFields?: Record<string, string>;
}

// Load `src/` TypeScript as ES modules: extensionless relative imports resolved to `.ts` files.
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith(".") && context.parentURL?.endsWith(".ts")) {
      const base = new URL(specifier, context.parentURL).href;
      for (const suffix of [".ts", "/index.ts"]) {
        if (existsSync(fileURLToPath(base + suffix))) return next(base + suffix, context);
      }
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
    const fileName = fileURLToPath(url);
    const { outputText } = ts.transpileModule(readFileSync(fileName, "utf8"), {
      fileName,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    return { format: "module", source: outputText, shortCircuit: true };
  },
});

/** The resource table, `src/provider/resources.ts`: the one list of resources and lookups. */
const table = (await import(
  pathToFileURL(path.join(REPO_DIR, "src/provider/resources.ts")).href
)) as typeof import("../src/provider/resources.ts");

/** Every resource's argument type to write, from its row of the table. */
const TARGETS: Target[] = table.RESOURCE_ROWS.map((row) => ({
  name: `${row.className}Args`,
  summary: row.args.summary,
  module: `src/provider/${row.args.module}.ts`,
  schema: row.args.schema,
  plainType: row.args.input,
  out: row.argsType,
  ...(row.args.plainFields === undefined ? {} : { plainFields: { ...row.args.plainFields } }),
}));

const { z } = await import("zod");
type Schema = import("zod").ZodType;

/** The documentation zod metadata carries on a field. */
interface FieldMeta {
  description?: string;
  default?: string;
  /** `true`: any change replaces the resource; a string: the condition under which it does. */
  replaces?: boolean | string;
}

/** The metadata of `schema` and of every wrapper below it (optional, default, ...), outermost first. */
function metaOf(schema: Schema): FieldMeta {
  const found: FieldMeta = {};
  for (let s: Schema | undefined = schema; s; s = inner(s)) {
    const meta = z.globalRegistry.get(s) as FieldMeta | undefined;
    if (meta) for (const [k, v] of Object.entries(meta)) (found as Record<string, unknown>)[k] ??= v;
  }
  return found;
}

/** The schema a wrapper wraps, or undefined when `schema` is not a wrapper. */
function inner(schema: Schema): Schema | undefined {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return def.innerType as Schema;
    case "pipe":
      return def.in as Schema;
    default:
      return undefined;
  }
}

function unwrap(schema: Schema): Schema {
  let s = schema;
  for (let next = inner(s); next; next = inner(s)) s = next;
  return s;
}

const typeOf = (schema: Schema) => (schema as unknown as { _zod: { def: { type: string } } })._zod.def.type;

/** A doc comment at `indent`, from the field's metadata; throws when there is no description. */
function docComment(meta: FieldMeta, where: string, indent: string): string {
  if (!meta.description) {
    throw new Error(`${where} has no description: give it .meta({ description: "..." }) in its schema`);
  }
  const lines = meta.description.trim().split("\n");
  if (meta.replaces === true) lines.push("Changing it replaces the resource.");
  else if (meta.replaces) lines.push(`Replaces the resource when ${meta.replaces}.`);
  // Tags last: text after a tag belongs to it.
  if (meta.default !== undefined) lines.push(`@default ${meta.default}`);
  if (lines.length === 1 && `${indent}/** ${lines[0]} */`.length <= 110)
    return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ""}`).join("\n")}\n${indent} */\n`;
}

/** The members of an object schema, each documented, typed from `plain` (a type expression). */
function members(shape: Record<string, Schema>, plain: string, where: string, indent: string, t?: Target) {
  let text = "";
  for (const [key, field] of Object.entries(shape)) {
    // `optin` is set ("optional", "defaulted") when the field may be left out of the input.
    const optional = (field as unknown as { _zod: { optin?: string } })._zod.optin !== undefined;
    const fixed = t?.plainFields?.[key];
    text += docComment(metaOf(field), `${where}.${key}`, indent);
    const type = fixed ?? render(field, `${plain}["${key}"]`, `${where}.${key}`, indent);
    text += `${indent}${key}${optional ? "?" : ""}: ${type};\n`;
  }
  return text;
}

/**
 * The input type of `schema`, whose plain type is the expression `plain`: `InputOf<plain>`, with
 * objects (and arrays of objects) spelled out as `InputOf` would give them, so their members keep
 * their comments. `InputOf` spreads over a union, so a field that may be left out also takes
 * `Input<undefined>` (and a nullable one `Input<null>`), as the derived type does.
 */
function render(schema: Schema, plain: string, where: string, indent: string): string {
  const base = unwrap(schema);
  const kind = typeOf(base);
  const nonNull = `NonNullable<${plain}>`;
  let spelled: string | undefined;
  if (kind === "object") {
    const shape = (base as unknown as { shape: Record<string, Schema> }).shape;
    spelled = `pulumi.Input<{\n${members(shape, nonNull, where, `${indent}  `)}${indent}}>`;
  } else if (kind === "union") {
    // A union with one object arm (`"none" | "ssh" | { port, path? }`): the arm spelled out, so its
    // members keep their comments; the whole union one input, as a hand-written type would take it.
    const options = (base as unknown as { options: Schema[] }).options;
    const objects = options.filter((o) => typeOf(unwrap(o)) === "object");
    const others = objects.length < options.length ? `Exclude<${nonNull}, object> | ` : "";
    if (objects.length === 1) {
      const shape = (unwrap(objects[0] as Schema) as unknown as { shape: Record<string, Schema> }).shape;
      const arm = `Extract<${nonNull}, object>`;
      spelled = `pulumi.Input<${others}{\n${members(shape, arm, where, `${indent}  `)}${indent}}>`;
    } else if (objects.length > 1) {
      // A discriminated union (`{ type: "QUEUE_DELAY", queueDelay } | { type: "REQUEST_COUNT", ... }`):
      // each arm picked from the plain type by its discriminator value and spelled out.
      const key = (base as unknown as { _zod: { def: { discriminator?: string } } })._zod.def.discriminator;
      if (key === undefined) {
        throw new Error(`${where}: a union of several objects needs a discriminator (z.discriminatedUnion)`);
      }
      const arms = objects.map((o) => {
        const shape = (unwrap(o) as unknown as { shape: Record<string, Schema> }).shape;
        const values = (unwrap(shape[key] as Schema) as unknown as { _zod: { def: { values?: unknown[] } } })
          ._zod.def.values;
        if (values?.length !== 1) throw new Error(`${where}: each arm's ${key} must be one literal value`);
        const arm = `Extract<${nonNull}, { ${key}: ${JSON.stringify(values[0])} }>`;
        return `{\n${members(shape, arm, `${where}(${key}: ${String(values[0])})`, `${indent}  `)}${indent}}`;
      });
      spelled = `pulumi.Input<${others}${arms.join(" | ")}>`;
    }
  } else if (kind === "array") {
    const element = (base as unknown as { element: Schema }).element;
    if (typeOf(unwrap(element)) === "object") {
      spelled = `pulumi.Input<${render(element, `${nonNull}[number]`, `${where}[]`, indent)}[]>`;
    }
  }
  if (spelled === undefined) return `InputOf<${plain}>`;
  const empty: string[] = [];
  if ((schema as unknown as { _zod: { optin?: string } })._zod.optin !== undefined)
    empty.push("pulumi.Input<undefined>");
  if (wraps(schema, "nullable")) empty.push("pulumi.Input<null>");
  return [spelled, ...empty].join(" | ");
}

/** True when `schema` or a wrapper below it is of `kind`. */
function wraps(schema: Schema, kind: string): boolean {
  for (let s: Schema | undefined = schema; s; s = inner(s)) if (typeOf(s) === kind) return true;
  return false;
}

function generate(t: Target, mod: Record<string, unknown>): string {
  const schema = mod[t.schema] as { shape?: Record<string, Schema> } | undefined;
  if (!schema?.shape) throw new Error(`${t.module} exports no zod object ${t.schema}`);
  const outDir = path.dirname(path.join(REPO_DIR, t.out));
  let from = path.relative(outDir, path.join(REPO_DIR, t.module)).replace(/\.ts$/, "");
  if (!from.startsWith(".")) from = `./${from}`;
  const inputsOf = path.relative(outDir, path.join(REPO_DIR, "src/provider/inputsOf"));
  const body = members(schema.shape, "Plain", t.name, "  ", t);
  const summary = t.summary
    .split("\n")
    .map((l) => ` * ${l}`)
    .join("\n");
  return (
    "// Generated by scripts/gen-types.mts from the argument schema: do not edit. Run `npm run gen:types`.\n" +
    (body.includes("pulumi.Input<") ? 'import type * as pulumi from "@pulumi/pulumi";\n' : "") +
    `import type { InputOf } from "${inputsOf.startsWith(".") ? inputsOf : `./${inputsOf}`}";\n` +
    `import type { ${t.plainType} } from "${from}";\n\n` +
    `type Plain = ${t.plainType};\n\n` +
    `/**\n${summary}\n */\n` +
    `export interface ${t.name} {\n${body}}\n`
  );
}

/** What a reference page says of one argument (nested ones by dotted path, array items as `[]`). */
interface ArgumentFact {
  path: string;
  type: string;
  required: boolean;
  description: string;
  default?: string;
  /** `"updates in place"`, `"replaces"` or `"replaces when <condition>"`. */
  change: string;
}

/** The value type of `schema` as short TypeScript-like text (`"QUEUE" | "LOAD_BALANCER"`, `string[]`). */
function typeText(schema: Schema): string {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case "optional":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return typeText(def.innerType as Schema);
    case "pipe":
      return typeText(def.in as Schema);
    case "nullable":
      return `${typeText(def.innerType as Schema)} | null`;
    case "enum":
      return Object.values(def.entries as Record<string, string>)
        .map((v) => JSON.stringify(v))
        .join(" | ");
    case "literal":
      return (def.values as unknown[]).map((v) => JSON.stringify(v)).join(" | ");
    case "array": {
      const item = typeText(def.element as Schema);
      return item.includes(" ") ? `(${item})[]` : `${item}[]`;
    }
    case "record":
      return `Record<string, ${typeText(def.valueType as Schema)}>`;
    case "union":
      return [...new Set((def.options as Schema[]).map(typeText))].join(" | ");
    case "string":
    case "number":
    case "boolean":
    case "object":
    case "unknown":
    case "any":
      return def.type;
    default:
      return "unknown";
  }
}

/** The facts of every argument of `shape`, nested objects (and their array items, union arms) included. */
function facts(shape: Record<string, Schema>, prefix: string): ArgumentFact[] {
  const found: ArgumentFact[] = [];
  for (const [key, field] of Object.entries(shape)) {
    const meta = metaOf(field);
    const where = `${prefix}${key}`;
    found.push({
      path: where,
      type: typeText(field),
      required: (field as unknown as { _zod: { optin?: string } })._zod.optin === undefined,
      description: meta.description?.trim().replace(/\s*\n\s*/g, " ") ?? "",
      ...(meta.default !== undefined ? { default: meta.default } : {}),
      change:
        meta.replaces === true
          ? "replaces"
          : meta.replaces
            ? `replaces when ${meta.replaces}`
            : "updates in place",
    });
    const base = unwrap(field);
    const kind = typeOf(base);
    const nested = (s: Schema) => (s as unknown as { shape: Record<string, Schema> }).shape;
    if (kind === "object") found.push(...facts(nested(base), `${where}.`));
    if (kind === "array") {
      const item = unwrap((base as unknown as { element: Schema }).element);
      if (typeOf(item) === "object") found.push(...facts(nested(item), `${where}[].`));
    }
    if (kind === "union") {
      // A discriminated union's arms share their discriminator (`scaling.type`): one row per path,
      // its types and descriptions joined, so a page lists each argument once.
      // A field only some arms have is required only in them: its row says in which.
      const byPath = new Map<string, ArgumentFact>();
      const arms = (base as unknown as { options: Schema[] }).options.filter(
        (arm) => typeOf(unwrap(arm)) === "object",
      );
      const armFacts = arms.map((arm) => facts(nested(unwrap(arm)), `${where}.`));
      const inEvery = (p: string) => armFacts.every((list) => list.some((f) => f.path === p));
      for (const list of armFacts) {
        const tag = list.find((f) => inEvery(f.path) && f.type.startsWith('"'));
        for (const armFact of list) {
          const only = !inEvery(armFact.path) && armFact.required && tag !== undefined;
          const fact = only
            ? {
                ...armFact,
                required: false,
                description: `With \`${tag.path.slice(where.length + 1)}: ${tag.type}\`, required. ${armFact.description}`,
              }
            : armFact;
          const seen = byPath.get(fact.path);
          byPath.set(
            fact.path,
            seen === undefined
              ? fact
              : {
                  ...seen,
                  type: `${seen.type} | ${fact.type}`,
                  required: seen.required && fact.required,
                  description: `${seen.description} ${fact.description}`,
                },
          );
        }
      }
      found.push(...byPath.values());
    }
  }
  return found;
}

/** The markers around the generated table of a page's `## Arguments` section; the prose stays outside. */
const TABLE_START =
  "<!-- arguments:start (generated by npm run gen:types from the argument schema: do not edit) -->";
const TABLE_END = "<!-- arguments:end -->";

/** Text for one Markdown table cell: pipes escaped, one line. */
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");

/** The Markdown table of a resource's arguments, one row per argument path, in schema order. */
function argumentsTable(resourceFacts: ArgumentFact[]): string {
  const rows = resourceFacts.map((f) => {
    const required = f.required ? "yes" : f.default !== undefined ? `no; default ${f.default}` : "no";
    return `| \`${f.path}\` | \`${cell(f.type)}\` | ${cell(required)} | ${cell(f.change)} | ${cell(f.description)} |`;
  });
  const nested = resourceFacts.some((f) => f.path.includes("."));
  return [
    ...(nested
      ? ["A nested argument (`a.b`, `a[].b`) marked required is required when its parent is given.", ""]
      : []),
    "| argument | type | required | on change | what it is |",
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** `page` with the text between its argument-table markers replaced by the table of `resourceFacts`. */
function withArgumentsTable(page: string, resourceFacts: ArgumentFact[], where: string): string {
  const start = page.indexOf(TABLE_START);
  const end = page.indexOf(TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(
      `${where}: no argument-table markers; put ${TABLE_START} and ${TABLE_END} under "## Arguments"`,
    );
  }
  return `${page.slice(0, start + TABLE_START.length)}\n${argumentsTable(resourceFacts)}\n${page.slice(end)}`;
}

/** A lookup function whose argument table a reference page carries. */
interface LookupTarget {
  /** The exported function (a public name). */
  fn: string;
  /** Its arguments' type in `module`: an interface, or a union of interfaces (one form each). */
  args: string;
  /** The module declaring `args`, from the repo root. */
  module: string;
  /** The page holding the table, from the repo root. */
  page: string;
}

/**
 * Every lookup that takes arguments, from the table's `LOOKUPS` (`getSshKeys` takes none). Each page
 * holds the lookup's table between `<!-- lookup-arguments:start <fn> -->` and
 * `<!-- lookup-arguments:end <fn> -->`; `test/provider/resourceTable.test.ts` checks that every
 * exported lookup has a row.
 */
const LOOKUPS: LookupTarget[] = table.LOOKUPS.flatMap((lookup) =>
  lookup.args === undefined
    ? []
    : [{ fn: lookup.fn, args: lookup.args, module: `src/provider/${lookup.module}.ts`, page: lookup.page }],
);

/** One row of a lookup's argument table, read from the declaration and its doc comment. */
interface LookupArgument {
  name: string;
  type: string;
  required: string;
  description: string;
}

/** The arguments of `t.args` as declared in its module (one form per union member). */
function lookupArguments(t: LookupTarget): LookupArgument[] {
  const file = path.join(REPO_DIR, t.module);
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const declared = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration>();
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement))
      declared.set(statement.name.text, statement);
  }
  const find = (name: string) => {
    const found = declared.get(name);
    if (found === undefined) throw new Error(`${t.fn}: ${t.module} declares no ${name}`);
    return found;
  };
  const membersOf = (name: string): ts.PropertySignature[] => {
    const found = find(name);
    if (!ts.isInterfaceDeclaration(found)) throw new Error(`${t.fn}: ${name} must be an interface`);
    return found.members.filter(ts.isPropertySignature);
  };
  const describe = (member: ts.PropertySignature) => {
    const docs = ts.getJSDocCommentsAndTags(member).filter(ts.isJSDoc);
    const text = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? "").join(" ");
    const defaults = docs.flatMap((doc) => doc.tags ?? []).filter((tag) => tag.tagName.text === "default");
    const fallback = defaults.map((tag) => ts.getTextOfJSDocComment(tag.comment) ?? "").join(" ");
    return { text: text.trim().replace(/\s+/g, " "), fallback: fallback.trim() };
  };
  const row = (member: ts.PropertySignature, requiredText: string): LookupArgument => {
    const { text, fallback } = describe(member);
    if (text === "") throw new Error(`${t.fn}: argument ${member.name.getText()} has no doc comment`);
    const optional = member.questionToken !== undefined;
    return {
      name: member.name.getText(),
      type: member.type?.getText() ?? "unknown",
      required: optional ? (fallback === "" ? "no" : `no; default ${fallback}`) : requiredText,
      description: text,
    };
  };
  const top = find(t.args);
  if (ts.isTypeAliasDeclaration(top) && ts.isUnionTypeNode(top.type)) {
    const forms = top.type.types.map((node) => membersOf(node.getText()));
    const label = (members: ts.PropertySignature[]) =>
      `{ ${members.map((m) => `${m.name.getText()}${m.questionToken ? "?" : ""}`).join(", ")} }`;
    return forms.flatMap((members) => members.map((m) => row(m, `yes, in the form \`${label(members)}\``)));
  }
  return membersOf(t.args).map((member) => row(member, "yes"));
}

/** The Markdown table of a lookup's arguments, in declaration order. */
function lookupTable(rows: LookupArgument[]): string {
  return [
    "| argument | type | required | what it is |",
    "|---|---|---|---|",
    ...rows.map(
      (r) => `| \`${r.name}\` | \`${cell(r.type)}\` | ${cell(r.required)} | ${cell(r.description)} |`,
    ),
  ].join("\n");
}

/** `page` with the text between `fn`'s lookup-table markers replaced by `table`. */
function withLookupTable(page: string, fn: string, table: string, where: string): string {
  const start = `<!-- lookup-arguments:start ${fn} (generated by npm run gen:types from its declaration: do not edit) -->`;
  const end = `<!-- lookup-arguments:end ${fn} -->`;
  const from = page.indexOf(start);
  const to = page.indexOf(end);
  if (from < 0 || to < from)
    throw new Error(`${where}: no table markers for ${fn}; put ${start} and ${end} in its section`);
  return `${page.slice(0, from + start.length)}\n${table}\n${page.slice(to)}`;
}

/** The native plugin's function schemas (`scripts/functionSchemas.mts`). */
const FUNCTIONS_FILE = "src/plugin/functions.generated.ts";
/** The generated outputs of the plugin's resources. */
const OUTPUTS_FILE = "src/plugin/outputs.generated.ts";

/** The reference facts file: per resource (by class name), its arguments' facts. */
const FACTS_FILE = "docs/reference/facts.json";

const check = process.argv.includes("--check");
const stale: string[] = [];
const allFacts: Record<string, ArgumentFact[]> = {};
/** Each resource's argument schema's fields, by class name. */
const argumentShapes: Record<string, Record<string, Schema>> = {};
const writeIfChanged = (out: string, text: string) => {
  const file = path.join(REPO_DIR, out);
  const current = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  if (current === text) return;
  stale.push(out);
  if (!check) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
};
for (const t of TARGETS) {
  const mod = (await import(pathToFileURL(path.join(REPO_DIR, t.module)).href)) as Record<string, unknown>;
  writeIfChanged(t.out, generate(t, mod));
  const shape = (mod[t.schema] as { shape: Record<string, Schema> }).shape;
  argumentShapes[t.name.replace(/Args$/, "")] = shape;
  allFacts[t.name.replace(/Args$/, "")] = facts(shape, "");
}
writeIfChanged(FACTS_FILE, `${JSON.stringify(allFacts, null, 2)}\n`);
/** Each reference page's text with its generated tables, before it is compared or written. */
const pages = new Map<string, string>();
const pageText = (page: string) => pages.get(page) ?? readFileSync(path.join(REPO_DIR, page), "utf8");
for (const [resource, resourceFacts] of Object.entries(allFacts)) {
  const page = table.RESOURCES[resource as keyof typeof table.RESOURCES].page;
  if (!existsSync(path.join(REPO_DIR, page)))
    throw new Error(`${resource} has no reference page ${page}: write one (see docs/adding-a-resource.md)`);
  pages.set(page, withArgumentsTable(pageText(page), resourceFacts, page));
}
for (const lookup of LOOKUPS) {
  const table = lookupTable(lookupArguments(lookup));
  pages.set(lookup.page, withLookupTable(pageText(lookup.page), lookup.fn, table, lookup.page));
}
for (const [page, text] of pages) writeIfChanged(page, text);
// The native plugin's function schemas, from the same declarations as the lookup tables above.
const { PACKAGE_NAME } = (await import(
  pathToFileURL(path.join(REPO_DIR, "src/plugin/config.ts")).href
)) as typeof import("../src/plugin/config.ts");
const schemas = functionSchemas(REPO_DIR, table.LOOKUPS, PACKAGE_NAME);
if (schemas.problems.length > 0) {
  throw new Error(
    `the lookups' declarations need doc comments for the plugin's schema:\n${schemas.problems.join("\n")}`,
  );
}
writeIfChanged(FUNCTIONS_FILE, functionSchemasModule(schemas));
// The plugin's resource outputs beyond the arguments, from the resource classes' declarations.
const outputSchemas = resourceOutputSchemas(
  REPO_DIR,
  table.RESOURCE_ROWS.map((row) => ({
    className: row.className,
    folder: row.folder,
    inputNames: Object.keys(argumentShapes[row.className] ?? {}),
  })),
  PACKAGE_NAME,
);
if (outputSchemas.problems.length > 0) {
  throw new Error(
    `the resource classes' output declarations need doc comments for the plugin's schema:\n${outputSchemas.problems.join("\n")}`,
  );
}
writeIfChanged(OUTPUTS_FILE, resourceOutputsModule(outputSchemas));
if (check && stale.length > 0) {
  process.stderr.write(
    `stale generated argument types, reference facts or page argument tables (run npm run gen:types): ${stale.join(", ")}\n`,
  );
  process.exit(1);
}
if (!check && stale.length > 0) process.stdout.write(`wrote ${stale.join(", ")}\n`);

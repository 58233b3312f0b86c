/**
 * Each resource's reference page and its argument schema stay in step. `docs/reference/facts.json`
 * holds every argument path of each resource's zod schema (written by `npm run gen:types`); the page
 * `docs/resources/<name>.md` lists them in a table between its `arguments:start` and
 * `arguments:end` markers. Every argument is on its page, and no row names an argument the schema
 * does not have. Each resource page also has an example, its outputs and how to import or look it up.
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { LOOKUPS, loadArgsSchema, RESOURCE_ROWS, RESOURCES } from "../../src/provider/resources";

const REPO = path.resolve(__dirname, "..", "..");

interface ArgumentFact {
  path: string;
  change: string;
}
const FACTS = JSON.parse(readFileSync(path.join(REPO, "docs/reference/facts.json"), "utf8")) as Record<
  string,
  ArgumentFact[]
>;

/** `docs/resources/<kebab-case class name>.md`, the page the resource table gives. */
const pageOf = (resource: string) => RESOURCES[resource as keyof typeof RESOURCES].page;

/** The rows of a page's generated argument table: argument path and "on change" cell. */
function tableRows(page: string): { path: string; change: string }[] {
  const start = page.search(/<!-- arguments:start\b/);
  const end = page.indexOf("<!-- arguments:end -->");
  if (start < 0 || end < start) throw new Error("no arguments:start / arguments:end markers");
  const rows: { path: string; change: string }[] = [];
  for (const line of page.slice(start, end).split("\n")) {
    const row = /^\| `([^`]+)` \|(.*)$/.exec(line);
    if (!row) continue;
    const cells = (row[2] as string).split(/(?<!\\)\|/).map((c) => c.trim());
    rows.push({ path: row[1] as string, change: cells[2] ?? "" });
  }
  return rows;
}

/** What a page's table and the facts disagree on: arguments missing from the page, rows naming none. */
function drift(page: string, facts: ArgumentFact[]) {
  const rows = tableRows(page);
  const onPage = new Set(rows.map((r) => r.path));
  const known = new Map(facts.map((f) => [f.path, f.change]));
  return {
    missing: facts.filter((f) => !onPage.has(f.path)).map((f) => f.path),
    unknown: rows.filter((r) => !known.has(r.path)).map((r) => r.path),
    wrongChange: rows.filter((r) => known.has(r.path) && known.get(r.path) !== r.change).map((r) => r.path),
  };
}

const read = (file: string) => readFileSync(path.join(REPO, file), "utf8");

describe("reference pages and argument schemas", () => {
  it("facts.json has a resource for each argument schema, with exactly the schema's top-level arguments", async () => {
    expect(Object.keys(FACTS).sort()).toEqual(RESOURCE_ROWS.map((row) => row.className).sort());
    for (const row of RESOURCE_ROWS) {
      const schema = await loadArgsSchema(row);
      const topLevel = (FACTS[row.className] ?? []).map((f) => f.path).filter((p) => !/[.[]/.test(p));
      expect(topLevel.sort(), row.className).toEqual(Object.keys(schema.shape).sort());
    }
  });

  for (const [resource, facts] of Object.entries(FACTS)) {
    it(`${pageOf(resource)} lists every ${resource} argument, says how a change applies, and names no other`, () => {
      expect(drift(read(pageOf(resource)), facts)).toEqual({ missing: [], unknown: [], wrongChange: [] });
    });
  }

  it("reports an argument whose row was removed from the page", () => {
    const page = read(pageOf("Pod"));
    const withoutImage = page
      .split("\n")
      .filter((line) => !line.startsWith("| `image` |"))
      .join("\n");
    expect(withoutImage).not.toBe(page);
    expect(drift(withoutImage, FACTS.Pod ?? [])).toEqual({
      missing: ["image"],
      unknown: [],
      wrongChange: [],
    });
  });

  it("reports a row naming an argument the schema does not have", () => {
    const page = read(pageOf("Pod")).replace(
      "<!-- arguments:end -->",
      "| `gpu.flavour` | `string` | no | replaces | Invented. |\n<!-- arguments:end -->",
    );
    expect(drift(page, FACTS.Pod ?? [])).toEqual({ missing: [], unknown: ["gpu.flavour"], wrongChange: [] });
  });

  it("reports a row that says a change updates in place when it replaces", () => {
    const page = read(pageOf("NetworkVolume")).replace(
      "| `dataCenterId` | `string` | yes | replaces |",
      "| `dataCenterId` | `string` | yes | updates in place |",
    );
    expect(drift(page, FACTS.NetworkVolume ?? []).wrongChange).toEqual(["dataCenterId"]);
  });

  it("reports a page without the table's markers", () => {
    expect(() => drift("# Pods\n\n## Arguments\n\n| `name` | yes |\n", FACTS.Pod ?? [])).toThrow(/markers/);
  });

  const RESOURCE_PAGES = readdirSync(path.join(REPO, "docs/resources"))
    .filter((name) => name.endsWith(".md") && name !== "catalog.md")
    .map((name) => `docs/resources/${name}`);

  /** Each resource page's class module (from the resource table), whose `declare readonly` members are the outputs. */
  const RESOURCE_MODULES: Record<string, string> = Object.fromEntries(
    RESOURCE_ROWS.map((row) => [row.page, `src/provider/${row.folder}/resource.ts`]),
  );

  it("knows the class module of every resource page", () => {
    expect(Object.keys(RESOURCE_MODULES).sort()).toEqual([...RESOURCE_PAGES].sort());
  });

  for (const [file, module] of Object.entries(RESOURCE_MODULES)) {
    it(`${file} lists every output of the class, and only those`, () => {
      const declared = [...read(module).matchAll(/declare readonly (\w+)\??:/g)].map((m) => m[1] as string);
      const section = /^## Outputs\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(read(file))?.[1] ?? "";
      const listed = [...section.matchAll(/^- `(\w+)`/gm)].map((m) => m[1] as string);
      expect(listed.filter((name) => name !== "id").sort()).toEqual([...declared].sort());
    });

    it(`${file} says each output in whole sentences (none cut off after "e.g." or "i.e.")`, () => {
      const section = /^## Outputs\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(read(file))?.[1] ?? "";
      const cutOff = [...section.matchAll(/^- `(\w+)`:.*\b(?:e\.g|i\.e)\.$/gm)].map((m) => m[1]);
      expect(cutOff).toEqual([]);
    });
  }

  it("the migration from RunPod's own providers maps pods and each Terraform resource to a class of this package", () => {
    const page = read(pageOf("ServerlessEndpoint"));
    const section = /^## Migrating from RunPod's own providers\n([\s\S]*?)(?=^## )/m.exec(page)?.[1] ?? "";
    const pods = /^### Pods\n([\s\S]*?)(?=^### )/m.exec(section)?.[1] ?? "";
    expect(pods).toMatch(
      /\| `gpuTypeIds: \[a, b, c\]`[^|]*\| `gpu: \{ id: a \}`, `fallbackGpuIds: \[b, c\]`/,
    );
    expect(section).toMatch(
      /\| `gpuIds: "ADA_24,-NVIDIA L4"`[^|]*\| `gpu: \{ pools: \["ADA_24"\], excludedTypes: \["NVIDIA L4"\] \}` \|/,
    );
    const rows = [...section.matchAll(/^\| `(runpod_\w+)` \| \[`(\w+)`\]\(([\w-]+\.md)\) \|$/gm)];
    expect(rows.map((m) => m[1])).toEqual([
      "runpod_endpoint",
      "runpod_template",
      "runpod_pod",
      "runpod_network_volume",
      "runpod_container_registry_auth",
    ]);
    for (const [, , cls, link] of rows) {
      expect(`docs/resources/${link}`, cls).toBe(pageOf(cls as string));
    }
    expect(section).toMatch(/Instant Clusters are managed by \[`Cluster`\]\(cluster\.md\)/);
  });

  /** The longest a generated argument row may be: past it a table stops being readable. */
  const MAX_ROW_CHARS = 600;

  it(`keeps every generated argument row under ${MAX_ROW_CHARS} characters (the rest belongs in the page's prose)`, () => {
    const long: string[] = [];
    for (const file of readdirSync(path.join(REPO, "docs/resources")).map((n) => `docs/resources/${n}`)) {
      const text = read(file);
      const start = text.search(/<!-- arguments:start\b/);
      const end = text.indexOf("<!-- arguments:end -->");
      if (start < 0) continue;
      for (const line of text.slice(start, end).split("\n")) {
        const row = /^\| `([^`]+)` \|/.exec(line);
        if (row && line.length > MAX_ROW_CHARS) long.push(`${file} ${row[1]}: ${line.length}`);
      }
    }
    expect(long).toEqual([]);
  });

  for (const file of RESOURCE_PAGES) {
    it(`${file} has an example, its arguments, its outputs and how to import or look it up`, () => {
      const text = read(file);
      expect(text).toMatch(/^```ts$/m);
      const headings = text.match(/^## .*$/gm) ?? [];
      expect(headings).toEqual(expect.arrayContaining(["## Arguments", "## Outputs", "## Import / .get"]));
    });
  }

  /** Lookups that take no arguments (no `args` in the resource table), so have no table (a page says so in words). */
  const WITHOUT_ARGUMENTS = new Set(LOOKUPS.filter((lookup) => lookup.args === undefined).map((l) => l.fn));
  const DOC_PAGES = [
    ...readdirSync(path.join(REPO, "docs/resources")).map((name) => `docs/resources/${name}`),
    ...readdirSync(path.join(REPO, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`),
  ];
  const EXPORTED_LOOKUPS = [...read("src/index.ts").matchAll(/^\s+(get[A-Z]\w*),$/gm)]
    .map((m) => m[1] as string)
    .filter((name) => !name.endsWith("Output"));

  it("finds the package's lookups in its root exports", () => {
    expect(EXPORTED_LOOKUPS).toEqual(
      expect.arrayContaining(["getPod", "getBilling", "getNetworkVolume", "getSshKeys"]),
    );
  });

  for (const lookup of EXPORTED_LOOKUPS.filter((name) => !WITHOUT_ARGUMENTS.has(name))) {
    it(`${lookup} has a generated argument table on exactly one page, with a row per argument`, () => {
      const start = `<!-- lookup-arguments:start ${lookup} `;
      const holders = DOC_PAGES.filter((page) => read(page).includes(start));
      expect(holders).toHaveLength(1);
      const text = read(holders[0] as string);
      const table = text.slice(text.indexOf(start), text.indexOf(`<!-- lookup-arguments:end ${lookup} -->`));
      // The generator (npm run gen:check, run by generatedArgTypes.test.ts) keeps the rows in step
      // with the declaration; here: the table exists and is not empty.
      expect(table).toMatch(/^\| `\w+` \|/m);
    });
  }
});

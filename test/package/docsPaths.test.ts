/**
 * The pages are read by people who have only the repository: every repository path a page names in
 * backticks (`src/...`, `test/...`, `scripts/...`, `docs/...`, `examples/...`, `bench/...`,
 * `.ci/...`) exists, so a moved or renamed file cannot leave a page pointing at nothing
 * (`test/package/readmeLinks.test.ts` does the same for Markdown links). A path with a placeholder
 * (`src/provider/<folder>/args.ts`, `test/provider/*Host.test.ts`) must exist up to the
 * placeholder. And no page cites a document a clone does not have.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { RESOURCE_ROWS } from "../../src/provider/resources";

const REPO = path.resolve(__dirname, "..", "..");

/** README.md, every page under docs/, and the READMEs of test/support, bench and each example. */
const PAGES = [
  "README.md",
  ...readdirSync(path.join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name).split(path.sep).join("/"))
    .sort(),
  "test/support/README.md",
  "bench/README.md",
  ...readdirSync(path.join(REPO, "examples"))
    .map((name) => `examples/${name}/README.md`)
    .filter((file) => existsSync(path.join(REPO, file))),
];

/** The folders a repository path starts with. */
const ROOTS = /^(src|test|scripts|docs|examples|bench|\.ci)\//;
/** A path segment that stands for a name (`<folder>`, `*Host.test.ts`, `{id}`, `...`). */
const PLACEHOLDER = /[<>*{}]|\.\.\./;

/** Markdown text without fenced code blocks (shell transcripts and programs, not prose). */
function prose(markdown: string): string {
  return markdown.replace(/^ *```[\s\S]*?^ *```\s*$/gm, "");
}

/**
 * The inline code spans of `text`, as CommonMark reads them: a run of N backticks opens a span that
 * the next run of exactly N closes (so ``` `` a `b` `` ``` is one span); a backslash-escaped
 * backtick outside a span is text.
 */
function codeSpans(text: string): string[] {
  const spans: string[] = [];
  const runs = [...text.replace(/\\`/g, "  ").matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i] as RegExpMatchArray;
    const close = runs.findIndex((run, j) => j > i && run[0].length === open[0].length);
    if (close < 0) continue;
    spans.push(text.slice((open.index as number) + open[0].length, (runs[close] as RegExpMatchArray).index));
    i = close;
  }
  return spans;
}

/** Every repository path named inside an inline code span of `markdown`, once each. */
function namedPaths(markdown: string): string[] {
  const found = new Set<string>();
  for (const span of codeSpans(prose(markdown))) {
    for (const word of span.split(/\s+/)) {
      const token = word
        .replace(/^["'(]+/, "")
        .replace(/["'),.;:]+$/, "")
        .replace(/#.*$/, "")
        .replace(/:\d+$/, "");
      if (ROOTS.test(token)) found.add(token);
    }
  }
  return [...found];
}

/** The part of `named` that must exist: up to the first placeholder segment, or all of it. */
function existingPart(named: string): string {
  const segments = named.split("/");
  const first = segments.findIndex((segment) => PLACEHOLDER.test(segment));
  return first < 0 ? named : `${segments.slice(0, first).join("/")}/`;
}

/** The paths `markdown` names that do not exist in the repository. */
function missingPaths(markdown: string): string[] {
  return namedPaths(markdown).filter((named) => !existsSync(path.join(REPO, existingPart(named))));
}

describe("repository paths the pages name", () => {
  for (const page of PAGES) {
    it(`${page}: every path it names in backticks exists`, () => {
      expect(missingPaths(readFileSync(path.join(REPO, page), "utf8"))).toEqual([]);
    });
  }

  it("the design and the guide to adding a resource are among the pages, and name paths", () => {
    expect(PAGES).toEqual(expect.arrayContaining(["docs/design.md", "docs/adding-a-resource.md"]));
    for (const page of ["docs/design.md", "docs/adding-a-resource.md"]) {
      const named = namedPaths(readFileSync(path.join(REPO, page), "utf8"));
      expect(named, page).toEqual(expect.arrayContaining(["src/provider/common/operations.ts"]));
      expect(named.length, page).toBeGreaterThan(30);
    }
  });

  it("reports a file that does not exist, a folder before a placeholder that does not, and nothing else", () => {
    const page = [
      "Edit `src/provider/template/operations.ts` and `src/provider/template/resurce.ts`,",
      "then `npx vitest run test/provider/templateHost.test.ts test/provider/nope.test.ts`.",
      "New files: `src/provider/<folder>/args.ts`, `src/provieder/<folder>/args.ts`, `test/provider/*Host.test.ts`.",
      "Folders: `src/provider/common/`, `docs/resources/`; links: `docs/design.md#time`, `src/index.ts:12`.",
      "Not paths: `dist/index.js`, `npm run build`, `operations.ts`.",
      "```",
      "src/provider/ignored-inside-a-fence.ts",
      "```",
    ].join("\n");
    expect(missingPaths(page)).toEqual([
      "src/provider/template/resurce.ts",
      "test/provider/nope.test.ts",
      "src/provieder/<folder>/args.ts",
    ]);
  });

  /** Every resource class, by the resource table. */
  const RESOURCES = RESOURCE_ROWS.map((row) => row.className);

  /** The files of `dirs` (`.ts`, `.mts`) that name every resource class as a string or a key. */
  function listsOfEveryResource(dirs: readonly string[]): string[] {
    return dirs
      .flatMap((dir) =>
        readdirSync(path.join(REPO, dir), { recursive: true, encoding: "utf8" }).map((name) =>
          path.join(dir, name).split(path.sep).join("/"),
        ),
      )
      .filter((file) => /\.m?ts$/.test(file))
      .filter((file) => {
        const text = readFileSync(path.join(REPO, file), "utf8");
        return RESOURCES.every((name) => new RegExp(`"${name}"|^\\s+${name}:`, "m").test(text));
      })
      .sort();
  }

  it("the guide to adding a resource names every file that lists every resource by name", () => {
    expect(RESOURCES).toEqual(expect.arrayContaining(["Pod", "SshKey", "Template", "JobRun"]));
    const lists = listsOfEveryResource(["src", "test", "scripts", "bench"]);
    expect(lists).toEqual(
      expect.arrayContaining(["src/provider/resources.ts", "test/support/providerHost.mts"]),
    );
    const named = namedPaths(readFileSync(path.join(REPO, "docs/adding-a-resource.md"), "utf8"));
    expect(lists.filter((file) => !named.includes(file))).toEqual([]);
  });

  it("the guide to adding a resource asks for every heading the reference-page test requires", () => {
    const required = [
      ...readFileSync(path.join(REPO, "test/package/referencePages.test.ts"), "utf8").matchAll(
        /"(## [^"]+)"/g,
      ),
    ].map((m) => m[1] as string);
    expect(required).toEqual(expect.arrayContaining(["## Arguments", "## Outputs", "## Import / .get"]));
    const guide = readFileSync(path.join(REPO, "docs/adding-a-resource.md"), "utf8");
    expect(required.filter((heading) => !guide.includes(`\`${heading}\``))).toEqual([]);
  });

  it("finds no page of README.md or docs/ citing a document a clone of the repository does not have", () => {
    const outside = /\bDESIGN\.md\b|\bSTYLE\.md\b|\.\.\/shared\b|\/work\/shared\b|rest-v[12]\.openapi\.json/;
    const citing = PAGES.filter((page) => page === "README.md" || page.startsWith("docs/")).filter((page) =>
      outside.test(readFileSync(path.join(REPO, page), "utf8")),
    );
    expect(citing).toEqual([]);
  });
});

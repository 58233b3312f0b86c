/**
 * The README is a landing page that points into docs/: every relative link of README.md and of the
 * pages under docs/ names a file that exists, and a `#anchor` names a heading of that file (GitHub's
 * slugs). Moving a section breaks no link silently.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(__dirname, "..", "..");

const PAGES = [
  "README.md",
  ...readdirSync(path.join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name).split(path.sep).join("/")),
];

/** Markdown text without fenced code blocks (a `# comment` in a shell block is no heading). */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```\s*$/gm, "");
}

/** GitHub's anchors of a Markdown file's headings. */
function anchors(file: string): Set<string> {
  const headings = prose(readFileSync(file, "utf8")).match(/^#{1,6} .*$/gm) ?? [];
  return new Set(
    headings.map((h) =>
      h
        .replace(/^#+ /, "")
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}

describe("links of README.md and docs/", () => {
  it("the README is a landing page of at most 25 KB that links every page under docs/", () => {
    const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(25_000);
    for (const page of PAGES.filter((p) => p !== "README.md")) expect(readme, page).toContain(`](${page})`);
  });

  it("docs/README.md indexes every other page under docs/", () => {
    const index = readFileSync(path.join(REPO, "docs/README.md"), "utf8");
    const unlisted = PAGES.filter((p) => p.startsWith("docs/") && p !== "docs/README.md")
      .map((p) => p.slice("docs/".length))
      .filter((p) => !index.includes(`](${p})`));
    expect(unlisted).toEqual([]);
  });

  /** The pages a page links to (relative `.md` links, not its own anchors). */
  const linkedPages = (page: string) =>
    [...prose(readFileSync(path.join(REPO, page), "utf8")).matchAll(/\]\(([^)\s#]+\.md)(#[^)]*)?\)/g)]
      .map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(page), m[1] as string)))
      .filter((target) => target !== page);

  for (const page of PAGES.filter((p) => p.startsWith("docs/resources/"))) {
    it(`${page} links to the index and to another page`, () => {
      const linked = linkedPages(page);
      expect(linked).toContain("docs/README.md");
      expect(linked.filter((target) => target !== "docs/README.md").length).toBeGreaterThan(0);
    });
  }

  for (const page of PAGES) {
    it(`${page}: every relative link names a file and heading that exist`, () => {
      const broken: string[] = [];
      const text = prose(readFileSync(path.join(REPO, page), "utf8"));
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue;
        const [file, anchor] = (target as string).split("#");
        const resolved = file
          ? path.resolve(path.dirname(path.join(REPO, page)), file)
          : path.join(REPO, page);
        if (!existsSync(resolved)) broken.push(`${target}: no file`);
        else if (anchor && resolved.endsWith(".md") && !anchors(resolved).has(anchor))
          broken.push(`${target}: no heading`);
      }
      expect(broken).toEqual([]);
    });
  }
});

/**
 * docs/emulator.md says what the emulator serves: its pod route table lists every pod and SSH-key
 * route `src/emulator/http/podRoutes.ts` registers, each route it lists is served (not a 404 for an
 * unknown path, a 405 or a 501), the paths it gives as answering 501 do, and the SSH banner it
 * quotes is the one the emulated pods send.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { V2_DOCUMENT_PATHS } from "../../src/emulator/http/v2Document";
import { SSH_BANNER } from "../../src/emulator/pods/listeners";
import { type Harness, harness } from "./helpers";

const REPO = path.resolve(__dirname, "..", "..");
const PAGE = readFileSync(path.join(REPO, "docs/emulator.md"), "utf8");
const ROUTES_SOURCE = readFileSync(path.join(REPO, "src/emulator/http/podRoutes.ts"), "utf8");

/** `METHOD /v2/...` as the page writes a route: the rows of the table under the pods heading. */
function podTableRoutes(): string[] {
  const section =
    /^## Pods, SSH keys, the catalog and billing[^\n]*\n([\s\S]*?)(?=^## )/m.exec(PAGE)?.[1] ?? "";
  return [...section.matchAll(/^\| `((?:GET|POST|PUT|PATCH|DELETE) \/v2\/[^`]+)` \|/gm)].map(
    (m) => m[1] as string,
  );
}

/** The routes podRoutes.ts registers, written as the page writes them (`:id` as `{id}`). */
const REGISTERED = [...ROUTES_SOURCE.matchAll(/app\.(get|post|put|patch|delete)\("(\/v2\/[^"]+)"/g)].map(
  (m) => `${(m[1] as string).toUpperCase()} ${(m[2] as string).replace(/:(\w+)/g, "{$1}")}`,
);

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h?.close();
});

describe("docs/emulator.md", () => {
  it("lists every pod and SSH-key route the emulator registers, and no other", () => {
    expect(REGISTERED.length).toBeGreaterThanOrEqual(9);
    expect([...podTableRoutes()].sort()).toEqual([...REGISTERED].sort());
  });

  it("lists only routes the emulator serves", async () => {
    const unserved: string[] = [];
    for (const route of podTableRoutes()) {
      const [method, template] = route.split(" ") as [string, string];
      const url = template.replace("{id}", "doc-check-pod");
      const body = ["POST", "PUT", "PATCH"].includes(method) ? {} : undefined;
      const answer = await h.call(method, url, body);
      const unknownPath = answer.status === 404 && /no such path/.test(String(answer.body?.detail ?? ""));
      if ([405, 501].includes(answer.status) || unknownPath) unserved.push(`${route}: ${answer.status}`);
    }
    expect(unserved).toEqual([]);
  });

  it("says no documented method answers 501, and none does", async () => {
    expect(PAGE).toMatch(
      /501 for a documented method \(none today: every operation of the\s+document is served\)/,
    );
    const answering501: string[] = [];
    for (const [template, methods] of Object.entries(V2_DOCUMENT_PATHS))
      for (const method of methods) {
        const body = ["POST", "PUT", "PATCH"].includes(method) ? {} : undefined;
        const answer = await h.call(method, `/v2${template.replace(/\{[^}]+\}/g, "none")}`, body);
        if (answer.status === 501) answering501.push(`${method} ${template}`);
      }
    expect(answering501).toEqual([]);
  });

  it('says that waitFor: "ssh" reaches an SSH banner, not a login shell, quoting the banner sent', () => {
    expect(PAGE).toContain(`\`${SSH_BANNER.trim()}\``);
    expect(PAGE).toMatch(/`waitFor: "ssh"` reaches it and returns, but\s+`ssh` cannot log in/);
  });
});

/**
 * Every code snippet of README.md and of the pages under docs/ runs as shown against the emulator.
 * The snippets are found when the test starts, so a section or page added later is checked too:
 *
 * - ```ts blocks with `export` statements are Pulumi programs: run through the deploy harness
 *   (`test/support/deployHarness.mts`: mocks for the program, Pulumi's real dynamic-provider host
 *   for the resources, the packed package), `up` then `destroy`; both must succeed.
 * - Other ```ts blocks are scripts: run by Node 24 (type stripping) as an `.mts` file inside the
 *   temp project where the packed package is installed; exit status 0.
 * - ```sh blocks: run by `bash -euo pipefail`; exit status 0.
 *
 * Shell blocks and scripts run against an emulator with the default timings the pages describe
 * (a 3 s rollout, pods starting in 2 s). Programs run against a second one, alike but for its
 * waits: old workers serve {@link PROGRAM_ROLLOUT_MS} after a release and pods start in
 * {@link PROGRAM_POD_START_MS}, and the provider host reads a rollout and a pod's readiness every
 * {@link PROGRAM_POLL_MS} (the provider's own: 1 s), as the end-to-end scenarios do: what happens,
 * and in what order, is the same; only the seconds of plain waiting go.
 *
 * They see the emulator through the settings the README tells users to set: the environment
 * variables `RUNPOD_API_KEY`, `RUNPOD_REST_API_URL`, `RUNPOD_SERVERLESS_API_URL`, and for programs
 * the stack config `runpod:*` plus the keys the snippets read (`ghcrToken`, `endpointId`). The
 * emulator has the `echo` endpoint, `abc123xyz` whose worker answers `{ text: ["OK"] }` (what the
 * README's smoke test expects of an LLM worker), and a `models` volume in EU-RO-1.
 *
 * A block that cannot run (it calls the `pulumi` CLI, installs, or runs forever) carries a comment
 * on the line right above its fence, `<!-- readme-test: skip (reason) -->`, and shows here as a
 * skipped test with that reason. Keep that set small.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { createDeployHarness } from "../support/deployHarness.mts";

const execFileAsync = promisify(execFile);
const REPO = path.resolve(__dirname, "..", "..");
const projectDir = inject("installedProjectDir");

interface Snippet {
  line: number;
  heading: string;
  lang: "ts" | "sh";
  code: string;
  skip?: string;
}

/** The ```ts and ```sh blocks of a Markdown text, with the heading above each and its skip marker. */
function snippets(markdown: string): Snippet[] {
  const lines = markdown.split("\n");
  const found: Snippet[] = [];
  let heading = "(top)";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, "");
    const fence = /^```(\w*)\s*$/.exec(line);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    const lang = { ts: "ts", typescript: "ts", sh: "sh", bash: "sh", shell: "sh" }[fence[1] as string] as
      | "ts"
      | "sh"
      | undefined;
    if (lang) {
      const marker = /^<!--\s*readme-test:\s*skip\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? "");
      found.push({
        line: i + 1,
        heading,
        lang,
        code: lines.slice(i + 1, end).join("\n"),
        ...(marker ? { skip: marker[1]?.replace(/^\((.*)\)$/, "$1") || "marked skip" } : {}),
      });
    }
    i = end;
  }
  return found;
}

/** README.md, then every Markdown page under docs/ (sorted), as paths relative to the repo. */
function pages(): string[] {
  const docs = readdirSync(path.join(REPO, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join("docs", name).split(path.sep).join("/"))
    .sort();
  return ["README.md", ...docs];
}

const PAGES = pages().map((file) => ({
  file,
  snippets: snippets(readFileSync(path.join(REPO, file), "utf8")),
}));
const ALL = PAGES.flatMap((p) => p.snippets);

/** The programs' emulator: how long old workers serve after a release, ms (its default: 3 s). */
const PROGRAM_ROLLOUT_MS = 150;
/** The programs' emulator: how long a pod takes to start, ms (its default: 2 s). */
const PROGRAM_POD_START_MS = 50;
/** How often the programs' provider host reads a rollout or a pod's readiness, ms. */
const PROGRAM_POLL_MS = 50;

/** What both emulators hold: the endpoints, the volume and the LLM-like worker the snippets use. */
const EMULATOR_CONTENT = {
  endpoints: ["echo", "abc123xyz"],
  volumes: [{ id: "agv6w2qcg7", name: "models", size: 100, dataCenterId: "EU-RO-1" }],
  handlers: { abc123xyz: async () => ({ text: ["OK"] }) },
};

/** Shell blocks' and scripts' emulator (default timings). */
let emu: RunningEmulator;
/** Programs' emulator (short rollouts and pod starts). */
let programEmu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator(EMULATOR_CONTENT);
  programEmu = await startEmulator({
    ...EMULATOR_CONTENT,
    rolloutMs: PROGRAM_ROLLOUT_MS,
    podStartMs: PROGRAM_POD_START_MS,
  });
});
afterAll(async () => {
  await emu?.close();
  await programEmu?.close();
});

/** This process's environment without RUNPOD_*, plus the settings the README has users set for `target`. */
const env = (target: RunningEmulator): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RUNPOD_"))),
  RUNPOD_API_KEY: target.apiKey,
  RUNPOD_REST_API_URL: target.restUrl,
  RUNPOD_SERVERLESS_API_URL: target.serverlessUrl,
});

async function runScript(code: string): Promise<void> {
  const dir = await mkdtemp(path.join(projectDir, "readme-"));
  try {
    const file = path.join(dir, "snippet.mts");
    await writeFile(file, code);
    await execFileAsync(process.execPath, [file], { cwd: dir, env: env(emu), timeout: 120_000 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function runProgram(code: string): Promise<void> {
  const dir = await mkdtemp(path.join(projectDir, "readme-"));
  const file = path.join(dir, "index.mts");
  await writeFile(file, code);
  const harness = await createDeployHarness({
    projectDir,
    program: file,
    passphrase: "readme",
    env: env(programEmu),
    pollMs: PROGRAM_POLL_MS,
    config: {
      "runpod:apiKey": { secret: programEmu.apiKey },
      "runpod:restUrl": programEmu.restUrl,
      "runpod:serverlessUrl": programEmu.serverlessUrl,
      "harness:ghcrToken": { secret: "readme-token" },
      "harness:endpointId": "abc123xyz",
    },
  });
  try {
    const up = await harness.up();
    expect(up.errors, up.logs.join("\n")).toEqual([]);
    const down = await harness.destroy();
    expect(down.errors, down.logs.join("\n")).toEqual([]);
  } finally {
    await harness.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}

async function runShell(code: string): Promise<void> {
  const dir = await mkdtemp(path.join(projectDir, "readme-"));
  try {
    await execFileAsync("bash", ["-euo", "pipefail", "-c", code], {
      cwd: dir,
      env: env(emu),
      timeout: 120_000,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("README.md and docs/ snippets run as shown against the emulator", () => {
  it("finds the snippets, and the ones marked skip do not outnumber the ones that run", () => {
    expect(PAGES.map((p) => p.file)).toEqual(
      expect.arrayContaining(["README.md", "docs/client.md", "docs/emulator.md"]),
    );
    expect(ALL.filter((s) => s.lang === "ts" && !s.skip).length).toBeGreaterThanOrEqual(4);
    const skipped = ALL.filter((s) => s.skip).length;
    expect(skipped).toBeLessThanOrEqual(ALL.length - skipped);
  });

  for (const page of PAGES) {
    for (const snippet of page.snippets) {
      const kind = snippet.lang === "sh" ? "shell" : /^export /m.test(snippet.code) ? "program" : "script";
      const name = `${page.file} line ${snippet.line} (${snippet.heading}): ${kind}`;
      if (snippet.skip) {
        it.skip(`${name}, not run: ${snippet.skip}`, () => {});
        continue;
      }
      it(name, async () => {
        if (kind === "program") await runProgram(snippet.code);
        else if (kind === "script") await runScript(snippet.code);
        else await runShell(snippet.code);
      }, 180_000);
    }
  }
});

/**
 * `npm run demo` (scripts/demo.mts) as a user runs it, and the examples as Node 24 runs them.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { findPulumi } from "../support/pulumiCli.mts";
import { EXAMPLES_DIR } from "./scenarios";

const REPO = path.resolve(__dirname, "..", "..");
const run = promisify(execFile);

/** Runs the demo script with PATH as given; never rejects (the exit code is in `code`). */
async function demo(env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(REPO, "scripts", "demo.mts")], {
      cwd: REPO,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("npm run demo", () => {
  // Expectation changed with issue 15 item 6 and issue 11: every CLI-looking line now carries
  // "[deploy harness]" (it used to be one line saying no CLI ran), and each up shows its preview.
  it("without a pulumi CLI: labels every CLI-looking line, previews then deploys, re-runs only the smoke test, fails on a broken release with the engine's text, passes once fixed, destroys, cleans up", {
    timeout: 240_000,
  }, async () => {
    const PATH = (process.env.PATH ?? "")
      .split(path.delimiter)
      .filter((d) => d && !existsSync(path.join(d, "pulumi")))
      .join(path.delimiter);
    const { code, stdout, stderr } = await demo({ ...process.env, PATH });
    expect(code, stderr).toBe(0);
    const cliLooking = stdout
      .split("\n")
      .filter((l) =>
        /^\$ pulumi|^(Previewing update|Updating|Destroying) \(|^Duration:|have been deleted/.test(l),
      );
    expect(cliLooking.length).toBeGreaterThanOrEqual(12);
    for (const line of cliLooking) expect(line).toContain("[deploy harness]");
    expect(stdout).toMatch(
      /\$ pulumi up --yes +\[deploy harness\]\nPreviewing update \(dev\):[\s\S]*\+ 3 to create\n\nUpdating \(dev\):/,
    );
    expect(stdout).toMatch(/volumeId +: "agv6w2qcg7"/);
    expect(stdout).toContain("+ 3 created");
    expect(stdout).toMatch(/~ +└─ pulumi-nodejs:dynamic\/runpod:JobRun +smoke +updated +\[diff: ~triggers\]/);
    expect(stdout).toMatch(/~ 1 updated\n {4}2 unchanged/);
    // Issue 14: the change steps are real redeploys over REST v2; the smoke test's trigger is the
    // endpoint's version (getServerlessEndpointOutput), and it records the release it tested.
    expect(stdout).toContain("# the endpoint is redeployed: PATCH /v2/serverless/echo");
    expect(stdout).toMatch(/~ smokeEndpointVersion: 1 => 2\n/);
    expect(stdout).toMatch(/Release: endpoint version 3 \(worker echo-worker-\d+\)\n/);
    expect(stdout).toMatch(/~ smokeEndpointVersion: 2 => 4\n/);
    // The broken release: the update fails with the engine's text of the smoke test's reasons
    // (test/support/README.md rule 1), no Outputs; the fixed release passes under the same id.
    expect(stdout).toMatch(
      /JobRun +smoke +\*\*failed\*\* +1 error\n+Diagnostics:\n {2}pulumi-nodejs:dynamic\/runpod:JobRun \(smoke\):\n {4}error: 1 error occurred:\n\s+\* JobRun failed on endpoint echo, job [0-9a-f-]+(-u\d+)?: the job ended FAILED/,
    );
    expect(stdout).toContain("Worker error: CUDA out of memory (demo: a broken release)");
    // ... and the worker's own log tail (issue 14): the broken release's worker said why.
    expect(stdout).toMatch(
      /Worker log \(last \d+ lines of echo-worker-\d+\):\n[\s\S]*container job \S+ failed after \d+ ms: CUDA out of memory/,
    );
    expect(stdout).not.toContain("resource init failed");
    expect(stdout).toMatch(/1 errored\n {4}2 unchanged/);
    expect(stdout.match(/\[diff: ~triggers\]/g)).toHaveLength(2);
    expect(stdout).toContain("- 3 deleted");
    expect(stdout).toMatch(/Demo done in [\d.]+ s/);
    expect(`${stdout}\n${stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
    const projectDir = stdout.match(/installed into (\S+)/)?.[1];
    expect(projectDir).toBeDefined();
    expect(existsSync(projectDir!)).toBe(false);
  });

  it.skipIf(!findPulumi())(
    "with the pulumi CLI on PATH: runs pulumi up, config set, up, destroy (requires the pulumi CLI on PATH)",
    async () => {
      const { code, stdout, stderr } = await demo(process.env);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain("Pulumi CLI:");
      expect(stdout).toContain("$ pulumi destroy");
      expect(stdout).toMatch(/Demo done in/);
    },
  );
});

describe("examples", () => {
  const examples = readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

  it("are the documented ones, each a Pulumi project with a README", () => {
    expect(examples.sort()).toEqual([
      "demo",
      "registry-auth",
      "serverless-endpoint",
      "smoke-test",
      "volume-lookup",
    ]);
    for (const name of examples) {
      for (const file of ["Pulumi.yaml", "package.json", "index.ts", "README.md"])
        expect(existsSync(path.join(EXAMPLES_DIR, name, file)), `${name}/${file}`).toBe(true);
    }
  });

  it.each(["demo", "registry-auth", "serverless-endpoint", "smoke-test", "volume-lookup"])(
    "%s/index.ts uses only erasable TypeScript and is an ES module Node 24 runs directly",
    (name) => {
      const dir = path.join(EXAMPLES_DIR, name);
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
      expect(pkg).toMatchObject({ type: "module", main: "index.ts" });
      // Throws ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX on enums, namespaces, parameter properties...
      const js = stripTypeScriptTypes(readFileSync(path.join(dir, "index.ts"), "utf8"), { mode: "strip" });
      expect(js).toContain('from "pulumi-runpod-dynamic"');
    },
  );

  // No root Pulumi.yaml: a program inside the repository cannot resolve "pulumi-runpod-dynamic"
  // by name (the repo does not install itself), and resolved by path its providers would be
  // serialized by value, unlike a user's (DESIGN.md fact 13). The demo project is examples/demo.
  it("has no root Pulumi.yaml; the demo stack is the examples/demo project", () => {
    expect(existsSync(path.join(REPO, "Pulumi.yaml"))).toBe(false);
    expect(readFileSync(path.join(REPO, "examples", "demo", "Pulumi.yaml"), "utf8")).toMatch(
      /^name: runpod-demo$/m,
    );
  });
});

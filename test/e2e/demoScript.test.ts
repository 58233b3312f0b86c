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
  // Every CLI-looking line carries "[deploy harness]", and each up shows its preview. The demo is
  // the whole serverless pipeline in one program, and its change steps are edits of the stack's
  // config (not out-of-band PATCHes of a seeded endpoint). The endpoint smoke-tests its own releases (`smokeTest`, no JobRun); the
  // broken release is rolled back inside the update, a refresh then finds no drift, and the next up
  // tries the release again. The stack also holds a load-balancer endpoint (`chat`) whose smoke test
  // is an HTTP probe; the demo prints one answer of it after the first up.
  it("without a pulumi CLI: labels every CLI-looking line; creates the whole pipeline (a load-balancer endpoint among it, its HTTP smoke test passing, one chat answer printed, each endpoint's hourly floor and ceiling); a new image tag is a release rolled out and smoke-tested; a broken release fails its smoke test and is rolled back (the previous configuration serves under a new version, the state records it, a refresh finds no drift); fixed, it passes; workers.max raised past the stack budget is refused in the preview with the figures; destroy leaves zero objects on the emulator", {
    timeout: 480_000,
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
        /^\$ pulumi|^(Previewing (?:update|refresh|destroy)|Updating|Destroying|Refreshing) \(|^Duration:|have been deleted/.test(
          l,
        ),
      );
    // 4 ups (command, preview, update, duration each), the up over budget (command and preview: the
    // preview fails), 5 config edits, refresh (4 lines: it previews first, "Previewing refresh"),
    // destroy (3 lines: --skip-preview), "have been deleted".
    expect(cliLooking).toHaveLength(4 * 4 + 2 + 5 + 4 + 3 + 1);
    expect(stdout).toMatch(/^Previewing refresh \(dev\): +\[deploy harness\]$/m);
    for (const line of cliLooking) expect(line).toContain("[deploy harness]");

    // The steps, in order: 5 ups (each after its config edit, which a "# ..." line explains), the
    // refresh after the rolled-back release, and the destroy.
    const steps = stdout.split(/\n\n(?=# (?!on the emulator|in the stack's state)|\$ pulumi destroy )/);
    expect(steps).toHaveLength(7);
    const [created, released, broken, refreshed, fixed, overBudget, destroyed] = steps as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const endpointId = created.match(/endpointId +: "(\w+)"/)?.[1];
    expect(endpointId).toBeDefined();
    const ENDPOINT = "pulumi-nodejs:dynamic/runpod:ServerlessEndpoint +endpoint";
    /** What the demo reads back from the emulator after an up: version, image, env names, workers. */
    const onEmulator = (version: number, tag: string) =>
      new RegExp(
        `^# on the emulator: endpoint ${endpointId} at version ${version}, image ghcr\\.io/acme/echo-worker:${tag.replace(/\./g, "\\.")}, env HF_TOKEN; ` +
          `workers: ${endpointId}-worker-\\d+ IDLE v${version}, ${endpointId}-worker-\\d+ IDLE v${version} \\(0 stale\\)$`,
        "m",
      );
    /** What the stack's state records for the endpoint after an up: version, image, lastSmokeTest. */
    const inState = (version: number, tag: string, tested: number, passed: boolean) =>
      new RegExp(
        `^# in the stack's state: endpoint at version ${version}, image ghcr\\.io/acme/echo-worker:${tag.replace(/\./g, "\\.")}; ` +
          `lastSmokeTest: version ${tested} ${passed ? "passed \\(0" : "FAILED \\(1"} of 1 job failed\\): ` +
          `[0-9a-f-]+(-u\\d+)?: IN_QUEUE [\\d.]+ s -> ${passed ? "COMPLETED [\\d.]+ s" : "FAILED [\\d.]+ s \\(failed\\)"}$`,
        "m",
      );

    // 1. up creates everything: credential, volume, template, endpoint (pools from the catalog),
    // whose smoke test passes on release 1, and the load balancer, whose HTTP probe passes.
    expect(created).toMatch(
      /^\$ pulumi up --yes +\[deploy harness\]\nPreviewing update \(dev\):[\s\S]*\+ 6 to create\n\nUpdating \(dev\):/m,
    );
    for (const kind of [
      "ContainerRegistryAuth +registry",
      "NetworkVolume +models",
      "Template +worker",
      "ServerlessEndpoint +endpoint",
      "ServerlessEndpoint +chat",
    ]) {
      expect(created).toMatch(new RegExp(`\\+ +[├└]─ pulumi-nodejs:dynamic/runpod:${kind} +created`));
    }
    // The gate runs JobRun's execution, but its lines name the smoke test: no JobRun in sight.
    expect(stdout).not.toContain("JobRun");
    expect(created).toContain("+ 6 created");
    expect(created).toMatch(/gpuPools +: \[\n +\[0\]: "ADA_24"\n +\[1\]: "AMPERE_24"\n +\]/);
    expect(created).toMatch(/endpointImage +: "ghcr\.io\/acme\/echo-worker:1\.0\.0"/);
    expect(created).toMatch(/endpointVersion: 1\n/);
    expect(created).toMatch(
      /lastSmokeTest +: \{\n +costUsd +: \d+(\.\d+)?(e-\d+)?\n +failures: 0\n +jobIds +: \[\n +\[0\]: "[0-9a-f-]+(-u\d+)?"\n +\]\n +passed +: true\n[\s\S]*?version +: 1\n +\}/,
    );
    expect(created).toMatch(/volumeSizeGb +: 20\n/);
    // The first preview already shows what each endpoint may cost an hour (the figures come from
    // check, before anything exists), beside outputs not known until the update ([unknown]).
    const firstPreview = created.slice(0, created.indexOf("Updating (dev)"));
    expect(firstPreview).toMatch(
      /\nOutputs:\n[\s\S]*? {4}endpointCost +: \{\n +ceilingUsd +: 2\.2\n +floorUsd +: 0\n +ratePerWorkerUsd: 1\.1\n +\}\n {4}endpointId +: \[unknown\]\n[\s\S]*?\nResources:\n {4}\+ 6 to create\n/,
    );
    // What each endpoint may cost an hour at the emulator's list prices: the queue endpoint 0 with
    // no worker always on, 2 workers at 1.1 USD at most; the load balancer keeps one worker on.
    expect(created).toMatch(
      /endpointCost +: \{\n +ceilingUsd +: 2\.2\n +floorUsd +: 0\n +ratePerWorkerUsd: 1\.1\n +\}/,
    );
    expect(created).toMatch(
      /chatCost +: \{\n +ceilingUsd +: 1\.1\n +floorUsd +: 0\.68\n +ratePerWorkerUsd: 1\.1\n +\}/,
    );
    expect(created).toMatch(onEmulator(1, "1.0.0"));
    expect(created).toMatch(inState(1, "1.0.0", 1, true));
    // The load balancer: created at version 1 with its own image, its smoke test one HTTP probe
    // (no job) that passed; then one chat request to its base URL, and the answer.
    const chatUrl = created.match(/chatUrl +: "(http:\/\/127\.0\.0\.1:\d+\/lb\/(\w+))"/);
    expect(chatUrl).not.toBeNull();
    const [, chatBase, chatId] = chatUrl as unknown as [string, string, string];
    expect(chatId).not.toBe(endpointId);
    expect(created).toMatch(/chatVersion +: 1\n/);
    expect(created).toMatch(
      /chatSmokeTest +: \{\n +failures: 0\n +jobIds +: \[\]\n +passed +: true\n +timeline: \[\n +\[0\]: "probe 1: REQUEST_SENT [\d.]+ s -> HTTP_200 [\d.]+ s"\n +\]\n +version +: 1\n +\}/,
    );
    expect(created).toMatch(
      new RegExp(
        `^# on the emulator: endpoint ${chatId} at version 1, image ghcr\\.io/acme/chat-server:1\\.0\\.0, env \\(none\\); ` +
          `workers: ${chatId}-worker-\\d+ IDLE v1 \\(0 stale\\)$`,
        "m",
      ),
    );
    // The last line of the step (the next step's "# ..." follows after a blank line).
    expect(created.split("\n").at(-1)).toBe(
      `# on the emulator: POST ${chatBase}/v1/chat/completions -> 200 "echo: hello"`,
    );
    /** The load balancer after a later up: untouched, still version 1 (no `~` on its outputs). */
    const chatUnchanged = (step: string) => {
      expect(step).not.toMatch(/ServerlessEndpoint +chat/);
      expect(step).toMatch(/^ {4}chatVersion +: 1\n/m);
      expect(step).toMatch(new RegExp(`^# on the emulator: endpoint ${chatId} at version 1, `, "m"));
    };

    // 2. A new image tag: template and endpoint updated in place, the release rolled out (no stale
    // worker after the up) and its smoke test passed on version 2.
    expect(released).toMatch(/^\$ pulumi config set imageTag 1\.1\.0 +\[deploy harness\]\n/m);
    expect(released).toMatch(
      /~ +├─ pulumi-nodejs:dynamic\/runpod:Template +worker +updated +\[diff: ~image\]/,
    );
    expect(released).toMatch(new RegExp(`~ +└─ ${ENDPOINT} +updated +\\[diff: ~image\\]`));
    expect(released).toMatch(/~ 2 updated\n {4}4 unchanged/);
    chatUnchanged(released);
    expect(released).toMatch(new RegExp(`endpointId +: "${endpointId}"`)); // in place: the same endpoint
    expect(released).toContain(
      '~ endpointImage  : "ghcr.io/acme/echo-worker:1.0.0" => "ghcr.io/acme/echo-worker:1.1.0"',
    );
    expect(released).toMatch(/~ endpointVersion: 1 => 2\n/);
    expect(released).toMatch(/~ lastSmokeTest +: \{[\s\S]*?passed +: true\n[\s\S]*?version +: 2\n +\}/);
    expect(released).toMatch(onEmulator(2, "1.1.0"));
    expect(released).toMatch(inState(2, "1.1.0", 2, true));

    // 3. A broken release (1.2.0 with a failing env): release 3 rolls out, its smoke test fails, the
    // previous configuration (1.1.0, no failing env) is rolled out again as version 4, and the up
    // fails with the engine's text of the reasons (test/support/README.md rule 1): which release
    // failed and why (the worker error, the worker's own log tail), and what serves now.
    expect(broken).toMatch(
      /^\$ pulumi config set imageTag 1\.2\.0 +\[deploy harness\]\n\$ pulumi config set extraEnv '\{"RUNPOD_EMULATOR_FAIL":"CUDA out of memory \(demo: a broken release\)"\}' +\[deploy harness\]\n/m,
    );
    expect(broken).toMatch(/~ +├─ pulumi-nodejs:dynamic\/runpod:Template +worker +updated +\[diff: ~image\]/);
    expect(broken).toMatch(
      new RegExp(
        `└─ ${ENDPOINT} +\\*\\*failed\\*\\* +1 error\\n+Diagnostics:\\n {2}pulumi-nodejs:dynamic/runpod:ServerlessEndpoint \\(endpoint\\):\\n {4}error: 1 error occurred:\\n` +
          `\\s+\\* ServerlessEndpoint "demo-worker" \\(id ${endpointId}\\): the smoke test of release version 3 failed \\(1 of 1 job failed, maxFailures 0\\), so it was rolled back\\.\\n` +
          " {4}Now serving: version 4, a new release carrying the previous configuration \\(image ghcr\\.io/acme/echo-worker:1\\.1\\.0\\), on every worker\\.\\n" +
          " {4}Why release version 3 failed \\(the first failing job\\):\\n" +
          " {4}Smoke-test job [0-9a-f-]+(-u\\d+)?: the job ended FAILED, expected COMPLETED\\n",
      ),
    );
    expect(broken).toContain("\n    Worker error: CUDA out of memory (demo: a broken release)\n");
    expect(broken).toMatch(
      new RegExp(`\\n {4}Release: endpoint version 3 \\(worker ${endpointId}-worker-\\d+\\)\\n`),
    );
    expect(broken).toMatch(
      new RegExp(
        `Worker log \\(last \\d+ lines of ${endpointId}-worker-\\d+\\):\\n[\\s\\S]*image ghcr\\.io/acme/echo-worker:1\\.2\\.0[\\s\\S]*container job \\S+ failed after \\d+ ms: CUDA out of memory \\(demo: a broken release\\)\\n`,
      ),
    );
    expect(broken).toMatch(
      /^ {4}The state records what runs \(the previous configuration at version 4\), so the next pulumi up tries the new release again/m,
    );
    expect(broken).not.toContain("resource init failed");
    // Its preview shows the image output changing; the failed update prints no Outputs.
    expect(broken).toMatch(
      /Outputs:\n {2}~ endpointImage: "ghcr\.io\/acme\/echo-worker:1\.1\.0" => "ghcr\.io\/acme\/echo-worker:1\.2\.0"\n\nResources:\n {4}~ 2 to update\n/,
    );
    expect(broken.slice(broken.indexOf("Updating (dev)"))).not.toContain("Outputs:");
    // The engine ends a run whose step failed with `update failed` under the stack, which counts as
    // an errored row (deploymentExecutor.reportExecResult; progress.go printSummary).
    expect(broken).toMatch(/\n {2}pulumi:pulumi:Stack \([^)]+\):\n(?: {4}.*\n)*? {4}error: update failed\n/);
    expect(broken).toMatch(/~ 1 updated\n {4}4 unchanged\n {4}2 errored/);
    expect(broken).toMatch(new RegExp(`^# on the emulator: endpoint ${chatId} at version 1, `, "m"));
    // What runs after the up: version 4, image 1.1.0 and no RUNPOD_EMULATOR_FAIL on the emulator,
    // the same in the state, with the failed test of release 3.
    expect(broken).toMatch(onEmulator(4, "1.1.0"));
    expect(broken).toMatch(inState(4, "1.1.0", 3, false));

    // The state records what runs: a refresh reads every resource back and finds no drift.
    expect(refreshed).toMatch(
      /^\$ pulumi refresh --yes +\[deploy harness\]\nPreviewing refresh \(dev\): +\[deploy harness\]\n[\s\S]*?\nRefreshing \(dev\): +\[deploy harness\]\n/m,
    );
    expect(refreshed).toMatch(/Resources:\n {4}6 unchanged\n/);
    expect(refreshed).not.toMatch(/^ [~+-] /m);

    // 4. The env fixed: the next up tries release 1.2.0 again (version 5), and it passes.
    expect(fixed).toMatch(/^\$ pulumi config rm extraEnv +\[deploy harness\]\n/m);
    expect(fixed).toMatch(new RegExp(`~ +└─ ${ENDPOINT} +updated +\\[diff: ~image\\]`));
    expect(fixed).toMatch(/~ 1 updated\n {4}5 unchanged/);
    chatUnchanged(fixed);
    expect(fixed).toContain(
      '~ endpointImage  : "ghcr.io/acme/echo-worker:1.1.0" => "ghcr.io/acme/echo-worker:1.2.0"',
    );
    expect(fixed).toMatch(/~ endpointVersion: 2 => 5\n/);
    expect(fixed).toMatch(/~ lastSmokeTest +: \{[\s\S]*?passed +: true\n[\s\S]*?version +: 5\n +\}/);
    expect(fixed).toMatch(onEmulator(5, "1.2.0"));
    expect(fixed).toMatch(inState(5, "1.2.0", 5, true));

    // 5. workers.max raised past the stack's budget (runpod:maxHourlyUsd 20): the preview's check
    // refuses it naming the key, the sum and each resource's part; no update runs, nothing changes.
    expect(overBudget).toMatch(/^\$ pulumi config set workersMax 20 +\[deploy harness\]\n/m);
    expect(overBudget).toMatch(new RegExp(`└─ ${ENDPOINT} +\\*\\*failed\\*\\* +1 error\\n`));
    expect(overBudget).toContain(
      "runpod:maxHourlyUsd is 20 USD/h, but the hourly ceilings of this deployment's RunPod resources add up to 23.1 USD/h (list prices), largest first: " +
        'ServerlessEndpoint "demo-worker" 22 USD/h (workers.max 20 × 1.1 USD/h per worker); ' +
        'ServerlessEndpoint "demo-chat" 1.1 USD/h (workers.max 1 × 1.1 USD/h per worker). Nothing was created or changed.',
    );
    expect(overBudget).not.toContain("Updating (dev)");
    expect(overBudget).toMatch(/Resources:\n {4}5 unchanged\n {4}1 errored\n/);
    expect(overBudget).toMatch(onEmulator(5, "1.2.0"));
    expect(overBudget).toMatch(inState(5, "1.2.0", 5, true));

    // 6. destroy, and the emulator itself holds nothing.
    expect(destroyed).toContain("- 6 deleted");
    expect(destroyed).toMatch(/- +[├└]─ pulumi-nodejs:dynamic\/runpod:ServerlessEndpoint +chat +deleted/);
    expect(destroyed).toContain(
      "Left on the emulator after destroy: 0 endpoints, 0 templates, 0 network volumes, 0 registry credentials\n",
    );
    expect(stdout).toMatch(/Demo done in [\d.]+ s/);
    // The endpoint's env and the registry password are secrets: their defaults never print.
    expect(stdout).not.toContain("hf_demo_token");
    expect(stdout).not.toContain("demo-password");
    // Nor does the emulator's API key the demo used for the chat request (`emu_` + 24 random characters).
    expect(`${stdout}\n${stderr}`).not.toMatch(/emu_[A-Za-z0-9_-]{24}/);
    expect(`${stdout}\n${stderr}`).not.toMatch(/Bearer/i);
    expect(`${stdout}\n${stderr}`).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
    const projectDir = stdout.match(/installed into (\S+)/)?.[1];
    expect(projectDir).toBeDefined();
    expect(existsSync(projectDir!)).toBe(false);
  });

  it.skipIf(!findPulumi())(
    "with the pulumi CLI on PATH: runs pulumi up, config set, up (a broken release is rolled back), refresh, destroy, zero objects left (requires the pulumi CLI on PATH)",
    async () => {
      const { code, stdout, stderr } = await demo(process.env);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain("Pulumi CLI:");
      expect(stdout).toContain("$ pulumi config set imageTag 1.1.0");
      expect(stdout).toMatch(/^# on the emulator: POST \S+\/v1\/chat\/completions -> 200 "echo: hello"$/m);
      expect(stdout).toContain("the smoke test of release version 3 failed");
      expect(stdout).toContain("Now serving: version 4, a new release carrying the previous configuration");
      expect(stdout).toContain("Worker error: CUDA out of memory (demo: a broken release)");
      expect(stdout).toMatch(
        /# in the stack's state: endpoint at version 4, image ghcr\.io\/acme\/echo-worker:1\.1\.0; lastSmokeTest: version 3 FAILED/,
      );
      expect(stdout).toContain("$ pulumi refresh --yes");
      expect(stdout).toContain("$ pulumi destroy");
      expect(stdout).toContain(
        "Left on the emulator after destroy: 0 endpoints, 0 templates, 0 network volumes, 0 registry credentials\n",
      );
      expect(stdout).toMatch(/Demo done in/);
    },
  );
});

describe("examples", () => {
  const examples = readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);

  /** The files a project of each runtime needs; the TypeScript ones run here, the others through the plugin. */
  const FILES: Record<string, string[]> = {
    "python-serverless": ["Pulumi.yaml", "__main__.py", "requirements.txt", "README.md"],
    "yaml-pod": ["Pulumi.yaml", "README.md"],
  };

  it("are the documented ones, each a Pulumi project with a README", () => {
    expect(examples.sort()).toEqual([
      "demo",
      "dev-pod",
      "guarded-release",
      "python-serverless",
      "registry-auth",
      "serverless-endpoint",
      "smoke-test",
      "volume-lookup",
      "yaml-pod",
    ]);
    for (const name of examples) {
      for (const file of FILES[name] ?? ["Pulumi.yaml", "package.json", "index.ts", "README.md"])
        expect(existsSync(path.join(EXAMPLES_DIR, name, file)), `${name}/${file}`).toBe(true);
    }
  });

  it.each([
    "demo",
    "dev-pod",
    "guarded-release",
    "registry-auth",
    "serverless-endpoint",
    "smoke-test",
    "volume-lookup",
  ])("%s/index.ts uses only erasable TypeScript and is an ES module Node 24 runs directly", (name) => {
    const dir = path.join(EXAMPLES_DIR, name);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ type: "module", main: "index.ts" });
    // Throws ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX on enums, namespaces, parameter properties...
    const js = stripTypeScriptTypes(readFileSync(path.join(dir, "index.ts"), "utf8"), { mode: "strip" });
    expect(js).toContain('from "pulumi-runpod-dynamic"');
  });

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

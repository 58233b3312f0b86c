/**
 * `npm run demo`: the demo stack (`examples/demo`: the whole serverless pipeline in one program: a
 * registry credential, a network volume, the GPU catalog choosing the endpoint's pools, a template,
 * and a serverless endpoint that waits for its rollouts and smoke-tests each release itself,
 * rolling a failed one back) deployed against the local emulator, with no account and no network.
 *
 * 1. Starts the emulator in-process from the built `dist/`, with an empty account (its built-in
 *    `echo` endpoint deleted) and a short rollout (stale workers serve {@link ROLLOUT_MS} ms after a
 *    release, then are replaced one by one).
 * 2. Installs the packed package into a temp project (`npm pack`, dependencies linked from this
 *    repo's node_modules: offline), the way users get it.
 * 3. `pulumi up` (preview first, as a user's `pulumi up` does) creates everything; its preview
 *    shows each endpoint's hourly floor and ceiling at list prices. Then four edits of the stack's
 *    config, each followed by `pulumi up` ({@link CHANGES}): a new `imageTag`
 *    (the template and the endpoint updated in place, the release rolled out and waited for, and
 *    the endpoint's `smokeTest` run on it); a broken `extraEnv` (the emulator's
 *    `RUNPOD_EMULATOR_FAIL`: every job of that release fails), so the endpoint's smoke test fails,
 *    the previous configuration is rolled out again as a new version, and `up` fails with the text
 *    the engine prints (which release failed and why: the worker error, the worker's log tail; and
 *    which version serves now); a `pulumi refresh` then finds no drift (the state records what
 *    runs); the env fixed, and `up` passes; `workersMax` raised past the stack's budget
 *    (`runpod:maxHourlyUsd`), which the preview refuses before anything changes. After each step it prints what the endpoint runs (read
 *    back from the emulator: its version, image, env names, each worker's version) and what the
 *    stack's state records (the version, the image and `lastSmokeTest`). Then `pulumi destroy`,
 *    and it asserts (and prints) that the emulator holds zero endpoints, templates, network
 *    volumes and registry credentials.
 *    The stack also holds a load-balancer endpoint (`chat`, an OpenAI-compatible model server) whose
 *    smoke test is an HTTP probe; after the first `up` the demo sends it one chat request and prints
 *    the answer.
 * 4. Stops the emulator and removes every temp directory, also on failure or Ctrl-C.
 *
 * With a `pulumi` CLI on PATH it runs the real CLI (local file backend in the temp project,
 * passphrase set for the run only) and shows its own output. Without one it runs the same program
 * through the deploy harness (`test/support/deployHarness.mts`: Pulumi's own dynamic-provider
 * host, state in a temp file) and prints the same summary `pulumi up` would (the preview's plan,
 * then the update), every CLI-looking line labelled `[deploy harness]`.
 *
 * Exit status: 0 on success, 1 when a step fails (its diagnostics are printed), 130 on Ctrl-C.
 * Run with `npm run demo` (builds first; Node 24 from the devDependency), or `npx node scripts/demo.mts`.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import type { RunpodClient } from "../src/client/client.ts";
import type { RunningEmulator, startEmulator as StartEmulator } from "../src/emulator/index.ts";
import {
  createDeployHarness,
  type DeployHarness,
  type DeployResult,
} from "../test/support/deployHarness.mts";
import { type InstalledPackage, installPackedPackage, REPO_DIR } from "../test/support/packedPackage.mts";
import { CliStack, findPulumi } from "../test/support/pulumiCli.mts";
import { renderStep, type StepView } from "../test/support/render.mts";

const PROJECT = "runpod-demo";
const STACK = "dev";
const PROGRAM = path.join(REPO_DIR, "examples", "demo");

/** Thrown when a deploy step fails; its diagnostics were printed already. */
class StepFailed extends Error {}

/** What the broken release's workers answer (the emulator's RUNPOD_EMULATOR_FAIL env). */
const WORKER_ERROR = "CUDA out of memory (demo: a broken release)";

/**
 * How long the emulator's stale workers keep serving after a release before they are replaced, ms
 * (then each replacement starts in 0.5 s): long enough for the rollout wait to show, short enough
 * for the demo.
 */
const ROLLOUT_MS = 1_000;

/** The stack config's namespace (the project name). */
const KEY = (name: string) => `${PROJECT}:${name}`;

/** The stack budget the demo sets (`runpod:maxHourlyUsd`), USD an hour: what the last change exceeds. */
const BUDGET_USD = 20;

/**
 * One of the demo's change steps after the first `up`: an edit of the stack's config (what a user
 * does with `pulumi config set`), then `pulumi up`.
 */
interface Change {
  /** Config keys (without the project prefix) and their new values; `undefined` removes one. */
  edits: Record<string, string | undefined>;
  /** The commands a user would type for the edits. */
  commands: string[];
  /** What to expect, printed before the commands. */
  why: string;
  /**
   * How the `up` must fail, if it must: `release` (a smoke test fails and the release is rolled
   * back; a refresh follows to show the state records what runs), `budget` (the preview refuses).
   */
  fails?: "release" | "budget";
}

const CHANGES: readonly Change[] = [
  {
    edits: { imageTag: "1.1.0" },
    commands: ["pulumi config set imageTag 1.1.0"],
    why:
      "a new image tag: the template and the endpoint are updated in place, the release rolls out " +
      "(the endpoint's update waits for it), then the endpoint's smoke test runs on that release",
  },
  {
    edits: { imageTag: "1.2.0", extraEnv: JSON.stringify({ RUNPOD_EMULATOR_FAIL: WORKER_ERROR }) },
    commands: [
      "pulumi config set imageTag 1.2.0",
      `pulumi config set extraEnv '${JSON.stringify({ RUNPOD_EMULATOR_FAIL: WORKER_ERROR })}'`,
    ],
    why:
      "a broken release: image 1.2.0 with an env that makes every job fail (the emulator's " +
      "RUNPOD_EMULATOR_FAIL); its smoke test fails, the endpoint rolls the previous configuration " +
      "(1.1.0) back out as a new version, and the up fails saying which release failed, why (the " +
      "worker's error, its log tail) and what serves now",
    fails: "release",
  },
  {
    edits: { extraEnv: undefined },
    commands: ["pulumi config rm extraEnv"],
    why: "the env fixed: the next up tries release 1.2.0 again, it rolls out, and its smoke test passes",
  },
  {
    edits: { workersMax: "20" },
    commands: ["pulumi config set workersMax 20"],
    why:
      `a change over the budget: workers.max 2 -> 20 raises the endpoint's hourly ceiling past the stack's ` +
      `runpod:maxHourlyUsd (${BUDGET_USD}); the preview refuses it, naming the figures, before any call ` +
      "that costs money, and nothing changes",
    fails: "budget",
  },
];

/** Why the demo refreshes after the rolled-back release. */
const REFRESH_WHY =
  "the state records what runs (the previous configuration, at the new version): a refresh reads " +
  "every resource back and finds no drift";

/**
 * A refresh's result, failed when it found drift (a resource whose read differs from the state):
 * after a rollback the state must record what runs.
 */
function noDrift<R extends { ok: boolean; errors: string[]; resources: Array<{ urn: string; op: string }> }>(
  result: R,
): R {
  const drifted = result.resources.filter((r) => r.op !== "same").map((r) => `${r.urn} (${r.op})`);
  if (!result.ok || drifted.length === 0) return result;
  return { ...result, ok: false, errors: [...result.errors, `refresh found drift: ${drifted.join(", ")}`] };
}

/**
 * Says which config edit comes next and applies it through the stack (CLI or harness); `label`
 * marks the command line when no CLI runs it.
 */
async function editConfig(
  stack: { setConfig(key: string, value: string | undefined): void | Promise<void> },
  { edits, commands, why }: Change,
  label = "",
) {
  print(`\n# ${why}`);
  for (const line of commands) print(`$ ${line}${label ? `    ${label}` : ""}`);
  for (const [key, value] of Object.entries(edits)) await stack.setConfig(KEY(key), value);
}

/** A RunpodClient of the built package against the emulator's REST v2 API. */
function restClient(emu: RunningEmulator): RunpodClient {
  const { RunpodClient: Client } = createRequire(import.meta.url)(path.join(REPO_DIR, "dist", "index.js"));
  return new Client({ apiKey: emu.apiKey, restUrl: emu.restUrlV2 });
}

/** A ServerlessEndpoint as the stack's state records it. */
interface EndpointRecord {
  version?: unknown;
  image?: unknown;
  lastSmokeTest?: {
    version: number | null;
    passed: boolean;
    jobIds: string[];
    failures: number;
    timeline: string[];
  };
}

/**
 * After an `up`: what the emulator's endpoints run, read over REST v2 (the endpoint's version, image
 * and env names, and each worker's version), so the rollout the update waited for shows: no worker
 * left on an older release. Env values are never printed (the endpoint's `env` is a secret).
 */
async function showWorkers(emu: RunningEmulator) {
  const client = restClient(emu);
  for (const ep of await client.serverless.list()) {
    const { workers, endpointVersion } = await client.serverless.workers(ep.id);
    const stale = workers.filter((w) => w.isStale).length;
    print(
      `# on the emulator: endpoint ${ep.id} at version ${endpointVersion}, image ${ep.image}, ` +
        `env ${
          Object.keys(ep.env ?? {})
            .sort()
            .join(", ") || "(none)"
        }; workers: ` +
        `${workers.map((w) => `${w.id} ${w.status} v${w.version}`).join(", ")} (${stale} stale)`,
    );
  }
}

/**
 * What the stack's state records for the endpoint: the version, the image and `lastSmokeTest` (the
 * release it tested, passed or failed, its jobs). After a rolled-back release these are what runs:
 * the previous configuration at the new version, and the failed test.
 */
function showRecord(record: EndpointRecord | undefined) {
  if (!record) return;
  const t = record.lastSmokeTest;
  const test = t
    ? `version ${t.version} ${t.passed ? "passed" : "FAILED"} (${t.failures} of ${t.jobIds.length} ` +
      `job${t.jobIds.length === 1 ? "" : "s"} failed): ${t.timeline.join("; ")}`
    : "(none)";
  print(
    `# in the stack's state: endpoint at version ${record.version}, image ${record.image}; lastSmokeTest: ${test}`,
  );
}

/**
 * The queue endpoint's outputs (the resource named `endpoint`; the stack's other endpoint is the
 * load balancer `chat`) in a harness state (decrypted; only non-secret fields are read).
 */
function endpointInState(resources: Array<{ urn: string; type: string; outputs: Record<string, unknown> }>) {
  return resources.find(
    (r) => r.type === "pulumi-nodejs:dynamic/runpod:ServerlessEndpoint" && r.urn.endsWith("::endpoint"),
  )?.outputs as EndpointRecord | undefined;
}

/**
 * The endpoint's outputs in the CLI's checkpoint (`<backend>/.pulumi/stacks/<project>/<stack>.json`
 * of the local file backend); the fields read here are not secrets, so they are stored in plaintext.
 */
function endpointInCheckpoint(backendDir: string): EndpointRecord | undefined {
  const dir = path.join(backendDir, ".pulumi", "stacks", PROJECT);
  const file = [
    path.join(dir, `${STACK}.json`),
    path.join(backendDir, ".pulumi", "stacks", `${STACK}.json`),
  ].find(existsSync);
  if (!file) return undefined;
  const checkpoint = JSON.parse(readFileSync(file, "utf8")) as {
    checkpoint?: {
      latest?: { resources?: Array<{ urn: string; type: string; outputs?: Record<string, unknown> }> };
    };
  };
  const resources = (checkpoint.checkpoint?.latest?.resources ?? []).map((r) => ({
    urn: r.urn,
    type: r.type,
    outputs: r.outputs ?? {},
  }));
  return endpointInState(resources);
}

/**
 * After the first up: one request to the stack's load-balancer endpoint, as a client of the model
 * server would send it (the demo's API key as `Authorization: Bearer`, never printed), and its answer.
 */
async function showChatAnswer(emu: RunningEmulator) {
  const client = restClient(emu);
  for (const ep of await client.serverless.list()) {
    if (ep.type !== "LOAD_BALANCER") continue;
    const path = "/v1/chat/completions";
    const answer = await client.loadBalancer(ep.id).request(
      {
        method: "POST",
        path,
        body: { model: "emulator-model", messages: [{ role: "user", content: "hello" }] },
      },
      { timeoutMs: 30_000 },
    );
    const content = (answer.body as { choices?: Array<{ message?: { content?: unknown } }> } | null)
      ?.choices?.[0]?.message?.content;
    print(
      `# on the emulator: POST ${ep.requestUrls?.base}${path} -> ${answer.status} ${JSON.stringify(content ?? answer.body)}`,
    );
  }
}

/**
 * After destroy: what the emulator still holds, read over its REST v2 API with a RunpodClient. The
 * demo fails unless all are zero.
 */
async function leftovers(emu: RunningEmulator) {
  const client = restClient(emu);
  const [endpoints, templates, volumes, registryAuths] = await Promise.all([
    client.serverless.list(),
    client.templates.list(),
    client.networkVolumes.list(),
    client.registryAuths.list(),
  ]);
  return {
    endpoints: endpoints.length,
    templates: templates.length,
    "network volumes": volumes.length,
    "registry credentials": registryAuths.length,
  } as Record<string, number>;
}

const print = (text = "") => process.stdout.write(`${text}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const started = performance.now();
  const require = createRequire(import.meta.url);
  const { startEmulator }: { startEmulator: typeof StartEmulator } = require(
    path.join(REPO_DIR, "dist", "emulator", "index.js"),
  );

  let emu: RunningEmulator | undefined;
  let installed: InstalledPackage | undefined;
  let harness: DeployHarness | undefined;
  let cli: CliStack | undefined;
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      await harness?.dispose().catch(() => {});
      await cli?.dispose().catch(() => {});
      await emu?.close().catch(() => {});
      await installed?.cleanup().catch(() => {});
    })();
    return cleaning;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping the emulator and removing temp files\n`);
    void cleanup().then(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    // An empty account: the stack makes every object, and destroy must leave none behind. (The
    // emulator always starts with its built-in endpoint `echo`; the demo deletes it first.)
    emu = await startEmulator({ rolloutMs: ROLLOUT_MS });
    await restClient(emu).serverless.delete("echo");
    print(
      `Emulator: RunPod REST + serverless API on ${emu.serverlessUrl} (in-process, offline; REST v2, the default)`,
    );
    print(
      `  an empty account; stale workers serve ${ROLLOUT_MS / 1000} s after a release, then are replaced one by one`,
    );
    installed = await installPackedPackage();
    print(`Package: npm pack of pulumi-runpod-dynamic installed into ${installed.projectDir}`);

    const passphrase = randomBytes(18).toString("base64url");
    const config = {
      "runpod:apiKey": { secret: emu.apiKey },
      "runpod:restUrl": emu.restUrlV2, // REST v2: the default dialect, as on the real service
      "runpod:serverlessUrl": emu.serverlessUrl,
      "runpod:maxHourlyUsd": String(BUDGET_USD), // the stack's budget at list prices, judged in every preview
    };

    const pulumiPath = findPulumi();
    if (pulumiPath) {
      print(`Pulumi CLI: ${pulumiPath} (local file backend in the temp project)`);
      cli = await CliStack.create({
        projectDir: installed.projectDir,
        program: PROGRAM,
        passphrase,
        config,
        stack: STACK,
        echo: true,
        pulumi: pulumiPath,
      });
      const run = async (
        title: string,
        step: () => Promise<{ ok: boolean; errors: string[] }>,
        expectFailure = false,
      ) => {
        print(`\n$ ${title}`);
        const result = await step();
        if (result.ok === expectFailure) {
          throw new StepFailed(expectFailure ? "a step meant to fail passed" : result.errors.join("\n"));
        }
      };
      const c = cli;
      const shown = async () => {
        await showWorkers(emu!);
        showRecord(endpointInCheckpoint(c.backendDir));
      };
      await run("pulumi up --yes", () => c.up());
      await shown();
      await showChatAnswer(emu);
      for (const change of CHANGES) {
        await editConfig(c, change);
        await run("pulumi up --yes", () => c.up(), change.fails !== undefined);
        await shown();
        if (change.fails === "release") {
          print(`\n# ${REFRESH_WHY}`);
          await run("pulumi refresh --yes", async () => noDrift(await c.refresh()));
        }
      }
      await run("pulumi destroy --yes --skip-preview", () => c.destroy());
    } else {
      print(
        "No `pulumi` CLI on PATH: running the same program through the deploy harness (Pulumi's own provider host).",
      );
      harness = await createDeployHarness({
        projectDir: installed.projectDir,
        program: PROGRAM,
        passphrase,
        config,
        stack: STACK,
      });
      const h = harness;
      // No CLI ran, so every line that looks like the CLI's says who printed it.
      const LABEL = "[deploy harness]";
      let previous: Record<string, unknown> | undefined;
      const show = (
        kind: StepView["kind"],
        previewOf: StepView["previewOf"],
        result: DeployResult,
        durationMs: number,
        before: Awaited<ReturnType<DeployHarness["state"]>>["resources"],
        after: Awaited<ReturnType<DeployHarness["state"]>>["resources"],
      ) => {
        const resources = result.resources.map((r) => ({
          ...r,
          diffKeys: r.op === "update" || r.op === "replace" ? changedInputs(before, after, r.urn) : undefined,
        }));
        print(
          renderStep({
            kind,
            previewOf,
            label: LABEL,
            project: PROJECT,
            stack: STACK,
            resources,
            // A refresh changes no stack output (the harness reports none for it): none shown.
            outputs: kind === "refresh" ? {} : result.outputs,
            previousOutputs: kind === "refresh" ? undefined : previous,
            errors: result.errors.filter(
              (e) => !result.resources.some((r) => r.error !== undefined && e.endsWith(r.error)),
            ),
            hostOutput: result.hostOutput,
            durationMs,
          }),
        );
      };
      const run = async (
        kind: "up" | "refresh" | "destroy",
        title: string,
        step: () => Promise<DeployResult>,
        expectFailure = false,
      ) => {
        print(`\n$ ${title}    ${LABEL}`);
        const before = (await h.state()).resources;
        const t = performance.now();
        const result = await step();
        const durationMs = performance.now() - t;
        const after = (await h.state()).resources;
        if (result.preview) {
          // `pulumi up` previews first and prints the plan before the update.
          show("preview", kind === "up" ? "update" : kind, result.preview, 0, before, before);
          print("");
        }
        if (result !== result.preview && !(result.preview && !result.preview.ok)) {
          show(kind, undefined, result, durationMs, before, after);
        }
        if (result.ok === expectFailure) {
          throw new StepFailed(expectFailure ? "a step meant to fail passed" : result.errors.join("\n"));
        }
        if (result.ok && kind === "up") previous = result.outputs;
      };
      const shown = async () => {
        await showWorkers(emu!);
        showRecord(endpointInState((await h.state()).resources));
      };
      await run("up", "pulumi up --yes", () => h.up());
      await shown();
      await showChatAnswer(emu);
      for (const change of CHANGES) {
        await editConfig(h, change, LABEL);
        await run("up", "pulumi up --yes", () => h.up(), change.fails !== undefined);
        await shown();
        if (change.fails === "release") {
          print(`\n# ${REFRESH_WHY}`);
          await run("refresh", "pulumi refresh --yes", async () => noDrift(await h.refresh()));
        }
      }
      await run("destroy", "pulumi destroy --yes --skip-preview", () => h.destroy({ skipPreview: true }));
      print("\nThe resources in the stack have been deleted.    [deploy harness]");
    }

    // Destroy left nothing behind: asked of the emulator itself, not of the stack's state.
    const left = await leftovers(emu);
    print(
      `\nLeft on the emulator after destroy: ${Object.entries(left)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(", ")}`,
    );
    if (Object.values(left).some((n) => n !== 0))
      throw new Error("destroy left objects on the emulator (above)");

    await cleanup();
    print(`\nDemo done in ${seconds(performance.now() - started)}: emulator stopped, temp files removed.`);
    print("Next: README.md shows `pulumi up` against the real service (runpod:apiKey, RUNPOD_API_KEY).");
    return 0;
  } catch (err) {
    await cleanup();
    if (err instanceof StepFailed) {
      process.stderr.write(`\nDemo failed: a deploy step reported errors (above).\n`);
    } else {
      process.stderr.write(`\nDemo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    }
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/**
 * Top-level input keys (without `__provider`) whose new value the old state's outputs do not carry:
 * what the provider's diff compares (old outputs against new inputs), so the `[diff: ...]` column
 * reads as the CLI's. An output carries an input when it equals it or, for an object, has every
 * field the input sets with the same value (outputs add the fields the service fills in, and a
 * refresh stores them as inputs too).
 */
function changedInputs(
  before: Array<{ urn: string; outputs: Record<string, unknown> }>,
  after: Array<{ urn: string; inputs: Record<string, unknown> }>,
  urn: string,
): string[] | undefined {
  const old = before.find((r) => r.urn === urn)?.outputs;
  const now = after.find((r) => r.urn === urn)?.inputs;
  if (!old || !now) return undefined;
  return Object.keys(now)
    .filter((k) => k !== "__provider" && !carries(old[k], now[k]))
    .sort();
}

/** Whether an output value carries an input value (see {@link changedInputs}). */
function carries(output: unknown, input: unknown): boolean {
  if (Array.isArray(input)) {
    return (
      Array.isArray(output) && output.length === input.length && input.every((x, i) => carries(output[i], x))
    );
  }
  if (input !== null && typeof input === "object") {
    if (output === null || typeof output !== "object" || Array.isArray(output)) return false;
    const o = output as Record<string, unknown>;
    return Object.entries(input).every(([k, v]) => carries(o[k], v));
  }
  return JSON.stringify(output) === JSON.stringify(input);
}

process.exitCode = await main();

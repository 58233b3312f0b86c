/**
 * `npm run demo`: the demo stack (`examples/demo`: a registry credential, a volume lookup and a
 * smoke-test job) deployed against the local emulator, with no account and no network.
 *
 * 1. Starts the emulator in-process from the built `dist/`, seeded with network volumes named
 *    "models" (in EU-RO-1 and in US-KS-2, so the data-centre filter matters) and the `echo` endpoint.
 * 2. Installs the packed package into a temp project (`npm pack`, dependencies linked from this
 *    repo's node_modules: offline), the way users get it.
 * 3. `pulumi up` (preview first, as a user's `pulumi up` does), prints the outputs. Then three
 *    redeploys of the `echo` endpoint over REST v2 (`PATCH /v2/serverless/echo`), each a new release
 *    that the emulator rolls out worker by worker, each followed by `pulumi up`: the smoke test's
 *    trigger is the endpoint's version (`getServerlessEndpointOutput`), so only it runs again (an
 *    in-place update), and it waits for the rollout before it submits (`ROLLOUT_WAIT` ->
 *    `ROLLED_OUT` in its timeline, `smokeEndpointVersion` the release it tested). The second
 *    release is broken (an env that makes its workers fail): `pulumi up` fails with the text the
 *    engine prints (the smoke test's reasons: the worker error, the release, the worker's log
 *    tail); the third fixes it and `up` passes under the same id. Then `pulumi destroy`.
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
import { createRequire } from "node:module";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
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

/** Volumes the emulator starts with: two named "models", the demo picks the EU-RO-1 one. */
const VOLUMES = [
  { id: "agv6w2qcg7", name: "models", size: 100, dataCenterId: "EU-RO-1" },
  { id: "q3ykc5r0zv", name: "models", size: 50, dataCenterId: "US-KS-2" },
];

/** Thrown when a deploy step fails; its diagnostics were printed already. */
class StepFailed extends Error {}

/** What the broken release's workers answer (the emulator's RUNPOD_EMULATOR_FAIL env). */
const WORKER_ERROR = "CUDA out of memory (demo: a broken release)";

/** How long the emulator's stale workers keep serving after a release before they are replaced, ms. */
const ROLLOUT_MS = 8_000;

/**
 * Redeploys the emulator's `echo` endpoint with `env` over REST v2: a new release, which the
 * emulator rolls out worker by worker (stale workers serve on for ROLLOUT_MS, then are replaced one
 * at a time). The demo does not wait for it: the next `pulumi up` re-runs the smoke test (its
 * trigger is the endpoint's version), and the JobRun waits for the rollout before it submits.
 * Prints what a user would have done instead (their own deploy tool).
 */
async function redeployEcho(emu: RunningEmulator, env: Record<string, string>, why: string) {
  const { RunpodClient } = createRequire(import.meta.url)(path.join(REPO_DIR, "dist", "index.js"));
  const client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrl });
  await client.serverless.update("echo", { env });
  const { endpointVersion } = await client.serverless.releases("echo");
  print(
    `\n# ${why}: PATCH /v2/serverless/echo ${JSON.stringify({ env })} makes release ${endpointVersion}, ` +
      `rolled out worker by worker (the emulator replaces stale workers after ${ROLLOUT_MS / 1000} s); ` +
      "the smoke test's trigger is the endpoint's version, and it waits for the rollout",
  );
}

/**
 * The demo's redeploys of the endpoint after the first `up`: [env of the new release, why, whether
 * the smoke test must fail]. Each is followed by `pulumi up`.
 */
const DEMO_RELEASES: ReadonlyArray<[Record<string, string>, string, boolean]> = [
  [{ MODEL_REVISION: "2" }, "the endpoint is redeployed", false],
  [{ MODEL_REVISION: "3", RUNPOD_EMULATOR_FAIL: WORKER_ERROR }, "a broken release", true],
  [{ MODEL_REVISION: "4" }, "the release is fixed", false],
];

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
    emu = await startEmulator({ volumes: VOLUMES, endpoints: ["echo:2"], rolloutMs: ROLLOUT_MS });
    print(
      `Emulator: RunPod REST + serverless API on ${emu.serverlessUrl} (in-process, offline; REST v2, the default)`,
    );
    print(`  volumes "models" in EU-RO-1 and US-KS-2; endpoint "echo"`);
    installed = await installPackedPackage();
    print(`Package: npm pack of pulumi-runpod-dynamic installed into ${installed.projectDir}`);

    const passphrase = randomBytes(18).toString("base64url");
    const config = {
      "runpod:apiKey": { secret: emu.apiKey },
      "runpod:restUrl": emu.restUrlV2, // REST v2: the default dialect, as on the real service
      "runpod:serverlessUrl": emu.serverlessUrl,
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
          throw new StepFailed(expectFailure ? "the broken release passed" : result.errors.join("\n"));
        }
      };
      await run("pulumi up --yes", () => cli!.up());
      for (const [env, why, fails] of DEMO_RELEASES) {
        await redeployEcho(emu, env, why);
        await run("pulumi up --yes", () => cli!.up(), fails);
      }
      await run("pulumi destroy --yes --skip-preview", () => cli!.destroy());
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
      // Issue 15 item 6: no CLI ran, so every line that looks like the CLI's says who printed it.
      const LABEL = "[deploy harness]";
      let previous: Record<string, unknown> | undefined;
      const show = (
        kind: StepView["kind"],
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
            label: LABEL,
            project: PROJECT,
            stack: STACK,
            resources,
            outputs: result.outputs,
            previousOutputs: previous,
            errors: result.errors.filter(
              (e) => !result.resources.some((r) => r.error !== undefined && e.endsWith(r.error)),
            ),
            durationMs,
          }),
        );
      };
      const run = async (
        kind: "up" | "destroy",
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
          show("preview", result.preview, 0, before, before);
          print("");
        }
        if (result !== result.preview && !(result.preview && !result.preview.ok)) {
          show(kind, result, durationMs, before, after);
        }
        if (result.ok === expectFailure) {
          throw new StepFailed(expectFailure ? "the broken release passed" : result.errors.join("\n"));
        }
        if (result.ok) previous = result.outputs;
      };
      await run("up", "pulumi up --yes", () => h.up());
      for (const [env, why, fails] of DEMO_RELEASES) {
        await redeployEcho(emu, env, why);
        await run("up", "pulumi up --yes", () => h.up(), fails);
      }
      await run("destroy", "pulumi destroy --yes --skip-preview", () => h.destroy());
      print("\nThe resources in the stack have been deleted.    [deploy harness]");
    }

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

/** Top-level input keys (without `__provider`) whose values differ between two states of `urn`. */
function changedInputs(
  before: Array<{ urn: string; inputs: Record<string, unknown> }>,
  after: Array<{ urn: string; inputs: Record<string, unknown> }>,
  urn: string,
): string[] | undefined {
  const old = before.find((r) => r.urn === urn)?.inputs;
  const now = after.find((r) => r.urn === urn)?.inputs;
  if (!old || !now) return undefined;
  const keys = new Set([...Object.keys(old), ...Object.keys(now)]);
  keys.delete("__provider");
  return [...keys].filter((k) => JSON.stringify(old[k]) !== JSON.stringify(now[k])).sort();
}

process.exitCode = await main();

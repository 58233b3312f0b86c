/**
 * A lookup in a program whose stack has no API key (nor `RUNPOD_API_KEY`): the run fails with one
 * line naming the config key and the variable, not a stack trace. The language host prints a
 * `RunError` by its message alone and anything else as `Running program ... failed with an
 * unhandled exception:` with the stack (`run` in @pulumi/pulumi cmd/run/run.js); it reports an
 * error once, at its first unhandled rejection, so an Output's failure is printed before the
 * serializer (runtime/rpc.js) could prefix the property name. The harness strips `RUNPOD_*` from
 * the program's environment.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness } from "../support/deployHarness.mts";

const projectDir = inject("installedProjectDir");
const NO_KEY =
  'No RunPod API key: set the secret stack config "runpod:apiKey" ' +
  "(pulumi config set --secret runpod:apiKey ...) or the environment variable RUNPOD_API_KEY.";

describe("a lookup without an API key", { timeout: 300_000 }, () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const run = async (body: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "lookup-config-"));
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: lookup-config\nruntime: nodejs\n");
    await writeFile(path.join(dir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(
      path.join(dir, "index.mjs"),
      `import * as pulumi from "@pulumi/pulumi";\nimport * as runpod from "pulumi-runpod-dynamic";\n${body}\n`,
    );
    const harness: DeployHarness = await createDeployHarness({
      projectDir,
      program: dir,
      passphrase: "lookup",
    });
    cleanups.push(async () => {
      await harness.dispose();
      await rm(dir, { recursive: true, force: true });
    });
    return harness.up();
  };

  it("awaited in the program: the run fails with the one-line message, no stack", async () => {
    const up = await run('await runpod.getNetworkVolumes({ name: "models" });');
    expect(up.errors).toEqual([NO_KEY]);
  });

  it("as an Output feeding a stack output: the same one line (the rejection is reported before serialization)", async () => {
    const up = await run(
      'export const version = runpod.getServerlessEndpointOutput({ id: "ep-1" }).version;',
    );
    expect(up.errors).toEqual([NO_KEY]);
  });
});

/**
 * The provider host's output where the CLI shows it. The engine does not hide a
 * dynamic provider's output: `newPlugin`'s `runtrace` (pkg/resource/plugin/plugin.go) logs every
 * non-blank line of its stderr as an info diagnostic with no URN, which the display attaches to the
 * stack's row (`processNormalEvent`) and `printDiagnostics` (pkg/backend/display/progress.go)
 * prints under `pulumi:pulumi:Stack (<project>-<stack>):`. The host writes `${e}: ${e.stack}` for a
 * failed check, diff, read or delete (sdk/nodejs/cmd/dynamic-provider/index.ts); our providers make
 * that one `error: <message>` line for an expected failure (`printsAsOneLine`, src/provider/shared.ts).
 *
 * Failed on the harness before: `DeployResult.hostOutput` did not exist (the host's stderr went
 * only to `logs` as `[host] ...`) and the host printed a stack dump for a wrong `Template.get` id.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startEmulator } from "../../src/emulator";
import { createDeployHarness, type DeployHarness, type DeployResult } from "../support/deployHarness.mts";
import { FaultProxy } from "../support/faultProxy.mts";
import { renderStep } from "../support/render.mts";

const projectDir = inject("installedProjectDir");
const TOKEN = "hf-token-never-printed-4711";
const PROJECT = "host-output";

const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import template from "pulumi-runpod-dynamic/dist/provider/template/resource.js";
const cfg = new pulumi.Config("app");
if (cfg.get("mode") === "get") {
  template.Template.get("adopted", "tpl-no-such-id");
} else {
  new template.Template("web", {
    name: "host-output-web",
    image: "acme/worker:1",
    env: { HF_TOKEN: cfg.requireSecret("token") },
  });
}
`;

const printed = (kind: "up" | "preview", r: DeployResult) =>
  renderStep({
    kind,
    project: PROJECT,
    stack: "dev",
    resources: r.resources,
    outputs: r.outputs,
    errors: r.errors.filter((e) => !r.resources.some((x) => x.error !== undefined && e.endsWith(x.error))),
    hostOutput: r.hostOutput,
    durationMs: 0,
  });

describe("the provider host's output under the stack, as the CLI prints it (plugin.go newPlugin runtrace; progress.go printDiagnostics)", () => {
  let emu: Awaited<ReturnType<typeof startEmulator>>;
  let proxy: FaultProxy;
  let programDir: string;
  let harness: DeployHarness;

  beforeAll(async () => {
    emu = await startEmulator({ port: 0 });
    proxy = await new FaultProxy(`http://127.0.0.1:${emu.port}`).start();
    programDir = await mkdtemp(path.join(os.tmpdir(), "host-output-program-"));
    await writeFile(path.join(programDir, "Pulumi.yaml"), `name: ${PROJECT}\nruntime: nodejs\n`);
    await writeFile(path.join(programDir, "package.json"), '{ "type": "module", "private": true }\n');
    await writeFile(path.join(programDir, "index.mjs"), PROGRAM);
    harness = await createDeployHarness({
      projectDir,
      program: programDir,
      passphrase: "host output",
      config: {
        "runpod:apiKey": { secret: emu.apiKey },
        "runpod:restUrl": `${proxy.url}/v2`,
        "runpod:serverlessUrl": emu.serverlessUrl,
        "app:token": { secret: TOKEN },
      },
    });
  });
  afterAll(async () => {
    await harness?.dispose();
    await proxy?.close();
    await emu?.close();
    if (programDir) await rm(programDir, { recursive: true, force: true });
  });

  it("prints a create's recovery warning under pulumi:pulumi:Stack, worded for a user, with no secret", async () => {
    // The service creates the template and answers 500: the provider lists, finds it, records it
    // and warns on the host's stderr (createReconciled's recoveredAfter).
    proxy.arm("POST", /\/v2\/templates$/, { kind: "fail-after" });
    const up = await harness.up();
    expect(up.errors).toEqual([]);
    const id = up.resources[0]?.id;
    expect(up.hostOutput).toEqual([
      `warning: Creating template "host-output-web" failed (POST /v2/templates failed with 500: internal error); ` +
        `the service had created it anyway (id ${id}, the one template named "host-output-web" that appeared), so it was recorded.`,
    ]);
    const text = printed("up", up);
    expect(text).toContain(
      ["Diagnostics:", `  pulumi:pulumi:Stack (${PROJECT}-dev):`, `    ${up.hostOutput[0]}`].join("\n"),
    );
    expect(JSON.stringify(up)).not.toContain(TOKEN);
    expect(JSON.stringify(up)).not.toContain(emu.apiKey);
    // The preview before it ran no create: its host said nothing, and it prints no Diagnostics.
    expect(up.preview?.hostOutput).toEqual([]);
    expect(printed("preview", up.preview!)).not.toContain("Diagnostics:");
    await harness.destroy();
  });

  it("prints a failed read (a wrong Template.get id) as one `error: <message>` line, not a stack dump", async () => {
    harness.setConfig("app:mode", "get");
    const up = await harness.up();
    const error = up.preview?.resources[0]?.error ?? up.resources[0]?.error;
    // The read runs in the preview, so the engine prefixes its text (README rule 9).
    expect(up.preview).toBeDefined();
    expect(error).toMatch(/^Preview failed: No template with id tpl-no-such-id in this account/);
    const message = (error ?? "").replace(/^Preview failed: /, "");
    const failed = up.preview ?? up;
    // The engine prints the message under the resource, and the host's line under the stack.
    expect(failed.hostOutput).toEqual([`error: ${message}`]);
    expect(failed.hostOutput.join("\n")).not.toMatch(/^\s+at /m);
    expect(printed(up.preview ? "preview" : "up", failed)).toContain(
      [
        "Diagnostics:",
        `  pulumi-nodejs:dynamic/runpod:Template (adopted):`,
        `    error: ${error}`,
        `  pulumi:pulumi:Stack (${PROJECT}-dev):`,
        "    error: preview failed",
        `    error: ${message}`,
      ].join("\n"),
    );
  });
});

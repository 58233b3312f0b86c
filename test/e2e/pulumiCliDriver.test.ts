/**
 * The CLI driver (`test/support/pulumiCli.mts`) against a stand-in `pulumi` executable that records
 * how it is called and answers as the documented CLI does (engine events in `--event-log`, JSON
 * from `stack output --json`). This checks the driver's side of the contract where the real CLI
 * is not installed: the commands and flags, the environment, secrets passed on stdin only, and
 * how engine events become per-resource ops and errors.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CliStack, findPulumi } from "../support/pulumiCli.mts";
import { EXAMPLES_DIR } from "./scenarios";

const URN = "urn:pulumi:dev::runpod-smoke-test::pulumi-nodejs:dynamic/runpod:JobRun::smoke";
const STACK_URN = "urn:pulumi:dev::runpod-smoke-test::pulumi:pulumi:Stack::runpod-smoke-test-dev";

// The stand-in CLI: logs each call as one JSON line to $FAKE_PULUMI_LOG and answers per command.
const FAKE = `#!/usr/bin/env node
const fs = require("node:fs");
const args = process.argv.slice(2);
let stdin = "";
try { stdin = fs.readFileSync(0, "utf8"); } catch {}
const env = {};
for (const k of ["PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_SKIP_UPDATE_CHECK", "RUNPOD_API_KEY"]) env[k] = process.env[k];
fs.appendFileSync(process.env.FAKE_PULUMI_LOG, JSON.stringify({ args, stdin, env, cwd: process.cwd() }) + "\\n");
const log = args.includes("--event-log") ? args[args.indexOf("--event-log") + 1] : undefined;
const events = (list) => fs.writeFileSync(log, list.map((e) => JSON.stringify(e)).join("\\n") + "\\n");
const step = (op, urn, type, id) => ({ resOutputsEvent: { metadata: { op, urn, type, new: { id, outputs: {} } } } });
if (args[0] === "up") {
  events([
    step("create", ${JSON.stringify(STACK_URN)}, "pulumi:pulumi:Stack", ""),
    step("create-replacement", ${JSON.stringify(URN)}, "pulumi-nodejs:dynamic/runpod:JobRun", "id-2"),
    step("replace", ${JSON.stringify(URN)}, "pulumi-nodejs:dynamic/runpod:JobRun", "id-2"),
    { resOutputsEvent: { metadata: { op: "delete-replaced", urn: ${JSON.stringify(URN)}, type: "pulumi-nodejs:dynamic/runpod:JobRun", old: { id: "id-1" } } } },
  ]);
  console.log("Updating (dev):");
} else if (args[0] === "destroy") {
  events([
    { resOpFailedEvent: { metadata: { op: "delete", urn: ${JSON.stringify(URN)}, type: "pulumi-nodejs:dynamic/runpod:JobRun", old: { id: "id-2" } } } },
    { diagnosticEvent: { urn: ${JSON.stringify(URN)}, severity: "error", message: "<{%fg 1%}>delete failed: job still running<{%reset%}>\\n" } },
  ]);
  process.exit(255);
} else if (args[0] === "stack" && args[1] === "output") {
  console.log(JSON.stringify({ jobId: "job-1", token: args.includes("--show-secrets") ? "plain" : "[secret]" }));
}
`;

describe("pulumi CLI driver against a stand-in CLI", () => {
  let dir: string;
  let fake: string;
  let logFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "fake-pulumi-"));
    fake = path.join(dir, "pulumi");
    logFile = path.join(dir, "calls.jsonl");
    await writeFile(fake, FAKE);
    await chmod(fake, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const calls = async () =>
    (await readFile(logFile, "utf8"))
      .trim()
      .split("\n")
      .map(
        (l) => JSON.parse(l) as { args: string[]; stdin: string; env: Record<string, string>; cwd: string },
      );

  it("finds pulumi on PATH and only there", () => {
    expect(findPulumi({ PATH: [path.join(dir, "nope"), dir].join(path.delimiter) })).toBe(fake);
    expect(findPulumi({ PATH: path.join(dir, "nope") })).toBeUndefined();
  });

  it("inits the stack on a file backend, sets secrets through stdin, and maps engine events to ops and errors", async () => {
    const stack = await CliStack.create({
      projectDir: inject("installedProjectDir"),
      program: path.join(EXAMPLES_DIR, "smoke-test"),
      passphrase: "pass phrase",
      config: { "runpod:apiKey": { secret: "rpa_SECRET_KEY" }, "runpod:restUrl": "http://127.0.0.1:1/v1" },
      pulumi: fake,
      env: { ...process.env, FAKE_PULUMI_LOG: logFile, RUNPOD_API_KEY: "from-the-developer-shell" },
    });
    try {
      const up = await stack.up();
      expect(up.errors).toEqual([]);
      expect(up.resources).toEqual([{ urn: URN, id: "id-2", op: "replace" }]);
      expect(up.outputs).toEqual({ jobId: "job-1", token: "[secret]" });
      expect(up.secretOutputs).toEqual(["token"]);
      expect(up.logs).toContain("Updating (dev):");

      const destroyed = await stack.destroy();
      expect(destroyed.ok).toBe(false);
      expect(destroyed.errors).toEqual(["delete failed: job still running"]);
      expect(destroyed.resources).toEqual([
        { urn: URN, id: "id-2", op: "failed", error: "delete failed: job still running" },
      ]);

      const log = await calls();
      expect(log.map((c) => c.args.slice(0, 3).join(" "))).toEqual([
        "stack init dev",
        "config set --secret",
        "config set runpod:restUrl",
        // `up` previews first, as a user's `pulumi up` does.
        "up --yes --non-interactive",
        "stack output --json",
        "destroy --yes --skip-preview",
      ]);
      expect(log[0]!.args).toEqual([
        "stack",
        "init",
        "dev",
        "--secrets-provider",
        "passphrase",
        "--non-interactive",
      ]);
      expect(log[1]!.args).toEqual(["config", "set", "--secret", "runpod:apiKey", "--stack", "dev"]);
      expect(log[1]!.stdin).toBe("rpa_SECRET_KEY");
      expect(log[3]!.args).toEqual(
        expect.arrayContaining(["--non-interactive", "--stack", "dev", "--event-log"]),
      );
      for (const call of log) {
        expect(call.args.join(" ")).not.toContain("rpa_SECRET_KEY");
        expect(call.cwd).toBe(stack.workDir);
        expect(call.env).toEqual({
          PULUMI_BACKEND_URL: `file://${stack.backendDir}`,
          PULUMI_CONFIG_PASSPHRASE: "pass phrase",
          PULUMI_SKIP_UPDATE_CHECK: "true",
        });
      }
      expect(stack.workDir.startsWith(path.join(inject("installedProjectDir"), "programs"))).toBe(true);
    } finally {
      await stack.dispose();
    }
  });
});

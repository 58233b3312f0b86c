/**
 * Conformance: the default of `--parallel` honours `PULUMI_PARALLEL`, as
 * `defaultParallel` (pkg/cmd/pulumi/operations/up.go) reads `env.Parallel` (sdk/go/common/env/env.go;
 * `IntValue.Value` parses with `strconv.ParseInt(v, 10, 64)`, 0 when unset or unparsable), else
 * `GOMAXPROCS × 4`. test/support/README.md rule 5. A harness that always used 4 × CPU count
 * fails it.
 */
import { availableParallelism } from "node:os";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeployHarness, type DeployHarness, defaultParallel } from "../support/deployHarness.mts";
import { installEchoFixture } from "../support/fixtures/echo.mts";

const projectDir = inject("installedProjectDir");
const program = path.join(__dirname, "programs", "echo");
const cpus4 = availableParallelism() * 4;

describe("the default --parallel (defaultParallel, env.Parallel)", { timeout: 300_000 }, () => {
  const harnesses: DeployHarness[] = [];
  beforeAll(async () => {
    await installEchoFixture(projectDir);
  });
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.dispose();
  });

  it("takes PULUMI_PARALLEL when it is a positive base-10 integer, capped at 2^31-1", () => {
    expect(defaultParallel({ PULUMI_PARALLEL: "3" })).toBe(3);
    expect(defaultParallel({ PULUMI_PARALLEL: "+5" })).toBe(5);
    expect(defaultParallel({ PULUMI_PARALLEL: "99999999999" })).toBe(2 ** 31 - 1);
  });

  it("falls back to GOMAXPROCS × 4 when PULUMI_PARALLEL is unset, not positive or does not parse", () => {
    for (const value of [
      undefined,
      "",
      "0",
      "-2",
      "abc",
      " 3",
      "3.0",
      "0x10",
      "1_000",
      "99999999999999999999",
    ]) {
      expect(defaultParallel({ PULUMI_PARALLEL: value })).toBe(cpus4);
    }
    expect(defaultParallel({ GOMAXPROCS: "2" })).toBe(8);
    expect(defaultParallel({ GOMAXPROCS: "0" })).toBe(cpus4);
  });

  it("a harness without `parallel` runs at most PULUMI_PARALLEL steps at once", async () => {
    const h = await createDeployHarness({
      projectDir,
      program,
      passphrase: "parallel",
      config: { "echo:names": "a,b,c" },
      env: { ...process.env, PULUMI_PARALLEL: "1" },
      skipPreview: true,
    });
    harnesses.push(h);
    expect(h.parallel).toBe(1);
    const result = await h.up();
    expect(result.errors).toEqual([]);
    expect(result.resources.map((r) => r.op)).toEqual(["create", "create", "create"]);
    expect(result.maxConcurrentSteps).toBe(1);
  });
});

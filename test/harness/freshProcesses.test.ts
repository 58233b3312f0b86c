/**
 * The harness starts a run's runner, program process and provider host before the run (the first
 * run's when the harness is made, an `up`'s update while its preview runs), so no run waits for
 * their start-up. What must still hold, as under the engine (a fresh host per deployment: `pulumi
 * up` loads one for its preview and another for its update): every run gets processes no run used
 * before, a process started for other config is not used, and nothing outlives `dispose`.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { DeployResult } from "../support/deployHarness.mts";
import { echoHarnessKit } from "./echoKit";

/** Live processes whose working directory is `dir` (the runner, the host and the program's run there), also once it is deleted. */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd !== dir && cwd !== `${dir} (deleted)`) continue;
      // A zombie (exited, not yet reaped) runs nothing.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      pids.push(Number(entry));
    } catch {
      // Exited while we looked, or not ours to read.
    }
  }
  return pids;
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(process.platform !== "linux")(
  "deploy harness: fresh processes every run, started in advance",
  {
    timeout: 300_000,
  },
  () => {
    const { make, setProgram, projectDir } = echoHarnessKit("fresh");

    it("two ups with their previews: four provider hosts and four program processes, none shared, each gone after its run; a runner started before a config change is not used; dispose leaves no process", async () => {
      const { h } = await make();
      h.skipPreview = false;
      await setProgram(
        h,
        [
          'const config = new pulumi.Config("echo");',
          'const a = new Echo("a", { value: config.get("value") ?? "unset" });',
          "export const value = a.value;",
        ].join("\n"),
      );
      // The first run's runner was started when the harness was made, with no config: not this run's.
      h.setConfig("echo:value", "v1");
      const first = await h.up();
      h.setConfig("echo:value", "v2");
      const second = await h.up();

      const runs: DeployResult[] = [first.preview!, first, second.preview!, second];
      for (const run of runs) expect(run.errors).toEqual([]);
      expect(runs.map((r) => r.resources.map((x) => x.op))).toEqual([
        ["create"],
        ["create"],
        ["update"],
        ["update"],
      ]);
      // The program saw each run's own config, its preview too.
      expect(runs.map((r) => r.outputs.value)).toEqual(["v1", "v1", "v2", "v2"]);
      expect((await h.state()).resources[0]?.inputs.value).toBe("v2");

      const hostPids = runs.map((r) => r.hostPid);
      const programPids = runs.map((r) => r.programPid);
      for (const pid of [...hostPids, ...programPids]) expect(pid).toEqual(expect.any(Number));
      expect(new Set(hostPids).size).toBe(4);
      expect(new Set(programPids).size).toBe(4);
      for (const pid of [...hostPids, ...programPids]) expect(isAlive(pid!)).toBe(false);

      const workDir = h.workDir;
      await h.dispose();
      expect(processesIn(workDir)).toEqual([]);
    });

    it("a destroy's preview starts no provider host (it asks the provider nothing); the destroy after it has its own", async () => {
      // Every node process of the harness's environment appends its pid and script here as it starts.
      const started = path.join(projectDir, `started-${process.pid}-${Date.now()}.log`);
      const preload = `${started}.cjs`;
      await writeFile(
        preload,
        `require("node:fs").appendFileSync(${JSON.stringify(started)}, process.pid + " " + process.argv[1] + "\\n");\n`,
      );
      const { h } = await make({ env: { NODE_OPTIONS: `--require ${JSON.stringify(preload)}` } });
      const up = await h.up();
      expect(up.errors).toEqual([]);
      const before = existsSync(started) ? readFileSync(started, "utf8") : "";
      const destroyed = await h.destroy({ skipPreview: false });
      expect(destroyed.errors).toEqual([]);
      expect(destroyed.preview?.errors).toEqual([]);
      expect(destroyed.preview?.resources.map((r) => r.op)).toEqual(["delete"]);
      expect(destroyed.resources.map((r) => r.op)).toEqual(["delete"]);
      const hostsStarted = readFileSync(started, "utf8")
        .slice(before.length)
        .split("\n")
        .filter((l) => l.includes("dynamic-provider"))
        .map((l) => Number(l.split(" ")[0]));
      expect(destroyed.preview?.hostPid).toBeUndefined();
      expect(hostsStarted).toEqual([destroyed.hostPid]);
    });

    it("dispose stops a runner started in advance and never used, with its host and program processes", async () => {
      const { h } = await make();
      const workDir = h.workDir;
      // The runner for the first run is running already.
      expect(processesIn(workDir).length).toBeGreaterThan(0);
      await h.dispose();
      expect(processesIn(workDir)).toEqual([]);
    });
  },
);

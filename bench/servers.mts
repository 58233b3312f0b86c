/**
 * Servers the benchmarks run in child processes, so that the load generator (this process) and
 * the server do not share one event loop: the emulator through its CLI (`dist/emulator/cli.js`,
 * as `npx runpod-emulator` runs it) and the bare `node:http` baseline (`bareServer.mts`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { REPO_DIR } from "./lib.mts";

/** A server running in a child process. */
export interface ChildServer {
  /** The first line it printed, parsed (the emulator's ready line, or `{port}`). */
  ready: Record<string, unknown>;
  /** Stops it (SIGTERM) and waits for the exit. */
  close(): Promise<void>;
}

async function startChild(args: string[], what: string): Promise<ChildServer> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO_DIR,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, "exit");
  const first = await Promise.race([
    once(lines, "line").then(([line]) => line as string),
    exited.then(([code]) => {
      throw new Error(`${what} exited with ${code} before it was ready:\n${stderr}`);
    }),
  ]);
  lines.close();
  return {
    ready: JSON.parse(first) as Record<string, unknown>,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/** The emulator CLI with `flags` (e.g. `["--endpoint", "echo:4", "--rate-limits", "off"]`). */
export async function startEmulatorProcess(
  flags: string[],
): Promise<ChildServer & { serverlessUrl: string; apiKey: string }> {
  const server = await startChild(
    [path.join(REPO_DIR, "dist", "emulator", "cli.js"), ...flags],
    "runpod-emulator",
  );
  return {
    ...server,
    serverlessUrl: server.ready.serverlessUrl as string,
    apiKey: server.ready.apiKey as string,
  };
}

/** The bare node:http server answering `body` to everything. */
export async function startBareServer(body: string): Promise<ChildServer & { url: string }> {
  const server = await startChild([path.join(REPO_DIR, "bench", "bareServer.mts"), body], "bare server");
  return { ...server, url: `http://127.0.0.1:${server.ready.port as number}` };
}

/**
 * fastify is an optional peer dependency: requiring the package (or the emulator module) never
 * loads it, and starting an emulator without it fails with what to install. Run in child processes
 * on the compiled dist/ (vitest's globalSetup rebuilds it), as users load the package.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(__dirname, "../..");

/** Runs `script` in a fresh Node (this one) in the repo root; `preload` runs first. */
function node(script: string, preload = "") {
  const result = spawnSync(process.execPath, ["-e", `${preload}\n${script}`], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr };
}

const FASTIFY_LOADED = `Object.keys(require.cache).filter((k) => k.includes("/node_modules/fastify/")).length`;

/** Makes `require("fastify")` fail as it does when the package is not installed. */
const WITHOUT_FASTIFY = `
const Module = require("node:module");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "fastify") {
    const err = new Error("Cannot find module 'fastify'");
    err.code = "MODULE_NOT_FOUND";
    throw err;
  }
  return resolveFilename.call(this, request, ...rest);
};`;

describe("the emulator's server dependency", () => {
  it("is not loaded by requiring the package root or the emulator module", () => {
    const run = node(`
      require("./dist/index.js");
      const root = ${FASTIFY_LOADED};
      require("./dist/emulator/index.js");
      console.log(JSON.stringify({ root, emulator: ${FASTIFY_LOADED} }));`);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ root: 0, emulator: 0 });
  });

  it("is loaded when an emulator starts", () => {
    const run = node(`
      require("./dist/index.js").startEmulator({}).then(async (emu) => {
        console.log(${FASTIFY_LOADED} > 0);
        await emu.close();
      });`);
    expect(run.stdout).toBe("true");
  });

  it("when missing, makes startEmulator reject naming what to install, and the package still loads", () => {
    const run = node(
      `
      const pkg = require("./dist/index.js");
      if (typeof pkg.RunpodClient !== "function") throw new Error("the package did not load");
      pkg.startEmulator({}).then(
        () => console.log("started"),
        (err) => console.log(err.message),
      );`,
      WITHOUT_FASTIFY,
    );
    expect(run.stdout).toMatch(
      /^The RunPod emulator needs fastify, which is not installed: run `npm install fastify`/,
    );
  });

  it("when missing, makes the CLI exit 1 with that message", async () => {
    const dir = await mkdtemp(join(tmpdir(), "emu-nofastify-"));
    try {
      const preload = join(dir, "without-fastify.js");
      await writeFile(preload, WITHOUT_FASTIFY);
      const result = spawnSync(process.execPath, ["-r", preload, "dist/emulator/cli.js", "--port", "0"], {
        cwd: ROOT,
        encoding: "utf8",
      });
      expect(result.stderr).toMatch(
        /^runpod-emulator: The RunPod emulator needs fastify.*npm install fastify/,
      );
      expect(result.status).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

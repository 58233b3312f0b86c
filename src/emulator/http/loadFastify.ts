/**
 * Loads fastify, the emulator's HTTP server, when an emulator starts and not before: it is an
 * optional peer dependency, so a Pulumi program that never starts the emulator does not need it
 * installed, and requiring the package never loads it.
 */
import type fastify from "fastify";

/** The fastify factory, or an error saying what to install. */
export function loadFastify(): typeof fastify {
  try {
    return require("fastify") as typeof fastify;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "MODULE_NOT_FOUND" && /['"]fastify['"]/.test((err as Error).message)) {
      throw Object.assign(
        new Error(
          "The RunPod emulator needs fastify, which is not installed: run `npm install fastify` " +
            "(an optional peer dependency of pulumi-runpod-dynamic, needed only to run the emulator).",
          { cause: err },
        ),
        { code: "MODULE_NOT_FOUND" },
      );
    }
    throw err;
  }
}

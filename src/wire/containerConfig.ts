/**
 * `ContainerConfig` of the REST v2 document (what templates, pods and endpoints share), as a
 * request shape and as an answer shape, and which of its `env` values count as secrets.
 */
import { z } from "zod";
import { int, nonEmpty, str, strings } from "./fields";

/** `ContainerConfig` of the v2 document: what templates, pods and endpoints share. */
export const containerConfigShape = {
  /** Arguments passed to the container entrypoint. */
  args: str("args").optional(),
  /** Container disk in GB (ephemeral). */
  disk: int("disk").min(1, { error: "disk must be at least 1 GB" }).optional(),
  /** Environment variables. */
  env: z.record(z.string(), str("env value"), { error: "env must be an object of strings" }).optional(),
  /** Docker image reference. */
  image: nonEmpty("image").optional(),
  /** Exposed ports as `port/protocol`, e.g. `8000/http`. */
  ports: strings("ports").optional(),
  /** Container registry credential id (private images), or null for none. */
  registry: nonEmpty("registry").nullable().optional(),
};

/** `ContainerConfig` as the service answers it: every field optional, parsed loosely. */
export const containerConfigAnswerShape = {
  /** Container image, e.g. `runpod/pytorch:2.4.0`. */
  image: z.string().optional(),
  /** Arguments the container starts with (its command line after the image's entrypoint). */
  args: z.string().optional(),
  /** Container disk, GB (wiped on restart). */
  disk: z.number().optional(),
  /** Exposed ports as `<port>/<http|tcp>`, e.g. `8888/http`. */
  ports: z.array(z.string()).optional(),
  /** Environment variables of the container; values may be secrets (tokens, passwords). */
  env: z.record(z.string(), z.string()).optional(),
  /** Id of the container registry credential used to pull the image; absent or null when none. */
  registry: z.string().nullable().optional(),
};

/**
 * Env names the local emulator reads as instructions (`RUNPOD_EMULATOR_FAIL=<message>` makes a
 * broken release for demos and tests), not as the user's secrets: providers that redact an
 * endpoint's env values from what they print leave these values readable, so the failure they
 * stage can be seen. Every other env value counts as a secret.
 */
export const EMULATOR_CONTROL_ENV_PREFIX = "RUNPOD_EMULATOR_";

/**
 * The values of an `env` map that are secrets: every string value but the emulator's
 * instructions. Anything that is not a map gives none. The one rule for the client, the providers
 * and their messages.
 */
export function secretEnvValues(env: unknown): string[] {
  if (env === null || typeof env !== "object" || Array.isArray(env)) return [];
  return Object.entries(env as Record<string, unknown>)
    .filter(([name]) => !name.startsWith(EMULATOR_CONTROL_ENV_PREFIX))
    .map(([, value]) => value)
    .filter((value): value is string => typeof value === "string");
}

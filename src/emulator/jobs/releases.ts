/**
 * Releases: what a worker runs (one version of its endpoint: image and env), the timing of rolling
 * updates, and the env switches that make a release misbehave for demos and tests of smoke tests.
 */
import type { Handler } from "./handlers";

/** Image of the endpoints that `--endpoint` makes: they run the built-in worker or `--handlers`. */
export const BUILTIN_IMAGE = "runpod-emulator/builtin:latest";

/** How long a worker replacing a stale one initializes when the endpoint has no `coldStartMs`, ms. */
export const WORKER_START_MS = 500;
/** Default time stale workers keep serving after a new release before replacement starts, ms. */
export const ROLLOUT_DEFAULT_MS = 3000;

/** What a worker runs: one release of its endpoint. */
export interface WorkerRelease {
  /** The endpoint version of this release (1, 2, ...). */
  version: number;
  image: string;
  env: Record<string, string>;
}

/**
 * Environment variables that make a release misbehave (for demos and tests of smoke tests):
 * - `RUNPOD_EMULATOR_FAIL=<message>`: every job on a worker of that release ends FAILED with the
 *   message (after logging it), whatever the handler;
 * - `RUNPOD_EMULATOR_ERROR_OUTPUT=<message>`: every job ends COMPLETED with output
 *   `{ "error": <message> }` (the handler returned its error instead of raising it);
 * - `RUNPOD_EMULATOR_LATENCY_MS=<n>` (load-balancer endpoints): every request's answer comes n ms
 *   of the emulator clock late. On a load-balancer endpoint `RUNPOD_EMULATOR_FAIL` makes every
 *   request but health answer 500 `{"error": <message>}`.
 */
export const MISBEHAVE_ENV = {
  fail: "RUNPOD_EMULATOR_FAIL",
  errorOutput: "RUNPOD_EMULATOR_ERROR_OUTPUT",
  unhealthy: "RUNPOD_EMULATOR_UNHEALTHY",
  latencyMs: "RUNPOD_EMULATOR_LATENCY_MS",
} as const;

/** The image marker of a release whose workers never become healthy (the image cannot be pulled). */
export const UNPULLABLE_IMAGE_MARKER = "unpullable";

/**
 * Why workers of `release` can never become healthy, as the log line their start ends with; undefined
 * for a healthy release. An image reference containing {@link UNPULLABLE_IMAGE_MARKER} (any case, in the
 * name or the tag: `ghcr.io/acme/app:unpullable`) cannot be pulled; a release whose env sets
 * `RUNPOD_EMULATOR_UNHEALTHY` (any value, never printed) crashes at start.
 */
export function unhealthyReason(release: WorkerRelease): string | undefined {
  if (release.image.toLowerCase().includes(UNPULLABLE_IMAGE_MARKER)) {
    return `failed to pull image ${release.image}: manifest unknown`;
  }
  if (release.env[MISBEHAVE_ENV.unhealthy] !== undefined) {
    return `container exited with code 1 during start (${MISBEHAVE_ENV.unhealthy} is set); worker is unhealthy`;
  }
  return undefined;
}

/** The handler a release's env imposes ({@link MISBEHAVE_ENV}) whatever the endpoint's own, or undefined. */
export function misbehavingHandler(release: WorkerRelease): Handler | undefined {
  const fail = release.env[MISBEHAVE_ENV.fail];
  if (fail !== undefined) {
    return (_job, { log }) => {
      log(`${MISBEHAVE_ENV.fail} is set: this release fails every job`);
      throw new Error(fail || "handler failed");
    };
  }
  const errorOutput = release.env[MISBEHAVE_ENV.errorOutput];
  if (errorOutput !== undefined) {
    return (_job, { log }) => {
      log(`${MISBEHAVE_ENV.errorOutput} is set: returning an error as the output`);
      return { error: errorOutput };
    };
  }
  return undefined;
}

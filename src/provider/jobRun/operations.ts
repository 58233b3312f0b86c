/**
 * The JobRun provider's operations: what the serialized provider (`resource.ts`, stored in every
 * JobRun's state as `__provider`) calls in the provider host, loaded by package name.
 *
 * Compatibility contract: `__provider` texts already stored in users' states call these exports
 * by name, with these arguments, using whatever version of the package is installed when they
 * run. Keep every name and signature below, and accept the outputs older versions recorded:
 *
 * | provider method | calls                                                              |
 * |-----------------|--------------------------------------------------------------------|
 * | `configure`     | `resolveSettings(req.config)`                                      |
 * | `check`         | `checkJobRunArgs(news, settings?)` (0.1.0 passes no settings)      |
 * | `diff`          | `diffJobRun(olds, news)`                                           |
 * | `create`        | `createJobRun(contextFromSettings(settings), news)`                |
 * | `update`        | `updateJobRun(contextFromSettings(settings), id, news, olds?)`     |
 * | `read`          | `readJobRun(contextFromSettings(settings), id, props)`             |
 * | `delete`        | `deleteJobRun(contextFromSettings(settings), props)`               |
 *
 * States written by 0.1.0 load `dist/provider/jobRun/lifecycle.js` (`compat/jobRun/lifecycle.ts`),
 * which re-exports these;
 * states written since load this module (`dist/provider/jobRun/operations.js`). Texts written since
 * every resource shares one provider class (`../common/dynamicProvider.ts`) call only `operations`
 * below, method by method; texts written before it call the named exports above
 * (test/provider/mainState.test.ts replays them).
 *
 * Nothing a worker or the service echoes reaches the host unredacted: every error these
 * operations throw, its `reasons`, every progress line, and every result field they return has
 * the s3Config credentials and the API key replaced by `[redacted]` (`../common/engineText.ts`, `../smokeTestJob/outputs.ts`).
 */
import { randomUUID } from "node:crypto";
import { forEngine, withProviderErrors } from "../common/engineText";
import { defineOperations } from "../common/operations";
import type { RunpodSettings } from "../config";
import { contextFromSettings, type LifecycleContext, restDialectOf } from "../smokeTestJob/context";
import { type CheckFailure, checkJobRunArgs as checkArgs } from "../smokeTestJob/jobArgsCheck";
import { jobRunSecrets, runAndRecord } from "../smokeTestJob/runAndRecord";
import { diffJobRun } from "./diff";
import { cancelOnDelete, refreshRecordedJob, settlePreviousJob } from "./recordedJob";

export { resolveSettings } from "../config";
export { contextFromSettings, type LifecycleContext } from "../smokeTestJob/context";
export { JobRunFailedError, jobRunSecrets, runAndRecord } from "../smokeTestJob/runAndRecord";
export { diffJobRun } from "./diff";

/**
 * `check`: the arguments field by field, no network (see `../smokeTestJob/jobArgsCheck.ts`). With the provider's
 * settings, an explicit `rollout: "wait"` on a REST v1 `restUrl` fails here, before any deploy.
 */
export function checkJobRunArgs(news: Record<string, unknown>, settings?: RunpodSettings): CheckFailure[] {
  return forEngine(checkedFields(settings, news), news, SECRET_INPUTS);
}

/** Inputs whose values are secret: a check failure never prints them. */
const SECRET_INPUTS = ["s3Config", "redact", "http"];

function checkedFields(settings: RunpodSettings | undefined, news: Record<string, unknown>): CheckFailure[] {
  return checkArgs(news, { restDialect: settings === undefined ? undefined : restDialectOf(settings) });
}

/** `create`: a new JobRun id (a UUID of its own, not the job id), then the run. */
export function createJobRun(ctx: LifecycleContext, news: Record<string, unknown>) {
  return runAndRecord(ctx, randomUUID(), news);
}

/**
 * `update`: runs the job again under the same id. The engine calls it when arguments or
 * triggers changed, and after a failed run even when nothing changed. A job of the last run
 * (`olds`) still queued or running is cancelled first, or left running when that run had
 * `cancelOnTimeout: false` (see `recordedJob.ts`).
 */
export async function updateJobRun(
  ctx: LifecycleContext,
  id: string,
  news: Record<string, unknown>,
  olds?: Record<string, unknown>,
) {
  if (olds !== undefined) {
    const secrets = [...jobRunSecrets(news), ...(ctx.secrets ?? [])];
    await withProviderErrors(secrets, () => settlePreviousJob(ctx, olds));
  }
  const { outs } = await runAndRecord(ctx, id, news);
  return { outs };
}

/**
 * `read` (refresh): the service's current view of the recorded job. When the service no longer
 * has it (results expire: 30 min for /run, 60 s for /runsync) the recorded result is kept.
 */
export async function readJobRun(ctx: LifecycleContext, id: string, props: Record<string, unknown>) {
  return withProviderErrors(ctx.secrets ?? [], () => refreshRecordedJob(ctx, id, props));
}

/**
 * `delete`: cancels the recorded job only while it may still run (recorded as, and still,
 * IN_QUEUE or IN_PROGRESS). A finished or expired job (404) needs nothing.
 */
export async function deleteJobRun(ctx: LifecycleContext, props: Record<string, unknown>) {
  await withProviderErrors(ctx.secrets ?? [], () => cancelOnDelete(ctx, props));
}

/** The operations behind the shared provider class (`../common/dynamicProvider.ts`). */
export const operations = defineOperations({
  secretInputs: SECRET_INPUTS,
  check: (settings, _olds, news) => ({ inputs: news, failures: checkedFields(settings, news) }),
  diff: (_settings, _id, olds, news) => diffJobRun(olds, news),
  create: (settings, inputs) => createJobRun(contextFromSettings(settings), inputs),
  read: (settings, id, props) => readJobRun(contextFromSettings(settings), id, props ?? {}),
  update: (settings, id, olds, news) => updateJobRun(contextFromSettings(settings), id, news, olds),
  delete: (settings, _id, props) => deleteJobRun(contextFromSettings(settings), props),
});

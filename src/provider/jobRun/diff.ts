/**
 * `diff`: when a JobRun runs again. Any change of arguments or triggers re-runs the job as an
 * in-place update (same resource id, `~ update` in the plan, never a replacement), and so does a
 * recorded run that did not pass or never finished, even with unchanged arguments: the engine
 * forgets a partial failure after `pulumi refresh`, so the verdict is kept in the outputs
 * (`passed`). No network; values still unknown (a preview) count as changed.
 */
import { isTerminalStatus } from "../../client";
import { containsUnknown } from "../common/unknown";
import { JOB_RUN_ARG_NAMES, resolveJobRunArgs } from "../smokeTestJob/jobArgs";
import { canonicalJson, s3ConfigMatches } from "../smokeTestJob/s3Digest";
import { judge } from "../smokeTestJob/verdict";

/**
 * Names of the arguments whose new value differs from the recorded one (`__provider` and the
 * result fields are not arguments). A value still unknown (preview) counts as a change.
 */
export async function changedArgs(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<string[]> {
  const changed: string[] = [];
  for (const name of JOB_RUN_ARG_NAMES) {
    const next = news[name];
    if (containsUnknown(next)) {
      changed.push(name);
      continue;
    }
    const same =
      name === "s3Config"
        ? await s3ConfigMatches(olds.s3ConfigDigest, next)
        : canonicalJson(olds[name]) === canonicalJson(next);
    if (!same) changed.push(name);
  }
  return changed;
}

/**
 * True when the recorded run met `expect`: its recorded `passed`, or, for states written before
 * `passed` existed, the recorded status and output judged against the recorded `expect`. A run
 * that never reached a terminal status did not pass.
 */
export function recordedRunPassed(olds: Record<string, unknown>): boolean {
  if (typeof olds.passed === "boolean") return olds.passed;
  const { status, jobId, endpointId } = olds;
  if (typeof status !== "string" || typeof jobId !== "string" || typeof endpointId !== "string") return false;
  if (!isTerminalStatus(status)) return false;
  try {
    // States without `passed` were judged before `expect.allowErrorOutput` existed: judge them by
    // the rules they ran under, so an upgrade does not re-run jobs that passed.
    const recordedExpect = (olds.expect ?? {}) as Record<string, unknown>;
    const args = resolveJobRunArgs({
      ...olds,
      expect: { ...recordedExpect, allowErrorOutput: recordedExpect.allowErrorOutput ?? true },
    });
    const attempts = typeof olds.attempts === "number" ? olds.attempts : 1;
    return judge(args, { status, output: olds.output, attempts, timeline: [] }) === undefined;
  } catch {
    return false;
  }
}

/** Re-runs on any change of arguments, and after a run that did not pass (see the module comment). */
export async function diffJobRun(olds: Record<string, unknown>, news: Record<string, unknown>) {
  const changed = await changedArgs(olds, news);
  const rerun = changed.length > 0 || !recordedRunPassed(olds);
  return { changes: rerun, replaces: [] as string[], deleteBeforeReplace: false };
}

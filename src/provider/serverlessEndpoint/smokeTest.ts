/**
 * The gate of a `ServerlessEndpoint` release (`smokeTest`): the job JobRun would run, `runs` times
 * on the new release, judged against `maxFailures`; what the gate records (`lastSmokeTest`); and
 * the messages of a failed gate (rolled back, kept, rollback failed, failed on create).
 *
 * The job's arguments are JobRun's own ({@link JobRunArgsObject}, picked: no `endpointId`, which
 * is the endpoint's; no `triggers`, as the release is the trigger; no `rollout`, as the gate always
 * checks that each job's worker runs the new release; no `collectStream`, as the gate keeps no
 * stream; no `s3Config` and no `redact`, as the gate echoes its arguments into the outputs, where a
 * credential must not be: the endpoint's own `env` values and the API key are redacted anyway).
 * `http` comes with them: a load-balancer endpoint's gate sends HTTP probes instead of jobs, and
 * `smokeTest` is then stored as a secret when `http.headers` is given (the resource does it).
 * Each job runs through JobRun's own execution (`runAndRecord`: rollout wait, submission, release
 * check, `expect`, the failing worker's log tail), so a failed gate says exactly what a failed
 * JobRun would.
 */
import { z } from "zod";
import type { ServerlessRelease } from "../../client";
import { CANCELLED } from "../clock";
import { boundEntry, describeError } from "../common/wording";
import { usd } from "../cost/prices";
import type { LifecycleContext } from "../smokeTestJob/context";
import { JobRunArgsObject, jobRunCrossChecks, resolveJobRunArgs } from "../smokeTestJob/jobArgs";
import { formatTimeline, type TimelineEntry } from "../smokeTestJob/result";
import { runAndRecord } from "../smokeTestJob/runAndRecord";

/** Most jobs one gate runs. */
export const MAX_SMOKE_RUNS = 100;

/** Strict schema of `smokeTest`: JobRun's job arguments plus `runs`, `maxFailures`, `onFailure`. */
export const SmokeTestSchema = JobRunArgsObject.omit({
  endpointId: true,
  triggers: true,
  rollout: true,
  collectStream: true,
  s3Config: true,
  redact: true,
})
  .extend({
    runs: z
      .int({ error: "runs must be an integer" })
      .min(1, { error: "runs must be at least 1" })
      .max(MAX_SMOKE_RUNS, { error: `runs must be at most ${MAX_SMOKE_RUNS}` })
      .default(1)
      .meta({ description: "How many jobs to run on the new release (1 .. 100), at once.", default: "1" }),
    maxFailures: z
      .int({ error: "maxFailures must be an integer" })
      .min(0, { error: "maxFailures must be at least 0" })
      .default(0)
      .meta({
        description: "How many of them may fail with the release still passing (less than `runs`).",
        default: "0",
      }),
    onFailure: z
      .enum(["rollback", "keep"], { error: 'onFailure must be "rollback" or "keep"' })
      .default("rollback")
      .meta({
        description:
          'What a failed smoke test does on an update: `"rollback"` restores the previous container\n' +
          'settings as a new release; `"keep"` leaves the failed release serving. Either way the step fails.',
        default: '"rollback"',
      }),
  })
  .superRefine((args, ctx) => {
    jobRunCrossChecks(args, ctx);
    const runsValid = Number.isInteger(args.runs) && args.runs >= 1 && args.runs <= MAX_SMOKE_RUNS;
    if (runsValid && args.maxFailures >= args.runs) {
      ctx.addIssue({
        code: "custom",
        path: ["maxFailures"],
        message:
          `maxFailures must be less than runs (got maxFailures ${args.maxFailures}, runs ${args.runs}): ` +
          "with as many allowed failures as jobs the gate could never fail",
      });
    }
  });

/** `smokeTest` as the provider receives it. */
export type SmokeTestInputs = z.input<typeof SmokeTestSchema>;
/** `smokeTest` with its defaults applied. */
export type SmokeTest = z.output<typeof SmokeTestSchema>;

/** Every `smokeTest` field name, in the schema's order. */
export const SMOKE_TEST_FIELDS = Object.keys(SmokeTestSchema.shape);

/** What the last gate found (the `lastSmokeTest` output). No secret: ids, versions and statuses. */
export interface SmokeTestRecord {
  /** The release tested (the endpoint's `version`); null when unknown. @integer */
  version: number | null;
  /** True when at most `maxFailures` jobs failed. */
  passed: boolean;
  /** The jobs run, in order (a run that could not submit one has none). */
  jobIds: string[];
  /** How many jobs failed. @integer */
  failures: number;
  /** One line per job: `<jobId>: IN_QUEUE 0.01 s -> COMPLETED 0.05 s` (and `FAILED` when it failed). */
  timeline: string[];
  /**
   * What the jobs cost, USD, estimated: each job's execution time × the hourly list price of one
   * worker, summed. Absent when no job has both (a probe, no price in the catalog).
   */
  costUsd?: number;
}

/** One job of a gate. */
export interface GateJob {
  jobId?: string;
  /** True for an http probe (a load-balancer endpoint's smoke test), which has no job id. */
  probe?: boolean;
  passed: boolean;
  /** JobRun's failure text (worker error, expect mismatches, timeline, log tail). */
  failure?: string;
  timeline: TimelineEntry[];
  /** What the job cost (JobRun's `costUsd`), when known. */
  costUsd?: number;
}

/** A gate's verdict: the record, and the first failing job's text when it failed. */
export interface GateVerdict {
  record: SmokeTestRecord;
  /** Why the release failed: JobRun's text of the first failing job (or the rollout's failure). */
  why?: string;
  /** True when the release never rolled out, so no job ran (`why` is the rollout's failure). */
  stalled?: boolean;
  /**
   * True when the deployment was cancelled before every job ended: the release is not judged
   * (`record.passed` false, so the next up tests it again), and nothing follows (no rollback).
   */
  cancelled?: boolean;
}

/** The verdict on a release whose rollout stalled or timed out: failed, with no job run. */
export function rolloutVerdict(version: number | null, rolloutFailure: string): GateVerdict {
  return {
    record: { version, passed: false, jobIds: [], failures: 0, timeline: [] },
    why: rolloutFailure,
    stalled: true,
  };
}

/** Judges the jobs of a gate: passed when at most `maxFailures` failed. */
export function judgeGate(
  version: number | null,
  jobs: readonly GateJob[],
  maxFailures: number,
): GateVerdict {
  const failed = jobs.filter((j) => !j.passed);
  const record: SmokeTestRecord = {
    version,
    passed: failed.length <= maxFailures,
    jobIds: jobs.flatMap((j) => (j.jobId === undefined ? [] : [j.jobId])),
    failures: failed.length,
    timeline: jobs.map(
      (j, i) =>
        `${j.jobId ?? (j.probe ? `probe ${i + 1}` : `run ${i + 1} (no job)`)}: ${formatTimeline(j.timeline)}${
          j.passed ? "" : " (failed)"
        }`,
    ),
  };
  const costs = jobs.flatMap((j) => (typeof j.costUsd === "number" ? [j.costUsd] : []));
  if (costs.length > 0) record.costUsd = usd(costs.reduce((a, b) => a + b, 0));
  return record.passed ? { record } : { record, why: failed[0]?.failure };
}

/**
 * Runs the gate's `runs` jobs on the endpoint (at once), each through JobRun's execution with the
 * release check, and judges them. A job that ran on another version than `version` fails.
 */
export async function runGate(
  ctx: LifecycleContext,
  endpointId: string,
  version: number | null,
  smoke: SmokeTest,
): Promise<GateVerdict> {
  const { runs, maxFailures, onFailure: _onFailure, ...job } = smoke;
  const news = { ...job, endpointId, rollout: "wait" };
  // Fails here, not per job, when the arguments cannot make a job (check already refused them).
  resolveJobRunArgs(news);
  const probe = job.http !== undefined;
  const gateCtx: LifecycleContext = { ...ctx, log: (line) => ctx.log(inSmokeTestTerms(line)) };
  const one = async (): Promise<GateJob> => {
    try {
      const { outs } = await runAndRecord(gateCtx, "smoke-test", news);
      const timeline = (outs.timeline ?? []) as TimelineEntry[];
      const cost = typeof outs.costUsd === "number" ? { costUsd: outs.costUsd } : {};
      if (version !== null && outs.endpointVersion !== undefined && outs.endpointVersion !== version) {
        const what = probe ? `the http probe was answered by` : `job ${outs.jobId} ran on`;
        return {
          jobId: outs.jobId,
          probe,
          passed: false,
          timeline,
          ...cost,
          failure:
            `${what} version ${outs.endpointVersion}, not the release under test (version ` +
            `${version}): the endpoint changed while the smoke test ran`,
        };
      }
      return { jobId: outs.jobId, probe, passed: true, timeline, ...cost };
    } catch (error) {
      const props = (error as { properties?: Record<string, unknown> }).properties;
      return {
        jobId: typeof props?.jobId === "string" ? props.jobId : undefined,
        probe,
        passed: false,
        failure: inSmokeTestTerms(describeError(error)),
        timeline: Array.isArray(props?.timeline) ? (props.timeline as TimelineEntry[]) : [],
        ...(typeof props?.costUsd === "number" ? { costUsd: props.costUsd } : {}),
      };
    }
  };
  const jobs = await Promise.all(Array.from({ length: runs }, one));
  if (ctx.signal?.aborted === true && jobs.some((j) => !j.passed)) return cancelledGate(version, jobs);
  return judgeGate(version, jobs, maxFailures);
}

/**
 * The verdict of a gate the deployment's cancellation cut short: not judged (a job the user
 * stopped says nothing about the release), recorded as not passed on `version` so the next up
 * tests that release again. The jobs that had not ended are marked `(not finished)`; `why` is the
 * first one's text (where it stopped, and whether its job was cancelled on the service).
 */
export function cancelledGate(version: number | null, jobs: readonly GateJob[]): GateVerdict {
  const unfinished = jobs.filter((j) => !j.passed);
  const record: SmokeTestRecord = {
    version,
    passed: false,
    jobIds: jobs.flatMap((j) => (j.jobId === undefined ? [] : [j.jobId])),
    failures: 0,
    timeline: jobs.map(
      (j, i) =>
        `${j.jobId ?? (j.probe ? `probe ${i + 1}` : `run ${i + 1} (no job)`)}: ${formatTimeline(j.timeline)}${
          j.passed ? "" : " (not finished)"
        }`,
    ),
  };
  return { record, why: unfinished[0]?.failure, cancelled: true };
}

// ---------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------

/**
 * JobRun's texts (progress lines, failure messages) as the gate's: the gate runs JobRun's own
 * execution, whose texts name a JobRun the user of a `ServerlessEndpoint` never declared. The
 * subject becomes the smoke test, and JobRun's `Hint:` line goes (it says `pulumi up` runs the job
 * again; the gate's message ends with its own next step).
 */
export function inSmokeTestTerms(text: string): string {
  return text
    .split("\n")
    .filter((line) => !line.startsWith("Hint: "))
    .map((line) =>
      line
        .replace(/^JobRun failed on endpoint \S+, (job|HTTP probe) /, (_, unit: string) =>
          unit === "job" ? "Smoke-test job " : "Smoke-test probe ",
        )
        .replace(/^JobRun endpoint /, "Smoke test on endpoint ")
        .replace(/^JobRun /, "The smoke test "),
    )
    .join("\n");
}

/** `version 2`, or `version (unknown)`. */
const release = (version: number | null | undefined) => `version ${version ?? "(unknown)"}`;

/** The head shared by every failed gate: which release failed, and the count. */
function failedHead(label: string, verdict: GateVerdict, smoke: SmokeTest): string {
  const { record } = verdict;
  if (verdict.stalled) {
    return `ServerlessEndpoint ${label}: release ${release(record.version)} did not roll out (its smoke test could not run)`;
  }
  const unit = smoke.http === undefined ? "job" : "probe";
  const ran = `${record.failures} of ${smoke.runs} ${unit}${smoke.runs === 1 ? "" : "s"} failed, maxFailures ${smoke.maxFailures}`;
  return `ServerlessEndpoint ${label}: the smoke test of release ${release(record.version)} failed (${ran})`;
}

/** The lines saying why, shared by every failed gate. */
function whyLines(verdict: GateVerdict, smoke: SmokeTest): string[] {
  if (verdict.stalled) {
    return [
      `Why release ${release(verdict.record.version)} failed (its rollout):`,
      verdict.why ?? "(no failure text)",
    ];
  }
  const unit = smoke.http === undefined ? "job" : "probe";
  return [
    `Why release ${release(verdict.record.version)} failed (the first failing ${unit}):`,
    verdict.why ?? "(no failure text)",
    `Smoke-test ${unit}s: ${verdict.record.timeline.join("; ")}`,
  ];
}

/** The gate failed and the previous configuration was rolled out again, as `servingVersion`. */
export function rolledBackMessage(
  label: string,
  verdict: GateVerdict,
  smoke: SmokeTest,
  servingVersion: number | null | undefined,
  previousImage: unknown,
  alsoPutBack: readonly string[] = [],
): string {
  const image = typeof previousImage === "string" ? ` (image ${previousImage})` : "";
  const also =
    alsoPutBack.length === 0
      ? []
      : [
          `The other changes of this update (${alsoPutBack.join(", ")}) were put back with it: they apply at ` +
            "once, and the state keeps the previous arguments after a failed update.",
        ];
  return [
    `${failedHead(label, verdict, smoke)}, so it was rolled back.`,
    `Now serving: ${release(servingVersion)}, a new release carrying the previous configuration${image}, on every worker.`,
    ...also,
    ...whyLines(verdict, smoke),
    `The state records what runs (the previous configuration at ${release(servingVersion)}), so the next ` +
      "pulumi up tries the new release again: fix it (the image, env or start command) first, or set " +
      'smokeTest.onFailure: "keep" to leave a failing release serving.',
  ].join("\n");
}

/**
 * Who made a release and when, as far as the service's release record tells (each entry bounded):
 * `release rel_1, created by user u_1, at 2026-..., source MANUAL`.
 */
export function releaseOrigin(serving: ServerlessRelease): string {
  const by = serving.createdByUserId
    ? `user ${boundEntry(serving.createdByUserId)}`
    : "a user the release does not name";
  return [
    `release ${boundEntry(serving.id)}`,
    `created by ${by}`,
    ...(serving.createdAt ? [`at ${boundEntry(serving.createdAt)}`] : []),
    ...(serving.source ? [`source ${boundEntry(serving.source)}`] : []),
  ].join(", ");
}

/**
 * The gate failed, but while it ran someone else's change landed (the endpoint's version moved past
 * the release under test): nothing was rolled back, and the message says what runs and who made it,
 * as far as the service's release record tells.
 */
export function movedPastMessage(
  label: string,
  verdict: GateVerdict,
  smoke: SmokeTest,
  servingVersion: number,
  serving: ServerlessRelease | undefined,
): string {
  const made = serving === undefined ? "the service lists no release for it" : releaseOrigin(serving);
  return [
    `${failedHead(label, verdict, smoke)}, and it was NOT rolled back: while the smoke test ran, the endpoint ` +
      `moved past the release under test to ${release(servingVersion)}, a change made elsewhere (${made}).`,
    `Rolling back would overwrite that change, and the failures may be that change's rather than ${release(verdict.record.version)}'s.`,
    ...whyLines(verdict, smoke),
    `The state records what runs now (${release(servingVersion)}). Find out who deployed it, then run pulumi up ` +
      "again: it applies this program's configuration over that change and tests it.",
  ].join("\n");
}

/** The gate failed and the rollback failed too: the failed release still serves. */
export function rollbackFailedMessage(
  label: string,
  verdict: GateVerdict,
  smoke: SmokeTest,
  rollbackError: unknown,
  heldVersion?: number | null,
): string {
  const failed = release(verdict.record.version);
  const recorded =
    heldVersion === undefined
      ? "The state records the failed release as what runs. Fix the release and run pulumi up again (the " +
        "smoke test runs again), or restore the previous configuration in the program and run pulumi up."
      : `The service already holds the previous configuration as ${release(heldVersion)}, but its rollout did ` +
        "not complete, so the workers that serve still run the failed release. The state records the " +
        "configuration the service holds, so the next pulumi up applies the new release again: fix it first.";
  return [
    `${failedHead(label, verdict, smoke)}, and rolling it back FAILED: the endpoint is still on the failed release (${failed}).`,
    `Rollback error: ${describeError(rollbackError)}`,
    ...whyLines(verdict, smoke),
    recorded,
  ].join("\n");
}

/**
 * The deployment was cancelled while the gate ran: the release is neither judged nor rolled back
 * (the user asked to stop; a rollback is a write and a wait), and the next up tests it again.
 */
export function gateCancelledMessage(label: string, verdict: GateVerdict, smoke: SmokeTest): string {
  const unit = smoke.http === undefined ? "job" : "probe";
  return [
    `ServerlessEndpoint ${label}: the smoke test of release ${release(verdict.record.version)} did not finish: ${CANCELLED}.`,
    `Where the first unfinished ${unit} stopped:`,
    verdict.why ?? "(no text)",
    `Smoke-test ${unit}s: ${verdict.record.timeline.join("; ")}`,
    `The release was not judged and not rolled back: it serves, untested. The state records its smoke test as ` +
      "not passed, so the next pulumi up tests it again.",
  ].join("\n");
}

/**
 * The gate failed, but the deployment was cancelled before the rollback started: nothing is rolled
 * back (a rollback is a write and a wait the user asked not to make).
 */
export function notRolledBackMessage(label: string, verdict: GateVerdict, smoke: SmokeTest): string {
  return [
    `${failedHead(label, verdict, smoke)}, and it was NOT rolled back: ${CANCELLED} before the rollback ` +
      `started, so the failed release (${release(verdict.record.version)}) still serves.`,
    ...whyLines(verdict, smoke),
    "The state records the failed smoke test on what runs, so the next pulumi up tests the release again " +
      "(and rolls it back if it fails again): fix it first.",
  ].join("\n");
}

/** The gate failed and `onFailure: "keep"` left the failed release serving. */
export function keptMessage(label: string, verdict: GateVerdict, smoke: SmokeTest): string {
  return [
    `${failedHead(label, verdict, smoke)}; onFailure is "keep", so the failed release (${release(verdict.record.version)}) still serves.`,
    ...whyLines(verdict, smoke),
    "Fix the release and run pulumi up again: the smoke test runs again.",
  ].join("\n");
}

/** The gate of a new endpoint's first release failed: nothing to roll back to. */
export function createFailedMessage(label: string, verdict: GateVerdict, smoke: SmokeTest): string {
  return [
    `${failedHead(label, verdict, smoke)}. The endpoint was created, and there is no previous release to roll ` +
      `back to: it serves the failed release (${release(verdict.record.version)}).`,
    ...whyLines(verdict, smoke),
    "The endpoint is recorded in the state: fix the release and run pulumi up again (the smoke test runs again).",
  ].join("\n");
}

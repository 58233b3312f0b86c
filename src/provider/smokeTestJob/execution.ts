/**
 * The state one JobRun execution shares between its steps (waiting, the service-side retry,
 * stream capture): what it found so far (`result`), how it reports progress, and its deadline.
 */
import type { Endpoint, Job, ServerlessWorkerList } from "../../client";
import { type Clock, isCancellation, systemClock, wallNow } from "../clock";
import { boundEntry, printable } from "../common/wording";
import type { ResolvedJobRunArgs } from "./jobArgs";
import { type JobRunResult, seconds } from "./result";
import type { WorkerListReader } from "./staleWorkers";
import type { CaptureSink, Collector } from "./stream";
import type { WorkerPolls } from "./workerPoll";

/** What an execution needs from its surroundings; replaceable in tests. */
export interface RunContext {
  endpoint: Pick<
    Endpoint,
    "id" | "run" | "runSync" | "waitForJob" | "retry" | "cancel" | "stream" | "status"
  >;
  /** Progress lines (status changes with elapsed time). */
  log: (line: string) => void;
  /**
   * Time and timers of the execution's deadline and of its rollout wait.
   * @default the clock of `workerPolls`, else the real one
   */
  clock?: Clock;
  /** Monotonic milliseconds. @default `clock.now` */
  now?: () => number;
  /** Wall clock, ms since the epoch. @default `clock.wallNow` */
  wallNow?: () => number;
  /**
   * Reads the endpoint's workers (REST v2), for `rollout: "wait"`. Without it `rollout` defaults
   * to `"ignore"`, and an explicit `"wait"` fails before any request.
   */
  workers?: WorkerListReader;
  /** Why `workers` is absent, for the failure of an explicit `rollout: "wait"`. */
  workersUnavailable?: string;
  /**
   * The client's key of the shared worker poll (`clientPollKey(settings)`): rollout waits with the
   * same key on one endpoint share one read loop. Without it, only waits through the same reader do.
   */
  workersKey?: string;
  /** The shared worker poll loops the rollout wait joins. @default the host's (`workerPolls`) */
  workerPolls?: WorkerPolls<ServerlessWorkerList>;
  /**
   * The deployment's cancellation (`RunpodSettings.signal`): it ends the execution's waits as its
   * deadline does, and the job is then cancelled as at the deadline (`cancelOnTimeout`), so the
   * run ends at once as a failure that says so. @default never
   */
  cancellation?: AbortSignal;
}

/** One execution in progress. */
export interface Execution {
  args: ResolvedJobRunArgs;
  endpoint: RunContext["endpoint"];
  /** What the execution found so far; becomes the outputs. */
  result: JobRunResult;
  log: (line: string) => void;
  /** `endpoint E job J`, for progress lines. */
  where: () => string;
  /** Records a status in the timeline (once per change) and logs it. */
  note: (status: string) => void;
  /** Aborts when `timeoutMs` has passed or the deployment is cancelled: every wait stops on it. */
  signal: AbortSignal;
  /** Aborts when `timeoutMs` has passed, only: what may cut a request already sent (a job's submission). */
  deadline: AbortSignal;
  /** True when {@link Execution.signal} aborted because the deployment was cancelled (not the deadline). */
  cancelled: () => boolean;
  /** Milliseconds left until the deadline. */
  remaining: () => number;
  /** Wall clock, ms since the epoch (for `startedAt`, `completedAt`). */
  wallNow: () => number;
  /** The worker poll loops its rollout waits join (the host's when undefined). */
  workerPolls?: WorkerPolls<ServerlessWorkerList>;
  /** Where the job's worker was placed, when the release check read it (`JobRunOutcome.placement`). */
  placement?: { gpuTypeId?: string | null; gpuCount?: number };
  /** Service-side retries (`/retry`) used on the job submitted last. */
  retriesUsed: number;
  /** Where stream capture writes, and the capture in progress (with `collectStream`). */
  sink: CaptureSink;
  collector?: Collector;
}

/**
 * Starts an execution: its `timeoutMs` deadline (an abort timer; `stop` clears it), an empty
 * result, and the timeline's `note`, which logs `JobRun <where>: <status> after <s>`. A job and a
 * probe start the same way; `where` names what runs (`endpoint E job J`, `endpoint E probe P`).
 */
export function startExecution(
  args: ResolvedJobRunArgs,
  ctx: Pick<RunContext, "log" | "now" | "wallNow" | "clock" | "workerPolls" | "cancellation"> & {
    endpoint: RunContext["endpoint"];
  },
  where: (result: JobRunResult) => string,
): { run: Execution; stop: () => void } {
  const clock = runClock(ctx);
  const now = ctx.now ?? (() => clock.now());
  const started = now();
  const deadline = started + args.timeoutMs;
  const elapsed = () => Math.max(0, Math.round(now() - started));
  const deadlineController = new AbortController();
  const timer = clock.setTimeout(
    () => deadlineController.abort(new Error(`timeoutMs (${args.timeoutMs} ms) expired`)),
    args.timeoutMs,
  );
  const { cancellation } = ctx;
  const signal =
    cancellation === undefined
      ? deadlineController.signal
      : AbortSignal.any([deadlineController.signal, cancellation]);
  const result: JobRunResult = { attempts: 0, timeline: [] };
  const whereNow = () => where(result);
  const run: Execution = {
    args,
    endpoint: ctx.endpoint,
    result,
    log: ctx.log,
    where: whereNow,
    note: (said) => {
      // The service's status text: one printable line in the timeline, the log and messages.
      const status = boundEntry(said);
      const last = result.timeline[result.timeline.length - 1];
      if (last?.status === status) return;
      const entry = { status, atMs: elapsed() };
      result.timeline.push(entry);
      ctx.log(`JobRun ${whereNow()}: ${status} after ${seconds(entry.atMs)}`);
    },
    signal,
    deadline: deadlineController.signal,
    // The first to abort gives `signal` its reason: a deadline already passed stays the why.
    cancelled: () => isCancellation(signal.reason, cancellation),
    remaining: () => deadline - now(),
    wallNow: ctx.wallNow ?? (() => wallNow(clock)),
    workerPolls: ctx.workerPolls,
    retriesUsed: 0,
    sink: { endpoint: ctx.endpoint, result, log: ctx.log, where: whereNow },
  };
  return { run, stop: () => clock.clearTimeout(timer) };
}

/** The clock of an execution: its own, else that of the poll loops it joins, else the real one. */
function runClock(ctx: Pick<RunContext, "clock" | "workerPolls">): Clock {
  return ctx.clock ?? ctx.workerPolls?.clock ?? systemClock;
}

function errorText(error: unknown): string | undefined {
  if (error === undefined || error === null || error === "") return undefined;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** Copies a job's status, output, error, times and worker into the result. */
export function recordJob(result: JobRunResult, job: Job): void {
  // The service's status text, one printable line: messages print it (`the job ended <status>`).
  result.status = boundEntry(job.status);
  if (job.output !== undefined) result.output = job.output;
  const error = errorText(job.error);
  // Control characters escaped (the message prints it); its length is bounded where it is stored.
  if (error !== undefined) result.error = printable(error, Number.POSITIVE_INFINITY, true);
  if (typeof job.delayTime === "number") result.delayTime = job.delayTime;
  if (typeof job.executionTime === "number") result.executionTime = job.executionTime;
  if (typeof job.workerId === "string" && job.workerId !== "") {
    result.workerId = printable(job.workerId, MAX_WORKER_ID_CHARS);
  }
}

/** Most characters of a `workerId` kept (the service's ids are about 20; it is stored and printed). */
export const MAX_WORKER_ID_CHARS = 128;

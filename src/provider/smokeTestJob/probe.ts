/**
 * A JobRun's HTTP probe of a `type: "LOAD_BALANCER"` endpoint (`http`), read top to bottom: find
 * the endpoint's base URL (a QUEUE endpoint fails here, before anything is sent), wait out a
 * rollout (`rollout: "wait"`, the same shared wait as a job's), send the request within
 * `timeoutMs`, check which release answered, and judge the answer (`judgeProbe`: status, then the
 * same `expect` rules as a job's output, then the latency).
 *
 * Which release answered: the load balancer does not say which worker served the request, so after
 * the answer the probe reads `/workers` once: the answer is the current release's when every ready
 * worker runs the endpoint's current version and that version is the one the rollout wait found
 * before sending. Otherwise (a release rolled out meanwhile) it waits out the rollout and sends
 * once more; a second miss fails clearly, as a job run twice on old workers does.
 *
 * Sending: the client's retry policy with the strict rule of a non-idempotent request whatever the
 * method (only a 429, a 503 or a refused connection is resent), so a 500 is judged, not retried
 * until a flaky release passes.
 */
import {
  type LoadBalancer,
  type LoadBalancerResponse,
  type ServerlessWorkerList,
  ValidationError,
} from "../../client";
import { CANCELLED } from "../clock";
import { describeError } from "../common/wording";
import { type Execution, type RunContext, startExecution } from "./execution";
import type { ResolvedJobRunArgs } from "./jobArgs";
import type { JobRunOutcome } from "./result";
import { rolloutBeforeResend, rolloutReader, waitOutRollout, workerReadHint } from "./rolloutSteps";
import { isStaleWorker, RELEASE_CHECK_TIMEOUT_MS } from "./staleWorkers";
import { JobRunSubmitError } from "./submission";
import { failureMessage, judgeProbe, probeRequest } from "./verdict";

/** The load-balancer calls a probe makes: `client.loadBalancer(id)`. */
export type ProbeTarget = Pick<LoadBalancer, "id" | "baseUrl" | "request">;

/** What a probe needs beyond a job's context. */
export interface ProbeContext extends RunContext {
  /** The endpoint's HTTP interface; absent on a REST v1 `restUrl` (`loadBalancerUnavailable` says so). */
  loadBalancer?: (endpointId: string) => ProbeTarget;
  loadBalancerUnavailable?: string;
}

/** Worker statuses that serve requests. */
const READY = new Set(["RUNNING", "IDLE"]);

/** Timeline entry when the request is sent; the answer's is `HTTP_<status>`. */
export const REQUEST_SENT = "REQUEST_SENT";
/** Timeline entry when no answer came (timeout, connection failure). */
export const NO_ANSWER = "NO_ANSWER";

/** Which release answered, from one read of the workers after the answer. */
type AnswerRelease =
  | { kind: "current"; version: number | undefined; workers: string[] }
  | { kind: "other"; how: string }
  | { kind: "unreadable"; how: string; cause: unknown };

/** The ready workers' release after an answer (see the module comment). */
export function releaseOfAnswer(
  list: ServerlessWorkerList,
  versionAtSend: number | undefined,
): AnswerRelease {
  const version = typeof list.endpointVersion === "number" ? list.endpointVersion : undefined;
  const ready = list.workers.filter((w) => READY.has(w.status));
  const stale = ready.filter((w) => isStaleWorker(w, version));
  if (stale.length > 0) {
    return {
      kind: "other",
      how: `${stale.length} of ${ready.length} ready workers run an older version than the endpoint's ${version ?? "(unknown)"}`,
    };
  }
  if (version !== undefined && versionAtSend !== undefined && version !== versionAtSend) {
    return {
      kind: "other",
      how: `the endpoint moved from version ${versionAtSend} to ${version} while the request was answered`,
    };
  }
  return { kind: "current", version, workers: ready.map((w) => w.id) };
}

/**
 * Runs one probe. Resolves with the outcome once an answer was judged or the probe gave up after
 * sending; rejects with `JobRunSubmitError` when nothing was sent (a QUEUE endpoint, a failed
 * lookup, the rollout wait).
 */
export async function executeHttpProbe(args: ResolvedJobRunArgs, ctx: ProbeContext): Promise<JobRunOutcome> {
  const http = args.http;
  if (http === undefined) throw new Error("executeHttpProbe needs http arguments");
  const { run, stop } = startExecution(
    args,
    ctx,
    () => `endpoint ${args.endpointId} probe ${probeRequest(args)}`,
  );
  const { result } = run;
  try {
    const lb = await probeTarget(args, ctx, run.signal);
    const workers = rolloutReader(args, ctx);
    let versionAtSend =
      workers === undefined ? undefined : await waitOutRollout(run, workers, ctx.workersKey);
    for (let send = 1; ; send += 1) {
      const failure = await sendProbe(run, lb);
      if (failure !== undefined) return { result, failure };
      if (workers === undefined) return { result, failure: judgeProbe(args, result) };
      let release: AnswerRelease;
      try {
        const list = await workers(args.endpointId, {
          signal: AbortSignal.timeout(RELEASE_CHECK_TIMEOUT_MS),
        });
        release = releaseOfAnswer(list, versionAtSend);
      } catch (error) {
        release = {
          kind: "unreadable",
          how: `reading the endpoint's workers failed (${describeError(error)})`,
          cause: error,
        };
      }
      if (release.kind === "current") {
        result.endpointVersion = release.version;
        const verdict = judgeProbe(args, result);
        return verdict === undefined ? { result } : { result, failure: verdict, logWorkers: release.workers };
      }
      if (release.kind === "unreadable" || send > 1) {
        return { result, failure: judgeProbe(args, result) ?? probeReleaseFailure(run, release) };
      }
      const waited = await rolloutBeforeResend(run, workers, ctx.workersKey, {
        found: `the answer may come from an older release (${release.how})`,
        resend: "sending it again",
        forget: ["httpStatus", "output", "latencyMs", "bodyTruncated", "completedAt"],
      });
      if ("error" in waited) return { result, failure: probeReleaseFailure(run, release, waited.error) };
      versionAtSend = waited.version;
    }
  } finally {
    stop();
  }
}

/** The endpoint's HTTP interface, its base URL read first: a QUEUE endpoint fails before any request. */
async function probeTarget(
  args: ResolvedJobRunArgs,
  ctx: ProbeContext,
  signal: AbortSignal,
): Promise<ProbeTarget> {
  const prefix = `JobRun cannot probe endpoint ${args.endpointId} over HTTP`;
  if (ctx.loadBalancer === undefined) {
    throw new JobRunSubmitError(
      `${prefix}: ${ctx.loadBalancerUnavailable ?? "no REST v2 client to read its requestUrls.base"}. Nothing was sent.`,
      false,
      undefined,
    );
  }
  const lb = ctx.loadBalancer(args.endpointId);
  try {
    await lb.baseUrl({ signal });
  } catch (error) {
    const queue = (error as { path?: unknown[] }).path?.[0] === "type";
    if (error instanceof ValidationError && !queue) {
      // The base URL is not a host the API key may go to (checkCredentialScope): say why, send nothing.
      throw new JobRunSubmitError(`${prefix}: ${error.message}`, false, error);
    }
    const hint = queue
      ? "http probes LOAD_BALANCER endpoints; for a QUEUE endpoint give input (a queue job) instead of http."
      : `${workerReadHint(error)}.`;
    throw new JobRunSubmitError(
      `${prefix}: ${queue ? (error as Error).message : `reading the endpoint failed (${describeError(error)})`}. ` +
        `Nothing was sent. Hint: ${hint}`,
      false,
      error,
    );
  }
  return lb;
}

/** Sends the probe once and records its answer; returns the failure when no answer came. */
async function sendProbe(run: Execution, lb: ProbeTarget): Promise<string | undefined> {
  const { args, result } = run;
  const http = args.http as NonNullable<ResolvedJobRunArgs["http"]>;
  result.attempts += 1;
  result.startedAt = new Date(run.wallNow()).toISOString();
  run.note(REQUEST_SENT);
  let answer: LoadBalancerResponse;
  try {
    const timeoutMs = Math.max(1, Math.floor(run.remaining()));
    answer = await lb.request(
      { method: http.method, path: http.path, body: http.body, headers: http.headers },
      { signal: run.signal, timeoutMs, idempotent: false },
    );
  } catch (error) {
    run.note(NO_ANSWER);
    result.completedAt = new Date(run.wallNow()).toISOString();
    const why = run.cancelled()
      ? `no answer when ${CANCELLED}`
      : run.signal.aborted
        ? `no answer within timeoutMs (${args.timeoutMs} ms)`
        : `the request got no answer (${describeError(error)})`;
    result.error = why;
    return failureMessage(
      args,
      result,
      why,
      "Check the endpoint's workers and health (getServerlessEndpoint, the /ping route): a worker that never " +
        "becomes ready leaves the load balancer without anyone to answer; raise timeoutMs for a slow cold start.",
    );
  }
  result.httpStatus = answer.status;
  result.latencyMs = answer.latencyMs;
  if (answer.body !== undefined) result.output = answer.body;
  if (answer.bodyTruncated) result.bodyTruncated = true;
  result.completedAt = new Date(run.wallNow()).toISOString();
  run.note(`HTTP_${answer.status}`);
  return undefined;
}

/** The failure when the probe cannot say the current release answered. */
function probeReleaseFailure(
  run: Execution,
  release: Exclude<AnswerRelease, { kind: "current" }>,
  error?: unknown,
): string {
  const { args, result } = run;
  const what =
    release.kind === "unreadable"
      ? `the endpoint answered HTTP ${result.httpStatus}, but JobRun could not tell which release answered: ${release.how}`
      : error !== undefined
        ? `the answer may come from an older release (${release.how}), and waiting for the rollout to send the ` +
          `probe again failed: ${describeError(error)}`
        : `the probe was sent twice and neither answer can be told to come from the endpoint's current release ` +
          `(${release.how}): the endpoint was redeployed during the probe`;
  const hint =
    release.kind === "unreadable"
      ? `${workerReadHint(release.cause)}, then run \`pulumi up\` again; rollout: "ignore" skips this check.`
      : "Run `pulumi up` again once the endpoint's deploy has settled (getServerlessEndpoint: rolloutInProgress " +
        "false); give the JobRun `triggers: [endpoint.version]` so every redeploy probes it again.";
  return failureMessage(args, result, what, hint);
}

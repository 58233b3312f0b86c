/**
 * `JobRun`: a deploy-time smoke test of a serverless endpoint. During `pulumi up` it submits a
 * job, waits for it to end, and fails the deploy when the endpoint does not answer as expected.
 *
 * When the job runs:
 * - on create (the first `pulumi up` with the resource);
 * - when any argument changes, including `triggers` (the resource is updated in place: same
 *   resource id, a new job, `~ update` in the plan);
 * - on the next `pulumi up` after a failed run (status not as expected, `expect.output` not met,
 *   or `timeoutMs` expired), even with unchanged arguments: the failed run is kept in state with
 *   `passed: false`, and `diff` asks for an update, also after a `pulumi refresh` (which makes the
 *   engine forget the partial failure);
 * - before that re-run, a job of the previous run still queued or running is cancelled first
 *   (unless `cancelOnTimeout` is false: it is then left running, and the timeline and log say so).
 *
 * When it does NOT run:
 * - on later `pulumi up`s with unchanged arguments after a successful run;
 * - on `pulumi preview` (nothing is sent, not even in `check` or `diff`);
 * - on `pulumi refresh`, which only reads the recorded job's status (and keeps the recorded
 *   result once the service has expired it);
 * - on `pulumi destroy`, which only cancels the job if it is still queued or running.
 *
 * To run it on every deploy, give it a trigger that changes every time, as with
 * pulumi-command: `triggers: [new Date().toISOString()]` (or a random value). To run it on every
 * redeploy of the endpoint, whichever tool made it: `triggers: [getServerlessEndpointOutput({ id
 * }).version]`.
 *
 * Which release it tests (`rollout: "wait"`, the default on REST v2): it waits for a rollout
 * under way to end before submitting, checks after the job which release ran it
 * (`endpointVersion`), and submits once more when a release rolled out during the test.
 *
 * HTTP probes (`http`, for `type: "LOAD_BALANCER"` endpoints): instead of a queue job it sends one
 * request to the endpoint's own path (`requestUrls.base` + `http.path`) and judges the answer's
 * status (`http.expectStatus`), body (`expect.output`, `expect.outputSchema`,
 * `expect.allowErrorOutput`) and latency (`expect.maxExecutionMs`); outputs `httpStatus`,
 * `latencyMs` and the body as `output`. `http` is stored as a secret when it has `headers`.
 */
import * as pulumi from "@pulumi/pulumi";
import { RunpodResource, resourceSpec } from "../common/resource";
import { RESOURCES } from "../resources";
import { type JobRunArgs, secretWhenHeaders } from "../smokeTestJob/jobInputs";
import type { JobRunTimelineEntry } from "../smokeTestJob/result";

export type { JobRunArgs, JobRunTimelineEntry };

/** A deploy-time smoke-test job. See the module documentation for when it runs. */
export class JobRun extends RunpodResource<JobRunArgs> {
  /**
   * How it registers: every argument given, as given (check names the unknown ones). The
   * operations module path is stored in every `__provider` text (see `operations.ts`).
   */
  protected static override readonly spec = resourceSpec<JobRunArgs>({
    row: RESOURCES.JobRun,
    // biome-ignore format: one line a group (verdict, job, answer, http probe, time and cost, argument digest)
    outputs: [
      "passed", "status", "error", "attempts", "timeline",
      "jobId", "workerId", "endpointVersion", "workerLogTail",
      "output", "outputTruncated", "outputBytes", "outputDepth", "stream", "streamTruncated",
      "httpStatus", "latencyMs", "bodyTruncated",
      "delayTime", "executionTime", "startedAt", "completedAt", "costUsd",
      "s3ConfigDigest",
    ],
  });

  /**
   * The verdict of the last run: true when the job ended as `expect` asks; false when it did not,
   * or the JobRun stopped waiting. A false verdict makes the next `pulumi up` run the job again.
   */
  declare readonly passed: pulumi.Output<boolean>;
  /**
   * Terminal status of the last run (or its last status when the JobRun stopped waiting). Absent
   * for an http probe (see `httpStatus`).
   */
  declare readonly status: pulumi.Output<string>;
  /** The worker's error message, when it failed (redacted; at most 65,536 characters kept). */
  declare readonly error: pulumi.Output<string | undefined>;
  /** Runs made: 1 plus the retries used (for an http probe: requests sent, 2 when sent once more). @integer */
  declare readonly attempts: pulumi.Output<number>;
  /** Each status seen, with the milliseconds since the run started. */
  declare readonly timeline: pulumi.Output<JobRunTimelineEntry[]>;
  /** Id of the job on the service (the resource's own id is a separate, stable UUID). Absent for an http probe. */
  declare readonly jobId: pulumi.Output<string>;
  /** The worker that ran the job, as the job status reported it (absent when it did not say). */
  declare readonly workerId: pulumi.Output<string | undefined>;
  /**
   * The endpoint's configuration version (release) the job ran on, checked after the job from the
   * endpoint's workers (`rollout: "wait"`, REST v2). Absent with `rollout: "ignore"`, and when the
   * run ended before a job finished.
   * @integer
   */
  declare readonly endpointVersion: pulumi.Output<number | undefined>;
  /**
   * Only when the run failed: the newest lines of the log of the worker that ran the job, each
   * `"<ts> <source> <line>"` (RFC 3339 time, `container` or `system`), oldest first. At most 50
   * lines and 8 KB (8,192 bytes) are kept, with the s3Config credentials and the API key
   * redacted; the same lines are in the failure message. Absent on a passed run, and when the log
   * could not be read (no `workerId`, a REST v1 `restUrl`, no answer within 5 s or `timeoutMs`).
   */
  declare readonly workerLogTail: pulumi.Output<string[] | undefined>;
  /**
   * The worker's output (secret with `secretOutput`), with any credential the worker echoed
   * (s3Config, the API key) replaced by `[redacted]`. Not stored when over 1 MB (1,000,000 bytes)
   * of JSON or nested over 100 levels deep: then absent, with `outputTruncated: true` and
   * `outputBytes` or `outputDepth`. `expect` is always judged on the whole output first. For an
   * http probe: the answer's body (JSON parsed, else text), redacted the same way.
   */
  declare readonly output: pulumi.Output<unknown>;
  /** True when the output was over 1 MB of JSON, or over 100 levels deep, and is not stored in `output`. */
  declare readonly outputTruncated: pulumi.Output<boolean | undefined>;
  /** Size of the output as JSON, in bytes, when it was not stored. @integer */
  declare readonly outputBytes: pulumi.Output<number | undefined>;
  /** Nesting depth of the output, when it was not stored for being over 100 levels deep. @integer */
  declare readonly outputDepth: pulumi.Output<number | undefined>;
  /** Stream chunks as sent (`{ output, metrics? }`), with `collectStream` (secret with `secretOutput`). */
  declare readonly stream: pulumi.Output<unknown[] | undefined>;
  /** True when `stream` is incomplete (bound reached, or reading failed part-way). */
  declare readonly streamTruncated: pulumi.Output<boolean | undefined>;
  /**
   * An http probe's answer status (absent for queue jobs, and when no answer came). The body is
   * `output` (JSON parsed, else text).
   * @integer
   */
  declare readonly httpStatus: pulumi.Output<number | undefined>;
  /** An http probe's latency: ms from sending the request to the end of the answer's body. */
  declare readonly latencyMs: pulumi.Output<number | undefined>;
  /** True when an http probe's answer body was over 1 MB (1,000,000 bytes) and only its start was read. */
  declare readonly bodyTruncated: pulumi.Output<boolean | undefined>;
  /** Time the job spent queued, ms (service figure). */
  declare readonly delayTime: pulumi.Output<number | undefined>;
  /** Time the job ran, ms (service figure). */
  declare readonly executionTime: pulumi.Output<number | undefined>;
  /** When the service accepted the job (ISO 8601). */
  declare readonly startedAt: pulumi.Output<string>;
  /** When the JobRun saw the job end (ISO 8601). */
  declare readonly completedAt: pulumi.Output<string | undefined>;
  /**
   * What the job cost, in US dollars: an ESTIMATE, `executionTime` × the hourly list price of the
   * worker that ran it (the GPU type it was placed on × its GPUs; with `rollout: "ignore"`, which
   * reads no workers, the endpoint's `hourlyCost.ratePerWorkerUsd`, its dearest GPU type). The bill counts per second of worker time, start and idle time included,
   * at the account's own prices. Absent when the catalog gives no price, or over REST v1.
   */
  declare readonly costUsd: pulumi.Output<number | undefined>;
  /**
   * Salted scrypt digest of `s3Config` (`scrypt-n32768-r8-p1:<salt>:<key>`; 0.1.0 wrote
   * `hmac-sha256:...`, still recognised), kept instead of the value to notice changes.
   */
  declare readonly s3ConfigDigest: pulumi.Output<string | undefined>;

  constructor(name: string, args: JobRunArgs, opts?: pulumi.CustomResourceOptions) {
    const { s3Config, secretOutput, redact, http, ...rest } = args;
    const inputs = {
      ...rest,
      http: http === undefined ? undefined : secretWhenHeaders(http),
      s3Config: s3Config === undefined ? undefined : pulumi.secret(s3Config),
      redact: redact === undefined ? undefined : pulumi.secret(redact),
      secretOutput: secretOutput === true ? true : undefined,
    };
    const secretOutputs = [
      ...(redact === undefined ? [] : ["redact"]),
      ...(secretOutput === true ? ["output", "stream"] : []),
    ];
    const secretOpts: pulumi.CustomResourceOptions =
      secretOutputs.length > 0 ? { additionalSecretOutputs: secretOutputs } : {};
    super(name, inputs as JobRunArgs, pulumi.mergeOptions(opts, secretOpts));
  }
}

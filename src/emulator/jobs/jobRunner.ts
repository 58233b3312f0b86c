/**
 * Runs one job on one worker: the handler its release calls for (a misbehaving release's, the
 * endpoint's own from `--handlers`, else the built-in worker), its chunks and log lines, and the
 * execution timeout (`policy.executionTimeout`, default 600000 ms: the job ends TIMED_OUT and its
 * handler is aborted). A result that arrives after the job ended (cancelled, timed out, retried)
 * is ignored.
 */
import { EXECUTION_TIMEOUT_DEFAULT_MS, MAX_JOB_OUTPUT_NESTING, nestingDepth } from "../../wire/limits";
import { builtinWorker } from "./builtinWorker";
import { toChunks } from "./chunks";
import { type Handler, type HandlerSpec, handlerFor, runHandler } from "./handlers";
import { type EndpointState, type EngineCore, type JobRecord, notifyWaiters, type Worker } from "./model";
import { misbehavingHandler } from "./releases";

/** Starts jobs on workers and ends them with their handler's result. */
export class JobRunner {
  readonly #core: EngineCore;
  readonly #handlers?: HandlerSpec;
  readonly #builtin: Handler;

  constructor(core: EngineCore, handlers: HandlerSpec | undefined) {
    this.#core = core;
    this.#handlers = handlers;
    this.#builtin = builtinWorker(core.clock) as Handler;
  }

  /** Moves `job` to IN_PROGRESS on `worker` and runs its handler on a later tick. */
  start(ep: EndpointState, worker: Worker, job: JobRecord): void {
    const core = this.#core;
    const { clock } = core;
    if (job.ttlTimer !== undefined) clock.clearTimeout(job.ttlTimer);
    job.ttlTimer = undefined;
    job.status = "IN_PROGRESS";
    job.startedAt = clock.now();
    job.workerId = worker.id;
    worker.state = "busy";
    worker.job = job;
    core.usage?.jobStarted(ep.config.id, job.id);
    const abort = new AbortController();
    job.abort = abort;
    const attempt = job.attempt;
    const current = () => job.attempt === attempt && job.status === "IN_PROGRESS" && worker.job === job;
    const timeout = job.request.policy?.executionTimeout ?? EXECUTION_TIMEOUT_DEFAULT_MS;
    job.execTimer = clock.setTimeout(() => {
      job.execTimer = undefined;
      if (!current()) return;
      abort.abort(new Error(`execution timeout of ${timeout} ms reached`));
      core.finishJob(ep, job, "TIMED_OUT", {
        error: `job ran longer than its executionTimeout of ${timeout} ms`,
      });
    }, timeout);
    notifyWaiters(job);

    const release = worker.release;
    const handler =
      misbehavingHandler(release) ?? handlerFor(this.#handlers, ep.config.id, release.image) ?? this.#builtin;
    const log = (line: unknown) => {
      if (!current()) return;
      core.log(worker, "container", typeof line === "string" ? line : String(line));
    };
    core.log(worker, "container", `job ${job.id} started (version ${release.version})`);
    const handlerJob = {
      id: job.id,
      endpointId: ep.config.id,
      input: structuredClone(job.request.input),
      ...(job.request.s3Config ? { s3Config: { ...job.request.s3Config } } : {}),
    };
    const onChunk = (value: unknown) => {
      if (!current()) return;
      job.chunks.push(...toChunks(value));
      notifyWaiters(job);
    };
    const context = {
      signal: abort.signal,
      log,
      worker: { id: worker.id, version: release.version, image: release.image, env: { ...release.env } },
    };
    // Run on a later tick, so the submission answers IN_QUEUE/IN_PROGRESS before a fast handler ends.
    Promise.resolve()
      .then(() => runHandler(handler, handlerJob, context, onChunk))
      .then(
        (output) => {
          if (!current()) return;
          if (nestingDepth(output, MAX_JOB_OUTPUT_NESTING) > MAX_JOB_OUTPUT_NESTING) {
            // No answer could carry it (serializing it overflows the stack): the job fails, saying why.
            const error = `the handler's output nests more than ${MAX_JOB_OUTPUT_NESTING} levels deep, more than the emulator keeps`;
            core.finishJob(ep, job, "FAILED", { error });
            return;
          }
          if (output !== undefined) JSON.stringify(output); // throws on cycles and BigInt: a FAILED job
          core.finishJob(ep, job, "COMPLETED", { output });
        },
        (err: unknown) => {
          if (!current()) return;
          const message =
            err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
          core.finishJob(ep, job, "FAILED", { error: message || "handler failed" });
        },
      )
      .catch((err: unknown) => {
        if (current())
          core.finishJob(ep, job, "FAILED", { error: `output is not JSON: ${(err as Error).message}` });
      });
  }
}

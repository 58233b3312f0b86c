/**
 * User handlers: the code a worker runs for a job. A handler is either
 * `async (job, { signal, log, worker }) => output`, or an async generator function whose yields are stream
 * chunks (each becomes `{ output: value }`) and whose return value is the output (when it
 * returns nothing, the output is the array of yielded values).
 *
 * `--handlers FILE` names a CommonJS or ES module, loaded with dynamic `import()`. Its default
 * export (`module.exports` for CommonJS) is one handler for every endpoint, or an object mapping
 * images or endpoint ids to handlers: a worker runs the handler named by its release's image
 * (`"acme/model:2"`), else by its endpoint id, else the built-in worker. Keyed by image, a
 * redeploy that changes the image changes the code workers run, as on the service.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { S3Config } from "../../wire/schemas";

/** What a handler receives about its job. */
export interface HandlerJob {
  id: string;
  endpointId: string;
  /** The job's `input` object as submitted. */
  input: Record<string, unknown>;
  /** Storage settings given at submission, passed through to the worker. */
  s3Config?: S3Config;
}

/** Second argument of a handler. */
export interface HandlerContext {
  /** Aborted when the job is cancelled or times out. */
  signal: AbortSignal;
  /**
   * Writes a line to the worker's log (source `container`), which
   * `/v2/serverless/{id}/workers/{workerId}/logs` serves. Lines after the job ended are dropped.
   */
  log: (line: string) => void;
  /** The worker running the job and its release: `env` is the endpoint's env at that release. */
  worker: { id: string; version: number; image: string; env: Record<string, string> };
}

/** A worker handler (see the module comment). */
export type Handler = (
  job: HandlerJob,
  context: HandlerContext,
) => Promise<unknown> | unknown | AsyncIterable<unknown> | AsyncGenerator<unknown, unknown>;

/** One handler for every endpoint, or handlers by endpoint id. */
export type HandlerSpec = Handler | Record<string, Handler>;

/** Loads a handler module (path relative to the working directory). */
export async function loadHandlerModule(path: string): Promise<HandlerSpec> {
  const absolute = isAbsolute(path) ? path : resolve(process.cwd(), path);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`handlers: cannot load ${absolute}: ${(err as Error).message}`, { cause: err });
  }
  let spec: unknown = mod.default ?? mod;
  // CommonJS `exports.default = ...` arrives as { default: { default: ... } }.
  if (spec && typeof spec === "object" && "default" in spec && Object.keys(spec).length === 1) {
    spec = (spec as { default: unknown }).default;
  }
  return checkHandlerSpec(spec, absolute);
}

/** Checks that `spec` is a function or an object of functions; `where` names it in errors. */
export function checkHandlerSpec(spec: unknown, where = "handlers"): HandlerSpec {
  if (typeof spec === "function") return spec as Handler;
  if (spec && typeof spec === "object") {
    for (const [id, h] of Object.entries(spec)) {
      if (typeof h !== "function") {
        throw new Error(
          `handlers: ${where} maps endpoint or image "${id}" to a ${typeof h}; expected a function`,
        );
      }
    }
    return spec as Record<string, Handler>;
  }
  throw new Error(
    `handlers: ${where} must export (default) a handler function or an object mapping images or endpoint ids to handler functions`,
  );
}

/**
 * The handler for a worker of `endpointId` running `image` in `spec`: the one function, or the
 * entry named by the image, else by the endpoint id; undefined when it names neither.
 */
export function handlerFor(
  spec: HandlerSpec | undefined,
  endpointId: string,
  image?: string,
): Handler | undefined {
  if (!spec) return undefined;
  if (typeof spec === "function") return spec;
  if (image !== undefined && Object.hasOwn(spec, image)) return spec[image];
  return Object.hasOwn(spec, endpointId) ? spec[endpointId] : undefined;
}

function isAsyncIterable(value: unknown): value is AsyncIterator<unknown, unknown> & AsyncIterable<unknown> {
  return value !== null && typeof value === "object" && Symbol.asyncIterator in value;
}

/**
 * Runs `handler` for `job`, passing each yielded value to `onChunk`, and resolves to the output.
 * Throws what the handler throws.
 */
export async function runHandler(
  handler: Handler,
  job: HandlerJob,
  context: HandlerContext,
  onChunk: (value: unknown) => void,
): Promise<unknown> {
  const result = handler(job, context);
  if (!isAsyncIterable(result)) return await result;
  const iterator = (result as AsyncIterable<unknown>)[Symbol.asyncIterator]() as AsyncIterator<
    unknown,
    unknown
  >;
  const yielded: unknown[] = [];
  for (;;) {
    if (context.signal.aborted) {
      await iterator.return?.(undefined);
      throw context.signal.reason;
    }
    const step = await iterator.next();
    if (step.done) return step.value === undefined ? yielded : step.value;
    yielded.push(step.value);
    onChunk(step.value);
  }
}

/**
 * The OpenAI-compatible route of queue endpoints, `/v2/{endpointId}/openai/v1/...`: `GET models`,
 * `POST chat/completions` and `POST completions`. Each request becomes a synchronous job whose
 * input is `{ openai_route: "/v1/<path>", openai_input: <the request body> }` (the shape RunPod's
 * workers receive), so it queues, runs on a worker and counts in `/health` like any job; the
 * built-in worker answers it as the load balancer's model server does, a user handler answers it
 * its own way. The pipeline has already answered 401 and the unknown (or load-balancer) endpoint.
 *
 * - The job's output is the answer (200). An output `{ error }` (the worker refused the request)
 *   is 400 and a FAILED, TIMED_OUT or CANCELLED job 500, both as OpenAI errors
 *   `{"error": {"message", "type"}}`; a job still running after {@link SYNC_WAIT_MAX_MS} of the
 *   emulator clock is 504 naming the job, whose result `/status` then serves.
 * - `"stream": true`: server-sent events, one `data: <json>` per stream chunk the worker yields,
 *   as they come, then `data: [DONE]`; the answer starts with the first chunk (a worker that
 *   yields none answers as without `stream`, its output framed as events). A job that fails
 *   mid-stream ends the stream with an `{"error"}` event before `[DONE]`.
 * - Rate limits: the operation is `openai`, which the service's table has no row for.
 */
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { RUNSYNC_PAYLOAD_LIMIT_BYTES, SYNC_WAIT_MAX_MS } from "../../wire/limits";
import { isTerminalStatus } from "../../wire/schemas";
import { SSE_DONE } from "../jobs/builtinServer";
import { OPENAI_MODELS_ROUTE } from "../jobs/builtinWorker";
import { type JobEngine, type JobRecord, QueueFullError } from "../jobs/engine";
import { HttpError } from "./errors";
import { clientGone } from "./jobRoutes";
import type { RouteMeta } from "./routeMeta";

/** The routes under `/v2/{endpointId}/openai`, each the `openai_route` its jobs carry. */
export const OPENAI_ROUTES = [
  { method: "GET", route: OPENAI_MODELS_ROUTE },
  { method: "POST", route: "/v1/chat/completions" },
  { method: "POST", route: "/v1/completions" },
] as const;

/** An OpenAI error body. */
function openAiError(message: string, type: "invalid_request_error" | "server_error" | "timeout") {
  return { error: { message, type } };
}

/** The message of an output `{ error }` a worker gave for a request it refused; else undefined. */
function refusal(output: unknown): string | undefined {
  if (!output || typeof output !== "object" || Array.isArray(output) || !("error" in output))
    return undefined;
  const error = (output as { error: unknown }).error;
  if (typeof error === "string") return error;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : JSON.stringify(error);
}

/** The `data:` frame of one event. */
const frame = (payload: unknown) =>
  `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;

export function registerOpenAiRoutes(app: FastifyInstance, engine: JobEngine): void {
  const meta: { config: RouteMeta; bodyLimit: number } = {
    config: { op: "openai" },
    bodyLimit: RUNSYNC_PAYLOAD_LIMIT_BYTES,
  };

  const submit = (endpointId: string, route: string, body: unknown): JobRecord => {
    try {
      return engine.submit(
        endpointId,
        { input: { openai_route: route, openai_input: body ?? null } },
        "sync",
      );
    } catch (err) {
      if (err instanceof QueueFullError)
        throw new HttpError(429, err.message, undefined, { "retry-after": "1" });
      throw err;
    }
  };

  /** The answer of a job that has ended, or has not within the wait. */
  const finished = (reply: FastifyReply, job: JobRecord, asEvents: boolean) => {
    if (!isTerminalStatus(job.status)) {
      return reply
        .code(504)
        .send(
          openAiError(
            `job ${job.id} did not finish within ${SYNC_WAIT_MAX_MS} ms (status ${job.status}); read its result at /v2/${job.endpointId}/status/${job.id}`,
            "timeout",
          ),
        );
    }
    if (job.status !== "COMPLETED") {
      return reply
        .code(500)
        .send(
          openAiError(`job ${job.id} ended ${job.status}: ${job.error ?? "no error given"}`, "server_error"),
        );
    }
    const refused = refusal(job.output);
    if (refused !== undefined) return reply.code(400).send(openAiError(refused, "invalid_request_error"));
    if (!asEvents) return reply.code(200).send(job.output ?? null);
    const events = Array.isArray(job.output) ? job.output : [job.output];
    return sendEvents(
      reply,
      (async function* () {
        for (const event of events) yield frame(event);
        yield frame(SSE_DONE);
      })(),
    );
  };

  const sendEvents = (reply: FastifyReply, frames: AsyncIterable<string>) =>
    reply
      .code(200)
      .header("content-type", "text/event-stream; charset=utf-8")
      .header("cache-control", "no-cache")
      .send(Readable.from(frames));

  for (const { method, route } of OPENAI_ROUTES) {
    app.route({
      method,
      url: `/v2/:endpointId/openai${route}`,
      ...meta,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const { endpointId } = request.params as { endpointId: string };
        const body = method === "GET" ? null : request.body;
        if (method === "POST" && (body === null || typeof body !== "object" || Array.isArray(body))) {
          return reply
            .code(400)
            .send(openAiError("body: a JSON object is required", "invalid_request_error"));
        }
        const gone = clientGone(reply);
        const job = submit(endpointId, route, body);
        const streamed = (body as { stream?: unknown } | null)?.stream === true;
        if (!streamed) {
          await engine.waitTerminal(job, SYNC_WAIT_MAX_MS, gone);
          return finished(reply, job, false);
        }
        await engine.waitFor(
          job,
          (j) => j.chunks.length > 0 || isTerminalStatus(j.status),
          SYNC_WAIT_MAX_MS,
          gone,
        );
        if (job.chunks.length === 0) return finished(reply, job, true);
        return sendEvents(
          reply,
          (async function* () {
            for (;;) {
              for (const chunk of engine.drainStream(job)) yield frame(chunk.output);
              if (isTerminalStatus(job.status) || gone.aborted) break;
              await engine.waitFor(
                job,
                (j) => j.chunks.length > 0 || isTerminalStatus(j.status),
                SYNC_WAIT_MAX_MS,
                gone,
              );
              if (job.chunks.length === 0 && !isTerminalStatus(job.status)) {
                yield frame(openAiError(`job ${job.id} sent nothing for ${SYNC_WAIT_MAX_MS} ms`, "timeout"));
                break;
              }
            }
            if (isTerminalStatus(job.status) && job.status !== "COMPLETED") {
              yield frame(
                openAiError(
                  `job ${job.id} ended ${job.status}: ${job.error ?? "no error given"}`,
                  "server_error",
                ),
              );
            }
            yield frame(SSE_DONE);
          })(),
        );
      },
    });
  }
}

/**
 * The built-in model server every worker of a load-balancer endpoint runs: the HTTP answers of
 * the routes below, as a small OpenAI-compatible server would give them. Any other path answers
 * 404 `{"error": "no route <METHOD> <path>"}`.
 *
 * - `GET|POST /echo`: 200 `{ method, path, query, body (parsed JSON or null), headers (names only, sorted) }`.
 * - `GET /v1/models`: 200, the one model: env `MODEL_NAME`, else {@link DEFAULT_MODEL_NAME}.
 * - `POST /v1/chat/completions`: 200, an OpenAI chat completion whose message is
 *   `echo: <content of the last user message>`; 400 `{"error": "messages: required array"}` without
 *   a `messages` array.
 * - `POST /v1/completions`: 200, an OpenAI text completion whose text is `echo: <prompt>` (a
 *   prompt array is joined with newlines); 400 `{"error": "prompt: required string or array of strings"}`
 *   without one.
 * - Both completions with `"stream": true` in the body: server-sent events as OpenAI streams them,
 *   one `data: <chunk JSON>` event per word of the text (`chat.completion.chunk` with a `delta`,
 *   the first carrying the role; `text_completion` with `text`), then a chunk with
 *   `finish_reason: "stop"`, a usage chunk when `stream_options.include_usage` is true, and
 *   `data: [DONE]`. The answer's `events` holds the chunks; whoever sends it frames them.
 *
 * Health (`/ping` or `HEALTH_CHECK_PATH`) is answered by the load balancer (`loadBalancerRoutes.ts`).
 */
import { randomBytes } from "node:crypto";

/** The model `/v1/models` lists when the release's env has no `MODEL_NAME`. */
export const DEFAULT_MODEL_NAME = "emulator-model";

/** One request as the worker sees it. */
export interface ServerRequest {
  method: string;
  /** The path under the endpoint's base, starting with `/` (`/v1/models`). */
  path: string;
  query: Record<string, unknown>;
  /** Header names and values as received. */
  headers: Record<string, unknown>;
  /** The body parsed as JSON, or null (none, or not JSON). */
  body: unknown;
}

/** A worker's answer. */
export interface ServerAnswer {
  status: number;
  body: unknown;
  /**
   * Present when the answer is a server-sent event stream: the JSON payload of each `data:` event,
   * in order, before the closing `data: [DONE]`. `body` is then unused.
   */
  events?: unknown[];
}

/** The `data:` payload that ends an OpenAI event stream. */
export const SSE_DONE = "[DONE]";

/** `events` framed as OpenAI frames a stream: `data: <json>` per event, then `data: [DONE]`. */
export function sseFrames(events: readonly unknown[]): string[] {
  return [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), `data: ${SSE_DONE}\n\n`];
}

/** The text split into streamed pieces: each word with the whitespace before it. */
function pieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** The usage block of a completion of `promptTokens` whose answer is `text`. */
function usage(promptTokens: number, text: string) {
  const completionTokens = tokens(text);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** The request's `stream` and `stream_options.include_usage` flags. */
function streamFlags(body: Record<string, unknown> | null): { stream: boolean; includeUsage: boolean } {
  const options = body?.stream_options as { include_usage?: unknown } | undefined;
  return { stream: body?.stream === true, includeUsage: options?.include_usage === true };
}

/** Words of a text, the emulator's token count. */
function tokens(text: string): number {
  return text.split(/\s+/).filter((w) => w !== "").length;
}

/** The text of an OpenAI message `content`: a string, or the `text` of its parts. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string"
          ? (part as { text: string }).text
          : "",
      )
      .join("");
  }
  return "";
}

/**
 * The built-in server's answer to `request` on a worker whose release has `env`, at `nowMs` of
 * the emulator clock.
 */
export function builtinServerAnswer(
  request: ServerRequest,
  env: Record<string, string>,
  nowMs: number,
): ServerAnswer {
  const { method, path } = request;
  if (path === "/echo" && (method === "GET" || method === "POST")) {
    return {
      status: 200,
      body: {
        method,
        path,
        query: request.query,
        body: request.body,
        headers: Object.keys(request.headers)
          .map((name) => name.toLowerCase())
          .sort(),
      },
    };
  }
  const model = env.MODEL_NAME || DEFAULT_MODEL_NAME;
  if (path === "/v1/models" && method === "GET") {
    return {
      status: 200,
      body: { object: "list", data: [{ id: model, object: "model", owned_by: "runpod-emulator" }] },
    };
  }
  if (path === "/v1/chat/completions" && method === "POST") {
    const body = request.body as ({ messages?: unknown; model?: unknown } & Record<string, unknown>) | null;
    const messages = body && typeof body === "object" ? body.messages : undefined;
    if (!Array.isArray(messages)) return { status: 400, body: { error: "messages: required array" } };
    const lastUser = [...messages]
      .reverse()
      .find((m) => m && typeof m === "object" && (m as { role?: unknown }).role === "user") as
      | { content?: unknown }
      | undefined;
    const content = `echo: ${contentText(lastUser?.content)}`;
    const promptTokens = messages.reduce(
      (sum: number, m) => sum + tokens(contentText((m as { content?: unknown } | null)?.content)),
      0,
    );
    const head = {
      id: `chatcmpl-${randomBytes(12).toString("hex")}`,
      created: Math.floor(nowMs / 1000),
      model: typeof body?.model === "string" && body.model !== "" ? body.model : model,
    };
    const { stream, includeUsage } = streamFlags(body);
    if (stream) {
      const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
        ...head,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      const events: unknown[] = pieces(content).map((piece, i) =>
        chunk(i === 0 ? { role: "assistant", content: piece } : { content: piece }, null),
      );
      events.push(chunk({}, "stop"));
      if (includeUsage) {
        events.push({
          ...head,
          object: "chat.completion.chunk",
          choices: [],
          usage: usage(promptTokens, content),
        });
      }
      return { status: 200, body: null, events };
    }
    return {
      status: 200,
      body: {
        ...head,
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: usage(promptTokens, content),
      },
    };
  }
  if (path === "/v1/completions" && method === "POST") {
    const body = request.body as ({ prompt?: unknown; model?: unknown } & Record<string, unknown>) | null;
    const prompt = body && typeof body === "object" ? body.prompt : undefined;
    const promptText =
      typeof prompt === "string"
        ? prompt
        : Array.isArray(prompt) && prompt.length > 0 && prompt.every((p) => typeof p === "string")
          ? prompt.join("\n")
          : undefined;
    if (promptText === undefined) {
      return { status: 400, body: { error: "prompt: required string or array of strings" } };
    }
    const text = `echo: ${promptText}`;
    const head = {
      id: `cmpl-${randomBytes(12).toString("hex")}`,
      object: "text_completion",
      created: Math.floor(nowMs / 1000),
      model: typeof body?.model === "string" && body.model !== "" ? body.model : model,
    };
    const { stream, includeUsage } = streamFlags(body);
    if (stream) {
      const chunk = (piece: string, finish: string | null) => ({
        ...head,
        choices: [{ index: 0, text: piece, logprobs: null, finish_reason: finish }],
      });
      const events: unknown[] = pieces(text).map((piece) => chunk(piece, null));
      events.push(chunk("", "stop"));
      if (includeUsage) events.push({ ...head, choices: [], usage: usage(tokens(promptText), text) });
      return { status: 200, body: null, events };
    }
    return {
      status: 200,
      body: {
        ...head,
        choices: [{ index: 0, text, logprobs: null, finish_reason: "stop" }],
        usage: usage(tokens(promptText), text),
      },
    };
  }
  return { status: 404, body: { error: `no route ${method} ${path}` } };
}

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
    const body = request.body as { messages?: unknown; model?: unknown } | null;
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
    const completionTokens = tokens(content);
    return {
      status: 200,
      body: {
        id: `chatcmpl-${randomBytes(12).toString("hex")}`,
        object: "chat.completion",
        created: Math.floor(nowMs / 1000),
        model: typeof body?.model === "string" && body.model !== "" ? body.model : model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: completionTokens,
          total_tokens: promptTokens + completionTokens,
        },
      },
    };
  }
  return { status: 404, body: { error: `no route ${method} ${path}` } };
}

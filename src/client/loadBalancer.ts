/**
 * `client.loadBalancer(id)`: HTTP requests to a `type: "LOAD_BALANCER"` serverless endpoint, whose
 * workers serve their own paths (an OpenAI-compatible model server, a health route) behind the
 * service's load balancer. The endpoint's base URL is its `requestUrls.base`, read once with
 * `GET /v2/serverless/{id}` (REST v2 only) unless given.
 *
 * ```ts
 * const lb = client.loadBalancer("ep1");
 * const answer = await lb.request({ path: "/v1/chat/completions", body: { model: "m", messages } });
 * answer.status; // 200
 * answer.body; // parsed JSON (or text), at most maxBodyBytes read
 * answer.latencyMs; // send to the end of the body
 * ```
 *
 * Every HTTP answer, 4xx and 5xx included, resolves as a {@link LoadBalancerResponse}: the caller
 * judges the status (a smoke test expects one). Errors are the client's own: `ValidationError`
 * (a bad path, header or method, a v1 `restUrl`, an endpoint that is not a load balancer), the
 * lookup's `APIError`s, `APIConnectionError` / `APITimeoutError` / `APIUserAbortError` for a
 * request that got no answer. The API key goes in `Authorization: Bearer` and never into an error.
 *
 * Retries follow the client's policy (DESIGN "Contract details"): a GET or DELETE is resent after
 * 408, 429, 5xx or a connection error; any other method only when the service provably did not act
 * (429, 503, a refused connection). `idempotent: false` applies the strict rule to a GET too (a
 * smoke test judges a 500 instead of resending until it passes). The answer of the last attempt
 * is returned.
 */
import { request } from "undici";
import { checkEndpointId } from "./endpointId";
import { APIConnectionError, APITimeoutError, APIUserAbortError, ValidationError } from "./errors";
import { MB } from "./limits";
import { redactHeaders, redactValue } from "./redact";
import { backoffMs, isRetryableError, isRetryableStatus, retryDelayMs, serverDelayMs } from "./retry";
import {
  errorCodes,
  NOT_SENT_CODES,
  type RequestOptions,
  sharedAgent,
  TIMEOUT_CODES,
  type Transport,
} from "./transport";

/** HTTP methods a load-balancer request may use. */
export const LOAD_BALANCER_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type LoadBalancerMethod = (typeof LOAD_BALANCER_METHODS)[number];

/** Most bytes of an answer body read by default: 1 MB (1,000,000 bytes). */
export const DEFAULT_MAX_BODY_BYTES = 1 * MB;

/** Header names a caller may not set: the client sends them (auth) or undici computes them. */
export const RESERVED_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
]);

/** One request to a load-balancer endpoint. */
export interface LoadBalancerRequest {
  /** @default "POST" when `body` is given, else "GET" */
  method?: LoadBalancerMethod;
  /** Path on the endpoint, starting with "/" (a query string may follow `?`). */
  path: string;
  /** A JSON value, sent as `application/json`. */
  body?: unknown;
  /**
   * More request headers. `Authorization` (the client's key), `Host`, `Content-Length`,
   * `Transfer-Encoding` and `Connection` may not be set. Their values are redacted from errors.
   */
  headers?: Record<string, string>;
}

/** Options of one load-balancer request. */
export interface LoadBalancerRequestOptions extends RequestOptions {
  /** Most bytes of the answer body read; the rest is discarded (`bodyTruncated`). @default 1,000,000 */
  maxBodyBytes?: number;
  /** False: resend only when the service provably did not act, whatever the method. @default by method */
  idempotent?: boolean;
}

/** The endpoint's answer. */
export interface LoadBalancerResponse {
  /** HTTP status. */
  status: number;
  /** Answer headers, lower-case names (`set-cookie` and other credential headers read `[redacted]`). */
  headers: Record<string, string>;
  /**
   * The body: parsed JSON when the content type says JSON (or the text looks like JSON), else the
   * text; `undefined` when empty. A truncated body is the text read so far.
   */
  body: unknown;
  /** Bytes of body read (at most `maxBodyBytes`). */
  bodyBytes: number;
  /** True when the body was longer than `maxBodyBytes` and only its start was read. */
  bodyTruncated: boolean;
  /** Milliseconds from sending the request to the end of the body read (last attempt). */
  latencyMs: number;
  /** Attempts made (1 plus the retries). */
  attempts: number;
}

/** What a load balancer needs from the client. */
export interface LoadBalancerContext {
  transport: Transport;
  /** Sends one request with the client's key (held by the client, not here). */
  send: HttpSender;
  /** Reads the endpoint (REST v2 `GET /v2/serverless/{id}`): its `type` and `requestUrls`. */
  lookup: (
    id: string,
    options?: RequestOptions,
  ) => Promise<{ type?: string | null; requestUrls?: Record<string, string> | null }>;
  /**
   * The service's own URLs (the client's `serverlessUrl` and `restUrl`): the API key goes only to
   * their hosts and subdomains (see {@link checkCredentialScope}). Omitted: no base URL is trusted.
   */
  serviceUrls?: readonly string[];
}

/** One HTTP exchange with the client's key: undici's `request`, authorization added. */
export type HttpSender = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => ReturnType<typeof request>;

/** The sender holding `apiKey` (built by `RunpodClient`, as the worker-log opener is). */
export function httpSender(apiKey: string): HttpSender {
  return (url, init) =>
    request(url, {
      method: init.method as "GET",
      headers: { ...init.headers, authorization: `Bearer ${apiKey}` },
      body: init.body,
      signal: init.signal,
      dispatcher: sharedAgent(),
    });
}

/** Throws `ValidationError` for a path that is not a plain absolute path on the endpoint. */
export function checkLoadBalancerPath(path: unknown): string {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new ValidationError(`path must be a string starting with "/", got ${JSON.stringify(path)}`, [
      "path",
    ]);
  }
  const pathPart = path.split("?")[0] as string;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\s\u0000-\u001f\u007f#]/.test(path) || pathPart.startsWith("//")) {
    throw new ValidationError(
      "path must not contain spaces, control characters or '#', nor start with '//'",
      ["path"],
    );
  }
  if (pathPart.split("/").some((segment) => segment === ".." || segment === ".")) {
    throw new ValidationError('path must not contain "." or ".." segments', ["path"]);
  }
  return path;
}

/** Throws `ValidationError` for a header the caller may not set or a value that is not a string. */
export function checkLoadBalancerHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
    throw new ValidationError("headers must be an object of header names to string values", ["headers"]);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new ValidationError(`headers: ${JSON.stringify(name)} is not a valid header name`, [
        "headers",
        name,
      ]);
    }
    if (RESERVED_REQUEST_HEADERS.has(name.toLowerCase())) {
      throw new ValidationError(
        `headers: ${name} may not be set (${
          name.toLowerCase() === "authorization"
            ? "the client sends Authorization: Bearer with its API key"
            : "the HTTP client sets it"
        })`,
        ["headers", name],
      );
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (typeof value !== "string" || /[\r\n\u0000]/.test(value)) {
      throw new ValidationError(`headers: the value of ${name} must be a string without line breaks`, [
        "headers",
        name,
      ]);
    }
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** One load-balancer endpoint. Get one with `client.loadBalancer(id)`. */
export class LoadBalancer {
  /** The endpoint id. */
  readonly id: string;
  readonly #ctx: LoadBalancerContext;
  #base: string | undefined;
  #health: string | undefined;

  /** `baseUrl` skips the lookup of `requestUrls.base` (the endpoint's `https://<id>.api.runpod.ai`). */
  constructor(ctx: LoadBalancerContext, endpointId: string, baseUrl?: string) {
    this.id = checkEndpointId(endpointId);
    this.#ctx = ctx;
    if (baseUrl !== undefined) {
      this.#base = checkCredentialScope(checkBaseUrl(baseUrl, "baseUrl"), ctx.serviceUrls ?? [], "baseUrl");
    }
  }

  /**
   * The endpoint's base URL (`requestUrls.base`), read once with `GET /v2/serverless/{id}`.
   * `ValidationError` when the endpoint is not a load balancer (a QUEUE endpoint serves `/run`).
   */
  async baseUrl(options?: RequestOptions): Promise<string> {
    if (this.#base !== undefined) return this.#base;
    const endpoint = await this.#ctx.lookup(this.id, options);
    const base = endpoint.requestUrls?.base;
    if (endpoint.type !== "LOAD_BALANCER" || typeof base !== "string") {
      throw new ValidationError(
        `endpoint ${this.id} is type ${endpoint.type ?? "(unknown)"}, not LOAD_BALANCER: it has no HTTP paths of its ` +
          "own (requestUrls.base); send queue jobs with client.endpoint(id).run instead",
        ["type"],
      );
    }
    this.#base = checkCredentialScope(
      checkBaseUrl(base, "requestUrls.base"),
      this.#ctx.serviceUrls ?? [],
      `endpoint ${this.id}'s requestUrls.base`,
    );
    const health = endpoint.requestUrls?.health;
    if (typeof health === "string") this.#health = health;
    return this.#base;
  }

  /** `GET` of the endpoint's health URL (`requestUrls.health`, else `<base>/ping`). */
  async health(options: LoadBalancerRequestOptions = {}): Promise<LoadBalancerResponse> {
    const base = await this.baseUrl(options);
    const health = this.#health;
    const path = health?.startsWith(base) ? health.slice(base.length) || "/" : "/ping";
    return this.request({ method: "GET", path }, options);
  }

  /** Sends one request to `<base><path>`; resolves with any HTTP answer (see the module comment). */
  async request(
    req: LoadBalancerRequest,
    options: LoadBalancerRequestOptions = {},
  ): Promise<LoadBalancerResponse> {
    const path = checkLoadBalancerPath(req.path);
    const extra = checkLoadBalancerHeaders(req.headers);
    const method = req.method ?? (req.body === undefined ? "GET" : "POST");
    if (!(LOAD_BALANCER_METHODS as readonly string[]).includes(method)) {
      throw new ValidationError(`method must be one of ${LOAD_BALANCER_METHODS.join(", ")}, got ${method}`, [
        "method",
      ]);
    }
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
      throw new ValidationError(`maxBodyBytes must be an integer >= 0, got ${maxBodyBytes}`, [
        "maxBodyBytes",
      ]);
    }
    let body: string | undefined;
    if (req.body !== undefined) {
      try {
        body = JSON.stringify(req.body);
      } catch (error) {
        throw new ValidationError("body must be a JSON value", ["body"], { cause: error });
      }
    }
    const base = await this.baseUrl(options);
    const headers: Record<string, string> = {
      accept: "application/json, text/plain;q=0.9, */*;q=0.8",
      "user-agent": this.#ctx.transport.config.userAgent,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...extra,
    };
    const secrets = Object.values(extra);
    const config = this.#ctx.transport.config;
    const maxRetries = options.maxRetries ?? config.maxRetries;
    const policyMethod = options.idempotent === false ? "POST" : method;
    const where = `${method} ${new URL(base).pathname.replace(/\/+$/, "")}${path.split("?")[0]}`;
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw abortError(options.signal, where, false);
      let answer: LoadBalancerResponse | undefined;
      let error: unknown;
      try {
        answer = await this.attempt(
          base + path,
          method,
          headers,
          body,
          options,
          maxBodyBytes,
          secrets,
          where,
        );
        answer.attempts = attempt + 1;
        if (!isRetryableStatus(policyMethod, answer.status)) return answer;
      } catch (e) {
        error = e;
        if (!isRetryableError(policyMethod, e)) throw e;
      }
      if (attempt >= maxRetries) {
        if (answer !== undefined) return answer;
        throw error;
      }
      const delay =
        answer === undefined
          ? retryDelayMs(error, attempt)
          : (serverDelayMs(answer.headers) ?? backoffMs(attempt));
      config.logger?.debug?.(
        `runpod: retrying ${where} after ${answer ? answer.status : (error as { code?: string }).code} in ${Math.round(delay)} ms`,
      );
      await config.sleep(delay, options.signal);
    }
  }

  private async attempt(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    options: LoadBalancerRequestOptions,
    maxBodyBytes: number,
    secrets: string[],
    where: string,
  ): Promise<LoadBalancerResponse> {
    const timeoutMs = options.timeoutMs ?? this.#ctx.transport.config.timeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
    const started = performance.now();
    try {
      const res = await this.#ctx.send(url, { method, headers, body, signal });
      const chunks: Buffer[] = [];
      let bytes = 0;
      let truncated = false;
      try {
        for await (const chunk of res.body) {
          const buffer = chunk as Buffer;
          if (bytes + buffer.length > maxBodyBytes) {
            chunks.push(buffer.subarray(0, maxBodyBytes - bytes));
            bytes = maxBodyBytes;
            truncated = true;
            break;
          }
          chunks.push(buffer);
          bytes += buffer.length;
        }
      } finally {
        if (truncated) res.body.destroy();
      }
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      const text = Buffer.concat(chunks).toString("utf8");
      const contentType = String(res.headers["content-type"] ?? "");
      let parsed: unknown = text === "" ? undefined : text;
      if (!truncated && text !== "" && (/json/i.test(contentType) || /^\s*[[{]/.test(text))) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      return {
        status: res.statusCode,
        headers: redactHeaders(res.headers, secrets),
        body: parsed,
        bodyBytes: bytes,
        bodyTruncated: truncated,
        latencyMs,
        attempts: 1,
      };
    } catch (error) {
      const codes = errorCodes(error);
      if (timedOut || codes.some((c) => TIMEOUT_CODES.has(c))) {
        throw new APITimeoutError(
          `${where} timed out after ${timeoutMs} ms (raise timeoutMs for slow calls; a timed-out request may still have been acted on)`,
        );
      }
      if (options.signal?.aborted) throw abortError(options.signal, where, true);
      const notSent = codes.some((c) => NOT_SENT_CODES.has(c));
      const origin = new URL(url).origin;
      const code = codes[0] ?? (error instanceof Error ? error.name : "unknown");
      throw new APIConnectionError(
        redactValue(
          `${where} failed: ${notSent ? `could not connect to ${origin}` : `connection to ${origin} failed mid-request`} (${code})`,
          secrets,
        ),
        { notSent },
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

function abortError(signal: AbortSignal, where: string, sent: boolean): APIUserAbortError {
  return new APIUserAbortError(`${where} aborted by the caller's signal`, { cause: signal.reason, sent });
}

/**
 * Returns `base` when the API key may be sent there, else throws `ValidationError` saying why:
 *
 * - its host is the host of one of the service's URLs (`serverlessUrl`, `restUrl`) or a subdomain
 *   of it: `https://api.runpod.ai` trusts `api.runpod.ai` and `<id>.api.runpod.ai`, where the
 *   service puts a load-balancer endpoint's `requestUrls.base`. Not the whole registrable domain
 *   (`*.runpod.ai`): the key needs no host beyond the API's own, and every extra host is one more
 *   place a hostile or mistaken answer could point it to;
 * - or it is loopback (127.0.0.0/8, ::1, localhost) and so is a service URL (the emulator);
 * - and it is https, unless loopback: plain http elsewhere would carry the key in clear.
 *
 * A redirect is never followed (undici's `request` returns the 3xx as the answer), so the key is
 * never sent to where a redirect points.
 */
export function checkCredentialScope(base: string, serviceUrls: readonly string[], what: string): string {
  const url = new URL(base);
  const host = hostOf(url);
  const services = serviceUrls.flatMap((raw) => {
    try {
      return [hostOf(new URL(raw))];
    } catch {
      return [];
    }
  });
  const loopback = isLoopbackHost(host);
  const trusted = loopback
    ? services.some(isLoopbackHost)
    : services.some((service) => host === service || host.endsWith(`.${service}`));
  const where = `${url.protocol}//${url.host}`;
  if (!trusted) {
    throw new ValidationError(
      `${what} is on ${where}, which is not one of the service's hosts (${[...new Set(services)].join(", ") || "none known"}, ` +
        "their subdomains, or loopback for a loopback service): the client sends its API key only there, so " +
        "it sent nothing. Check serverlessUrl (runpod:serverlessUrl) and the endpoint's requestUrls.",
      [what],
    );
  }
  if (!loopback && url.protocol !== "https:") {
    throw new ValidationError(
      `${what} is ${where}, plain http: the client sends its API key only over https (or to loopback), so it ` +
        "sent nothing. Use an https URL.",
      [what],
    );
  }
  return base;
}

/** The host name, lower case, without the brackets of an IPv6 address or a trailing dot. */
function hostOf(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
}

/** 127.0.0.0/8, ::1 (also as an IPv4-mapped address), `localhost` and its subdomains. */
function isLoopbackHost(host: string): boolean {
  return (
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === "::1" ||
    /^::ffff:127(\.\d{1,3}){3}$/.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host) ||
    host === "localhost" ||
    host.endsWith(".localhost")
  );
}

/** A base URL without its trailing slash; `ValidationError` when it is not http(s). */
function checkBaseUrl(raw: string, what: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`${what} must be an absolute http(s) URL, got ${JSON.stringify(raw)}`, [what]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValidationError(`${what} must use http or https, got ${url.protocol}`, [what]);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

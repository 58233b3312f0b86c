/**
 * One error hierarchy for everything the client, the providers and the emulator tooling throw.
 *
 * Every error carries a stable `code` string and a `Symbol.for` brand, so `instanceof` keeps
 * working when two copies of this package meet (the Pulumi provider runs in another process and
 * may load its own copy). No error ever carries a credential: headers are redacted before they
 * are stored, and messages are built from the service's answer, never from the request headers.
 */
import { printable } from "./printable";

/** Stable machine-readable error codes. */
export type RunpodErrorCode =
  | "runpod_error"
  | "api_error"
  | "bad_request"
  | "authentication_error"
  | "permission_denied"
  | "not_found"
  | "conflict"
  | "unprocessable_entity"
  | "rate_limited"
  | "internal_server_error"
  | "connection_error"
  | "timeout"
  | "aborted"
  | "validation_error"
  | "response_validation_error"
  | "job_wait_timeout"
  // The Pulumi providers' own failures (`pulumi up` prints them; scripts calling the operations catch them).
  | "endpoint_rollout_failed"
  | "rollout_wait_timeout"
  | "job_run_submit_failed"
  | "job_run_failed";

/**
 * Redaction lives in `./redact` (one module for the client and the providers); these names stay
 * exported from here because the package root re-exports this module. `redactSecrets` is the
 * earlier name of `redactValue`.
 */
export {
  MIN_REDACTED_LENGTH,
  REDACTED,
  redactHeaders,
  redactValue as redactSecrets,
} from "./redact";

/** The brand key of one error class: the same symbol in every copy of the package. */
const brandOf = (className: string): symbol => Symbol.for(`pulumi-runpod-dynamic.error.${className}`);

/**
 * Gives `ErrorClass` its brand, under the name the class is published as (given here as a string,
 * so renaming the class in code or minifying the build does not change it). Its instances carry
 * the brand on their prototype chain, with the brands of every ancestor class, so an instance
 * from one copy of the package passes `instanceof` for the same class and its ancestors of
 * another copy, as undici's errors do (`Symbol.for('undici.error.UND_ERR_...')`).
 */
function brand(ErrorClass: abstract new (...args: never[]) => RunpodError, publishedName: string): void {
  const key = brandOf(publishedName);
  Object.defineProperty(ErrorClass.prototype, key, { value: true });
  Object.defineProperty(ErrorClass, BRAND_KEY, { value: key });
  Object.defineProperty(ErrorClass, NAME_KEY, { value: publishedName });
}

/** Where each branded class keeps its brand symbol and its published name (own properties). */
const BRAND_KEY = Symbol("brand");
const NAME_KEY = Symbol("publishedName");

/** Root of every error this package throws. */
export class RunpodError extends Error {
  readonly code: RunpodErrorCode = "runpod_error";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    // The published name, which minifying does not change; a subclass of a user's has its own.
    this.name = Object.hasOwn(new.target, NAME_KEY)
      ? ((new.target as unknown as Record<symbol, string>)[NAME_KEY] as string)
      : new.target.name;
  }

  /**
   * `instanceof` by brand: true for an instance of this class or a subclass from any copy of the
   * package (the brand of a class is on the prototypes of all its subclasses' instances).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    const key = (this as unknown as Record<symbol, symbol | undefined>)[BRAND_KEY];
    // A subclass declared outside this module (no brand of its own) falls back to the prototype chain.
    if (key === undefined || !Object.hasOwn(this, BRAND_KEY)) {
      return Function.prototype[Symbol.hasInstance].call(this, value);
    }
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[key] === true;
  }
}

/** Fields every HTTP error answer carries. */
export interface APIErrorInit {
  status: number;
  /** Parsed JSON body when it was JSON, else the text (truncated to 4 KB). */
  body?: unknown;
  /** Response headers, credentials redacted. */
  headers?: Record<string, string>;
  /** HTTP method and path of the request (no query string, no host). */
  method?: string;
  path?: string;
}

/** The service answered with a non-success HTTP status. */
export class APIError extends RunpodError {
  override readonly code: RunpodErrorCode = "api_error";
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  /** The service's request id (`x-request-id` and kin), for support tickets. */
  readonly requestId: string | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(message: string, init: APIErrorInit) {
    super(message);
    this.status = init.status;
    this.body = init.body;
    this.headers = init.headers ?? {};
    this.requestId =
      this.headers["x-request-id"] ??
      this.headers["request-id"] ??
      this.headers["x-runpod-request-id"] ??
      undefined;
    this.method = init.method;
    this.path = init.path;
  }

  /** Builds the subclass that matches `init.status`, with a message from the service's body. */
  static from(init: APIErrorInit): APIError {
    const detail = describeBody(init.body);
    const where = init.method && init.path ? `${init.method} ${init.path}` : "request";
    const message = `${where} failed with ${init.status}${detail ? `: ${detail}` : ""}`;
    const ErrorClass = errorClassFor(init.status);
    return new ErrorClass(message, init);
  }
}

/** 400: the service refused the request as malformed (a capacity refusal of a pod create is one too). */
export class BadRequestError extends APIError {
  override readonly code: RunpodErrorCode = "bad_request";
}
/** 401: the API key is missing, wrong or revoked. */
export class AuthenticationError extends APIError {
  override readonly code: RunpodErrorCode = "authentication_error";
}
/** 403: the API key may not do this. */
export class PermissionDeniedError extends APIError {
  override readonly code: RunpodErrorCode = "permission_denied";
}
/** 404: no such object in this account. */
export class NotFoundError extends APIError {
  override readonly code: RunpodErrorCode = "not_found";
}
/** 409: the object's state forbids the change (a locked pod, a name in use). */
export class ConflictError extends APIError {
  override readonly code: RunpodErrorCode = "conflict";
}
/** 422: the body has the right shape but a value the service does not accept. */
export class UnprocessableEntityError extends APIError {
  override readonly code: RunpodErrorCode = "unprocessable_entity";
}
/** 429: over the service's rate limit; the client already honoured `Retry-After` up to `maxRetries`. */
export class RateLimitError extends APIError {
  override readonly code: RunpodErrorCode = "rate_limited";
}
/** 5xx: the service failed; GET and DELETE were retried, a POST only when the service said it did nothing. */
export class InternalServerError extends APIError {
  override readonly code: RunpodErrorCode = "internal_server_error";
}

function errorClassFor(status: number): new (message: string, init: APIErrorInit) => APIError {
  switch (status) {
    case 400:
      return BadRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 422:
      return UnprocessableEntityError;
    case 429:
      return RateLimitError;
    default:
      return status >= 500 ? InternalServerError : APIError;
  }
}

/**
 * Extracts a one-line human message from an error body: v1 `{message}`, v2 problem+json, or text.
 * Control characters in it are escaped (`printable`): the body is the service's text, and the
 * message is printed in a terminal and under `pulumi up`.
 */
export function describeBody(body: unknown): string {
  return printable(bodyText(body));
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null || body === "") return "";
  if (typeof body === "string") return body.slice(0, 500);
  if (typeof body === "object") {
    const b = body as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of ["message", "error", "title", "detail"]) {
      if (typeof b[key] === "string" && !parts.includes(b[key] as string)) parts.push(b[key] as string);
    }
    if (Array.isArray(b.errors)) {
      for (const e of b.errors.slice(0, 5)) {
        if (typeof e === "string") parts.push(e);
        else if (e && typeof e === "object") {
          const { field, pointer, location, message, detail } = e as Record<string, unknown>;
          const where = field ?? pointer ?? location;
          const what = message ?? detail;
          if (what) parts.push(where ? `${String(where)}: ${String(what)}` : String(what));
        }
      }
    }
    if (parts.length > 0) return parts.join("; ");
    return JSON.stringify(body).slice(0, 500);
  }
  return String(body);
}

/** The request never got an HTTP answer (refused, reset, DNS, TLS). */
export class APIConnectionError extends RunpodError {
  override readonly code: RunpodErrorCode = "connection_error";
  /** True when the connection was refused or never opened, so the service cannot have acted. */
  readonly notSent: boolean;

  constructor(message: string, options?: { cause?: unknown; notSent?: boolean }) {
    super(message, options);
    this.notSent = options?.notSent ?? false;
  }
}

/** The request took longer than its `timeoutMs`. */
export class APITimeoutError extends APIConnectionError {
  override readonly code: RunpodErrorCode = "timeout";
}

/** The caller's `AbortSignal` fired. */
export class APIUserAbortError extends RunpodError {
  override readonly code: RunpodErrorCode = "aborted";
  /**
   * True when the abort cut a request that was already on the wire (the service may have acted
   * on it); false when it came while waiting for a rate-limit slot or a retry pause.
   */
  readonly sent: boolean;

  constructor(message: string, options?: { cause?: unknown; sent?: boolean }) {
    super(message, options);
    this.sent = options?.sent ?? false;
  }
}

/** Input rejected before any network call. `path` names the field, e.g. `["policy", "ttl"]`. */
export class ValidationError extends RunpodError {
  override readonly code: RunpodErrorCode = "validation_error";
  readonly path: (string | number)[];

  constructor(message: string, path: (string | number)[] = [], options?: { cause?: unknown }) {
    super(message, options);
    this.path = path;
  }
}

/** The service answered 2xx with a body that does not have the documented shape. */
export class ResponseValidationError extends RunpodError {
  override readonly code: RunpodErrorCode = "response_validation_error";
  readonly path: (string | number)[];
  readonly body: unknown;

  constructor(message: string, init: { path?: (string | number)[]; body?: unknown; cause?: unknown } = {}) {
    super(message, { cause: init.cause });
    this.path = init.path ?? [];
    this.body = init.body;
  }
}

/** `waitForJob` gave up before the job reached a terminal state. */
export class JobWaitTimeoutError extends RunpodError {
  override readonly code: RunpodErrorCode = "job_wait_timeout";
  readonly jobId: string;
  /** The last status seen, e.g. `{ id, status: "IN_PROGRESS" }`. */
  readonly lastStatus: unknown;

  constructor(message: string, init: { jobId: string; lastStatus: unknown }) {
    super(message);
    this.jobId = init.jobId;
    this.lastStatus = init.lastStatus;
  }
}

// ---------------------------------------------------------------------------------------------
// The Pulumi providers' failures. They live here, with the rest of the hierarchy, so the package
// root exports them without loading the providers' modules, and their codes sit beside the
// client's. Their messages are built from redacted text; none carries the request's headers.
// ---------------------------------------------------------------------------------------------

/**
 * A `ServerlessEndpoint` rollout wait after a create or update ended without the release serving:
 * it stalled (a worker of the new version failed its health checks twice in a row) or ran past
 * `rolloutTimeoutMs`. The message is what the engine prints: the workers by status and version,
 * the failing worker's log tail and what to do next.
 */
export class EndpointRolloutError extends RunpodError {
  override readonly code: RunpodErrorCode = "endpoint_rollout_failed";

  constructor(
    message: string,
    /** The endpoint's version when the wait ended; undefined when the service gives none. */
    readonly version: number | undefined,
    /**
     * `"stalled"`: the release cannot start (a failed release); `"timeout"`: the wait ended first;
     * `"cancelled"`: the deployment was cancelled first (neither says anything about the release).
     */
    readonly kind: "stalled" | "timeout" | "cancelled" = "stalled",
  ) {
    super(message);
  }
}

/** How far a rollout had got at a read of the workers. */
export interface RolloutProgress {
  /** The endpoint's current configuration version; undefined when the service gives none. */
  version: number | undefined;
  /** Workers still running an older version. */
  stale: number;
  /** Workers listed in all. */
  total: number;
}

/**
 * A JobRun's rollout wait (`rollout: "wait"`) was stopped by the JobRun's deadline before the last
 * stale worker was replaced, or before any read of the workers answered.
 */
export class RolloutTimeoutError extends RunpodError {
  override readonly code: RunpodErrorCode = "rollout_wait_timeout";
  /** The last state read, if any read answered. */
  readonly last: RolloutProgress | undefined;
  /** Reads made. */
  readonly reads: number;

  constructor(endpointId: string, last: RolloutProgress | undefined, reads: number, cause: unknown) {
    super(
      last === undefined
        ? `the workers of endpoint ${endpointId} could not be read before the deadline (${cause instanceof Error ? cause.message : String(cause)})`
        : `endpoint ${endpointId} was still rolling out version ${last.version ?? "(unknown)"}: ` +
            `${last.stale} of ${last.total} workers ran an older version`,
      { cause },
    );
    this.last = last;
    this.reads = reads;
  }
}

/**
 * A JobRun has no job to record: it was never submitted (refused, or the rollout wait before it
 * failed), or its submission is in doubt (`ambiguous`: an answer lost after the service may have
 * acted), in which case the JobRun does not submit again rather than risk a second job.
 */
export class JobRunSubmitError extends RunpodError {
  override readonly code: RunpodErrorCode = "job_run_submit_failed";
  /** True when the service may have created a job anyway. */
  readonly ambiguous: boolean;

  constructor(message: string, ambiguous: boolean, cause: unknown) {
    super(message, { cause });
    this.ambiguous = ambiguous;
  }
}

/**
 * A JobRun's job ran and did not pass: the deploy step fails, and the engine
 * keeps the resource under `id` with `properties` (a partial failure), so the next `pulumi up`
 * sees what ran.
 */
export class JobRunFailedError extends RunpodError {
  override readonly code: RunpodErrorCode = "job_run_failed";
  /** The JobRun's id: the engine keeps the resource in state under it. */
  readonly id: string;
  /** The recorded outputs, with `__provider` so later operations can load the provider. */
  readonly properties: Record<string, unknown>;

  constructor(message: string, id: string, properties: Record<string, unknown>) {
    super(message);
    this.id = id;
    this.properties = properties;
  }
}

// The published names: renaming a class above must not change them (that would break
// `instanceof` against other installed copies of the package).
brand(RunpodError, "RunpodError");
brand(APIError, "APIError");
brand(BadRequestError, "BadRequestError");
brand(AuthenticationError, "AuthenticationError");
brand(PermissionDeniedError, "PermissionDeniedError");
brand(NotFoundError, "NotFoundError");
brand(ConflictError, "ConflictError");
brand(UnprocessableEntityError, "UnprocessableEntityError");
brand(RateLimitError, "RateLimitError");
brand(InternalServerError, "InternalServerError");
brand(APIConnectionError, "APIConnectionError");
brand(APITimeoutError, "APITimeoutError");
brand(APIUserAbortError, "APIUserAbortError");
brand(ValidationError, "ValidationError");
brand(ResponseValidationError, "ResponseValidationError");
brand(JobWaitTimeoutError, "JobWaitTimeoutError");
brand(EndpointRolloutError, "EndpointRolloutError");
brand(RolloutTimeoutError, "RolloutTimeoutError");
brand(JobRunSubmitError, "JobRunSubmitError");
brand(JobRunFailedError, "JobRunFailedError");

/**
 * `RunpodClient`: the one typed client of the service's management interface (REST v1 or v2)
 * and job interface. Options are resolved once, here: explicit option, then environment
 * (blank counts as unset), then default.
 */

import { Billing } from "./billing";
import { Catalog } from "./catalog";
import { Registries } from "./ecrDelegations";
import { Endpoint } from "./endpoint";
import { ValidationError } from "./errors";
import { type RateLimitTable, SERVICE_RATE_LIMITS } from "./limits";
import { type HttpSender, httpSender, LoadBalancer } from "./loadBalancer";
import { NetworkVolumes, RegistryAuths, type RestDialect } from "./management";
import { Account, Pods } from "./pods";
import { ServerlessEndpoints } from "./serverless";
import { nonBlank } from "./settingText";
import { Templates } from "./templates";
import { defaultSleep, type RunpodLogger, type SleepFn, Transport } from "./transport";
import { sseOpener } from "./workerLogs";

/** Default management base URL (REST v2). */
export const DEFAULT_REST_URL = "https://api.runpod.io/v2";
/** Default job-interface host (its paths start with `/v2`). */
export const DEFAULT_SERVERLESS_URL = "https://api.runpod.ai";
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 5;

/** Options of `new RunpodClient(...)`. */
export interface RunpodClientOptions {
  /** API key, sent as `Authorization: Bearer <key>`. Env fallback: `RUNPOD_API_KEY`. Required. */
  apiKey?: string;
  /**
   * Management base URL; its last path segment picks the dialect: `.../v1` or `.../v2`, and a URL
   * without a version segment gets `/v2` appended. Env fallback: `RUNPOD_REST_API_URL`.
   * @default "https://api.runpod.io/v2"
   */
  restUrl?: string;
  /**
   * Job-interface host; its paths start with `/v2` (a trailing `/v2` given here is dropped).
   * Env fallback: `RUNPOD_SERVERLESS_API_URL`. @default "https://api.runpod.ai"
   */
  serverlessUrl?: string;
  /**
   * Per-attempt request timeout in ms, headers and whole body (long polls get at least `wait` +
   * 15 s). @default 60000
   */
  timeoutMs?: number;
  /** Retries after the first attempt, under the retry policy. @default 5 */
  maxRetries?: number;
  /**
   * Client-side rate limits per endpoint and operation, shared by every client in the process.
   * `false` turns them off. @default SERVICE_RATE_LIMITS
   */
  rateLimits?: false | RateLimitTable;
  /** `User-Agent` header. @default "pulumi-runpod-dynamic (node <version>)" */
  userAgent?: string;
  /** Receives retry notices (`debug`). Never given a credential. */
  logger?: RunpodLogger;
  /** Waits between retries and polls; replaceable so tests need not sleep. @default a timer */
  sleep?: SleepFn;
  /** Environment to read fallbacks from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

function parseBaseUrl(raw: string, option: string, envName: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(
      `${option} must be an absolute http(s) URL (option ${option} or env ${envName}), got ${JSON.stringify(raw)}`,
      [option],
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ValidationError(`${option} must use http or https, got ${url.protocol}`, [option]);
  }
  return url;
}

/** Resolves `restUrl` to its base (with version segment, no trailing slash) and dialect. */
export function resolveRestUrl(raw: string): { restUrl: string; dialect: RestDialect } {
  const url = parseBaseUrl(raw, "restUrl", "RUNPOD_REST_API_URL");
  const segments = url.pathname.split("/").filter((s) => s !== "");
  const last = segments[segments.length - 1];
  let dialect: RestDialect = "v2";
  if (last !== undefined && /^v\d+$/i.test(last)) {
    const version = last.toLowerCase();
    if (version !== "v1" && version !== "v2") {
      throw new ValidationError(
        `restUrl ends in ${last}, which this client does not speak; use a URL ending in /v1 or /v2`,
        ["restUrl"],
      );
    }
    dialect = version;
    segments[segments.length - 1] = version;
  } else {
    segments.push("v2");
  }
  return { restUrl: `${url.origin}/${segments.join("/")}`, dialect };
}

function checkNumber(value: number, option: string, min: number, integer: boolean): number {
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < min ||
    (integer && !Number.isInteger(value))
  ) {
    throw new ValidationError(
      `${option} must be ${integer ? "an integer" : "a number"} >= ${min}, got ${value}`,
      [option],
    );
  }
  return value;
}

/** The typed RunPod client. See DESIGN.md "Client surface". */
export class RunpodClient {
  /** Management dialect in use, from the version segment of `restUrl`. */
  readonly restDialect: RestDialect;
  /** Resolved management base URL, including its version segment. */
  readonly restUrl: string;
  /** Resolved job-interface host. */
  readonly serverlessUrl: string;
  /** Container registry credentials: create, list, get, delete. */
  readonly registryAuths: RegistryAuths;
  /** What REST v2 groups under `/v2/registries`: `delegations` (ECR delegations: list, create, revoke). */
  readonly registries: Registries;
  /** Network volumes: list, get, create, update, delete. */
  readonly networkVolumes: NetworkVolumes;
  /**
   * Serverless endpoints (REST v2 only): list, get, create, update, delete, releases, workers,
   * workerLogs.
   */
  readonly serverless: ServerlessEndpoints;
  /** Templates (REST v2 only): list, get, create, update, delete. */
  readonly templates: Templates;
  /**
   * The catalog (REST v2 only): GPU types with their serverless pools, CPU flavours, data centres
   * and public templates.
   */
  readonly catalog: Catalog;
  /** Pods (REST v2 only): list, get, create, update, delete, action, logs. */
  readonly pods: Pods;
  /** The account (REST v2 only): its SSH public keys. */
  readonly account: Account;
  /**
   * Billing history (REST v2 only): what was spent per bucket, in total or per pod, serverless
   * endpoint, public endpoint, network volume or cluster.
   */
  readonly billing: Billing;
  readonly #transport: Transport;
  readonly #http: HttpSender;
  readonly #rateLimits: RateLimitTable | false;

  /** Throws `ValidationError` when no API key is given or a URL or number is invalid. */
  constructor(options: RunpodClientOptions = {}) {
    const env = options.env ?? process.env;
    const apiKey = nonBlank(options.apiKey) ?? nonBlank(env.RUNPOD_API_KEY);
    if (!apiKey) {
      throw new ValidationError(
        "No RunPod API key: pass the option apiKey or set the environment variable RUNPOD_API_KEY",
        ["apiKey"],
      );
    }
    const rest = resolveRestUrl(
      nonBlank(options.restUrl) ?? nonBlank(env.RUNPOD_REST_API_URL) ?? DEFAULT_REST_URL,
    );
    this.restUrl = rest.restUrl;
    this.restDialect = rest.dialect;
    const serverless = parseBaseUrl(
      nonBlank(options.serverlessUrl) ?? nonBlank(env.RUNPOD_SERVERLESS_API_URL) ?? DEFAULT_SERVERLESS_URL,
      "serverlessUrl",
      "RUNPOD_SERVERLESS_API_URL",
    );
    // The job paths start with /v2; a URL that already ends in /v2 (as the official SDKs
    // write it, `https://api.runpod.ai/v2`) is taken as its host, not doubled into /v2/v2.
    this.serverlessUrl = `${serverless.origin}${serverless.pathname.replace(/\/+$/, "").replace(/\/v2$/i, "")}`;
    this.#rateLimits = options.rateLimits === undefined ? SERVICE_RATE_LIMITS : options.rateLimits;
    this.#transport = new Transport({
      apiKey,
      timeoutMs: checkNumber(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs", 1, false),
      maxRetries: checkNumber(options.maxRetries ?? DEFAULT_MAX_RETRIES, "maxRetries", 0, true),
      userAgent: options.userAgent ?? `pulumi-runpod-dynamic (node ${process.version})`,
      logger: options.logger,
      sleep: options.sleep ?? defaultSleep,
    });
    const target = { transport: this.#transport, restUrl: this.restUrl, dialect: this.restDialect };
    this.registryAuths = new RegistryAuths(target);
    this.registries = new Registries(target);
    this.networkVolumes = new NetworkVolumes(target);
    const sse = sseOpener(apiKey);
    this.serverless = new ServerlessEndpoints(target, sse);
    this.pods = new Pods(target, sse);
    this.account = new Account(target);
    this.#http = httpSender(apiKey);
    this.templates = new Templates(target);
    this.catalog = new Catalog(target);
    this.billing = new Billing(target);
  }

  /** The job interface of one serverless endpoint. */
  endpoint(endpointId: string): Endpoint {
    return new Endpoint(
      { transport: this.#transport, serverlessUrl: this.serverlessUrl, rateLimits: this.#rateLimits },
      endpointId,
    );
  }

  /**
   * HTTP requests to a `type: "LOAD_BALANCER"` endpoint's own paths (`lb.request({ method, path,
   * body, headers })`, `lb.health()`), at its `requestUrls.base` (read with REST v2 `GET
   * /v2/serverless/{id}` on first use unless `baseUrl` is given). Every HTTP answer resolves with
   * its status, headers, body and latency; see `LoadBalancer`.
   */
  loadBalancer(endpointId: string, options: { baseUrl?: string } = {}): LoadBalancer {
    return new LoadBalancer(
      {
        transport: this.#transport,
        send: this.#http,
        lookup: (id, requestOptions) => this.serverless.get(id, requestOptions),
        serviceUrls: [this.serverlessUrl, this.restUrl],
      },
      endpointId,
      options.baseUrl,
    );
  }
}

/**
 * Options of the emulator (in-process and, in kebab case, on the command line), and their
 * resolution into checked values. Every bad value fails with an error naming the option.
 */
import { randomBytes } from "node:crypto";
import { type RateLimitTable, SERVICE_RATE_LIMITS } from "../wire/limits";
import type { NetworkVolume } from "../wire/schemas";
import { type Clock, realClock } from "./clock";
import { type FaultConfig, parseFaults, validateFaults } from "./faults";
import { V2_MANAGEMENT_SEGMENTS } from "./http/v2Document";
import { type EndpointConfig, type Retention, ROLLOUT_DEFAULT_MS } from "./jobs/engine";
import type { HandlerSpec } from "./jobs/handlers";
import { POD_START_DEFAULT_MS } from "./pods/podStore";
import {
  EMULATOR_MANAGEMENT_RATE_LIMIT,
  LOAD_BALANCER_REQUEST_WAIT_DEFAULT_MS,
  MAX_RETAINED_JOBS,
  MAX_RETAINED_RESULT_BYTES,
  RUN_RESULT_RETENTION_MS,
  RUNSYNC_RESULT_RETENTION_MS,
  WEBHOOK_RETRY_DELAY_MS,
} from "./serviceFacts";
import { type StoredVolume, volumeSizeProblem } from "./store";

/**
 * Endpoint ids that would collide with REST v2 management paths: every first segment of the v2
 * document (`registries`, `network-volumes`, `pods`, `serverless`, `templates`, ...).
 */
export const RESERVED_ENDPOINT_IDS: readonly string[] = V2_MANAGEMENT_SEGMENTS;

/** One endpoint: `{ id, workersMax?, coldStartMs? }` or the string `"ID"` / `"ID:N"` (N = workersMax). */
export type EndpointSpec = string | { id: string; workersMax?: number; coldStartMs?: number };

/** A seeded volume: the v1 shape (`dataCenterId`); the v2 shape (`dataCenter`) is accepted too. */
export type SeedVolume = NetworkVolume | (Omit<NetworkVolume, "dataCenterId"> & { dataCenter: string });

/** Options of `startEmulator`. */
export interface EmulatorOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Interface to bind. @default "127.0.0.1" */
  host?: string;
  /** Accepted API keys. @default one random key (shown as `apiKey`) */
  apiKeys?: string[];
  /** Endpoints and their workers. @default one endpoint `echo` with 3 workers */
  endpoints?: EndpointSpec[];
  /** Network volumes that exist at start (added to a state file's volumes when their ids are new). */
  volumes?: SeedVolume[];
  /** File keeping management data (registry auths, volumes, ECR delegations, templates, REST-v2-made endpoints) across restarts; written atomically. */
  stateFile?: string;
  /** Worker code: a module path (CommonJS or ESM), or a handler / an object of handlers by endpoint id. */
  handlers?: string | HandlerSpec;
  /** Delay between webhook attempts, ms. @default 10000 */
  webhookRetryDelayMs?: number;
  /**
   * How long finished jobs stay readable, ms, and the most bytes of their outputs kept (the oldest
   * are evicted early past it), and the most finished jobs kept, all endpoints together (the
   * oldest are forgotten early past it).
   * @default { runMs: 1800000, runsyncMs: 60000, maxBytes: 256000000, maxJobs: 100000 }
   */
  retention?: { runMs?: number; runsyncMs?: number; maxBytes?: number; maxJobs?: number };
  /** Fault injection: `"429=0.05,503=0.05,500=0.05,reset=0.05,latency=0-200"` or the parsed object. @default none */
  faults?: string | FaultConfig;
  /** Seed of the fault sequence, for deterministic tests. @default random */
  faultSeed?: number;
  /**
   * `true`: the service's table plus the emulator's management row
   * (`EMULATOR_MANAGEMENT_RATE_LIMIT`: 3000 per minute); `false`: off; or a table of your own (a
   * `management` row limits management calls; rows left out are not limited). REST v2 answers
   * carry `RateLimit` / `RateLimit-Policy` for the management row in force. @default true
   */
  rateLimits?: boolean | RateLimitTable;
  /** Time source of every job timer. @default the real clock */
  clock?: Clock;
  /**
   * Cold start of every endpoint's workers, ms (an endpoint's own `coldStartMs` wins). @default none:
   * workers are warm. Load-balancer endpoints (REST v2 `type: "LOAD_BALANCER"`) always keep
   * `workers.min` workers warm and start the others on demand, in this many ms (default 500).
   */
  coldStartMs?: number;
  /**
   * Rolling updates: after a new release of an endpoint, how long its workers of older versions
   * keep serving jobs (`isStale: true`) before they are replaced one at a time, ms of the
   * emulator clock. @default 3000
   */
  rolloutMs?: number;
  /**
   * Load-balancer endpoints: how long a request (other than health) waits for a ready worker
   * while workers start (a cold start, a rollout's new worker), ms of the emulator clock; then it
   * answers 503 `{"error": "no worker became ready within ..."}`. @default 60000
   */
  loadBalancerRequestWaitMs?: number;
  /**
   * How long a pod takes from create (or start) to `RUNNING`, ms of the emulator clock: half in
   * `PROVISIONING`, half in `STARTING`. @default 2000
   */
  podStartMs?: number;
  /**
   * The account's balance, USD: a pod create or start whose pod costs more an hour answers 402
   * (the service's short balance). A fixed figure: running pods do not spend it; the running
   * emulator's `setBalanceUsd` changes it. @default no limit
   */
  balanceUsd?: number;
}

/** Options after resolution. */
export interface ResolvedOptions {
  port: number;
  host: string;
  apiKeys: string[];
  endpoints: EndpointConfig[];
  volumes: StoredVolume[];
  stateFile?: string;
  handlers?: string | HandlerSpec;
  webhookRetryDelayMs: number;
  retention: Retention;
  faults?: FaultConfig;
  faultSeed?: number;
  rateLimits?: RateLimitTable;
  clock: Clock;
  rolloutMs: number;
  /** The emulator-wide cold start (`coldStartMs`), when given. */
  coldStartMs?: number;
  loadBalancerRequestWaitMs: number;
  podStartMs: number;
  balanceUsd?: number;
}

function nonNegativeInt(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new Error(
      `${name} must be a non-negative integer number of milliseconds, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

const ENDPOINT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** Parses one endpoint spec (`"ID"`, `"ID:N"` or an object). */
export function parseEndpoint(spec: EndpointSpec, defaultColdStartMs?: number): EndpointConfig {
  let id: string;
  let workersMax: unknown = 3;
  let coldStartMs: unknown = defaultColdStartMs;
  if (typeof spec === "string") {
    const m = /^([^:]*)(?::(.*))?$/.exec(spec) as RegExpExecArray;
    id = m[1] as string;
    if (m[2] !== undefined) {
      if (!/^\d+$/.test(m[2]))
        throw new Error(`endpoint "${spec}": N in ID:N must be a non-negative integer (workersMax)`);
      workersMax = Number(m[2]);
    }
  } else {
    id = spec.id;
    if (spec.workersMax !== undefined) workersMax = spec.workersMax;
    if (spec.coldStartMs !== undefined) coldStartMs = spec.coldStartMs;
  }
  if (typeof id !== "string" || !ENDPOINT_ID.test(id)) {
    throw new Error(
      `endpoint id ${JSON.stringify(id)}: use 1-128 letters, digits, "-" or "_", starting with a letter or digit`,
    );
  }
  if (RESERVED_ENDPOINT_IDS.includes(id)) {
    throw new Error(`endpoint id "${id}" is reserved: /v2/${id} is the REST v2 management path`);
  }
  if (
    typeof workersMax !== "number" ||
    !Number.isInteger(workersMax) ||
    workersMax < 0 ||
    workersMax > 10_000
  ) {
    throw new Error(`endpoint ${id}: workersMax must be an integer 0..10000`);
  }
  const config: EndpointConfig = { id, workersMax };
  if (coldStartMs !== undefined)
    config.coldStartMs = nonNegativeInt(`endpoint ${id}: coldStartMs`, coldStartMs, 0);
  return config;
}

function parseVolume(v: unknown, index: number): StoredVolume {
  const where = `volumes[${index}]`;
  if (!v || typeof v !== "object") throw new Error(`${where} must be an object`);
  const o = v as Record<string, unknown>;
  const dataCenterId = o.dataCenterId ?? o.dataCenter;
  if (typeof o.id !== "string" || o.id === "") throw new Error(`${where}.id must be a non-empty string`);
  if (typeof o.name !== "string") throw new Error(`${where}.name must be a string`);
  const sizeProblem = volumeSizeProblem(o.size, `${where}.size`);
  if (sizeProblem) throw new Error(sizeProblem);
  if (typeof dataCenterId !== "string" || dataCenterId === "") {
    throw new Error(`${where}.dataCenterId must be a non-empty string`);
  }
  const type = o.type ?? "STANDARD";
  if (type !== "STANDARD" && type !== "HIGH_PERFORMANCE") {
    throw new Error(`${where}.type must be STANDARD or HIGH_PERFORMANCE`);
  }
  return { id: o.id, name: o.name, size: o.size as number, dataCenterId, type };
}

/** Checks and completes the options; throws an error naming the first bad option. */
export function resolveOptions(options: EmulatorOptions = {}): ResolvedOptions {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`port must be an integer 0..65535, got ${port}`);
  const host = options.host ?? "127.0.0.1";
  if (typeof host !== "string" || host === "") throw new Error("host must be a non-empty string");
  let apiKeys = options.apiKeys ?? [];
  for (const key of apiKeys) {
    if (typeof key !== "string" || key === "" || /\s/.test(key)) {
      throw new Error("apiKeys: every key must be a non-empty string without whitespace");
    }
  }
  if (apiKeys.length === 0) apiKeys = [`emu_${randomBytes(18).toString("base64url")}`];
  const coldStartMs =
    options.coldStartMs === undefined ? undefined : nonNegativeInt("coldStartMs", options.coldStartMs, 0);
  const endpoints = (options.endpoints && options.endpoints.length > 0 ? options.endpoints : ["echo"]).map(
    (e) => parseEndpoint(e, coldStartMs),
  );
  const seen = new Set<string>();
  for (const e of endpoints) {
    if (seen.has(e.id)) throw new Error(`endpoints: "${e.id}" is given twice`);
    seen.add(e.id);
  }
  const volumes = (options.volumes ?? []).map((v, i) => parseVolume(v, i));
  const retention: Retention = {
    runMs: nonNegativeInt("retention.runMs", options.retention?.runMs, RUN_RESULT_RETENTION_MS),
    runsyncMs: nonNegativeInt(
      "retention.runsyncMs",
      options.retention?.runsyncMs,
      RUNSYNC_RESULT_RETENTION_MS,
    ),
    maxBytes: nonNegativeInt("retention.maxBytes", options.retention?.maxBytes, MAX_RETAINED_RESULT_BYTES),
    maxJobs: nonNegativeInt("retention.maxJobs", options.retention?.maxJobs, MAX_RETAINED_JOBS),
  };
  const faults =
    options.faults === undefined
      ? undefined
      : typeof options.faults === "string"
        ? parseFaults(options.faults)
        : validateFaults(options.faults);
  if (options.faultSeed !== undefined && !Number.isInteger(options.faultSeed)) {
    throw new Error("faultSeed must be an integer");
  }
  const rateLimits =
    options.rateLimits === undefined || options.rateLimits === true
      ? ({ ...SERVICE_RATE_LIMITS, management: EMULATOR_MANAGEMENT_RATE_LIMIT } as RateLimitTable)
      : options.rateLimits === false
        ? undefined
        : options.rateLimits;
  if (rateLimits) {
    for (const [row, rule] of Object.entries(rateLimits)) {
      if (!rule) continue;
      if (!(Number.isInteger(rule.requests) && rule.requests >= 1 && rule.windowMs > 0)) {
        throw new Error(`rateLimits.${row}: requests must be an integer >= 1 and windowMs > 0`);
      }
      if (rule.concurrent !== undefined && !(Number.isInteger(rule.concurrent) && rule.concurrent >= 1)) {
        throw new Error(`rateLimits.${row}.concurrent must be an integer >= 1 when given`);
      }
    }
  }
  const { balanceUsd } = options;
  if (
    balanceUsd !== undefined &&
    !(typeof balanceUsd === "number" && Number.isFinite(balanceUsd) && balanceUsd >= 0)
  ) {
    throw new Error(
      `balanceUsd must be a finite number of US dollars >= 0, got ${JSON.stringify(balanceUsd)}`,
    );
  }
  return {
    ...(balanceUsd !== undefined ? { balanceUsd } : {}),
    port,
    host,
    apiKeys,
    endpoints,
    volumes,
    ...(options.stateFile !== undefined ? { stateFile: options.stateFile } : {}),
    ...(options.handlers !== undefined ? { handlers: options.handlers } : {}),
    webhookRetryDelayMs: nonNegativeInt(
      "webhookRetryDelayMs",
      options.webhookRetryDelayMs,
      WEBHOOK_RETRY_DELAY_MS,
    ),
    retention,
    ...(faults ? { faults } : {}),
    ...(options.faultSeed !== undefined ? { faultSeed: options.faultSeed } : {}),
    ...(rateLimits ? { rateLimits } : {}),
    clock: options.clock ?? realClock,
    rolloutMs: nonNegativeInt("rolloutMs", options.rolloutMs, ROLLOUT_DEFAULT_MS),
    ...(coldStartMs !== undefined ? { coldStartMs } : {}),
    loadBalancerRequestWaitMs: nonNegativeInt(
      "loadBalancerRequestWaitMs",
      options.loadBalancerRequestWaitMs,
      LOAD_BALANCER_REQUEST_WAIT_DEFAULT_MS,
    ),
    podStartMs: nonNegativeInt("podStartMs", options.podStartMs, POD_START_DEFAULT_MS),
  };
}

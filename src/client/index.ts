/**
 * The typed RunPod API client: `RunpodClient`, its errors, wire schemas, limits and the helpers
 * the providers and the emulator reuse.
 */

export * from "../wire/billing";
export * from "../wire/catalog";
export * from "../wire/containerConfig";
export * from "../wire/ecrDelegations";
export { BAD_REQUEST_RULE, isBadRequestRule } from "../wire/fields";
export * from "../wire/pods";
export * from "../wire/serverless";
export * from "../wire/templates";
export * from "../wire/workerLogs";
export { Billing } from "./billing";
export { Catalog } from "./catalog";
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_REST_URL,
  DEFAULT_SERVERLESS_URL,
  DEFAULT_TIMEOUT_MS,
  RunpodClient,
  type RunpodClientOptions,
  resolveRestUrl,
} from "./client";
export { EcrDelegations, Registries } from "./ecrDelegations";
export {
  Endpoint,
  type StatusOptions,
  type StreamOptions,
  type SyncOptions,
  type WaitForJobOptions,
} from "./endpoint";
export {
  checkEndpointId,
  ENDPOINT_ID_RULE,
  isEndpointId,
} from "./endpointId";
export * from "./errors";
export * from "./limits";
export {
  checkLoadBalancerHeaders,
  checkLoadBalancerPath,
  DEFAULT_MAX_BODY_BYTES,
  LOAD_BALANCER_METHODS,
  LoadBalancer,
  type LoadBalancerMethod,
  type LoadBalancerRequest,
  type LoadBalancerRequestOptions,
  type LoadBalancerResponse,
  RESERVED_REQUEST_HEADERS,
} from "./loadBalancer";
export { NetworkVolumes, RegistryAuths, type RestDialect, volumeFromV2 } from "./management";
export { encodeSegment, path } from "./path";
export { Account, Pods } from "./pods";
export { type LimiterClock, RateLimiter, sharedLimiter } from "./rateLimiter";
export {
  type RegistryLogin,
  redactEnvMaps,
  redactText,
  redactValue,
  type Secret,
  secretForms,
} from "./redact";
export {
  backoffMs,
  exhaustedWindowMs,
  INITIAL_BACKOFF_MS,
  isRetryableBilledCreate,
  isRetryableError,
  isRetryableStatus,
  MAX_BACKOFF_MS,
  MAX_RETRY_AFTER_MS,
  mayHaveActed,
  parseHttpDate,
  parseRetryAfter,
  retryDelayMs,
  saidNotActed,
  serverDelayMs,
} from "./retry";
export * from "./schemas";
export { ServerlessEndpoints } from "./serverless";
export { nonBlank } from "./settingText";
export { Templates } from "./templates";
export {
  type AttemptTimers,
  attemptTimers,
  COARSE_TIMEOUT_MIN_MS,
  type RequestOptions,
  type RunpodLogger,
  type SleepFn,
} from "./transport";
export { describeIssue, formatPath, parseInput, parseResponse, validationErrorFrom } from "./validate";
export type { WorkerLogsOptions } from "./workerLogs";

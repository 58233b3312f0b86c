import type { RateLimitRule } from "../wire/limits";

/**
 * Service facts only the emulator needs: how long results stay readable, how webhooks are
 * retried, and when the queue counts as full. The limits a client also needs are in
 * `wire/limits.ts`.
 */

/** How long results stay readable after completion, in ms. */
export const RUN_RESULT_RETENTION_MS = 30 * 60 * 1000;
export const RUNSYNC_RESULT_RETENTION_MS = 60 * 1000;
/** Webhook delivery: 1 attempt plus this many retries, this far apart by default. */
export const WEBHOOK_RETRIES = 2;
export const WEBHOOK_RETRY_DELAY_MS = 10_000;
/** The queue is full (429) when it holds more than 50 jobs AND more than workersMax x 500. */
export const QUEUE_FULL_MIN_JOBS = 50;
export const QUEUE_FULL_JOBS_PER_WORKER = 500;

/**
 * The management quota of the emulator's default table. The service publishes none (its v2
 * document shows the `RateLimit` header format with example windows of 60/minute, 3000/hour and
 * 50000/day), yet says authenticated v2 answers carry the headers: so the default table has one
 * window, generous enough that no test or deploy meets it by accident, enforced and reported.
 */
export const EMULATOR_MANAGEMENT_RATE_LIMIT: RateLimitRule = Object.freeze({
  requests: 3000,
  windowMs: 60_000,
});

/**
 * Bounds of the emulator as a server others run (not the service's published limits): the most
 * bytes of finished jobs' outputs kept (past it the oldest results are evicted early, and their
 * `/status` answers 404 saying so), and the most workers one endpoint may ask for.
 */
export const MAX_RETAINED_RESULT_BYTES = 256 * 1_000_000;
export const MAX_WORKERS_PER_ENDPOINT = 10_000;
/**
 * Finished jobs kept readable at most, all endpoints together (`retention.maxJobs`): each holds its
 * input, which the byte budget does not count, so jobs with small outputs would otherwise pile up
 * for their whole retention time. Past it the oldest are forgotten early, as past the byte budget.
 */
export const MAX_RETAINED_JOBS = 100_000;

/**
 * Bounds of what one object and one account hold (the documents publish none; the emulator keeps
 * everything in memory, and 300 endpoints with a 200 KB env each took it from 98 MB to 630 MB and
 * its lists past their timeouts): an env's total size on an endpoint or a template (keys and values
 * as UTF-8 bytes), and the most endpoints and templates the emulator's one account holds. Past one,
 * the create or update is refused with 400 naming the field and the bound, and nothing changes.
 */
export const MAX_ENV_BYTES = 64 * 1000;
export const MAX_ENDPOINTS_PER_ACCOUNT = 200;
export const MAX_TEMPLATES_PER_ACCOUNT = 200;
/** Network volumes, registry auths and pods the one account holds at most (a create past it: 400). */
export const MAX_NETWORK_VOLUMES_PER_ACCOUNT = 100;
export const MAX_REGISTRY_AUTHS_PER_ACCOUNT = 100;
export const MAX_PODS_PER_ACCOUNT = 200;
/** ECR delegations the one account holds at most (a create past it: 400). */
export const MAX_ECR_DELEGATIONS_PER_ACCOUNT = 100;
/**
 * Releases kept per endpoint: the newest this many (each carries its diff, env values included,
 * so an endpoint PATCHed for ever would otherwise grow without end); older ones drop out of
 * `/releases`, the versions of those kept are unchanged.
 */
export const MAX_RELEASES_PER_ENDPOINT = 20;

/**
 * Load-balancer endpoints (`type: "LOAD_BALANCER"`), as the service documents them: requests go
 * straight to a worker's own HTTP server at `https://<id>.api.runpod.ai/<path>`, only to healthy
 * workers; a worker's `/ping` answers 200 (healthy), 204 (initializing) or anything else
 * (unhealthy); no queue, no retry. The emulator serves them at `<origin>/lb/<id>/<path>`
 * (`http/loadBalancerRoutes.ts`): health is answered from its workers' states (200 / 204 / 503),
 * other requests go to a ready worker of the newest ready release running the built-in model
 * server (`jobs/builtinServer.ts`), `workers.min` workers are warm and the others start on demand.
 * A request with no ready worker waits for one at most this long, ms of the emulator clock, then
 * answers 503: the emulator's choice (the service publishes no such wait; its 524 after 5.5
 * minutes of processing and its 400 past the workers' capacity are not emulated).
 */
export const LOAD_BALANCER_REQUEST_WAIT_DEFAULT_MS = 60_000;

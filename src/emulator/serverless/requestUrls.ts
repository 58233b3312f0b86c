/** Where an endpoint of this emulator is reached: its `requestUrls` and a load balancer's health path. */
import type { ServerlessEndpoint } from "../../wire/serverless";
import type { StoredEndpoint } from "./records";

/** The env variable naming a load-balancer endpoint's health path, as the service reads it. */
export const HEALTH_CHECK_PATH_ENV = "HEALTH_CHECK_PATH";
/** The health path of a load-balancer endpoint without {@link HEALTH_CHECK_PATH_ENV}. */
export const DEFAULT_HEALTH_PATH = "/ping";

/** The health path an endpoint env gives (`/` added in front when missing). */
export function healthPath(env: Record<string, string>): string {
  const given = env[HEALTH_CHECK_PATH_ENV];
  if (given === undefined || given === "") return DEFAULT_HEALTH_PATH;
  return given.startsWith("/") ? given : `/${given}`;
}

/**
 * An endpoint as the document shows it, with `requestUrls` under `serverlessUrl`: a load
 * balancer's `base` and `health`, a queue endpoint's job operations.
 */
export function withRequestUrls(record: StoredEndpoint["record"], serverlessUrl: string): ServerlessEndpoint {
  if (record.type === "LOAD_BALANCER") {
    const base = `${serverlessUrl}/lb/${encodeURIComponent(record.id)}`;
    return { ...record, requestUrls: { base, health: `${base}${healthPath(record.env)}` } };
  }
  const base = `${serverlessUrl}/v2/${encodeURIComponent(record.id)}`;
  return {
    ...record,
    requestUrls: {
      run: `${base}/run`,
      runSync: `${base}/runsync`,
      status: `${base}/status/{job_id}`,
      stream: `${base}/stream/{job_id}`,
      cancel: `${base}/cancel/{job_id}`,
      retry: `${base}/retry/{job_id}`,
      purgeQueue: `${base}/purge-queue`,
      health: `${base}/health`,
    },
  };
}

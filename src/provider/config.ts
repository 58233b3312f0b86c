/**
 * Stack configuration of the `runpod` namespace, resolved in one place for the providers and
 * the lookups: stack config first, then the environment, then the client's defaults.
 *
 * | key                    | environment                 | default                    |
 * |------------------------|-----------------------------|----------------------------|
 * | `runpod:apiKey` secret | `RUNPOD_API_KEY`            | none: an error names both  |
 * | `runpod:restUrl`       | `RUNPOD_REST_API_URL`       | the client's default       |
 * | `runpod:serverlessUrl` | `RUNPOD_SERVERLESS_API_URL` | `https://api.runpod.ai`    |
 *
 * Inside the dynamic-provider host the values come from `configure(req)`; they are kept on the
 * provider instance for that process only and never serialized into `__provider`.
 */

import { RunpodClient, ValidationError } from "../client";
import { blank } from "../client/client";

/**
 * Settings a provider or lookup needs to build a client. Values are trimmed, and blank ones
 * (empty or whitespace only) count as unset, the same rule as `new RunpodClient(...)`.
 */
export interface RunpodSettings {
  apiKey?: string;
  restUrl?: string;
  serverlessUrl?: string;
}

/** Stack config keys, namespaced as Pulumi stores them. */
export const CONFIG_KEYS = {
  apiKey: "runpod:apiKey",
  restUrl: "runpod:restUrl",
  serverlessUrl: "runpod:serverlessUrl",
} as const;

/** Environment variables used when a stack config key is unset. */
export const ENV_VARS = {
  apiKey: "RUNPOD_API_KEY",
  restUrl: "RUNPOD_REST_API_URL",
  serverlessUrl: "RUNPOD_SERVERLESS_API_URL",
} as const;

/** Something with Pulumi's `Config.get` shape: the configure request's or the stack's. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

/**
 * Resolves settings from a config source (`configure(req).config`, or stack config), falling
 * back to the environment for each key that is unset or blank; values come back trimmed.
 */
export function resolveSettings(
  source: ConfigSource | undefined,
  env: NodeJS.ProcessEnv = process.env,
): RunpodSettings {
  const pick = (name: keyof typeof CONFIG_KEYS): string | undefined =>
    blank(source?.get(CONFIG_KEYS[name])) ?? blank(env[ENV_VARS[name]]);
  return { apiKey: pick("apiKey"), restUrl: pick("restUrl"), serverlessUrl: pick("serverlessUrl") };
}

/** Settings of the running Pulumi program (for lookups, which run in the program process). */
export function settingsFromStack(): RunpodSettings {
  const pulumi: typeof import("@pulumi/pulumi") = require("@pulumi/pulumi");
  const config = new pulumi.Config("runpod");
  return resolveSettings({ get: (key) => config.get(key.replace(/^runpod:/, "")) });
}

/**
 * Builds a client from resolved settings. A missing key is a `ValidationError` naming the stack
 * config key and the environment variable, raised before any network call.
 */
export function clientFromSettings(
  settings: RunpodSettings,
  extra: { timeoutMs?: number; maxRetries?: number } = {},
): RunpodClient {
  if (!settings.apiKey) {
    throw new ValidationError(
      `No RunPod API key: set the secret stack config "${CONFIG_KEYS.apiKey}" ` +
        `(pulumi config set --secret ${CONFIG_KEYS.apiKey} ...) or the environment variable ${ENV_VARS.apiKey}.`,
      ["apiKey"],
    );
  }
  return new RunpodClient({
    apiKey: settings.apiKey,
    restUrl: settings.restUrl,
    serverlessUrl: settings.serverlessUrl,
    ...extra,
  });
}

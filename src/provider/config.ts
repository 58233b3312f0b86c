/**
 * Stack configuration of the `runpod` namespace, resolved in one place for the providers and
 * the lookups: stack config first, then the environment, then the client's defaults.
 *
 * | key                    | environment                 | default                    |
 * |------------------------|-----------------------------|----------------------------|
 * | `runpod:apiKey` secret | `RUNPOD_API_KEY`            | none: an error names both  |
 * | `runpod:restUrl`       | `RUNPOD_REST_API_URL`       | the client's default       |
 * | `runpod:serverlessUrl` | `RUNPOD_SERVERLESS_API_URL` | `https://api.runpod.ai`    |
 * | `runpod:maxHourlyUsd`  | `RUNPOD_MAX_HOURLY_USD`     | none: no stack budget (set blank: check fails naming it) |
 * | `runpod:volumePricePerGbMonth` | `RUNPOD_VOLUME_PRICE_PER_GB_MONTH` | the list-price table (`cost/volume.ts`) |
 *
 * Inside the dynamic-provider host the values come from `configure(req)`; they are kept on the
 * provider instance for that process only and never serialized into `__provider`.
 */

import type * as ClientModule from "../client";
import { ValidationError } from "../client/errors";
import { nonBlank } from "../client/settingText";
import type { Clock } from "./clock";

/**
 * The client module, loaded on first use: resource declarations import this file, and a program
 * that only declares resources should not load the client's HTTP stack and schemas. When the
 * sources run directly (tests), `require` cannot load a `.ts` file written with `import`
 * statements, so the built copy is loaded by the package's own name, as the providers do.
 */
const clientModule = (): Pick<typeof ClientModule, "RunpodClient"> =>
  require(__filename.endsWith(".ts") ? "pulumi-runpod-dynamic/dist/client/client.js" : "../client/client.js");

/**
 * Settings a provider or lookup needs to build a client. Values are trimmed, and blank ones
 * (empty or whitespace only) count as unset, the same rule as `new RunpodClient(...)`.
 */
export interface RunpodSettings {
  apiKey?: string;
  restUrl?: string;
  serverlessUrl?: string;
  /**
   * Where each value came from, so an error about a value names what the user set (`runpod:restUrl`
   * rather than the client's option name). Absent for settings built by hand.
   */
  sources?: Partial<Record<"apiKey" | "restUrl" | "serverlessUrl", "config" | "env">>;
  /**
   * The cost settings as given (unparsed: `check` judges them and names the key). Not enumerable,
   * like `sources`. Absent for settings built by hand.
   */
  cost?: CostSettings;
  /**
   * The time and timers of the operations' waits (an endpoint's rollout, a JobRun's rollout wait
   * and deadline, a pod's readiness), so a test can drive a whole create or update on a fake clock.
   * Never from stack config or the environment.
   * @default the real clock
   */
  clock?: Clock;
  /**
   * Aborted when the engine cancels the deployment (the native plugin's `Cancel`, sent on the first
   * Ctrl-C). Every wait of an operation (a pod's or a cluster's readiness, an endpoint's rollout, a
   * smoke test) then ends as it ends at its own timeout, saying it was cancelled: an object created
   * so far is answered as a partial failure carrying its id, so the engine keeps it in the state.
   * Never from stack config or the environment. Not enumerable.
   * @default never aborted
   */
  signal?: AbortSignal;
  /**
   * How long an `SshKey` edit waits after its verified write before reading the account's set
   * once more, ms (on `clock`). Never from stack config; the provider host reads
   * `RUNPOD_SSH_KEY_SETTLE_MS` when this is unset.
   * @default 2000
   */
  sshKeySettleMs?: number;
}

/** What a wait takes from the settings: its clock and the deployment's cancellation. */
export type WaitSettings = Pick<RunpodSettings, "clock" | "signal">;

/** Cost settings as given: stack config first, then the environment; blank counts as unset, except for the budget. */
export interface CostSettings {
  /** `runpod:maxHourlyUsd` / `RUNPOD_MAX_HOURLY_USD`: the deployment's budget, USD an hour. */
  maxHourlyUsd?: string;
  /** `runpod:volumePricePerGbMonth` / `RUNPOD_VOLUME_PRICE_PER_GB_MONTH`: overrides the volume price table. */
  volumePricePerGbMonth?: string;
  /** Where each value came from, so a failure names what the user set. */
  sources: Partial<Record<"maxHourlyUsd" | "volumePricePerGbMonth", "config" | "env">>;
}

/** Stack config keys and environment variables of the cost settings. */
export const COST_KEYS = {
  maxHourlyUsd: { key: "runpod:maxHourlyUsd", env: "RUNPOD_MAX_HOURLY_USD" },
  volumePricePerGbMonth: { key: "runpod:volumePricePerGbMonth", env: "RUNPOD_VOLUME_PRICE_PER_GB_MONTH" },
} as const;

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
  const sources: NonNullable<RunpodSettings["sources"]> = {};
  const pick = (name: keyof typeof CONFIG_KEYS): string | undefined => {
    const fromConfig = nonBlank(source?.get(CONFIG_KEYS[name]));
    if (fromConfig !== undefined) {
      sources[name] = "config";
      return fromConfig;
    }
    const fromEnv = nonBlank(env[ENV_VARS[name]]);
    if (fromEnv !== undefined) sources[name] = "env";
    return fromEnv;
  };
  const settings: RunpodSettings = {
    apiKey: pick("apiKey"),
    restUrl: pick("restUrl"),
    serverlessUrl: pick("serverlessUrl"),
  };
  // Not enumerable: the settings compare and print as the three values they are.
  Object.defineProperty(settings, "sources", { value: sources, enumerable: false });
  Object.defineProperty(settings, "cost", { value: resolveCostSettings(source, env), enumerable: false });
  return settings;
}

/**
 * The cost settings: each key from the config source, else its environment variable. A blank
 * `volumePricePerGbMonth` counts as unset (the price table applies); a budget set blank
 * (`RUNPOD_MAX_HOURLY_USD=""`) is kept as given, so `check` fails naming it instead of running
 * with no budget at all.
 */
export function resolveCostSettings(
  source: ConfigSource | undefined,
  env: NodeJS.ProcessEnv = process.env,
): CostSettings {
  const cost: CostSettings = { sources: {} };
  for (const name of Object.keys(COST_KEYS) as (keyof typeof COST_KEYS)[]) {
    const given = name === "maxHourlyUsd" ? (v: string | undefined) => v : nonBlank;
    const fromConfig = given(source?.get(COST_KEYS[name].key));
    const value = fromConfig ?? given(env[COST_KEYS[name].env]);
    if (value === undefined) continue;
    cost[name] = value;
    cost.sources[name] = fromConfig !== undefined ? "config" : "env";
  }
  return cost;
}

/** Settings of the running Pulumi program (for lookups, which run in the program process). */
export function settingsFromStack(): RunpodSettings {
  const pulumi: typeof import("@pulumi/pulumi") = require("@pulumi/pulumi");
  const config = new pulumi.Config("runpod");
  return resolveSettings({ get: (key) => config.get(key.replace(/^runpod:/, "")) });
}

/**
 * The client a lookup uses: `opts.client`, else one built from `opts.settings` or the running
 * program's stack config. A configuration error (no API key, a malformed URL) stays a
 * `ValidationError` and is also marked as Pulumi's `RunError`, so the program prints its one-line
 * message (naming the config key and the variable) without a stack trace: `run` in
 * @pulumi/pulumi cmd/run/run.js logs a `RunError` by its message alone (`RunError.isInstance`
 * reads the `__pulumiRunError` member).
 */
export function lookupClient(
  opts: { client?: ClientModule.RunpodClient; settings?: RunpodSettings } = {},
): ClientModule.RunpodClient {
  if (opts.client) return opts.client;
  try {
    return clientFromSettings(opts.settings ?? settingsFromStack());
  } catch (error) {
    if (error instanceof ValidationError) Object.defineProperty(error, "__pulumiRunError", { value: true });
    throw error;
  }
}

/** Which of the service's interfaces a caller uses; a URL it never uses is not checked. */
export interface ClientUse {
  /** The management API (`restUrl`). JobRun only runs jobs: it passes `false`. @default true */
  rest?: boolean;
}

/**
 * Builds a client from resolved settings. A missing key is a `ValidationError` naming the stack
 * config key and the environment variable, raised before any network call; so is a malformed URL,
 * naming the stack config key when the value came from stack config.
 */
export function clientFromSettings(
  settings: RunpodSettings,
  extra: { timeoutMs?: number; maxRetries?: number } = {},
  use: ClientUse = {},
): ClientModule.RunpodClient {
  if (!settings.apiKey) {
    throw new ValidationError(
      `No RunPod API key: set the secret stack config "${CONFIG_KEYS.apiKey}" ` +
        `(pulumi config set --secret ${CONFIG_KEYS.apiKey} ...) or the environment variable ${ENV_VARS.apiKey}.`,
      ["apiKey"],
    );
  }
  const { RunpodClient } = clientModule();
  try {
    return new RunpodClient({
      apiKey: settings.apiKey,
      restUrl: use.rest === false ? undefined : settings.restUrl,
      serverlessUrl: settings.serverlessUrl,
      ...extra,
      // resolveSettings already applied the environment; the client must not read it again (a
      // malformed RUNPOD_REST_API_URL would otherwise fail a caller that never uses REST).
      env: {},
    });
  } catch (error) {
    throw namingWhatWasSet(error, settings);
  }
}

/**
 * A client `ValidationError` about `restUrl` or `serverlessUrl` rewritten to name where the value
 * came from: `runpod:restUrl` (stack config) or `RUNPOD_REST_API_URL`, and how to fix it.
 */
function namingWhatWasSet(error: unknown, settings: RunpodSettings): unknown {
  if (!(error instanceof ValidationError)) return error;
  const key = error.path[0];
  if (key !== "restUrl" && key !== "serverlessUrl") return error;
  const where =
    settings.sources?.[key] === "config"
      ? `stack config "${CONFIG_KEYS[key]}" (fix: pulumi config set ${CONFIG_KEYS[key]} <url>)`
      : settings.sources?.[key] === "env"
        ? `environment variable ${ENV_VARS[key]}`
        : `stack config "${CONFIG_KEYS[key]}" or environment variable ${ENV_VARS[key]}`;
  return new ValidationError(`${error.message}; the value comes from ${where}`, [...error.path]);
}

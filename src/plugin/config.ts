/**
 * The plugin's package name and its provider configuration: what `CheckConfig` accepts, what
 * `DiffConfig` reports, and the settings `Configure` resolves for the operations.
 *
 * | key                        | environment                 | default                 |
 * |----------------------------|-----------------------------|-------------------------|
 * | `runpod-native:apiKey` secret | `RUNPOD_API_KEY`         | none: create, read, update and delete fail naming both |
 * | `runpod-native:restUrl`    | `RUNPOD_REST_API_URL`       | the client's default    |
 * | `runpod-native:serverlessUrl` | `RUNPOD_SERVERLESS_API_URL` | `https://api.runpod.ai` |
 * | `runpod-native:maxHourlyUsd` | `RUNPOD_MAX_HOURLY_USD`   | none: no stack budget   |
 *
 * The environment fallbacks are those of `runpod:*` (`../provider/config.ts`, reused here): the
 * operations get the same `RunpodSettings` from either front end.
 */

import { isUnknown } from "../provider/common/unknown";
import { COST_KEYS, ENV_VARS, type RunpodSettings, resolveSettings } from "../provider/config";

/**
 * The Pulumi package name: the plugin is `pulumi-resource-runpod-native`, its type tokens
 * `runpod-native:index:<Class>`, its config `runpod-native:<key>`. Allowed by the metaschema's
 * `name` pattern `^[a-zA-Z][-a-zA-Z0-9_]*$` (pkg/codegen/schema/pulumi.json; a copy is in
 * test/fixtures/pulumi-package-metaschema.json); not `runpod`, the name of RunPod's own provider.
 */
export const PACKAGE_NAME = "runpod-native";

/** The provider's config keys (bare, as the engine sends them in `Configure`'s `args`) and their variables. */
export const PLUGIN_CONFIG = {
  apiKey: { env: ENV_VARS.apiKey, secret: true, kind: "string" },
  restUrl: { env: ENV_VARS.restUrl, secret: false, kind: "url" },
  serverlessUrl: { env: ENV_VARS.serverlessUrl, secret: false, kind: "url" },
  maxHourlyUsd: { env: COST_KEYS.maxHourlyUsd.env, secret: false, kind: "usd" },
} as const;

export type PluginConfigKey = keyof typeof PLUGIN_CONFIG;

/** `runpod-native:<key>`. */
export const configKey = (key: string) => `${PACKAGE_NAME}:${key}`;

/**
 * Keys the engine itself puts among a provider's inputs (pkg/resource/deploy/providers/registry.go:
 * `version`, `pluginDownloadURL`, everything under `__internal`); never the user's typo.
 */
const ENGINE_KEYS = new Set(["version", "pluginDownloadURL"]);
const isEngineKey = (key: string) => ENGINE_KEYS.has(key) || key.startsWith("__");

/** A config value as text: strings as they are, numbers and booleans printed (the engine JSON-encodes non-strings). */
function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The settings the operations get, from `Configure`'s plain args (bare keys), each key falling
 * back to its environment variable (`resolveSettings`, which reads `runpod:<key>`: the names map
 * one to one).
 */
export function settingsFromArgs(args: Record<string, unknown>, env: NodeJS.ProcessEnv): RunpodSettings {
  return resolveSettings({ get: (key) => asText(args[key.replace(/^runpod:/, "")]) }, env);
}

/** Where each setting came from, for the engine's debug log: never a value. */
export function describeSources(settings: RunpodSettings): string {
  const sources: Record<string, string | undefined> = { ...settings.sources, ...settings.cost?.sources };
  return Object.keys(PLUGIN_CONFIG)
    .map((key) => {
      const from = sources[key];
      const where =
        from === "config"
          ? configKey(key)
          : from === "env"
            ? PLUGIN_CONFIG[key as PluginConfigKey].env
            : "unset";
      return `${key} from ${where}`;
    })
    .join(", ");
}

/** The error for a call that needs the API key when there is none: names the config key and the variable. */
export function missingApiKeyMessage(): string {
  return (
    `No RunPod API key: set the secret stack config "${configKey("apiKey")}" ` +
    `(pulumi config set --secret ${configKey("apiKey")} ...) or the environment variable ${ENV_VARS.apiKey}.`
  );
}

/** A `CheckConfig` failure. */
export interface ConfigFailure {
  property: string;
  reason: string;
}

/**
 * `CheckConfig`'s judgement of the provider's inputs (plain, secrets unwrapped): an unknown key
 * (a typo such as `apikey`) fails, naming the keys there are; a URL must be http(s); a budget a
 * positive number of USD an hour. Values unknown in a preview are not judged. No network: the
 * API key is only used (and so judged) by the operations.
 */
export function checkConfig(news: Record<string, unknown>): ConfigFailure[] {
  const failures: ConfigFailure[] = [];
  for (const [key, value] of Object.entries(news)) {
    if (isEngineKey(key) || value === undefined || value === null || isUnknown(value)) continue;
    const spec = PLUGIN_CONFIG[key as PluginConfigKey];
    if (spec === undefined) {
      failures.push({
        property: key,
        reason: `${configKey(key)} is not a setting of this provider; the settings are ${Object.keys(PLUGIN_CONFIG).map(configKey).join(", ")}`,
      });
      continue;
    }
    const text = asText(value) ?? "";
    if (spec.kind === "url" && !isHttpUrl(text)) {
      failures.push({
        property: key,
        reason: `${configKey(key)} must be an http or https URL (fix: pulumi config set ${configKey(key)} <url>)`,
      });
    } else if (spec.kind === "usd" && !(Number(text) > 0 && Number.isFinite(Number(text)))) {
      failures.push({
        property: key,
        reason: `${configKey(key)} must be a positive number of USD an hour, such as 2.5`,
      });
    } else if (spec.kind === "string" && typeof value !== "string") {
      failures.push({ property: key, reason: `${configKey(key)} must be a string` });
    }
  }
  return failures;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The settings' keys whose value differs between the old provider outputs and the new inputs (unknown counts as changed). */
export function changedConfigKeys(olds: Record<string, unknown>, news: Record<string, unknown>): string[] {
  return Object.keys(PLUGIN_CONFIG).filter(
    (key) => isUnknown(news[key]) || asText(olds[key]) !== asText(news[key]),
  );
}

/** A `runpod:<key>` config name in an operation's text (the dynamic front end's names). */
const DYNAMIC_CONFIG_NAME = /\brunpod:(apiKey|restUrl|serverlessUrl|maxHourlyUsd|volumePricePerGbMonth)\b/g;

/**
 * `text` (an operation's error or check failure) naming this provider's config keys: the operations
 * word their hints for the dynamic front end (`runpod:apiKey`); here the key is `runpod-native:apiKey`.
 */
export function withPluginConfigNames(text: string): string {
  return text.replace(DYNAMIC_CONFIG_NAME, (_all, key: string) => configKey(key));
}

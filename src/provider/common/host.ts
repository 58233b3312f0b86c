/**
 * What every provider's operations do the same way in the provider host: settings from the
 * configure request, a client from those settings, stored properties without `__provider`, and
 * how a message names a service object.
 */
import type { RunpodClient } from "../../client";
import { type ConfigSource, clientFromSettings, type RunpodSettings, resolveSettings } from "../config";
import { printable } from "./wording";

/** Settings for the host process: the configure request's config, then the environment. */
export function settingsFromConfigure(config: ConfigSource | undefined): RunpodSettings {
  return resolveSettings(config);
}

/** A client for the host process: from `configure`'s settings, else from the environment. */
export function hostClient(settings: RunpodSettings | undefined): RunpodClient {
  return clientFromSettings(settings ?? resolveSettings(undefined));
}

/** Stored inputs or outputs without `__provider`, the serialized provider the engine keeps in them. */
export function withoutProvider(props: Record<string, unknown>): Record<string, unknown> {
  const { __provider: _ignored, ...rest } = props;
  return rest;
}

/**
 * `"name" (id X)`, or `id X`. Either may come from the service (a name read back, an id it gave),
 * so each is made one printable line (`printable`).
 */
export function labelOf(name: string | undefined, id: string): string {
  return name ? `"${printable(name)}" (id ${printable(id)})` : `id ${printable(id)}`;
}

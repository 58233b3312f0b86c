/**
 * Small value helpers shared by the providers: Pulumi's unknown sentinel and the wording used
 * in field-level failures and error messages, and what every provider operation passes through
 * before the host sees it (redacted values, `reasons` of partial failures).
 */

import { redactError } from "./secrets";

/**
 * What Pulumi passes for a value not known yet (a preview, or an output of a resource not yet
 * created). Check and diff skip such values instead of judging them.
 */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** True when `value` is Pulumi's unknown sentinel. */
export const isUnknown = (value: unknown): boolean => value === UNKNOWN;

/** A value's JSON type in words, for messages: `missing`, `null`, `an array of 2 items`, `a string`. */
export function describeType(value: unknown): string {
  if (value === undefined) return "missing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** An error's message (or the thrown value as text), for quoting inside another message. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `value` with every string inside it (object values and array items, at any depth) passed
 * through `redact`: what a provider returns must not carry a secret the service or a worker
 * echoed, because the engine re-marks as secret only outputs whose keys match secret inputs.
 */
export function redactValue<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redact)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = redactValue(item, redact);
    return out as T;
  }
  return value;
}

/**
 * The `reasons` of a partial failure (an error with `id`): the engine prints ONLY these, joined
 * as a list (`InitError.Error()` in pkg/resource/plugin/provider_plugin.go: go-multierror's
 * "1 error occurred:\n\t* <reason>"), and records init errors only from them; with none it prints
 * "resource init failed". One entry holding the whole message reads best: the message's lines
 * (what happened, worker error, timeline, hint) stay together under one bullet.
 */
export function withReasons<E extends Error>(error: E): E & { reasons?: string[] } {
  const e = error as E & { id?: unknown; reasons?: string[] };
  if (e.id !== undefined && (!Array.isArray(e.reasons) || e.reasons.length === 0)) e.reasons = [e.message];
  return e;
}

/**
 * Runs a provider operation; whatever it throws reaches the host redacted (`redactError`: the
 * secrets become `[redacted]`, no `cause`, no response body) and, for a partial failure, with
 * `reasons` holding the redacted message ({@link withReasons}). The host sends `e.message` as the
 * gRPC status message, which the engine prints for a plain error (`resourceStateAndError`), and
 * packs `e.reasons || []` for a partial failure (`sdk/nodejs/cmd/dynamic-provider/index.ts`).
 */
export async function withProviderErrors<T>(secrets: readonly unknown[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw withReasons(redactError(error, secrets));
  }
}

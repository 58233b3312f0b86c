/**
 * Property values as the engine sends them to a provider that accepts secrets, and back.
 *
 * The plugin answers `acceptSecrets: true` (`./server.ts`), so the engine marshals a secret as
 * `{ [SECRET_SIG_KEY]: SECRET_SIG, value }` (`MarshalOptions.KeepSecrets`, pkg/resource/plugin/rpc.go)
 * and, having passed secrets, no longer re-marks the answers itself: `annotateSecrets` runs only
 * `if !protocol.acceptSecrets` (Check, Create, Read, Update in pkg/resource/plugin/provider_plugin.go).
 * So the plugin unwraps what comes in (the operations see plain values, as in the dynamic-provider
 * host) and wraps again every top-level output whose input was secret, or that the resource always
 * keeps secret (its row's `secretInputs`, `../provider/resources.ts`). Values unknown in a preview
 * are the engine's sentinel string and pass through untouched (`UNKNOWN`, `../provider/common/unknown.ts`).
 */

/** The key and value marking a secret on the wire (`sig.Key`, `sig.Secret` in pulumi's sdk/go/common/resource/sig). */
export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

type Props = Record<string, unknown>;

/** True when `value` is a secret as the engine marshals it. */
export function isSecret(value: unknown): value is { value: unknown } {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    (value as Props)[SECRET_SIG_KEY] === SECRET_SIG
  );
}

/** `value` with every secret wrapper, at any depth, replaced by the value it holds. */
export function unwrapValue(value: unknown): unknown {
  if (isSecret(value)) return unwrapValue(value.value);
  if (Array.isArray(value)) return value.map(unwrapValue);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapValue(v)]));
  }
  return value;
}

/** True when `value` holds a secret wrapper anywhere. */
export function containsSecret(value: unknown): boolean {
  if (isSecret(value)) return true;
  if (Array.isArray(value)) return value.some(containsSecret);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsSecret);
  return false;
}

/** Plain properties and the top-level keys that held a secret (at any depth). */
export interface Unwrapped {
  plain: Props;
  secretKeys: Set<string>;
}

/** Unwraps `props` (undefined: none), remembering which top-level keys were secret. */
export function unwrapProps(props: Props | undefined): Unwrapped {
  const plain: Props = {};
  const secretKeys = new Set<string>();
  for (const [key, value] of Object.entries(props ?? {})) {
    if (containsSecret(value)) secretKeys.add(key);
    plain[key] = unwrapValue(value);
  }
  return { plain, secretKeys };
}

/** Wraps `value` as a secret. */
export const secret = (value: unknown) => ({ [SECRET_SIG_KEY]: SECRET_SIG, value });

/**
 * `props` with the value of each key in `secretKeys` wrapped as a secret (a key already wrapped,
 * or absent, stays as it is). As `annotateSecrets` does for a provider that cannot take secrets,
 * a whole top-level value is marked: a secret inside a list must not surface by moving.
 */
export function wrapSecrets(props: Props, secretKeys: Iterable<string>): Props {
  const out: Props = { ...props };
  for (const key of secretKeys) {
    if (out[key] === undefined || isSecret(out[key])) continue;
    out[key] = secret(out[key]);
  }
  return out;
}

/**
 * `value` without `undefined` members at any depth (an `undefined` in a list becomes `null`), as
 * JSON and the dynamic-provider host's serialization leave them out: a `google.protobuf.Struct`
 * cannot carry one (`Value.fromJavaScript` throws).
 */
export function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : withoutUndefined(v))) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = withoutUndefined(v);
    return out as T;
  }
  return value;
}

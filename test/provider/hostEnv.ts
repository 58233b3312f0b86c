/**
 * The environment `startProviderHost` gives a host by default (this process's, without any
 * `RUNPOD_*` variable, so a developer's real key never leaks in), plus `extra`: for a test that
 * passes `env` (which replaces the default) to set one of `fastWaits.cjs`'s variables.
 */
export function hostEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("RUNPOD_")) env[k] = v;
  return { ...env, ...extra };
}

/**
 * What the JobRun host tests share: a provider host started from the installed (packed) package
 * and configured for an emulator, and a create that must end as a partial failure the engine
 * prints in full.
 */
import { expect, inject } from "vitest";
import type { RunningEmulator } from "../../src/emulator";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { engineText } from "./engineText";

/**
 * A provider host from the installed package, configured with the emulator's key and URLs.
 * `pollMs`: how often it reads a rollout it waits for, ms (`startProviderHost`'s). @default 1 s
 */
export async function startJobRunHost(
  emu: RunningEmulator,
  waits: { pollMs?: number } = {},
): Promise<ProviderHost> {
  const host = await startProviderHost({ projectDir: inject("installedProjectDir"), ...waits });
  await host.configure({
    "runpod:apiKey": emu.apiKey,
    "runpod:serverlessUrl": emu.serverlessUrl,
    "runpod:restUrl": emu.restUrl,
  });
  return host;
}

/** Check then create, as the engine does, expecting both to pass; resolves with the created resource. */
export async function createPassing(host: ProviderHost, name: string, news: Record<string, unknown>) {
  const urn = urnFor("JobRun", name);
  const { inputs, failures } = await host.check(urn, {}, news);
  expect(failures).toEqual([]);
  return { urn, inputs, ...(await host.create(urn, inputs)) };
}

/**
 * Check then create, as the engine does, expecting a partial failure: the error has an `id` and
 * carries its whole (redacted) message as its one reason, so the engine prints it (not "resource
 * init failed") and records an init error (the next `up` re-runs it). Resolves with the error and
 * the checked inputs.
 */
export async function createFailing(
  host: ProviderHost,
  name: string,
  news: Record<string, unknown>,
): Promise<HostError & { inputs: unknown }> {
  const urn = urnFor("JobRun", name);
  const { inputs, failures } = await host.check(urn, {}, news);
  expect(failures).toEqual([]);
  const error = await host.create(urn, inputs).then(
    () => {
      throw new Error("create succeeded; a failure was expected");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  expectReasons(error as HostError);
  return Object.assign(error as HostError, { inputs });
}

/**
 * A partial failure the engine prints in full: it has an `id`, and its whole (redacted) message is
 * its one reason (InitError.Error() in pkg/resource/plugin/provider_plugin.go).
 */
export function expectReasons(error: HostError): void {
  expect(error.id).toEqual(expect.any(String));
  expect(error.reasons).toEqual([error.message]);
  expect(engineText(error)).toBe(`1 error occurred:\n\t* ${error.message}\n\n`);
}

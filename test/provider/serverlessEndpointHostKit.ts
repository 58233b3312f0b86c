/**
 * What the ServerlessEndpoint host tests share: an emulator on a ManualClock (so a rollout moves
 * only when a test says), a FaultProxy in front of its REST interface, a client for looking at what
 * the service holds, and Pulumi's real provider host configured against them, with the check → create
 * steps the engine takes and a secret scan of everything a user could see.
 *
 * ```ts
 * const kit = endpointHostKit({ apiKey: KEY, secrets: [TOKEN, KEY], rolloutMs: 3_000 });
 * const { clock, checked, create, failing, rollOutOnceWaiting } = kit;
 * beforeAll(() => kit.start());
 * afterAll(() => kit.stop()); // also asserts no secret reached host stderr or an error seen
 * ```
 */
import { expect, inject } from "vitest";
import { RunpodClient } from "../../src/client";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator";
import { ManualClock } from "../../src/emulator/clock";
import { WORKER_START_MS } from "../../src/emulator/jobs/engine";
import { FaultProxy } from "../support/faultProxy.mts";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";

/** How often the host reads a rollout it waits for, ms of real time (the provider's own: 1 s). */
export const ROLLOUT_POLL_MS = 20;

export interface EndpointHostKitOptions {
  apiKey: string;
  /** Values that must never appear outside `env` (the API key, env tokens). */
  secrets: readonly string[];
  /** The emulator's `rolloutMs`. */
  rolloutMs: number;
  /** The emulator's worker handlers. */
  handlers?: EmulatorOptions["handlers"];
  /**
   * Outputs that are secret inputs themselves (the engine stores them encrypted), left out of the
   * secret scan. @default ["env"] (add "smokeTest" when it carries `http.headers`)
   */
  secretInputs?: readonly string[];
}

export function endpointHostKit(options: EndpointHostKitOptions) {
  const clock = new ManualClock();
  const secretInputs = options.secretInputs ?? ["env"];
  const withoutSecretInputs = (record: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(record).filter(([key]) => !secretInputs.includes(key)));
  /** Every error message and properties text seen, for the secret scan in `stop`. */
  const errorsSeen: string[] = [];
  const kit = {
    clock,
    errorsSeen,
    emu: undefined as unknown as RunningEmulator,
    proxy: undefined as unknown as FaultProxy,
    host: undefined as unknown as ProviderHost,
    client: undefined as unknown as RunpodClient,

    async start(): Promise<void> {
      kit.emu = await startEmulator({
        clock,
        apiKeys: [options.apiKey],
        rateLimits: false,
        rolloutMs: options.rolloutMs,
        ...(options.handlers === undefined ? {} : { handlers: options.handlers }),
      });
      kit.proxy = await new FaultProxy(`http://127.0.0.1:${kit.emu.port}`).start();
      kit.client = new RunpodClient({
        apiKey: options.apiKey,
        restUrl: kit.emu.restUrl,
        serverlessUrl: kit.emu.serverlessUrl,
        maxRetries: 0,
        rateLimits: false,
      });
      // The host reads a rollout every ROLLOUT_POLL_MS (20 ms, not 1 s): a rollout the test moved
      // on the emulator's clock is seen in milliseconds, not at the next whole second.
      kit.host = await startProviderHost({
        projectDir: inject("installedProjectDir"),
        pollMs: ROLLOUT_POLL_MS,
        // After a create answered 429 or 503, list after 10 ms, not 1 s (the pause: managedCreate.test.ts).
        createPauseMs: 10,
      });
      await kit.host.configure({
        "runpod:apiKey": options.apiKey,
        "runpod:restUrl": `${kit.proxy.url}/v2`,
        "runpod:serverlessUrl": kit.emu.serverlessUrl,
      });
    },

    /** Closes everything, then asserts no secret reached the host's stderr or an error seen. */
    async stop(): Promise<void> {
      const stderr = kit.host?.stderr() ?? "";
      await kit.host?.close();
      await kit.proxy?.close();
      await kit.emu?.close();
      kit.expectNoSecret(stderr);
      for (const message of errorsSeen) kit.expectNoSecret(message);
    },

    expectNoSecret(text: string): void {
      for (const secret of options.secrets) expect(text).not.toContain(secret);
    },

    /** Outputs other than `env` hold no secret. */
    expectCleanOutputs(outs: Record<string, unknown>): void {
      kit.expectNoSecret(JSON.stringify(withoutSecretInputs(outs)));
    },

    urn: (name: string) => urnFor("ServerlessEndpoint", name),

    /** Check as the engine runs it before a create or update; asserts no failure. */
    async checked(resource: string, props: Record<string, unknown>, olds: Record<string, unknown> = {}) {
      const { inputs, failures } = await kit.host.check(kit.urn(resource), olds, props);
      expect(failures).toEqual([]);
      return inputs;
    },

    /** Check, then create; the outputs other than `env` hold no secret. */
    async create(resource: string, props: Record<string, unknown>) {
      const inputs = await kit.checked(resource, props);
      const result = await kit.host.create(kit.urn(resource), inputs);
      kit.expectCleanOutputs(result.outs);
      return { ...result, inputs };
    },

    /** Runs `fn`, expecting a HostError; records its message and properties for the secret scan. */
    async failing(fn: () => Promise<unknown>): Promise<HostError> {
      const error = await fn().then(
        () => {
          throw new Error("the call succeeded; a failure was expected");
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(HostError);
      // The properties' env is the secret input itself (the engine stores it as a secret); nothing else may hold it.
      const properties = withoutSecretInputs((error as HostError).properties ?? {});
      errorsSeen.push((error as HostError).message, JSON.stringify(properties));
      return error as HostError;
    },

    /** Waits until the host's stderr has `line` (the provider reports it waits for a rollout). */
    async untilStderr(line: string): Promise<void> {
      const giveUp = Date.now() + 30_000;
      while (!kit.host.stderr().includes(line)) {
        if (Date.now() > giveUp) throw new Error(`the host never printed: ${line}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },

    /** Lets a rollout of `version` on 2 workers run its course once the host waits for it. */
    async rollOutOnceWaiting(label: string, version: number): Promise<void> {
      await kit.untilStderr(`ServerlessEndpoint ${label}: waiting for version ${version} to roll out`);
      await clock.advance(options.rolloutMs);
      for (let i = 0; i < 2; i++) await clock.advance(WORKER_START_MS);
    },
  };
  return kit;
}

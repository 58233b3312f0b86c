/**
 * ContainerRegistryAuth lifecycles through the provider host (installed package) against an
 * emulator that injects faults from a fixed seed: 429/503 before acting, 500 after acting on
 * POSTs, and connection resets before or after acting. Every lifecycle must end with exactly
 * one credential while it exists and none after delete: no duplicate, no orphan. Each create
 * outcome is classified; an unexplained one fails the test.
 *
 * The host's client backs off from 5 ms instead of 0.5 s (`retryBackoffMs`) and waits at most
 * {@link RETRY_AFTER_CAP_MS} for the `Retry-After: 1` of an injected 429 or 503
 * (`PROVIDER_HOST_RETRY_AFTER_CAP_MS`, fastWaits.cjs): the seed, not the pause, decides each
 * request's fault, so the lifecycles are the same without seconds of real waiting. (That a
 * Retry-After is waited is the client's rule, tested in test/client/retryAfter.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";
import { hostEnv } from "./hostEnv";

const API_KEY = "faults-test-key-a4e9";
const PASSWORD = "faulty-network-Pa55-91d7";
const LIFECYCLES = 8;
/** A `pulumi up` re-run after "nothing was created" is what a user does; cap it. */
const MAX_ATTEMPTS = 4;

const projectDir = inject("installedProjectDir");
/** The host's longest wait for a server's Retry-After, ms (the client's own: 60 s). */
const RETRY_AFTER_CAP_MS = 20;

// The two dialects run at once: each has its own emulator (and fault sequence) and host.
describe.concurrent.each(["v1", "v2"] as const)(
  "registry-auth lifecycles under injected faults, REST %s",
  (dialect) => {
    let emu: RunningEmulator;
    let host: ProviderHost;
    let client: RunpodClient;

    beforeAll(async () => {
      emu = await startEmulator({
        apiKeys: [API_KEY],
        rateLimits: false,
        faults: "429=0.03,503=0.03,500=0.12,reset=0.12",
        faultSeed: dialect === "v1" ? 1101 : 2202,
      });
      const restUrl = dialect === "v1" ? emu.restUrl : emu.restUrlV2;
      host = await startProviderHost({
        projectDir,
        retryBackoffMs: 5,
        env: hostEnv({ PROVIDER_HOST_RETRY_AFTER_CAP_MS: String(RETRY_AFTER_CAP_MS) }),
      });
      await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": restUrl });
      // The test's own view goes around the faults' effect by retrying reads, at once (a retry's
      // fault comes from the seed, not from how long it waited); it never writes.
      client = new RunpodClient({ apiKey: API_KEY, restUrl, maxRetries: 20, sleep: async () => {} });
    });

    afterAll(async () => {
      const stderr = host?.stderr() ?? "";
      await host?.close();
      await emu?.close();
      expect(stderr).not.toContain(PASSWORD);
      expect(stderr).not.toContain(API_KEY);
    });

    it("completes every lifecycle with no duplicate and no orphan, each outcome explained", async () => {
      const outcomes: Record<string, number> = {
        "created at first attempt": 0,
        "re-run after nothing was created": 0,
      };
      for (let i = 0; i < LIFECYCLES; i++) {
        const name = `faulty-${dialect}-${i}`;
        const urn = urnFor("ContainerRegistryAuth", name);
        const { inputs, failures } = await host.check(urn, {}, { name, username: "u", password: PASSWORD });
        expect(failures).toEqual([]);
        let created: { id: string; outs: Record<string, unknown> } | undefined;
        for (let attempt = 1; attempt <= MAX_ATTEMPTS && !created; attempt++) {
          try {
            created = await host.create(urn, inputs);
            outcomes[attempt === 1 ? "created at first attempt" : "re-run after nothing was created"]++;
          } catch (error) {
            expect(error).toBeInstanceOf(HostError);
            const message = (error as Error).message;
            expect(message).not.toContain(PASSWORD);
            // The only explained failure: the POST provably stored nothing, so a re-run is safe.
            expect(message).toMatch(/nothing was created|Retry-After|failed with (429|503)/);
            expect((await client.registryAuths.list()).filter((r) => r.name === name)).toEqual([]);
          }
        }
        expect(created, `lifecycle ${i} never created its credential`).toBeDefined();
        const { id, outs } = created as { id: string; outs: Record<string, unknown> };
        expect((await client.registryAuths.list()).filter((r) => r.name === name)).toEqual([{ id, name }]);

        const refreshed = await host.read(id, urn, outs);
        expect(refreshed).toMatchObject({ id, props: { name } });

        await host.delete(id, urn, outs);
        expect((await client.registryAuths.list()).filter((r) => r.name === name)).toEqual([]);
      }
      const faults = emu.stats().faults;
      console.info(
        `REST ${dialect}: outcomes ${JSON.stringify(outcomes)}, faults injected ${JSON.stringify(faults)}`,
      );
      // The seed must actually exercise the hard cases, or this test proves nothing.
      expect(faults["500"]).toBeGreaterThan(0);
      expect(faults.reset).toBeGreaterThan(0);
      expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(LIFECYCLES);
      expect(await client.registryAuths.list()).toEqual([]);
    }, 180_000);
  },
);

/**
 * What a ContainerRegistryAuth's delete reads before deleting, against a scripted REST v2 service
 * on 127.0.0.1:
 *
 * - through Pulumi's own dynamic-provider host (the INSTALLED package): a pod the service lists as
 *   `TERMINATED` that still names the credential does not block its delete (before, it blocked it
 *   forever: "still used by pod ..."), while a pod that is not terminated still refuses it;
 * - in process (the operations the host runs), on a fake clock given as the settings' clock: the
 *   lists of users are bounded, 10 s in all; a pods list that never answers lets the delete go on
 *   at the bound with a warning saying what went unchecked (before: six 60 s tries, then a failed
 *   delete).
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { READ_BOUND_MS } from "../../src/provider/common/boundedRead";
import { resolveSettings } from "../../src/provider/config";
import { operations } from "../../src/provider/containerRegistryAuth/operations";
import { FakeClock } from "../support/fakeClock";
import { HostError, startProviderHost, urnFor } from "../support/providerHost.mts";
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from "../support/scriptedServer";
import { serializedProvider } from "../support/serializedProvider.mts";

const API_KEY = "registry-delete-key-4b7e";
const REG = "reg-1";
const projectDir = inject("installedProjectDir");

/** Pods the service lists, by what a test sets; the credential exists until it is deleted. */
let pods: Record<string, unknown>[] = [];
let hangPods = false;
let server: ScriptedServer;
/** Waiters for the pods list request. */
let podsAsked: (() => void)[] = [];

beforeAll(async () => {
  server = await startScriptedServer({
    fallback: (req: RecordedRequest) => {
      const route = `${req.method} ${req.pathname}`;
      if (route === "GET /v2/pods") {
        for (const w of podsAsked) w();
        return hangPods ? { hang: true } : { body: { pods } };
      }
      if (route === "GET /v2/templates") return { body: { templates: [] } };
      if (route === "GET /v2/serverless") return { body: { endpoints: [] } };
      if (route === `GET /v2/registries/${REG}`) return { body: { id: REG, name: "creds" } };
      if (route === `DELETE /v2/registries/${REG}`) return { status: 204 };
      return { status: 404, body: { title: "not found", status: 404 } };
    },
  });
});
afterAll(() => server?.close());
afterEach(() => {
  pods = [];
  hangPods = false;
  podsAsked = [];
  server.requests.length = 0;
  vi.restoreAllMocks();
});

const pod = (id: string, status: string) => ({
  id,
  name: `pod-${id}`,
  status,
  registry: REG,
  image: "acme/x:1",
});
const routes = () => server.requests.map((r) => `${r.method} ${r.pathname}`);
const PROPS = { name: "creds", username: "bot" };

describe("a registry credential's delete through the provider host", () => {
  it("deletes a credential whose only pod naming it is TERMINATED, and still refuses while a pod that is not names it", async () => {
    const host = await startProviderHost({ projectDir });
    try {
      await host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${server.url}/v2` });
      const urn = urnFor("ContainerRegistryAuth", "creds");
      // The stored outputs carry the provider, as the engine passes them to delete.
      const stored = { ...PROPS, __provider: await serializedProvider(projectDir, "ContainerRegistryAuth") };

      pods = [pod("p1", "TERMINATED"), pod("p2", "EXITED")];
      const refused = await host.delete(REG, urn, stored).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(HostError);
      expect((refused as HostError).message).toContain(
        `container registry auth "creds" (id ${REG}) is still used by pod p2 ("pod-p2"), so nothing was deleted`,
      );
      expect((refused as HostError).message).not.toContain("p1");
      expect(routes()).not.toContain(`DELETE /v2/registries/${REG}`);

      server.requests.length = 0;
      pods = [pod("p1", "TERMINATED")];
      await host.delete(REG, urn, stored);
      expect(routes()).toContain(`DELETE /v2/registries/${REG}`);
      expect(host.stderr()).not.toContain(API_KEY);
    } finally {
      await host.close();
    }
  });
});

describe("a registry credential's delete, when the pods list never answers", () => {
  it("goes on at 10 s of the settings' clock, warning that the pods went unchecked", async () => {
    hangPods = true;
    const clock = new FakeClock();
    const settings = resolveSettings(
      { get: (key) => ({ "runpod:apiKey": API_KEY, "runpod:restUrl": `${server.url}/v2` })[key] },
      {},
    );
    settings.clock = clock;
    const written: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => {
      written.push(String(chunk));
      return true;
    });
    const asked = new Promise<void>((resolve) => podsAsked.push(resolve));
    let settled = false;
    const deleting = operations.delete(settings, REG, PROPS).finally(() => {
      settled = true;
    });
    await asked;
    await clock.advance(READ_BOUND_MS - 1);
    expect(settled).toBe(false);
    expect(routes()).not.toContain(`DELETE /v2/registries/${REG}`);
    await clock.advance(1);
    await deleting;
    expect(READ_BOUND_MS).toBe(10_000);
    expect(routes().filter((r) => r.startsWith("GET /v2/pods"))).toHaveLength(1);
    expect(routes()).toContain(`DELETE /v2/registries/${REG}`);
    expect(written).toEqual([
      `warning: deleting container registry auth "creds" (id ${REG}): the list of pods did not answer within 10 s, ` +
        "so those that use this credential were not checked (RunPod still refuses to delete a credential a pod pulls with)\n",
    ]);
  });
});

/**
 * Deleting a ContainerRegistryAuth that pods, templates or serverless endpoints still name, through
 * Pulumi's own dynamic-provider host with `__provider` from the INSTALLED package, against the
 * emulator. Over REST v2 the provider lists them first: a pod refuses the delete before anything
 * is deleted (as the service refuses it); templates and endpoints are named in a warning and the
 * delete goes on (the service empties the templates' `registry`); over v1, which cannot list them,
 * the service's refusal for pods is explained.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { RunpodClient } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { HostError, type ProviderHost, startProviderHost, urnFor } from "../support/providerHost.mts";

const API_KEY = "in-use-test-key-5c1f0a";
const PASSWORD = "in-use-Registry-Pa55-7e3d";
const GPU = "NVIDIA GeForce RTX 4090";

const projectDir = inject("installedProjectDir");

let emu: RunningEmulator;
let v2: RunpodClient;
let n = 0;

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [API_KEY], rateLimits: false });
  v2 = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
});

afterAll(async () => {
  await emu?.close();
});

/** Runs `fn`, expecting a HostError. */
async function hostFailure(fn: () => Promise<unknown>): Promise<HostError> {
  const error = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostError);
  expect((error as HostError).message).not.toContain(PASSWORD);
  expect((error as HostError).message).not.toContain(API_KEY);
  return error as HostError;
}

const endpointBody = (name: string, registry: string) => ({
  name,
  type: "QUEUE" as const,
  image: "acme/private:1",
  registry,
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY" as const, queueDelay: 4 },
  workers: { max: 1 },
});

/** A provider host configured for `dialect`, closed (and its stderr checked for secrets) after the block. */
function hostFor(dialect: "v1" | "v2") {
  const state: { host?: ProviderHost } = {};
  beforeAll(async () => {
    state.host = await startProviderHost({ projectDir });
    const restUrl = dialect === "v1" ? emu.restUrlV1 : emu.restUrlV2;
    await state.host.configure({ "runpod:apiKey": API_KEY, "runpod:restUrl": restUrl });
  });
  afterAll(async () => {
    const stderr = state.host?.stderr() ?? "";
    await state.host?.close();
    expect(stderr).not.toContain(PASSWORD);
    expect(stderr).not.toContain(API_KEY);
  });
  const host = () => state.host as ProviderHost;
  async function credential(resource: string) {
    const name = `${resource}-${dialect}-${++n}`;
    const urn = urnFor("ContainerRegistryAuth", resource);
    const { inputs, failures } = await host().check(urn, {}, { name, username: "bot", password: PASSWORD });
    expect(failures).toEqual([]);
    const { id, outs } = await host().create(urn, inputs);
    return { id, outs, urn, name };
  }
  return { host, credential };
}

describe.each(["v1", "v2"] as const)(
  "deleting a ContainerRegistryAuth a pod pulls with, REST %s",
  (dialect) => {
    const { host, credential } = hostFor(dialect);

    it("refuses while a pod pulls with it, naming the pod, and deletes once the pod is gone", async () => {
      const cred = await credential("podcred");
      const pod = await v2.pods.create({
        name: "trainer",
        image: "acme/private:1",
        gpu: { id: GPU },
        registry: cred.id,
      });
      const error = await hostFailure(() => host().delete(cred.id, cred.urn, cred.outs));
      if (dialect === "v2") {
        expect(error.message).toContain(
          `container registry auth "${cred.name}" (id ${cred.id}) is still used by pod ${pod.id} ("trainer"), so nothing was deleted: ` +
            "RunPod refuses to delete a credential a pod pulls with",
        );
      } else {
        // v1 cannot list pods: the service's own refusal, quoted.
        expect(error.message).toContain(
          `RunPod refused to delete container registry auth "${cred.name}" (id ${cred.id}): `,
        );
        expect(error.message).toContain(`in use by pod ${pod.id} ("trainer")`);
      }
      expect(error.message).toContain("then run the destroy or update again");
      expect((await v2.registryAuths.get(cred.id)).name).toBe(cred.name);
      await v2.pods.delete(pod.id);
      await host().delete(cred.id, cred.urn, cred.outs);
      expect((await v2.registryAuths.list()).map((r) => r.id)).not.toContain(cred.id);
    });
  },
);

describe("deleting a ContainerRegistryAuth only templates and endpoints name, REST v2", () => {
  const { host, credential } = hostFor("v2");

  it("deletes while only a template and an endpoint name it, warning with each, as the service allows", async () => {
    const cred = await credential("tplcred");
    const tpl = await v2.templates.create({
      name: `model-${n}`,
      image: "acme/private:1",
      serverless: true,
      registry: cred.id,
    });
    const ep = await v2.serverless.create(endpointBody(`private-${n}`, cred.id));
    await host().delete(cred.id, cred.urn, cred.outs);
    expect((await v2.registryAuths.list()).map((r) => r.id)).not.toContain(cred.id);
    expect(host().stderr()).toContain(
      `while template ${tpl.id} ("model-${n}") and serverless endpoint ${ep.id} ("private-${n}") name it: ` +
        "a template would silently lose it (registry becomes null), so pods and endpoints made from it later cannot pull a private image; " +
        "an endpoint would keep naming a credential that no longer exists, so its next worker cannot pull its image",
    );
    // The service's rule: the template lost the reference; the endpoint keeps naming the id.
    expect((await v2.templates.get(tpl.id)).registry).toBeNull();
    await v2.serverless.delete(ep.id);
  });

  it("treats a credential deleted outside Pulumi as deleted, even while an endpoint still names its id", async () => {
    const cred = await credential("gonecred");
    const ep = await v2.serverless.create(endpointBody(`stale-${n}`, cred.id));
    await v2.registryAuths.delete(cred.id);
    await host().delete(cred.id, cred.urn, cred.outs);
    expect((await v2.serverless.get(ep.id)).registry).toBe(cred.id);
    await v2.serverless.delete(ep.id);
  });
});

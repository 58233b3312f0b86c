/**
 * A pod create the service acted on but answered 503, through Pulumi's own dynamic-provider host
 * over gRPC with the INSTALLED package, against the emulator behind a pass-through proxy that
 * forwards the POST (the emulator makes the pod) and answers 503 instead of the emulator's 201.
 * The provider sends exactly one POST, records the pod the list shows, and waits for it as for
 * any other create: one pod, RUNNING, and a warning on the host's stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunpodClient } from "../../src/client";
import type { FaultProxy } from "../support/faultProxy.mts";
import { type ProviderHost, urnFor } from "../support/providerHost.mts";
import { type PodHostRig, startPodHostRig } from "./podHostKit";

const API_KEY = "pod-not-acted-host-key-6a2d";
const ENV_SECRET = "hf_NotActedHost-Secret-1b9f";

describe("Pod create answered 503 after the service acted, in the provider host", () => {
  let rig: PodHostRig;
  let proxy: FaultProxy;
  let host: ProviderHost;
  let client: RunpodClient;
  let __provider: string;
  let stocked: string;

  beforeAll(async () => {
    rig = await startPodHostRig(API_KEY);
    ({ proxy, host, client, stocked, __provider } = rig);
    expect(stocked).not.toBe("");
  });

  afterAll(async () => {
    const stderr = (await rig?.close()) ?? "";
    expect(stderr).not.toContain(ENV_SECRET);
    expect(stderr).not.toContain(API_KEY);
  });

  it("sends one POST, records the one pod the service made and waits for it to run", async () => {
    const name = "answered-503";
    const props = {
      name,
      image: "acme/dev:1",
      gpu: { id: stocked },
      fallbackGpuIds: ["NVIDIA H200"],
      env: { HF_TOKEN: ENV_SECRET },
      __provider,
    };
    const { inputs, failures } = await host.check(urnFor("Pod", name), {}, props);
    expect(failures).toEqual([]);
    proxy.arm("POST", /\/v2\/pods$/, { kind: "fail-after", status: 503 });
    const requests = () => proxy.seen.map((r) => `${r.method} ${r.path}`);
    const before = requests().length;
    const { id, outs } = await host.create(urnFor("Pod", name), inputs);
    const sent = requests().slice(before);
    // The list before the POST, the POST, the list that found the pod; then the wait's reads.
    expect(sent.slice(0, 3)).toEqual(["GET /v2/pods", "POST /v2/pods", "GET /v2/pods"]);
    expect(sent.filter((r) => r === "POST /v2/pods")).toHaveLength(1);
    expect(sent.slice(3).every((r) => r === `GET /v2/pods/${id}`)).toBe(true);
    expect((await client.pods.list()).filter((p) => p.name === name).map((p) => p.id)).toEqual([id]);
    expect(outs.status).toBe("RUNNING");
    expect(outs.gpu.id).toBe(stocked);
    expect(host.stderr()).toContain(
      `warning: Creating pod "${name}" was answered 503, but the service had created it anyway (id ${id}, the ` +
        `one new pod named "${name}" holding what was sent), so it was recorded and not created again.`,
    );
  });
});

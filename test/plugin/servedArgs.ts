/**
 * Arguments of every resource the plugin serves, as a program gives them: valid against the
 * emulator, so a test can make each one over gRPC (`moveFromDynamic.test.ts`,
 * `answersWithoutId.test.ts`), and the rig those tests share. A resource added to the table needs a
 * row here.
 */
import { afterAll, beforeAll } from "vitest";
import { KEYS } from "../fixtures/sshKeys";
import { type PluginRig, secret, startPluginRig } from "./pluginKit";

/**
 * One rig for the enclosing `describe`, started before its tests and closed after them: the
 * emulator accepting `apiKey` (no rate limits, pods RUNNING after 50 ms, rollouts at once), the
 * plugin configured against its REST and job APIs. `rig` throws when read outside a test.
 */
export function servedRigPerSuite(apiKey: string): { readonly rig: PluginRig } {
  let started: PluginRig | undefined;
  beforeAll(async () => {
    started = await startPluginRig({ apiKeys: [apiKey], rateLimits: false, podStartMs: 50, rolloutMs: 0 });
    await started.configure({
      apiKey: secret(apiKey),
      restUrl: started.emu.restUrlV2,
      serverlessUrl: started.emu.serverlessUrl,
    });
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    get rig() {
      if (started === undefined) throw new Error("the rig starts in beforeAll: read it in a test");
      return started;
    },
  };
}

/** Arguments of each served resource, as a program gives them. */
export const SERVED_ARGS: Record<string, object> = {
  ContainerRegistryAuth: {
    name: "move-reg",
    username: "bot",
    password: secret("ghp_move-Registry-Secret-8a1"),
  },
  NetworkVolume: { name: "move-vol", size: 20, dataCenterId: "EU-RO-1" },
  Template: { name: "move-tpl", image: "acme/app:1", env: secret({ TOKEN: "move-Template-Secret-77" }) },
  SshKey: { publicKey: KEYS.ed25519.line },
  Pod: { name: "move-pod", image: "acme/dev:1", cpu: { id: "cpu3c", vcpuCount: 2 }, env: { A: "1" } },
  ServerlessEndpoint: {
    name: "move-ep",
    type: "QUEUE",
    image: "acme/api:1",
    env: { TOKEN: "move-Endpoint-Secret-5c2" },
    gpu: { pools: ["ADA_24"] },
    scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
    workers: { max: 1 },
    smokeTest: { input: { ping: 1 }, expect: { output: { ping: 1 } } },
  },
  // The emulator's own endpoint `echo` answers with the input.
  JobRun: { endpointId: "echo", input: { ping: 1 }, expect: { output: { ping: 1 } }, triggers: [1] },
  EcrDelegation: { resource: "arn:aws:ecr:us-east-2:418399314813:repository/move/app", name: "move-ecr" },
  Cluster: {
    name: "move-cluster",
    type: "TRAINING",
    compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 1, podCount: 2 },
    image: "acme/train:1",
    env: { TOKEN: "move-Cluster-Secret-3e9" },
  },
};

/**
 * Arguments of every resource the plugin serves, as a program gives them: valid against the
 * emulator, so a test can make each one over gRPC (`moveFromDynamic.test.ts`,
 * `answersWithoutId.test.ts`). A resource added to the table needs a row here.
 */
import { KEYS } from "../fixtures/sshKeys";
import { secret } from "./pluginKit";

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

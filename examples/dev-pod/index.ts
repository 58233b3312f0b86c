// A GPU dev pod (REST v2) with a network volume for the work that outlives it, reachable over SSH
// with your key when `pulumi up` returns.
//
// The pod asks for the first GPU type that has capacity: `gpu.id`, then each of `fallbackGpuIds`
// in order (the service itself never falls back). `waitFor: "ssh"` makes create and start return
// only once the pod's SSH endpoint answers with a banner, not when the service first says RUNNING.
//   pulumi config set sshPublicKey "$(cat ~/.ssh/id_ed25519.pub)"
//   pulumi config set greeting hi          # env changes in place (a PATCH), the pod keeps its id
//   pulumi config set desiredStatus EXITED # stops the pod (its disk and volume kept; no GPU billed)
//   pulumi config set desiredStatus RUNNING
//   pulumi up
import * as pulumi from "@pulumi/pulumi";
import { NetworkVolume, Pod, SshKey } from "pulumi-runpod-dynamic";

const config = new pulumi.Config();
const name = config.get("podName") ?? "dev";
const dataCenterId = config.get("dataCenterId") ?? "EU-RO-1";

// Your key in the account's set (keys others registered stay): a pod started with SSH gets the
// account's keys when it is created, so the pod depends on it.
const key = new SshKey("me", { publicKey: config.require("sshPublicKey") });

// A network volume: the pod mounts it, so the pod lands in the volume's data centre.
const volume = new NetworkVolume("workspace", {
  name: config.get("volumeName") ?? `${name}-workspace`,
  size: config.getNumber("volumeSizeGb") ?? 50,
  dataCenterId,
});

const pod = new Pod(
  "dev",
  {
    name,
    image: config.get("image") ?? "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
    // Tried in order until one has capacity in the volume's data centre.
    gpu: { id: config.get("gpuId") ?? "NVIDIA H200" },
    fallbackGpuIds: config.getObject<string[]>("fallbackGpuIds") ?? [
      "NVIDIA H100 80GB HBM3",
      "NVIDIA A100 80GB PCIe",
    ],
    mounts: { network: [{ volumeId: volume.id, path: "/workspace" }] },
    ports: ["22/tcp", "8888/http"],
    startSsh: true, // SSH with the account's keys, `key` among them
    // One secret as a whole, sent whole on every change: none of its values reaches another output,
    // an error or a log line.
    env: { GREETING: config.get("greeting") ?? "hello", HF_TOKEN: config.getSecret("hfToken") ?? "" },
    waitFor: "ssh",
    waitTimeoutMs: config.getNumber("waitTimeoutMs") ?? 10 * 60_000,
    desiredStatus: (config.get("desiredStatus") as "RUNNING" | "EXITED" | undefined) ?? "RUNNING",
  },
  { dependsOn: [key] },
);

type SshEndpoint = { host: string; port: number; username: string; command?: string } | null | undefined;
const sshEndpoint = pod.ssh.apply((s) => {
  const { direct, proxy } = (s ?? {}) as { direct?: SshEndpoint; proxy?: SshEndpoint };
  return direct ?? proxy ?? undefined;
});

export const podId = pod.id;
export const sshKeyFingerprint = key.fingerprint;
export const status = pod.status;
/** The GPU type the pod landed on: the first of gpu.id and fallbackGpuIds with capacity. */
export const gpuType = pod.gpu.apply((g) => g?.id);
export const podDataCenterId = pod.dataCenterId;
export const volumeId = volume.id;
/** USD per hour as the service reports it (0 while the pod is stopped). */
export const costPerHour = pod.cost;
export const ssh = sshEndpoint.apply((e) =>
  e ? `ssh -p ${e.port} ${e.username}@${e.host}` : "(no SSH: pod stopped)",
);

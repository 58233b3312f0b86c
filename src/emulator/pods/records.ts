/** How the pod store keeps a pod, in memory and in the state file's `pods` section. */
import { z } from "zod";
import { CLUSTER_TYPES } from "../../wire/clusters";
import { POD_STATUSES, type Pod, PodSchema, type PodStatus } from "../../wire/pods";
import type { TimerHandle } from "../clock";
import type { PodListener } from "./listeners";

export interface StoredPod {
  pod: Pod & { status: PodStatus };
  /** Create-only flags, kept to run the pod again on start. */
  sshKeys: string[];
  /** Data centre, GPU type, cloud and count the pod's compute is taken from while it holds it. */
  holds: boolean;
  timers: TimerHandle[];
  listeners: PodListener[];
  /** Bumped on every transition: a listener opened for an older run is closed at once. */
  run: number;
}

/** A cluster as the cluster store keeps it; its members are pods of the pod store, by rank. */
export const StoredClusterSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(CLUSTER_TYPES),
  compute: z.object({ gpuTypeId: z.string(), gpuCountPerPod: z.number().int(), podCount: z.number().int() }),
  createdAt: z.string(),
  /** VXLAN network identifier of the cluster's overlay network. */
  vxlanId: z.number().int(),
  /** Member pod ids, rank 0 first. */
  members: z.array(z.string()),
});
export type StoredCluster = z.infer<typeof StoredClusterSchema>;

/**
 * The state file's `pods` section: the account's SSH keys, each pod with what it holds, and the
 * clusters (absent in files written before clusters: none).
 */
export const PodsSectionSchema = z.object({
  sshKeys: z.array(z.string()),
  clusters: z.array(StoredClusterSchema).default([]),
  pods: z.array(
    z.object({
      pod: PodSchema.extend({ status: z.enum(POD_STATUSES) }),
      sshKeys: z.array(z.string()),
      holds: z.boolean(),
    }),
  ),
});

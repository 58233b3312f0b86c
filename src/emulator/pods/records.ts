/** How the pod store keeps a pod, in memory and in the state file's `pods` section. */
import { z } from "zod";
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

/** The state file's `pods` section: the account's SSH keys and each pod with what it holds. */
export const PodsSectionSchema = z.object({
  sshKeys: z.array(z.string()),
  pods: z.array(
    z.object({
      pod: PodSchema.extend({ status: z.enum(POD_STATUSES) }),
      sshKeys: z.array(z.string()),
      holds: z.boolean(),
    }),
  ),
});

/**
 * `Cluster`: a RunPod Instant Cluster (REST v2 `/v2/clusters`) as a Pulumi dynamic resource.
 *
 * The resource class runs in the Pulumi program; this module is loaded whenever the package root
 * is, so it stays light: `@pulumi/pulumi` and type imports only. The provider is the package's one
 * provider class (`../common/dynamicProvider.ts`), given this resource's operations module path.
 */
import type * as pulumi from "@pulumi/pulumi";
import { resourceSpec, ServiceObjectResource } from "../common/resource";
import type { HourlyCost } from "../cost/prices";
import type { PodSsh } from "../pod/resource";
import { RESOURCES } from "../resources";
import type { ClusterArgs } from "./args.generated";

export type { ClusterArgs };

/** One member pod of a cluster, as `GET /v2/clusters/{id}/pods` answers it. */
export interface ClusterMember {
  /** The pod's id. */
  id: string;
  /** `PROVISIONING`, `STARTING`, `RUNNING`, `EXITED`, `ERROR` or `TERMINATED`. */
  status: string;
  /** Node rank; 0 is the primary. */
  rank?: number;
  /** `SLURM_CONTROLLER`, `SLURM_COMPUTE`, `RAY_HEAD` or `RAY_WORKER` (SLURM and RAY clusters only). */
  role?: string;
  /** Its SSH endpoints (`proxy`, `direct`) while it runs with `startSsh`. */
  ssh?: PodSsh;
}

/** Members provisioned, and how many are in each pod status. */
export interface ClusterPods {
  /** Member pods provisioned. */
  total: number;
  /** How many members are in each pod status (statuses with none left out). */
  byStatus: Record<string, number>;
}

/** The cluster's overlay network. */
export interface ClusterNetwork {
  /** Address range, e.g. `10.65.0.0/16`. */
  cidr: string;
  /** VXLAN network id. */
  vxlanId?: number;
  /** VXLAN UDP port. */
  vxlanPort?: number;
}

/** The primary (rank 0) member. */
export interface ClusterPrimary {
  /** Its pod id. */
  podId: string;
  /** Its pod status. */
  status: string;
  /** `host:port` of its SSH endpoint, once it is RUNNING with `22/tcp` and SSH. */
  sshEndpoint?: string;
}

/**
 * A RunPod Instant Cluster (`pulumi-nodejs:dynamic/runpod:Cluster`), REST v2 only: `podCount`
 * identical pods of `gpuCountPerPod` GPUs, placed together in one data centre. `up` returns when
 * every member pod is usable (`waitFor`); a cluster whose members do not all get there (one goes
 * to ERROR, or `waitTimeoutMs` passes) fails the step but stays in the stack, and the message
 * names the members that are not usable with their status. The preview prices it (`hourlyCost`)
 * and `maxHourlyUsd` or `runpod:maxHourlyUsd` refuse it before anything is created. A 429 or 503
 * answer or a lost answer to the create never leaves a second cluster billing (it lists first).
 *
 * Only `name` changes in place; any other change replaces the cluster (a new one is created, then
 * this one deleted with its members), and the preview names the field and the pods and GPUs it
 * replaces. `Cluster.get(name, id)` reads an existing cluster by its id, without managing it.
 */
export class Cluster extends ServiceObjectResource<ClusterArgs> {
  /** How it registers; the operations module path is stored in every `__provider` text (see `operations.ts`). */
  protected static override readonly spec = resourceSpec<ClusterArgs>({
    row: RESOURCES.Cluster,
    // biome-ignore format: the names read best in groups: cluster, container, waits and budget
    inputs: [
      "name", "type", "compute", "dataCenterIds",
      "image", "args", "disk", "env", "ports", "mounts", "startJupyter", "startSsh",
      "waitFor", "waitTimeoutMs", "maxHourlyUsd",
    ],
    urn: true,
    // biome-ignore format: as above
    outputs: [
      "hourlyCost", "members", "dataCenterId", "template", "pods", "network", "primary", "createdAt",
    ],
  });

  /** Name, as the service stores it. */
  declare readonly name: pulumi.Output<string>;
  /** `APPLICATION`, `TRAINING`, `SLURM` or `RAY`. */
  declare readonly type: pulumi.Output<string>;
  /** The GPU type, GPUs per pod and pods, as read back. */
  declare readonly compute: pulumi.Output<{ gpuTypeId: string; gpuCountPerPod: number; podCount: number }>;
  /** The one data centre the cluster runs in. */
  declare readonly dataCenterId: pulumi.Output<string | undefined>;
  /** Template the pods were created from; undefined when none. */
  declare readonly template: pulumi.Output<string | undefined>;
  /** Members provisioned, and how many are in each pod status. */
  declare readonly pods: pulumi.Output<ClusterPods>;
  /** The overlay network: `cidr`, `vxlanId`, `vxlanPort`. */
  declare readonly network: pulumi.Output<ClusterNetwork | undefined>;
  /** The primary (rank 0) member: `podId`, `status`, and `sshEndpoint` (`host:port`) once it runs with SSH. */
  declare readonly primary: pulumi.Output<ClusterPrimary | undefined>;
  /** When the cluster was created (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string | undefined>;
  /** The member pods (`GET /v2/clusters/{id}/pods`): id, status, rank, role and SSH endpoints. */
  declare readonly members: pulumi.Output<ClusterMember[]>;
  /** Environment variables of every member, always secret. */
  declare readonly env: pulumi.Output<Record<string, string> | undefined>;
  /**
   * What the cluster costs an hour, in US dollars at the catalog's list prices (without negotiated
   * discounts): `ratePerWorkerUsd` is one pod (the GPU type's secure pod price × `gpuCountPerPod`),
   * `floorUsd` and `ceilingUsd` every pod (× `podCount`: every member bills). A price the catalog
   * does not give: figures null and a `note`, never 0.
   */
  declare readonly hourlyCost: pulumi.Output<HourlyCost | undefined>;
  /** The cluster's budget as given, in US dollars an hour (see the argument). */
  declare readonly maxHourlyUsd: pulumi.Output<number | undefined>;
}

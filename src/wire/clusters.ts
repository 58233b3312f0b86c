/**
 * REST v2 wire schemas of Instant Clusters, derived from `rest-v2.openapi.json` (`/v2/clusters...`;
 * `CreateClusterRequest`, `ClusterCompute`, `UpdateClusterRequest`, `Cluster`,
 * `ListClustersResponse`; a member pod is a `Pod` with its `cluster` block, `../wire/pods.ts`).
 *
 * As in `pods.ts`: request bodies are parsed strictly (an unknown field is an error naming it, and
 * there is no `registry`: clusters take no private registry yet) with the document's bounds
 * (`podCount` 2..250, `gpuCountPerPod` at least 1); answers loosely. One source for the client and
 * the emulator.
 */
import { z } from "zod";
import { containerConfigShape } from "./containerConfig";
import { bool, int, nonEmpty, str } from "./fields";
import { PodMountsInputSchema, podPorts } from "./pods";

/** Cluster types (`ClusterType`). */
export const CLUSTER_TYPES = ["APPLICATION", "TRAINING", "SLURM", "RAY"] as const;
export type ClusterType = (typeof CLUSTER_TYPES)[number];

/** Roles of a SLURM or RAY cluster's members (`PodClusterRole`); TRAINING and APPLICATION assign none. */
export const POD_CLUSTER_ROLES = ["SLURM_CONTROLLER", "SLURM_COMPUTE", "RAY_HEAD", "RAY_WORKER"] as const;
export type PodClusterRole = (typeof POD_CLUSTER_ROLES)[number];

/** Pods of a cluster, at least and at most (`ClusterCompute.podCount`). */
export const CLUSTER_POD_COUNT = { min: 2, max: 250 } as const;

/** `ClusterCompute`: `podCount` identical pods of `gpuCountPerPod` GPUs of `gpuTypeId`. */
export const ClusterComputeInputSchema = z.strictObject({
  /** GPU type of every pod (`GET /v2/catalog/gpus`), e.g. `NVIDIA H100 80GB HBM3`. */
  gpuTypeId: nonEmpty("gpuTypeId"),
  /** GPUs on each pod, at most the type's `maxCount` (the service refuses more). */
  gpuCountPerPod: int("gpuCountPerPod").min(1, { error: "gpuCountPerPod must be at least 1" }),
  /** Pods (nodes), 2 to 250. */
  podCount: int("podCount")
    .min(CLUSTER_POD_COUNT.min, { error: `podCount must be at least ${CLUSTER_POD_COUNT.min}` })
    .max(CLUSTER_POD_COUNT.max, { error: `podCount must be at most ${CLUSTER_POD_COUNT.max}` }),
});
export type ClusterComputeInput = z.input<typeof ClusterComputeInputSchema>;

const { registry: _noRegistry, ...baseContainerConfigShape } = containerConfigShape;

/** Body of `POST /v2/clusters` (`CreateClusterRequest`): the container configuration applies to every pod. */
export const ClusterCreateInputSchema = z.strictObject({
  ...baseContainerConfigShape,
  ports: podPorts.optional(),
  name: nonEmpty("name"),
  type: z.enum(CLUSTER_TYPES, { error: "type must be APPLICATION, TRAINING, SLURM or RAY" }),
  compute: ClusterComputeInputSchema,
  /** Preferred data centres; empty lets the scheduler choose. A cluster is always in one data centre. */
  dataCenterIds: z
    .array(str("dataCenterIds"), { error: "dataCenterIds must be an array of strings" })
    .optional(),
  mounts: PodMountsInputSchema.optional(),
  /** Create-only: Jupyter on every member pod. @default false */
  startJupyter: bool("startJupyter").optional(),
  /** Create-only: the account's SSH keys as `PUBLIC_KEY` on every member pod. @default false */
  startSsh: bool("startSsh").optional(),
});
export type ClusterCreateInput = z.input<typeof ClusterCreateInputSchema>;

/** Body of `PATCH /v2/clusters/{id}` (`UpdateClusterRequest`): a rename, nothing else. */
export const ClusterUpdateInputSchema = z
  .strictObject({ name: nonEmpty("name").optional() })
  .refine((body) => Object.keys(body).length > 0, {
    error: "give name, the new name (the only field of a cluster that changes in place)",
  });
export type ClusterUpdateInput = z.input<typeof ClusterUpdateInputSchema>;

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/** A cluster as `GET /v2/clusters/{id}` answers (`Cluster`); its members are at `/v2/clusters/{id}/pods`. */
export const ClusterSchema = z.looseObject({
  /** The cluster's id. */
  id: z.string().min(1),
  /** Name of the cluster. */
  name: z.string(),
  /** `APPLICATION`, `TRAINING`, `SLURM` or `RAY`. */
  type: z.string(),
  /** The pods it is made of (`ClusterCompute`). */
  compute: z.looseObject({
    /** GPU type of every pod. */
    gpuTypeId: z.string(),
    /** GPUs on each pod. */
    gpuCountPerPod: z.number().int(),
    /** Pods (nodes) of the cluster. */
    podCount: z.number().int(),
  }),
  /** Template the pods were created from; absent when none. */
  template: z.string().optional(),
  /** The one data centre of the cluster; absent until a pod is placed. */
  dataCenterId: z.string().optional(),
  /** Members provisioned, and how many are in each pod status (statuses with none left out). */
  pods: z.looseObject({
    /** Member pods provisioned. */
    total: z.number().int(),
    /** How many members are in each pod status (statuses with none left out). */
    byStatus: z.record(z.string(), z.number().int()),
  }),
  /** The overlay network; absent until provisioned. */
  network: z
    .looseObject({
      /** Address range of the overlay network, e.g. `10.65.0.0/16`. */
      cidr: z.string(),
      /** VXLAN network id. */
      vxlanId: z.number().int().optional(),
      /** VXLAN UDP port. */
      vxlanPort: z.number().int().optional(),
    })
    .optional(),
  /** The primary (rank 0) node; `sshEndpoint` (`host:port`) once it is RUNNING with `22/tcp`. */
  primary: z
    .looseObject({
      /** The primary member's pod id. */
      podId: z.string(),
      /** Its pod status. */
      status: z.string(),
      /** `host:port` of its SSH endpoint, once it is RUNNING with `22/tcp` and SSH. */
      sshEndpoint: z.string().optional(),
    })
    .optional(),
  /** When the cluster was created (ISO 8601). */
  createdAt: z.string().optional(),
});
export type Cluster = z.infer<typeof ClusterSchema>;

/** `GET /v2/clusters`: `{ clusters: [...] }`. */
export const ClusterListSchema = z.looseObject({ clusters: z.array(ClusterSchema) });

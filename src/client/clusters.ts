/**
 * `client.clusters`: Instant Clusters over REST v2 (`/v2/clusters`): `podCount` identical pods of
 * `gpuCountPerPod` GPUs each, placed together in one data centre. A v1 `restUrl` gets a
 * `ValidationError` before any network call. What a cluster spent is `client.billing.clusters`.
 *
 * ```ts
 * const cluster = await client.clusters.create({ name: "train", type: "TRAINING", image: "runpod/pytorch:2",
 *   compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 }, ports: ["22/tcp"], startSsh: true });
 * for (const pod of await client.clusters.pods(cluster.id)) console.log(pod.cluster?.rank, pod.status);
 * ```
 */

import {
  type Cluster,
  type ClusterCreateInput,
  ClusterCreateInputSchema,
  ClusterListSchema,
  ClusterSchema,
  type ClusterUpdateInput,
  ClusterUpdateInputSchema,
} from "../wire/clusters";
import { type Pod, PodListSchema } from "../wire/pods";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/** Instant Clusters of the account (REST v2 only). */
export class Clusters extends RestV2Resource {
  protected readonly label = "client.clusters";

  /** Every cluster of the account. */
  async list(options?: RequestOptions): Promise<Cluster[]> {
    return (await this.send("GET", "/clusters", ClusterListSchema, options)).clusters;
  }

  /** One cluster by id, with a count of its members per status; `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<Cluster> {
    return this.send("GET", path`/clusters/${id}`, ClusterSchema, options);
  }

  /**
   * Creates a cluster (`POST`, 201; its pods start in `PROVISIONING`). The body is checked against
   * the v2 document first (`ValidationError` naming the field): `name`, `type`, `compute` with
   * `podCount` 2 to 250; no `registry` (clusters take no private registry). Not enough GPUs of the
   * type free in one data centre is a `BadRequestError` (400). A cluster bills for every member:
   * resent only when the request was never sent; after any answer (429 and 503 included) list to
   * learn whether it was created.
   */
  async create(input: ClusterCreateInput, options?: RequestOptions): Promise<Cluster> {
    return this.write(
      "POST",
      "/clusters",
      ClusterCreateInputSchema,
      input,
      "cluster",
      ClusterSchema,
      options,
      true,
    );
  }

  /** Renames a cluster (`PATCH`): its name is all that changes in place. */
  async update(id: string, patch: ClusterUpdateInput, options?: RequestOptions): Promise<Cluster> {
    this.requireV2();
    const body = parseInput(ClusterUpdateInputSchema, patch, "cluster update");
    return this.send("PATCH", path`/clusters/${id}`, ClusterSchema, options, body);
  }

  /** Deletes a cluster and terminates every member pod (204). */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", path`/clusters/${id}`, undefined, options);
  }

  /**
   * The member pods, whole (`GET /v2/clusters/{id}/pods`): each a `Pod` with its `cluster` block
   * (`rank`, `role` for SLURM and RAY, overlay `ip`), its status and `ssh`.
   */
  async pods(id: string, options?: RequestOptions): Promise<Pod[]> {
    return (await this.send("GET", path`/clusters/${id}/pods`, PodListSchema, options)).pods;
  }
}

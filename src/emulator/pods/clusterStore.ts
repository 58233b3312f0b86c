/**
 * The emulator's Instant Clusters (REST v2 `/v2/clusters...`), as the v2 document describes them:
 *
 * - A create places the whole cluster at once from the catalog's `CLUSTER` stock (`stock.ts`
 *   `placeCluster`): `podCount` x `gpuCountPerPod` GPUs of `gpuTypeId` free in one data centre of
 *   `dataCenterIds` (any when empty; a network volume's data centre when one is mounted), else a
 *   400 saying it is a capacity failure and what is free. With `balanceUsd` set, a cluster costing
 *   more an hour than the balance answers 402, as a pod does.
 * - Its members are pods of the pod store, made with the cluster's container configuration and a
 *   `cluster` block (`rank` 0 first, the primary; `role` for SLURM and RAY; an `ip` on the
 *   cluster's overlay network `10.65.0.0/16`, rank 0 at `10.65.0.2`), and go through the pod
 *   lifecycle on the emulator's clock (PROVISIONING, STARTING, RUNNING; ERROR for an unpullable
 *   image). The pod endpoints read them (`GET /v2/pods` only with `includeClusterPods=true`) but
 *   refuse to change, stop or delete them (409).
 * - The cluster answer sums its members: `pods` (total and count per status), `dataCenterId`,
 *   `primary` (rank 0, with `sshEndpoint` once it is RUNNING with `22/tcp` and SSH).
 * - PATCH renames (the members keep their names); DELETE terminates every member and gives the
 *   stock back.
 * - Bounds: {@link MAX_CLUSTERS_PER_ACCOUNT} clusters and {@link MAX_CLUSTER_PODS_PER_ACCOUNT}
 *   member pods in all; a create past either is a 400.
 */
import type { Cluster, ClusterType, PodClusterRole } from "../../wire/clusters";
import type { Pod } from "../../wire/pods";
import type { Clock } from "../clock";
import type { ClusterCreateBody } from "../requestBodies";
import { MAX_CLUSTER_PODS_PER_ACCOUNT, MAX_CLUSTERS_PER_ACCOUNT } from "../serviceFacts";
import { randomId } from "../store";
import { PodError } from "./errors";
import type { StoredCluster } from "./records";

/** The overlay network every cluster gets (`ClusterNetwork`), and its VXLAN port. */
export const CLUSTER_NETWORK_CIDR = "10.65.0.0/16";
export const CLUSTER_VXLAN_PORT = 4789;

/** One member to make: its rank, role and overlay address. */
export interface ClusterMemberSpec {
  rank: number;
  role?: PodClusterRole;
  ip: string;
}

/** What the cluster store asks of the pod store, which keeps the members. */
export interface ClusterMemberHost {
  /**
   * Places the cluster and makes its members (PROVISIONING), one per spec, or throws `PodError`
   * (400 capacity, 402 balance, 404 volume) having made none. Answers them in the specs' order.
   */
  admitMembers(clusterId: string, body: ClusterCreateBody, members: readonly ClusterMemberSpec[]): Pod[];
  /** A member as the pod endpoints show it, or undefined when it is gone. */
  member(id: string): Pod | undefined;
  /** Terminates and forgets a member, giving its GPUs back. */
  terminateMember(id: string): Promise<void>;
}

/** The role of the member of rank `rank` (`PodClusterRole`): SLURM and RAY only. */
export function clusterRole(type: ClusterType, rank: number): PodClusterRole | undefined {
  if (type === "SLURM") return rank === 0 ? "SLURM_CONTROLLER" : "SLURM_COMPUTE";
  if (type === "RAY") return rank === 0 ? "RAY_HEAD" : "RAY_WORKER";
  return undefined;
}

/** The overlay address of rank `rank`: `10.65.0.2` for rank 0, counting up. */
export function clusterMemberIp(rank: number): string {
  const host = rank + 2;
  return `10.65.${Math.floor(host / 256)}.${host % 256}`;
}

/** Clusters of the account; their members live in the pod store. */
export class ClusterStore {
  readonly #clock: Clock;
  readonly #host: ClusterMemberHost;
  readonly #clusters = new Map<string, StoredCluster>();

  constructor(clock: Clock, host: ClusterMemberHost) {
    this.#clock = clock;
    this.#host = host;
  }

  /** Takes back the clusters of the state file (their members are loaded by the pod store). */
  load(saved: readonly StoredCluster[]): void {
    for (const cluster of saved) this.#clusters.set(cluster.id, structuredClone(cluster));
  }

  /** The clusters as the state file keeps them. */
  snapshot(): StoredCluster[] {
    return [...this.#clusters.values()].map((c) => structuredClone(c));
  }

  list(): Cluster[] {
    return [...this.#clusters.values()].map((c) => this.#render(c));
  }

  get(id: string): Cluster | undefined {
    const stored = this.#clusters.get(id);
    return stored && this.#render(stored);
  }

  has(id: string): boolean {
    return this.#clusters.has(id);
  }

  /** The member pods, rank 0 first; undefined when there is no such cluster. */
  pods(id: string): Pod[] | undefined {
    const stored = this.#clusters.get(id);
    return stored && this.#members(stored);
  }

  /** Creates a cluster and its members, or throws `PodError` (400 bounds or capacity, 402, 404). */
  create(body: ClusterCreateBody): Cluster {
    if (this.#clusters.size >= MAX_CLUSTERS_PER_ACCOUNT) {
      throw new PodError(
        400,
        `the account holds ${this.#clusters.size} clusters, the most it may hold (${MAX_CLUSTERS_PER_ACCOUNT}); delete one before creating another`,
      );
    }
    const members = [...this.#clusters.values()].reduce((n, c) => n + c.members.length, 0);
    const { podCount } = body.compute;
    if (members + podCount > MAX_CLUSTER_PODS_PER_ACCOUNT) {
      throw new PodError(
        400,
        `compute.podCount: the account's clusters hold ${members} pods, and ${podCount} more would pass the most they may hold (${MAX_CLUSTER_PODS_PER_ACCOUNT}); delete a cluster or ask for fewer pods`,
      );
    }
    let id = randomId(12);
    while (this.#clusters.has(id)) id = randomId(12);
    const specs = Array.from({ length: podCount }, (_, rank) => {
      const role = clusterRole(body.type, rank);
      return { rank, ip: clusterMemberIp(rank), ...(role ? { role } : {}) };
    });
    const pods = this.#host.admitMembers(id, body, specs);
    const stored: StoredCluster = {
      id,
      name: body.name,
      type: body.type,
      compute: { ...body.compute },
      createdAt: new Date(this.#clock.now()).toISOString(),
      vxlanId: 100 + Math.floor(Math.random() * 16_000_000),
      members: pods.map((p) => p.id),
    };
    this.#clusters.set(id, stored);
    return this.#render(stored);
  }

  /** Renames a cluster; undefined when there is none. */
  rename(id: string, name: string): Cluster | undefined {
    const stored = this.#clusters.get(id);
    if (!stored) return undefined;
    stored.name = name;
    return this.#render(stored);
  }

  /** Terminates every member and forgets the cluster; false when there is none. */
  async delete(id: string): Promise<boolean> {
    const stored = this.#clusters.get(id);
    if (!stored) return false;
    this.#clusters.delete(id);
    await Promise.all(stored.members.map((m) => this.#host.terminateMember(m)));
    return true;
  }

  #members(stored: StoredCluster): Pod[] {
    return stored.members.map((m) => this.#host.member(m)).filter((p): p is Pod => p !== undefined);
  }

  /** The `Cluster` answer: the stored shape and the members summed up. */
  #render(stored: StoredCluster): Cluster {
    const members = this.#members(stored);
    const byStatus: Record<string, number> = {};
    for (const pod of members) byStatus[pod.status] = (byStatus[pod.status] ?? 0) + 1;
    const primary = members.find((p) => p.cluster?.rank === 0);
    const direct = primary?.status === "RUNNING" ? primary.ssh?.direct : undefined;
    const dataCenterId = members.find((p) => p.dataCenterId)?.dataCenterId;
    return {
      id: stored.id,
      name: stored.name,
      type: stored.type,
      compute: { ...stored.compute },
      ...(dataCenterId ? { dataCenterId } : {}),
      pods: { total: members.length, byStatus },
      network: { cidr: CLUSTER_NETWORK_CIDR, vxlanId: stored.vxlanId, vxlanPort: CLUSTER_VXLAN_PORT },
      ...(primary
        ? {
            primary: {
              podId: primary.id,
              status: primary.status,
              ...(direct ? { sshEndpoint: `${direct.host}:${direct.port}` } : {}),
            },
          }
        : {}),
      createdAt: stored.createdAt,
    };
  }
}

/**
 * The emulator's pods and the account's SSH keys (REST v2 `/v2/pods...`, `/v2/account/ssh-keys`),
 * as the v2 document describes them:
 *
 * - Placement: a create places the one GPU type asked for, in a data centre of `dataCenterIds`
 *   (any when empty) with enough free GPUs of that type in the pod's `cloud`, and a CUDA version
 *   the request accepts; it never falls back. Stock is a count per GPU type, data centre and cloud
 *   (`catalog/podStock.ts` `podStockSeed`), and for CPU pods a count of free vCPUs per flavour and data
 *   centre (`cpuPodStockSeed`), taken while the pod holds compute and given back on stop and
 *   delete; the catalog's `POD` availability (GPU and CPU types, data centres) shows what is left.
 *   No capacity is a 400 with only a human-readable `detail`, as the document says.
 * - Balance: with `balanceUsd` set (the emulator's option, or `setBalanceUsd`), a create or start
 *   whose pod costs more an hour than the balance answers 402, as the document says a short
 *   balance does. The balance is a fixed figure the test sets: running pods do not spend it.
 * - Lifecycle on the emulator's clock: `PROVISIONING`, then `STARTING` after half of `podStartMs`,
 *   then `RUNNING` after the other half. An image containing `unpullable` ends in `ERROR`, with the
 *   pull error in the pod's log. `stop` (EXITED, compute released), `start` (EXITED or ERROR, back
 *   through the same steps, needing stock in its data centre again), `restart` (RUNNING),
 *   `terminate`; anything else for the status is a 409. A `locked` pod refuses stop, restart and
 *   terminate (409, saying to unlock it).
 * - While RUNNING: with `startSsh` and registered keys, an SSH listener on 127.0.0.1 (the `ssh`
 *   block's `proxy`, and `direct` when `22/tcp` is in `ports`); each `<port>/http` is served by a
 *   small HTTP server (in `runtime.ports`). Listeners close on stop, delete and emulator close.
 * - `cost`: the catalog's pod price (per GPU x count, or per vCPU x vCPUs) while the pod holds
 *   compute (PROVISIONING, STARTING, RUNNING), 0 otherwise.
 * - PATCH replaces `env` whole; container changes of a running pod restart it; the mount kind and
 *   a network mount's `volumeId` are fixed (400).
 * - Clusters (`clusters`, `clusterStore.ts`): their member pods are pods of this store, with a
 *   `cluster` block, taking GPUs from the catalog's `CLUSTER` stock. `list` leaves them out unless
 *   asked; PATCH, DELETE and actions on one answer 409 (manage it through its cluster).
 */
import { randomBytes } from "node:crypto";
import type { z } from "zod";
import type { AvailabilityLevel } from "../../wire/catalog";
import type { Pod, PodAction, PodStatus } from "../../wire/pods";
import type { Template } from "../../wire/templates";
import type { PodUsageSink } from "../billing/meter";
import { catalogDataCenterId, type PodStockView, podCpuType } from "../catalog";
import type { Clock } from "../clock";
import { WorkerLogs } from "../jobs/workerLogs";
import type { ClusterCreateBody, PodCreateBody, PodUpdateBody } from "../requestBodies";
import { MAX_PODS_PER_ACCOUNT } from "../serviceFacts";
import { type ManagementStore, randomId } from "../store";
import { type ClusterMemberSpec, ClusterStore } from "./clusterStore";
import { NO_CAPACITY_MESSAGE, PodError } from "./errors";
import { PodLifecycle } from "./lifecycle";
import { PodsSectionSchema, type StoredPod } from "./records";
import {
  ACTIONS,
  CONTAINER_FIELDS,
  requireActionAllowed,
  requirePodTemplate,
  requireSameMountKind,
  withTemplate,
} from "./rules";
import { type Placement, PodStock } from "./stock";

export { NO_CAPACITY_MESSAGE, PodError } from "./errors";

/** Start time of a pod (PROVISIONING to RUNNING), ms of the emulator clock, when none is given. */
export const POD_START_DEFAULT_MS = 2000;

/** The log "source" of the stored log lines of every pod. */
const LOG_GROUP = "pods";

/** Pods, their stock and the account's SSH keys. */
export class PodStore implements PodStockView {
  readonly #clock: Clock;
  readonly #volumes: ManagementStore;
  readonly #templates: (id: string) => Template | undefined;
  readonly #usage?: PodUsageSink;
  readonly #pods = new Map<string, StoredPod>();
  readonly #stock = new PodStock();
  readonly #lifecycle: PodLifecycle;
  /** The account's balance, USD; undefined: no limit. */
  #balanceUsd: number | undefined;
  #sshKeys: string[] = [];
  /** Pod logs (one log per pod). */
  readonly logs = new WorkerLogs();
  /** The account's clusters; their members are pods of this store. */
  readonly clusters: ClusterStore;

  /** `templates`: the account's and the public templates by id (a pod may be created from one). */
  constructor(options: {
    clock: Clock;
    podStartMs: number;
    store: ManagementStore;
    templates: (id: string) => Template | undefined;
    /** Meters the time pods run (the billing routes add it up). */
    usage?: PodUsageSink;
    /** The account's balance, USD: a pod costing more an hour is refused with 402. @default no limit */
    balanceUsd?: number;
  }) {
    this.#balanceUsd = options.balanceUsd;
    if (options.usage) this.#usage = options.usage;
    this.#clock = options.clock;
    this.#templates = options.templates;
    this.#lifecycle = new PodLifecycle(options.clock, options.podStartMs, {
      set: (stored, status) => this.#set(stored, status),
      log: (stored, source, line) => this.#log(stored, source, line),
      release: (stored) => this.#release(stored),
      exists: (id) => this.#pods.has(id),
    });
    this.#volumes = options.store;
    this.clusters = new ClusterStore(options.clock, {
      admitMembers: (clusterId, body, members) => this.#admitMembers(clusterId, body, members),
      member: (id) => this.get(id),
      terminateMember: async (id) => {
        const stored = this.#pods.get(id);
        if (stored) await this.#terminate(stored);
      },
    });
    this.#load(options.store);
    options.store.attachPods(() => this.#snapshot());
  }

  /**
   * Takes back the pods and keys of the state file: a pod that held compute takes it again, and
   * one that was on its way to RUNNING (or there) starts its container again (listeners are new).
   */
  #load(store: ManagementStore): void {
    const saved = store.savedSection("pods", PodsSectionSchema);
    if (saved === undefined) return;
    this.#sshKeys = saved.sshKeys;
    this.clusters.load(saved.clusters);
    for (const entry of saved.pods) {
      const pod = entry.pod as StoredPod["pod"];
      const stored: StoredPod = {
        pod,
        sshKeys: entry.sshKeys,
        holds: entry.holds,
        timers: [],
        listeners: [],
        run: 0,
      };
      this.#pods.set(pod.id, stored);
      this.logs.open(LOG_GROUP, pod.id);
      if (stored.holds && pod.dataCenterId) this.#stock.take(pod, pod.dataCenterId);
      pod.ssh = { proxy: null, direct: null };
      pod.runtime = null;
      if (pod.status === "RUNNING" || pod.status === "STARTING" || pod.status === "PROVISIONING") {
        this.#log(stored, "system", "emulator restarted: starting the container again");
        this.#lifecycle.boot(stored, "STARTING");
      }
    }
  }

  #snapshot(): z.input<typeof PodsSectionSchema> {
    return {
      sshKeys: [...this.#sshKeys],
      clusters: this.clusters.snapshot(),
      pods: [...this.#pods.values()].map((p) => ({
        pod: { ...p.pod, ssh: { proxy: null, direct: null }, runtime: null },
        sshKeys: [...p.sshKeys],
        holds: p.holds,
      })),
    };
  }

  /** Writes the state file (when there is one); routes await it before answering a change. */
  persist(): Promise<void> {
    return this.#volumes.persist();
  }

  // Stock ---------------------------------------------------------------------------------------

  /** The live `POD` level of a GPU type in a data centre and cloud (the catalog's view). */
  gpuLevel(gpuId: string, dataCenterId: string, cloud: string): AvailabilityLevel | undefined {
    return this.#stock.gpuLevel(gpuId, dataCenterId, cloud);
  }

  /** The live `POD` level of a CPU flavour in a data centre (the catalog's view). */
  cpuLevel(cpuId: string, dataCenterId: string): AvailabilityLevel | undefined {
    return this.#stock.cpuLevel(cpuId, dataCenterId);
  }

  /** The live `CLUSTER` level of a GPU type in a data centre (the catalog's view). */
  clusterLevel(gpuId: string, dataCenterId: string): AvailabilityLevel | undefined {
    return this.#stock.clusterLevel(gpuId, dataCenterId);
  }

  /** Gives back the compute the pod holds, if it holds any. */
  #release(stored: StoredPod): void {
    if (!stored.holds) return;
    stored.holds = false;
    const { pod } = stored;
    if (!pod.dataCenterId) return;
    this.#stock.giveBack(pod, pod.dataCenterId);
  }

  // Balance -------------------------------------------------------------------------------------

  /** Sets the account's balance, USD (undefined: no limit); pods already running keep running. */
  setBalanceUsd(usd: number | undefined): void {
    if (usd !== undefined && !(Number.isFinite(usd) && usd >= 0)) {
      throw new Error(`balanceUsd must be a finite number >= 0, got ${String(usd)}`);
    }
    this.#balanceUsd = usd;
  }

  /** 402 when the balance does not cover one hour of `costPerHour` (what the service asks for). */
  #requireBalance(costPerHour: number, what: string): void {
    const balance = this.#balanceUsd;
    if (balance === undefined || balance >= costPerHour) return;
    throw new PodError(
      402,
      `Insufficient balance: ${what} costs $${costPerHour}/hr and the account's balance is $${balance}; add funds to run it`,
    );
  }

  // SSH keys ------------------------------------------------------------------------------------

  sshKeys(): string[] {
    return [...this.#sshKeys];
  }

  setSshKeys(keys: string[]): string[] {
    this.#sshKeys = [...keys];
    return this.sshKeys();
  }

  // Pods ----------------------------------------------------------------------------------------

  /** The pods, cluster members only with `includeClusterPods` (as `GET /v2/pods` answers). */
  list(options: { includeClusterPods?: boolean } = {}): Pod[] {
    return [...this.#pods.values()]
      .filter((p) => options.includeClusterPods || !p.pod.cluster)
      .map((p) => this.#render(p));
  }

  get(id: string): Pod | undefined {
    const stored = this.#pods.get(id);
    return stored && this.#render(stored);
  }

  /** Creates a pod (PROVISIONING) or throws `PodError` (400 for a rule or no capacity, 404 for an unknown volume). */
  create(request: PodCreateBody): Pod {
    const standalone = [...this.#pods.values()].filter((p) => !p.pod.cluster).length;
    if (standalone >= MAX_PODS_PER_ACCOUNT) {
      throw new PodError(
        400,
        `the account holds ${standalone} pods, the most it may hold (${MAX_PODS_PER_ACCOUNT}); delete one before creating another`,
      );
    }
    const body = request.templateId
      ? withTemplate(request, requirePodTemplate(this.#templates(request.templateId), request.templateId))
      : request;
    const cloud = body.cloud ?? "SECURE";
    const dataCenters = this.#dataCentersFor(body, "pod");
    let placed: Placement;
    let compute: Pick<Pod, "gpu" | "cpu">;
    if (body.gpu) {
      const count = body.gpu.count ?? 1;
      placed = this.#stock.placeGpu(body.gpu, count, cloud, dataCenters);
      compute = { gpu: { id: body.gpu.id, count } };
    } else {
      const cpu = body.cpu as { id: string; vcpuCount: number };
      placed = this.#stock.placeCpu(cpu, cloud, dataCenters);
      const ram = podCpuType(cpu.id)?.record.ramGbPerVcpu ?? 2;
      compute = { cpu: { id: cpu.id, vcpuCount: cpu.vcpuCount, memory: Math.round(ram * cpu.vcpuCount) } };
    }
    this.#requireBalance(placed.cost, `a pod on ${describeCompute(compute)}`);
    return this.#admit(body, compute, cloud, placed);
  }

  /**
   * The data centres a pod or cluster may be placed in: `dataCenterIds` (any when empty), narrowed
   * to its network volume's; 404 for an unknown volume, 400 for one `dataCenterIds` leaves out.
   */
  #dataCentersFor(
    body: Pick<PodCreateBody, "dataCenterIds" | "mounts">,
    what: "pod" | "cluster",
  ): string[] | undefined {
    // Data centre ids in any letter case, as the service compares them.
    const dataCenters =
      body.dataCenterIds && body.dataCenterIds.length > 0
        ? body.dataCenterIds.map(catalogDataCenterId)
        : undefined;
    const network = body.mounts?.network?.[0];
    if (!network) return dataCenters;
    const volume = this.#volumes.getVolume(network.volumeId);
    if (!volume)
      throw new PodError(404, `mounts.network[0].volumeId: network volume ${network.volumeId} not found`);
    if (dataCenters && !dataCenters.includes(volume.dataCenterId)) {
      throw new PodError(
        400,
        `mounts.network[0].volumeId: network volume ${volume.id} is in ${volume.dataCenterId}, which dataCenterIds leaves out; a ${what} must be in its volume's data center`,
      );
    }
    return [volume.dataCenterId];
  }

  /**
   * Places a cluster and makes its members (the cluster store's `ClusterMemberHost`): the whole
   * cluster is placed before any member is made, so a refusal makes none.
   */
  #admitMembers(clusterId: string, body: ClusterCreateBody, members: readonly ClusterMemberSpec[]): Pod[] {
    const placed = this.#stock.placeCluster(body.compute, this.#dataCentersFor(body, "cluster"));
    const { gpuTypeId, gpuCountPerPod, podCount } = body.compute;
    this.#requireBalance(
      Math.round(placed.cost * podCount * 10_000) / 10_000,
      `a cluster of ${podCount} pods x ${gpuCountPerPod} ${gpuTypeId}`,
    );
    return members.map((m) =>
      this.#admit(
        { ...body, name: `${body.name}-${m.rank}` },
        { gpu: { id: gpuTypeId, count: gpuCountPerPod } },
        "SECURE",
        placed,
        { id: clusterId, rank: m.rank, ...(m.role ? { role: m.role } : {}), ip: m.ip },
      ),
    );
  }

  /** Makes a placed pod (PROVISIONING), takes its compute and starts its run. */
  #admit(
    body: Pick<
      PodCreateBody,
      "name" | "image" | "args" | "disk" | "mounts" | "ports" | "env" | "startSsh" | "startJupyter"
    > &
      Partial<Pick<PodCreateBody, "registry" | "globalNetworking">>,
    compute: Pick<Pod, "gpu" | "cpu">,
    cloud: string,
    placed: Placement,
    cluster?: Pod["cluster"],
  ): Pod {
    const id = randomId(14);
    const now = new Date(this.#clock.now()).toISOString();
    const env = { ...(body.env ?? {}) };
    if (body.startSsh && this.#sshKeys.length > 0 && env.PUBLIC_KEY === undefined) {
      env.PUBLIC_KEY = this.#sshKeys.join("\n");
    }
    if (body.startJupyter && env.JUPYTER_PASSWORD === undefined) {
      env.JUPYTER_PASSWORD = randomBytes(12).toString("base64url");
    }
    const pod: StoredPod["pod"] = {
      id,
      name: body.name,
      status: "PROVISIONING",
      actions: [],
      image: body.image ?? "",
      args: body.args ?? "",
      disk: body.disk ?? 50,
      mounts: body.mounts ?? {},
      ports: body.ports ?? [],
      env,
      registry: body.registry ?? null,
      ...compute,
      cloud,
      dataCenterId: placed.dataCenterId,
      cudaVersion: placed.cudaVersion,
      ssh: { proxy: null, direct: null },
      template: null,
      cost: placed.cost,
      locked: false,
      globalNetworking: { enabled: body.globalNetworking ?? false },
      ...(cluster ? { cluster } : {}),
      runtime: null,
      createdAt: now,
      startedAt: null,
    };
    const stored: StoredPod = {
      pod,
      sshKeys: body.startSsh ? [...this.#sshKeys] : [],
      holds: true,
      timers: [],
      listeners: [],
      run: 0,
    };
    this.#stock.take(pod, placed.dataCenterId);
    this.#pods.set(id, stored);
    this.logs.open(LOG_GROUP, id);
    this.#log(
      stored,
      "system",
      `pod ${id} created on ${placed.dataCenterId} (${describeCompute(pod)})${cluster ? `, rank ${cluster.rank} of cluster ${cluster.id}` : ""}`,
    );
    this.#lifecycle.boot(stored);
    return this.#render(stored);
  }

  /** Applies a PATCH; `env` replaces the pod's env whole. Container changes of a running pod restart it. */
  update(id: string, patch: PodUpdateBody): Pod | undefined {
    const stored = this.#pods.get(id);
    if (!stored) return undefined;
    requireStandalone(stored.pod);
    const { pod } = stored;
    if (patch.mounts) requireSameMountKind(pod, patch.mounts);
    if (patch.templateId !== undefined) {
      throw new PodError(
        404,
        `templateId: template ${patch.templateId} not found (the emulator applies no template to pods)`,
      );
    }
    const containerChanged = CONTAINER_FIELDS.some(
      (f) => patch[f] !== undefined && JSON.stringify(patch[f]) !== JSON.stringify(pod[f]),
    );
    if (patch.name !== undefined) pod.name = patch.name;
    if (patch.image !== undefined) pod.image = patch.image;
    if (patch.args !== undefined) pod.args = patch.args;
    if (patch.disk !== undefined) pod.disk = patch.disk;
    if (patch.ports !== undefined) pod.ports = patch.ports;
    if (patch.env !== undefined) pod.env = { ...patch.env };
    if (patch.registry !== undefined) pod.registry = patch.registry;
    if (patch.locked !== undefined) pod.locked = patch.locked;
    if (patch.globalNetworking !== undefined) pod.globalNetworking = { enabled: patch.globalNetworking };
    if (patch.mounts?.persistent) pod.mounts = { persistent: { ...patch.mounts.persistent } };
    if (patch.mounts?.network) pod.mounts = { network: patch.mounts.network.map((m) => ({ ...m })) };
    if (containerChanged && (pod.status === "RUNNING" || pod.status === "STARTING")) {
      this.#log(stored, "system", "container settings changed: restarting the container");
      this.#lifecycle.stopRun(stored);
      this.#lifecycle.boot(stored, "STARTING");
    }
    return this.#render(stored);
  }

  /** `start`, `stop` or `restart`; 409 when the status does not allow it or the pod is locked. */
  action(id: string, action: Exclude<PodAction, "terminate">): Pod | undefined {
    const stored = this.#pods.get(id);
    if (!stored) return undefined;
    requireStandalone(stored.pod);
    requireActionAllowed(stored.pod, action);
    const { pod } = stored;
    if (action === "stop") {
      this.#lifecycle.stopRun(stored);
      this.#release(stored);
      this.#set(stored, "EXITED");
      this.#log(stored, "system", "pod stopped; compute released, disk kept");
    } else if (action === "start") {
      const dc = pod.dataCenterId as string;
      if (pod.gpu && this.#stock.freeGpus(pod.gpu.id, dc, pod.cloud) < (pod.gpu.count ?? 1)) {
        throw new PodError(
          400,
          `${NO_CAPACITY_MESSAGE} (not enough free ${pod.gpu.id} GPUs in ${dc}, where the pod's disk is)`,
        );
      }
      if (pod.cpu && this.#stock.freeVcpus(pod.cpu.id, dc) < (pod.cpu.vcpuCount ?? 0)) {
        throw new PodError(
          400,
          `${NO_CAPACITY_MESSAGE} (not enough free ${pod.cpu.id} vCPUs in ${dc}, where the pod's disk is)`,
        );
      }
      this.#requireBalance(pod.cost ?? 0, `pod ${pod.id}`);
      this.#stock.take(pod, dc);
      stored.holds = true;
      this.#log(stored, "system", "pod starting");
      this.#lifecycle.boot(stored);
    } else {
      this.#lifecycle.stopRun(stored);
      this.#log(stored, "system", "restarting the container");
      this.#lifecycle.boot(stored, "STARTING");
    }
    return this.#render(stored);
  }

  /**
   * Terminates and forgets a pod (its log ends); 409 when it is locked or a cluster's member.
   * False when there is none.
   */
  async delete(id: string): Promise<boolean> {
    const stored = this.#pods.get(id);
    if (!stored) return false;
    requireStandalone(stored.pod);
    requireActionAllowed(stored.pod, "terminate");
    await this.#terminate(stored);
    return true;
  }

  /** Stops the pod's run, gives its compute back and forgets it (its log ends). */
  async #terminate(stored: StoredPod): Promise<void> {
    const { id } = stored.pod;
    this.#pods.delete(id);
    const closing = this.#lifecycle.stopRun(stored);
    this.#release(stored);
    stored.pod.status = "TERMINATED";
    this.#usage?.podStatus(stored.pod);
    this.#log(stored, "system", "pod terminated");
    this.logs.close(id);
    await closing;
  }

  /**
   * The pods that pull their image with registry credential `registryId` (`registry`), whatever
   * their status: a stopped pod pulls again when it starts.
   */
  usingRegistry(registryId: string): Pod[] {
    return [...this.#pods.values()].filter((p) => p.pod.registry === registryId).map((p) => this.#render(p));
  }

  /** True when the pod exists. */
  has(id: string): boolean {
    return this.#pods.has(id);
  }

  /** Stops every timer and closes every listener and log stream (the emulator is stopping). */
  async close(): Promise<void> {
    const closing = [...this.#pods.values()].map((p) => this.#lifecycle.stopRun(p));
    this.logs.closeAll();
    await Promise.all(closing);
  }

  // Internals -----------------------------------------------------------------------------------

  #set(stored: StoredPod, status: PodStatus): void {
    stored.pod.status = status;
    this.#usage?.podStatus(stored.pod);
    this.#log(stored, "system", `status ${status}`);
    // Timer-driven transitions are written too; a failed write surfaces on the next change.
    this.persist().catch(() => undefined);
  }

  #log(stored: StoredPod, source: "system" | "container", line: string): void {
    this.logs.write(stored.pod.id, this.#clock.now(), source, line);
  }

  #render(stored: StoredPod): Pod {
    const pod = structuredClone(stored.pod);
    pod.actions = [...ACTIONS[stored.pod.status]];
    if (!stored.holds) pod.cost = 0;
    if (pod.runtime && pod.startedAt) {
      pod.runtime.uptime = Math.max(0, Math.floor((this.#clock.now() - Date.parse(pod.startedAt)) / 1000));
    }
    return pod;
  }
}

/** 409 for a cluster's member: the pod endpoints do not change, stop or delete one. */
function requireStandalone(pod: Pod): void {
  if (!pod.cluster) return;
  throw new PodError(
    409,
    `pod ${pod.id} belongs to cluster ${pod.cluster.id} and cannot be modified via the pod endpoints; manage it through /v2/clusters/${pod.cluster.id} (DELETE there terminates every member)`,
  );
}

function describeCompute(pod: Pick<Pod, "gpu" | "cpu">): string {
  return pod.gpu ? `${pod.gpu.count ?? 1} x ${pod.gpu.id}` : `${pod.cpu?.vcpuCount} vCPU ${pod.cpu?.id}`;
}

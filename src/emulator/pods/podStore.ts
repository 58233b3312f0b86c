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
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { AvailabilityLevel } from "../../wire/catalog";
import {
  POD_STATUSES,
  type Pod,
  type PodAction,
  type PodCreateInputSchema,
  PodSchema,
  type PodStatus,
  type PodUpdateInputSchema,
} from "../../wire/pods";
import type { Template } from "../../wire/serverless";
import type { PodUsageSink } from "../billing/meter";
import {
  compareCuda,
  cpuPodStockSeed,
  type PodStockView,
  podCpuStockLevel,
  podCpuType,
  podGpuType,
  podStockLevel,
  podStockSeed,
} from "../catalog";
import type { Clock, TimerHandle } from "../clock";
import { WorkerLogs } from "../jobs/workerLogs";
import { MAX_PODS_PER_ACCOUNT } from "../serviceFacts";
import { type ManagementStore, randomId } from "../store";
import { httpListener, type PodListener, sshListener } from "./listeners";

type CreateBody = z.output<typeof PodCreateInputSchema>;
type UpdateBody = z.output<typeof PodUpdateInputSchema>;

/** Start time of a pod (PROVISIONING to RUNNING), ms of the emulator clock, when none is given. */
export const POD_START_DEFAULT_MS = 2000;

/** The message of a create (or start) that finds no capacity: what the service says. */
export const NO_CAPACITY_MESSAGE =
  "There are no longer any instances available with the requested specifications. Please refresh and try again.";

/** An error carrying the HTTP status the routes answer with. */
export class PodError extends Error {
  constructor(
    readonly status: 400 | 402 | 404 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

/** Actions each status allows (the document's table). */
const ACTIONS: Record<PodStatus, PodAction[]> = {
  PROVISIONING: ["stop", "terminate"],
  STARTING: ["stop", "terminate"],
  RUNNING: ["stop", "restart", "terminate"],
  EXITED: ["start", "terminate"],
  ERROR: ["start", "terminate"],
  TERMINATED: [],
};

/** The log "source" of the stored log lines of every pod. */
const LOG_GROUP = "pods";

interface StoredPod {
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
const PodsSectionSchema = z.object({
  sshKeys: z.array(z.string()),
  pods: z.array(
    z.object({
      pod: PodSchema.extend({ status: z.enum(POD_STATUSES) }),
      sshKeys: z.array(z.string()),
      holds: z.boolean(),
    }),
  ),
});

const CONTAINER_FIELDS = ["image", "args", "disk", "ports", "env", "registry"] as const;

/** Pods, their stock and the account's SSH keys. */
export class PodStore implements PodStockView {
  readonly #clock: Clock;
  readonly #startMs: number;
  readonly #volumes: ManagementStore;
  readonly #templates: (id: string) => Template | undefined;
  readonly #usage?: PodUsageSink;
  readonly #pods = new Map<string, StoredPod>();
  /** Free GPUs by `gpuId|dataCenterId|cloud`. */
  readonly #stock = new Map<string, number>();
  /** Free vCPUs by `cpuId|dataCenterId` (CPU pods run in the SECURE cloud only). */
  readonly #cpuStock = new Map<string, number>();
  /** The account's balance, USD; undefined: no limit. */
  #balanceUsd: number | undefined;
  #sshKeys: string[] = [];
  /** Pod logs (one log per pod). */
  readonly logs = new WorkerLogs();

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
    this.#startMs = options.podStartMs;
    this.#volumes = options.store;
    for (const s of podStockSeed()) this.#stock.set(key(s.gpuId, s.dataCenterId, s.cloud), s.free);
    for (const s of cpuPodStockSeed()) this.#cpuStock.set(cpuKey(s.cpuId, s.dataCenterId), s.freeVcpus);
    this.#load(options.store);
    options.store.attachPods(() => this.#snapshot());
  }

  /**
   * Takes back the pods and keys of the state file: a pod that held compute takes it again, and
   * one that was on its way to RUNNING (or there) starts its container again (listeners are new).
   */
  #load(store: ManagementStore): void {
    const saved = store.savedPods();
    if (saved === undefined) return;
    const parsed = PodsSectionSchema.safeParse(saved);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `stateFile ${store.stateFile}: the pods section is not valid (${issue?.path.join(".")}: ${issue?.message})`,
      );
    }
    this.#sshKeys = parsed.data.sshKeys;
    for (const entry of parsed.data.pods) {
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
      if (stored.holds && pod.dataCenterId) this.#take(pod, pod.dataCenterId);
      pod.ssh = { proxy: null, direct: null };
      pod.runtime = null;
      if (pod.status === "RUNNING" || pod.status === "STARTING" || pod.status === "PROVISIONING") {
        this.#log(stored, "system", "emulator restarted: starting the container again");
        this.#boot(stored, "STARTING");
      }
    }
  }

  #snapshot(): z.input<typeof PodsSectionSchema> {
    return {
      sshKeys: [...this.#sshKeys],
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
    const free = this.#stock.get(key(gpuId, dataCenterId, cloud));
    return free === undefined ? undefined : podStockLevel(free);
  }

  /** The live `POD` level of a CPU flavour in a data centre (the catalog's view). */
  cpuLevel(cpuId: string, dataCenterId: string): AvailabilityLevel | undefined {
    const free = this.#cpuStock.get(cpuKey(cpuId, dataCenterId));
    return free === undefined ? undefined : podCpuStockLevel(free);
  }

  /** Free GPUs of a type in a data centre and cloud (0 when it is not offered there). */
  freeGpus(gpuId: string, dataCenterId: string, cloud = "SECURE"): number {
    return this.#stock.get(key(gpuId, dataCenterId, cloud)) ?? 0;
  }

  /** Free vCPUs of a CPU flavour in a data centre (0 when it is not offered there). */
  freeVcpus(cpuId: string, dataCenterId: string): number {
    return this.#cpuStock.get(cpuKey(cpuId, dataCenterId)) ?? 0;
  }

  /** Takes (`sign` -1) or gives back (+1) the pod's compute in `dataCenterId`. */
  #move(pod: Pod, dataCenterId: string, sign: 1 | -1): void {
    if (pod.gpu) {
      const k = key(pod.gpu.id, dataCenterId, pod.cloud ?? "SECURE");
      this.#stock.set(k, (this.#stock.get(k) ?? 0) + sign * (pod.gpu.count ?? 1));
    } else if (pod.cpu) {
      const k = cpuKey(pod.cpu.id, dataCenterId);
      this.#cpuStock.set(k, (this.#cpuStock.get(k) ?? 0) + sign * (pod.cpu.vcpuCount ?? 0));
    }
  }

  #take(pod: Pod, dataCenterId: string): void {
    this.#move(pod, dataCenterId, -1);
  }

  #release(stored: StoredPod): void {
    if (!stored.holds) return;
    stored.holds = false;
    const { pod } = stored;
    if (!pod.dataCenterId) return;
    this.#move(pod, pod.dataCenterId, 1);
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

  list(): Pod[] {
    return [...this.#pods.values()].map((p) => this.#render(p));
  }

  get(id: string): Pod | undefined {
    const stored = this.#pods.get(id);
    return stored && this.#render(stored);
  }

  /** Creates a pod (PROVISIONING) or throws `PodError` (400 for a rule or no capacity, 404 for an unknown volume). */
  create(request: CreateBody): Pod {
    if (this.#pods.size >= MAX_PODS_PER_ACCOUNT) {
      throw new PodError(
        400,
        `the account holds ${this.#pods.size} pods, the most it may hold (${MAX_PODS_PER_ACCOUNT}); delete one before creating another`,
      );
    }
    const body = request.templateId ? this.#fromTemplate(request, request.templateId) : request;
    const cloud = body.cloud ?? "SECURE";
    let dataCenters = body.dataCenterIds && body.dataCenterIds.length > 0 ? body.dataCenterIds : undefined;
    const network = body.mounts?.network?.[0];
    if (network) {
      const volume = this.#volumes.getVolume(network.volumeId);
      if (!volume)
        throw new PodError(404, `mounts.network[0].volumeId: network volume ${network.volumeId} not found`);
      if (dataCenters && !dataCenters.includes(volume.dataCenterId)) {
        throw new PodError(
          400,
          `mounts.network[0].volumeId: network volume ${volume.id} is in ${volume.dataCenterId}, which dataCenterIds leaves out; a pod must be in its volume's data center`,
        );
      }
      dataCenters = [volume.dataCenterId];
    }
    const id = randomId(14);
    const now = new Date(this.#clock.now()).toISOString();
    let placed: { dataCenterId: string; cudaVersion: string | null; cost: number };
    let compute: Pick<Pod, "gpu" | "cpu">;
    if (body.gpu) {
      const count = body.gpu.count ?? 1;
      placed = this.#placeGpu(body.gpu, count, cloud, dataCenters);
      compute = { gpu: { id: body.gpu.id, count } };
    } else {
      const cpu = body.cpu as { id: string; vcpuCount: number };
      placed = this.#placeCpu(cpu, cloud, dataCenters);
      const ram = podCpuType(cpu.id)?.record.ramGbPerVcpu ?? 2;
      compute = { cpu: { id: cpu.id, vcpuCount: cpu.vcpuCount, memory: Math.round(ram * cpu.vcpuCount) } };
    }
    this.#requireBalance(
      placed.cost,
      `a pod on ${body.gpu ? `${body.gpu.count ?? 1} x ${body.gpu.id}` : `${compute.cpu?.vcpuCount} vCPU ${compute.cpu?.id}`}`,
    );
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
    this.#take(pod, placed.dataCenterId);
    this.#pods.set(id, stored);
    this.logs.open(LOG_GROUP, id);
    this.#log(stored, "system", `pod ${id} created on ${placed.dataCenterId} (${describeCompute(pod)})`);
    this.#boot(stored);
    return this.#render(stored);
  }

  /** Applies a PATCH; `env` replaces the pod's env whole. Container changes of a running pod restart it. */
  update(id: string, patch: UpdateBody): Pod | undefined {
    const stored = this.#pods.get(id);
    if (!stored) return undefined;
    const { pod } = stored;
    if (patch.mounts) this.#checkMounts(pod, patch.mounts);
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
      this.#stopRun(stored);
      this.#boot(stored, "STARTING");
    }
    return this.#render(stored);
  }

  /** `start`, `stop` or `restart`; 409 when the status does not allow it or the pod is locked. */
  action(id: string, action: Exclude<PodAction, "terminate">): Pod | undefined {
    const stored = this.#pods.get(id);
    if (!stored) return undefined;
    this.#allow(stored, action);
    const { pod } = stored;
    if (action === "stop") {
      this.#stopRun(stored);
      this.#release(stored);
      this.#set(stored, "EXITED");
      this.#log(stored, "system", "pod stopped; compute released, disk kept");
    } else if (action === "start") {
      const dc = pod.dataCenterId as string;
      if (pod.gpu && this.freeGpus(pod.gpu.id, dc, pod.cloud) < (pod.gpu.count ?? 1)) {
        throw new PodError(
          400,
          `${NO_CAPACITY_MESSAGE} (not enough free ${pod.gpu.id} GPUs in ${dc}, where the pod's disk is)`,
        );
      }
      if (pod.cpu && this.freeVcpus(pod.cpu.id, dc) < (pod.cpu.vcpuCount ?? 0)) {
        throw new PodError(
          400,
          `${NO_CAPACITY_MESSAGE} (not enough free ${pod.cpu.id} vCPUs in ${dc}, where the pod's disk is)`,
        );
      }
      this.#requireBalance(pod.cost ?? 0, `pod ${pod.id}`);
      this.#take(pod, dc);
      stored.holds = true;
      this.#log(stored, "system", "pod starting");
      this.#boot(stored);
    } else {
      this.#stopRun(stored);
      this.#log(stored, "system", "restarting the container");
      this.#boot(stored, "STARTING");
    }
    return this.#render(stored);
  }

  /** Terminates and forgets a pod (its log ends); 409 when it is locked. False when there is none. */
  async delete(id: string): Promise<boolean> {
    const stored = this.#pods.get(id);
    if (!stored) return false;
    this.#allow(stored, "terminate");
    this.#pods.delete(id);
    const closing = this.#stopRun(stored);
    this.#release(stored);
    stored.pod.status = "TERMINATED";
    this.#usage?.podStatus(stored.pod);
    this.#log(stored, "system", "pod terminated");
    this.logs.close(id);
    await closing;
    return true;
  }

  /** True when the pod exists. */
  has(id: string): boolean {
    return this.#pods.has(id);
  }

  /** Stops every timer and closes every listener and log stream (the emulator is stopping). */
  async close(): Promise<void> {
    const closing = [...this.#pods.values()].map((p) => this.#stopRun(p));
    this.logs.closeAll();
    await Promise.all(closing);
  }

  // Internals -----------------------------------------------------------------------------------

  /** A pod template by id: 404 when unknown, 422 when it is a serverless template. */
  #template(id: string): Template {
    const t = this.#templates(id);
    if (!t) throw new PodError(404, `templateId: template ${id} not found`);
    if (t.serverless) {
      throw new PodError(
        422,
        `templateId: template ${id} is a serverless template; a pod needs a pod template`,
      );
    }
    return t;
  }

  /**
   * The create body with the template's settings under it: body fields win, `env` merges per
   * key (body wins), a CUDA field in the body replaces the template's constraint, and CPU pods
   * take no persistent mount from it.
   */
  #fromTemplate(body: CreateBody, id: string): CreateBody {
    const t = this.#template(id);
    const out: CreateBody = {
      ...body,
      image: body.image ?? t.image,
      args: body.args ?? t.args,
      disk: body.disk ?? t.disk,
      ports: body.ports ?? t.ports,
      registry: body.registry !== undefined ? body.registry : t.registry,
      env: { ...(t.env ?? {}), ...(body.env ?? {}) },
      startSsh: body.startSsh ?? t.startSsh,
      startJupyter: body.startJupyter ?? t.startJupyter,
    };
    if (!body.mounts && body.gpu && t.mounts?.persistent) {
      out.mounts = { persistent: { size: t.mounts.persistent.size, path: t.mounts.persistent.path } };
    }
    if (
      body.gpu &&
      body.gpu.allowedCudaVersions === undefined &&
      body.gpu.minCudaVersion === undefined &&
      t.allowedCudaVersions?.length
    ) {
      out.gpu = { ...body.gpu, allowedCudaVersions: [...t.allowedCudaVersions] };
    }
    return out;
  }

  #allow(stored: StoredPod, action: PodAction): void {
    const { pod } = stored;
    if (pod.locked && action !== "start") {
      throw new PodError(
        409,
        `pod ${pod.id} is locked, so it cannot be ${action === "terminate" ? "terminated" : action === "stop" ? "stopped" : "restarted"}; unlock it first (PATCH /v2/pods/${pod.id} {"locked": false})`,
      );
    }
    if (!ACTIONS[pod.status].includes(action)) {
      throw new PodError(
        409,
        `action ${action} is not valid for pod ${pod.id} in status ${pod.status}; valid now: ${ACTIONS[pod.status].join(", ") || "none"}`,
      );
    }
  }

  #placeGpu(
    gpu: NonNullable<CreateBody["gpu"]>,
    count: number,
    cloud: string,
    dataCenters: readonly string[] | undefined,
  ): { dataCenterId: string; cudaVersion: string | null; cost: number } {
    const type = podGpuType(gpu.id);
    if (!type)
      throw new PodError(400, `gpu.id: ${gpu.id} is not a GPU type (GET /v2/catalog/gpus lists them)`);
    const max = cloud === "COMMUNITY" ? type.record.maxCount?.community : type.record.maxCount?.secure;
    if (!max) throw new PodError(400, `cloud: ${gpu.id} is not offered in the ${cloud} cloud`);
    if (count > max) {
      throw new PodError(
        400,
        `gpu.count: at most ${max} ${gpu.id} GPUs per pod in the ${cloud} cloud, got ${count}`,
      );
    }
    let cudaVersion: string | null = null;
    if (type.cuda.length > 0) {
      const usable = type.cuda
        .filter(([, available]) => available)
        .map(([v]) => v)
        .filter((v) => (gpu.allowedCudaVersions?.length ? gpu.allowedCudaVersions.includes(v) : true))
        .filter((v) => (gpu.minCudaVersion ? compareCuda(v, gpu.minCudaVersion) >= 0 : true));
      if (usable.length === 0) throw new PodError(400, NO_CAPACITY_MESSAGE);
      cudaVersion = usable[0] as string;
    }
    let best: { dc: string; free: number } | undefined;
    for (const [k, free] of this.#stock) {
      const [id, dc, c] = k.split("|") as [string, string, string];
      if (id !== gpu.id || c !== cloud || (dataCenters && !dataCenters.includes(dc))) continue;
      if (free >= count && (!best || free > best.free)) best = { dc, free };
    }
    if (!best) throw new PodError(400, NO_CAPACITY_MESSAGE);
    const price = cloud === "COMMUNITY" ? type.record.price?.community : type.record.price?.secure;
    return { dataCenterId: best.dc, cudaVersion, cost: round((price ?? 0) * count) };
  }

  #placeCpu(
    cpu: { id: string; vcpuCount: number },
    cloud: string,
    dataCenters: readonly string[] | undefined,
  ): { dataCenterId: string; cudaVersion: null; cost: number } {
    const type = podCpuType(cpu.id);
    if (!type)
      throw new PodError(400, `cpu.id: ${cpu.id} is not a CPU flavour (GET /v2/catalog/cpus lists them)`);
    const max = type.record.vcpu?.max ?? 0;
    if (cpu.vcpuCount > max) {
      throw new PodError(400, `cpu.vcpuCount: ${cpu.id} has at most ${max} vCPUs, got ${cpu.vcpuCount}`);
    }
    if (cloud !== "SECURE") throw new PodError(400, "cloud: CPU pods run in the SECURE cloud only");
    let best: { dc: string; free: number } | undefined;
    for (const dc of type.dataCenterIds) {
      if (dataCenters && !dataCenters.includes(dc)) continue;
      const free = this.freeVcpus(cpu.id, dc);
      if (free >= cpu.vcpuCount && (!best || free > best.free)) best = { dc, free };
    }
    if (!best) throw new PodError(400, NO_CAPACITY_MESSAGE);
    return {
      dataCenterId: best.dc,
      cudaVersion: null,
      cost: round((type.record.price?.securePerVcpu ?? 0) * cpu.vcpuCount),
    };
  }

  #checkMounts(pod: Pod, mounts: NonNullable<UpdateBody["mounts"]>): void {
    const had = pod.mounts?.persistent ? "persistent" : pod.mounts?.network?.length ? "network" : undefined;
    if (mounts.network !== undefined && mounts.network.length === 0) {
      throw new PodError(400, "mounts.network: [] is not allowed (clearing mounts is not supported)");
    }
    const wants = mounts.persistent ? "persistent" : mounts.network ? "network" : undefined;
    if (wants && wants !== had) {
      throw new PodError(
        400,
        `mounts.${wants}: the mount kind is fixed at create (this pod has ${had ? `a ${had} mount` : "no mount"}); create a new pod to change it`,
      );
    }
    const oldVolume = pod.mounts?.network?.[0]?.volumeId;
    const newVolume = mounts.network?.[0]?.volumeId;
    if (newVolume !== undefined && newVolume !== oldVolume) {
      throw new PodError(
        400,
        `mounts.network[0].volumeId is immutable (the pod has ${oldVolume}); only path may change`,
      );
    }
  }

  /** Runs the start steps from `from` (PROVISIONING or STARTING) to RUNNING or ERROR. */
  #boot(stored: StoredPod, from: "PROVISIONING" | "STARTING" = "PROVISIONING"): void {
    const run = ++stored.run;
    this.#set(stored, from);
    const half = Math.floor(this.#startMs / 2);
    const toStarting = () => {
      if (stored.run !== run) return;
      this.#set(stored, "STARTING");
      this.#log(stored, "system", `pulling image ${stored.pod.image}`);
      stored.timers.push(this.#clock.setTimeout(finish, this.#startMs - half));
    };
    const finish = () => {
      if (stored.run !== run) return;
      stored.timers = [];
      if ((stored.pod.image ?? "").includes("unpullable")) {
        this.#log(
          stored,
          "system",
          `error pulling image ${stored.pod.image}: Error response from daemon: pull access denied for ${stored.pod.image}, repository does not exist or may require 'docker login'`,
        );
        this.#release(stored);
        this.#set(stored, "ERROR");
        return;
      }
      void this.#running(stored, run);
    };
    stored.timers.push(
      from === "PROVISIONING"
        ? this.#clock.setTimeout(toStarting, half)
        : this.#clock.setTimeout(finish, this.#startMs - half),
    );
  }

  async #running(stored: StoredPod, run: number): Promise<void> {
    const { pod } = stored;
    const opened: PodListener[] = [];
    const runtimePorts: NonNullable<NonNullable<Pod["runtime"]>["ports"]> = [];
    let ssh: PodListener | undefined;
    try {
      if (stored.sshKeys.length > 0) {
        ssh = await sshListener();
        opened.push(ssh);
      }
      for (const entry of pod.ports ?? []) {
        const [portText, protocol] = entry.split("/");
        const privatePort = Number(portText);
        if (protocol === "http") {
          const listener = await httpListener(pod.id, privatePort);
          opened.push(listener);
          runtimePorts.push({ private: privatePort, public: listener.port, type: "http", ip: "127.0.0.1" });
        } else if (privatePort === 22 && ssh) {
          runtimePorts.push({ private: 22, public: ssh.port, type: "tcp", ip: "127.0.0.1" });
        }
      }
    } catch (err) {
      await Promise.all(opened.map((l) => l.close()));
      if (stored.run === run) {
        this.#log(stored, "system", `could not open the pod's ports: ${(err as Error).message}`);
        this.#release(stored);
        this.#set(stored, "ERROR");
      }
      return;
    }
    if (stored.run !== run || !this.#pods.has(pod.id)) {
      await Promise.all(opened.map((l) => l.close()));
      return;
    }
    stored.listeners = opened;
    const started = this.#clock.now();
    pod.startedAt = new Date(started).toISOString();
    pod.runtime = { uptime: 0, ports: runtimePorts };
    if (ssh) {
      const proxyUser = `${pod.id}-${randomBytes(4).toString("hex")}`;
      pod.ssh = {
        proxy: {
          host: "127.0.0.1",
          port: ssh.port,
          username: proxyUser,
          command: `ssh ${proxyUser}@127.0.0.1 -p ${ssh.port}`,
        },
        direct: (pod.ports ?? []).includes("22/tcp")
          ? {
              host: "127.0.0.1",
              port: ssh.port,
              username: "root",
              command: `ssh root@127.0.0.1 -p ${ssh.port}`,
            }
          : null,
      };
    }
    this.#set(stored, "RUNNING");
    if (ssh) this.#log(stored, "container", `sshd listening on port 22 (127.0.0.1:${ssh.port})`);
    for (const p of runtimePorts.filter((r) => r.type === "http")) {
      this.#log(stored, "container", `serving http on port ${p.private} (127.0.0.1:${p.public})`);
    }
    this.#log(stored, "container", "container started");
  }

  /** Ends the current run: cancels its timers and closes its listeners. */
  #stopRun(stored: StoredPod): Promise<void> {
    stored.run++;
    for (const t of stored.timers) this.#clock.clearTimeout(t);
    stored.timers = [];
    const listeners = stored.listeners;
    stored.listeners = [];
    stored.pod.ssh = { proxy: null, direct: null };
    stored.pod.runtime = null;
    return Promise.all(listeners.map((l) => l.close())).then(() => undefined);
  }

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

function key(gpuId: string, dataCenterId: string, cloud: string): string {
  return `${gpuId}|${dataCenterId}|${cloud}`;
}

function cpuKey(cpuId: string, dataCenterId: string): string {
  return `${cpuId}|${dataCenterId}`;
}

function round(usd: number): number {
  return Math.round(usd * 10_000) / 10_000;
}

function describeCompute(pod: Pod): string {
  return pod.gpu ? `${pod.gpu.count ?? 1} x ${pod.gpu.id}` : `${pod.cpu?.vcpuCount} vCPU ${pod.cpu?.id}`;
}

/**
 * REST v2 serverless endpoints and templates, in one store with the job engine: an endpoint made
 * here is an engine endpoint (its job interface is `/v2/{id}/...` at once), and every endpoint
 * of the engine (`--endpoint`) is listed here, as image {@link BUILTIN_IMAGE}.
 *
 * Releases: the endpoint's version starts at 1. A change of what the workers run (container
 * settings `image`, `args`, `disk`, `ports`, `env`, `registry`, `templateId`, and the placement
 * `gpu`, `cpu`, `dataCenterIds`, `networkVolumes`) makes a new release (version + 1, with the
 * dotted diff of the changed fields) and a rolling update in the engine. Other fields (`name`,
 * `workers`, `scaling`, `timeout`, `flashboot`) apply at once, with no release, as the document
 * says of the autoscaler settings; `workers.max` resizes the engine's workers.
 *
 * Templates are snapshots: an endpoint takes the template's container settings when it is created
 * (or when `templateId` changes), and body fields override them; a later template change does not
 * touch the endpoint. A template in use cannot be deleted (400); deleting an endpoint deletes its
 * bound template too (unless another endpoint is bound to it).
 *
 * With `--state-file`, endpoints made over REST v2 (with their releases) and templates are kept in
 * the file's `serverless` section, written before a change is acknowledged; on restart they come
 * back at their current version, with fresh workers.
 *
 * `type: "LOAD_BALANCER"` endpoints have the same releases and workers (`workers.min` warm, the
 * others started by requests) and no job interface; their `requestUrls` are `base`
 * (`<origin>/lb/<id>`, served by `http/loadBalancerRoutes.ts`) and `health` (`base` plus the env's
 * `HEALTH_CHECK_PATH`, else `/ping`). Endpoints given with `--endpoint` are
 * defined by the command line at every start (a saved endpoint of the same id is ignored), so a
 * PATCH of one of them lasts until the emulator stops.
 */
import type { z } from "zod";
import {
  ENDPOINT_CONTAINER_FIELDS,
  type ReleaseDiffEntry,
  type ServerlessEndpoint,
  type ServerlessReleaseList,
  type ServerlessWorkerList,
} from "../../wire/serverless";
import { requireKnownPools } from "../catalog";
import type { Clock } from "../clock";
import { V2_MANAGEMENT_SEGMENTS } from "../http/v2Document";
import { BUILTIN_IMAGE, type EndpointConfig, type JobEngine, WORKER_START_MS } from "../jobs/engine";
import type {
  EndpointCreateBody,
  EndpointUpdateBody,
  TemplateCreateBody,
  TemplateUpdateBody,
} from "../requestBodies";
import { MAX_ENDPOINTS_PER_ACCOUNT, MAX_TEMPLATES_PER_ACCOUNT } from "../serviceFacts";
import { type ManagementStore, randomId } from "../store";
import { ServerlessConflictError, ServerlessNotFoundError, ServerlessValidationError } from "./errors";
import {
  cpuRecords,
  type Release,
  SavedServerlessSchema,
  type StoredEndpoint,
  type Template,
} from "./records";
import { recordRelease, releaseDiff, releaseList, releaseRecord, workerList } from "./releases";
import { healthPath, withRequestUrls } from "./requestUrls";
import { publicTemplateRecord, templateFromRequest } from "./templates";
import {
  requireEnvWithinCap,
  requireOneCudaConstraint,
  requireRoom,
  requireWorkersWithinCap,
} from "./validation";

/** Serverless endpoints and templates over the job engine. */
export class ServerlessStore {
  readonly #engine: JobEngine;
  readonly #clock: Clock;
  readonly #endpoints = new Map<string, StoredEndpoint>();
  readonly #templates = new Map<string, Template>();
  /** Base URL of the job interface, for `requestUrls` (set once the server listens). */
  serverlessUrl = "http://127.0.0.1";

  readonly #store?: ManagementStore;
  /** Cold start of load-balancer endpoints' workers, ms (the emulator's `coldStartMs`). */
  readonly #lbColdStartMs: number;

  /**
   * Lists the engine's endpoints (`configs`, from `--endpoint`), then restores what `store`'s
   * state file saved. Throws when the saved section is malformed. `options.coldStartMs`: how long
   * a cold worker of a load-balancer endpoint takes to start (default {@link WORKER_START_MS}).
   */
  constructor(
    engine: JobEngine,
    clock: Clock,
    configs: readonly EndpointConfig[],
    store?: ManagementStore,
    options: { coldStartMs?: number } = {},
  ) {
    this.#engine = engine;
    this.#clock = clock;
    this.#store = store;
    this.#lbColdStartMs = options.coldStartMs ?? WORKER_START_MS;
    for (const config of configs) {
      this.#endpoints.set(config.id, {
        fromCommandLine: true,
        record: {
          id: config.id,
          name: config.id,
          type: "QUEUE",
          image: BUILTIN_IMAGE,
          args: "",
          disk: 20,
          ports: [],
          env: {},
          registry: null,
          gpu: { pools: ["EMULATOR"], count: 1, allowedCudaVersions: [], minCudaVersion: null },
          workers: { min: 0, max: config.workersMax, idleTimeout: 5 },
          scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
          dataCenterIds: [],
          networkVolumes: [],
          timeout: 600_000,
          flashboot: "OFF",
          createdAt: this.#iso(),
        },
        releases: [this.#releaseRecord(1, [])],
      });
    }
    if (store) {
      this.#restore(store);
      store.attachServerless(() => this.#snapshot());
    }
  }

  #restore(store: ManagementStore): void {
    const saved = store.savedSection("serverless", SavedServerlessSchema);
    if (saved === undefined) return;
    for (const template of saved.templates) this.#templates.set(template.id, template);
    for (const { record, releases } of saved.endpoints) {
      if (this.#endpoints.has(record.id)) continue; // --endpoint wins
      const latest = releases.at(-1) as Release;
      this.#engine.addEndpoint({
        ...this.#engineShape(record),
        release: { version: latest.version ?? releases.length, image: record.image, env: { ...record.env } },
      });
      this.#endpoints.set(record.id, { record, releases });
    }
  }

  #snapshot(): z.infer<typeof SavedServerlessSchema> {
    return {
      endpoints: [...this.#endpoints.values()]
        .filter((e) => !e.fromCommandLine)
        .map(({ record, releases }) => ({ record, releases })),
      templates: [...this.#templates.values()],
    };
  }

  /** Writes the state file (when there is one) before a change is acknowledged. */
  #save(): Promise<void> {
    return this.#store?.persist() ?? Promise.resolve();
  }

  #iso(at = this.#clock.now()): string {
    return new Date(at).toISOString();
  }

  #releaseRecord(version: number, diff: ReleaseDiffEntry[]): Release {
    return releaseRecord(version, diff, this.#iso());
  }

  // Endpoints -----------------------------------------------------------------------------------

  /**
   * How the engine runs an endpoint: a queue endpoint's workers are all warm; a load-balancer
   * endpoint keeps `workers.min` warm, the rest start cold on demand (a request waiting for a
   * worker), as the service scales load-balancer endpoints by requests.
   */
  #engineShape(record: StoredEndpoint["record"]): Omit<EndpointConfig, "release"> {
    if (record.type !== "LOAD_BALANCER") return { id: record.id, workersMax: record.workers.max };
    return {
      id: record.id,
      type: "LOAD_BALANCER",
      workersMax: record.workers.max,
      coldStartMs: this.#lbColdStartMs,
      warmWorkers: record.workers.min,
    };
  }

  /** A load-balancer endpoint's health path (`HEALTH_CHECK_PATH` of its env, else `/ping`); undefined for any other id. */
  loadBalancer(id: string): { healthPath: string } | undefined {
    const stored = this.#endpoints.get(id);
    if (stored?.record.type !== "LOAD_BALANCER" || !this.#engine.has(id)) return undefined;
    return { healthPath: healthPath(stored.record.env) };
  }

  /** An endpoint as the document shows it, with `requestUrls` of this emulator. */
  render(stored: StoredEndpoint): ServerlessEndpoint {
    return withRequestUrls(stored.record, this.serverlessUrl);
  }

  listEndpoints(): StoredEndpoint[] {
    // Endpoints an engine no longer has (deleted elsewhere) are not shown.
    return [...this.#endpoints.values()].filter((e) => this.#engine.has(e.record.id));
  }

  getEndpoint(id: string): StoredEndpoint | undefined {
    return this.#endpoints.get(id);
  }

  /** The endpoints (shown ones) whose `networkVolumes` list `volumeId`: what holds a volume. */
  endpointsUsingVolume(volumeId: string): StoredEndpoint[] {
    return this.listEndpoints().filter((e) => (e.record.networkVolumes ?? []).includes(volumeId));
  }

  /**
   * The serverless template an endpoint is based on: one of the account's or a public catalog
   * template. As the document says: an unknown id is 404, a pod template (`serverless: false`) 422.
   */
  #template(id: string): Template {
    const found = this.#templates.get(id) ?? publicTemplateRecord(id);
    if (!found) {
      throw new ServerlessNotFoundError(
        `templateId: no template ${id} in this account or the public catalog (GET /v2/templates, GET /v2/catalog/templates)`,
      );
    }
    if (!found.serverless) {
      throw new ServerlessValidationError(
        `templateId: template ${id} is a pod template (serverless: false); an endpoint takes a serverless template`,
      );
    }
    return found;
  }

  /** A deleted registry credential: templates that named it lose the reference (`registry: null`). */
  async forgetRegistry(registryId: string): Promise<void> {
    let changed = false;
    for (const [id, template] of this.#templates) {
      if (template.registry === registryId) {
        this.#templates.set(id, { ...template, registry: null });
        changed = true;
      }
    }
    if (changed) await this.#save();
  }

  /** Creates an endpoint and its engine endpoint (version 1). */
  async createEndpoint(body: EndpointCreateBody): Promise<StoredEndpoint> {
    requireKnownPools(body.gpu?.pools, ServerlessConflictError);
    requireWorkersWithinCap(body.workers?.max);
    requireEnvWithinCap(body.env);
    requireRoom("endpoints", this.listEndpoints().length, MAX_ENDPOINTS_PER_ACCOUNT);
    // Exactly one of gpu or cpu, and no CUDA set beside a floor: the wire schema's 400 rules.
    const tpl = body.templateId === undefined ? undefined : this.#template(body.templateId);
    let id = randomId(8);
    while (this.#endpoints.has(id) || this.#engine.has(id) || V2_MANAGEMENT_SEGMENTS.includes(id))
      id = randomId(8);
    const workers = { min: 0, max: 3, idleTimeout: 10, ...body.workers };
    const record: StoredEndpoint["record"] = {
      id,
      name: body.name,
      type: body.type,
      image: body.image ?? tpl?.image ?? "",
      args: body.args ?? tpl?.args ?? "",
      disk: body.disk ?? tpl?.disk ?? 20,
      ports: body.ports ?? tpl?.ports ?? [],
      env: body.env ?? tpl?.env ?? {},
      registry: body.registry ?? tpl?.registry ?? null,
      ...(body.gpu
        ? {
            gpu: {
              ...body.gpu,
              count: body.gpu.count ?? 1,
              allowedCudaVersions: body.gpu.allowedCudaVersions ?? [],
              minCudaVersion: body.gpu.minCudaVersion ?? null,
            },
          }
        : {}),
      ...(body.cpu ? { cpu: cpuRecords(body.cpu) } : {}),
      workers,
      scaling: body.scaling,
      dataCenterIds: body.dataCenterIds ?? [],
      networkVolumes: body.networkVolumes ?? [],
      timeout: body.timeout ?? 300_000,
      flashboot: body.flashboot ?? "OFF",
      createdAt: this.#iso(),
      ...(body.templateId !== undefined ? { templateId: body.templateId } : {}),
    };
    this.#engine.addEndpoint({
      ...this.#engineShape(record),
      release: { version: 1, image: record.image, env: { ...record.env } },
    });
    const stored: StoredEndpoint = { record, releases: [this.#releaseRecord(1, [])] };
    this.#endpoints.set(id, stored);
    await this.#save();
    return stored;
  }

  /** Applies a PATCH; a change of what workers run makes a release and a rolling update. */
  async updateEndpoint(id: string, patch: EndpointUpdateBody): Promise<StoredEndpoint | undefined> {
    const stored = this.#endpoints.get(id);
    if (!stored || !this.#engine.has(id)) return undefined;
    const current = stored.record;
    requireKnownPools(patch.gpu?.pools, ServerlessConflictError);
    requireWorkersWithinCap(patch.workers?.max);
    requireEnvWithinCap(patch.env);
    if (patch.gpu !== undefined && current.cpu !== undefined) {
      throw new ServerlessConflictError("gpu: this is a CPU endpoint; the compute family cannot change");
    }
    if (patch.cpu !== undefined && current.cpu === undefined) {
      throw new ServerlessConflictError("cpu: this is a GPU endpoint; the compute family cannot change");
    }
    const next: StoredEndpoint["record"] = structuredClone(current);
    if (patch.templateId !== undefined && patch.templateId !== current.templateId) {
      if (patch.templateId === "") delete next.templateId;
      else {
        const tpl = this.#template(patch.templateId);
        Object.assign(next, {
          image: tpl.image,
          args: tpl.args,
          disk: tpl.disk,
          ports: tpl.ports,
          env: tpl.env,
          registry: tpl.registry,
          templateId: tpl.id,
        });
      }
    }
    for (const key of [
      "name",
      ...ENDPOINT_CONTAINER_FIELDS,
      "dataCenterIds",
      "networkVolumes",
      "scaling",
      "timeout",
      "flashboot",
    ] as const) {
      if (patch[key] !== undefined) (next as Record<string, unknown>)[key] = structuredClone(patch[key]);
    }
    if (patch.workers !== undefined) next.workers = { ...next.workers, ...patch.workers };
    if (patch.cpu !== undefined) {
      next.cpu = cpuRecords(patch.cpu);
    }
    if (patch.gpu !== undefined && next.gpu) {
      const { minCudaVersion, ...rest } = patch.gpu;
      const gpu = { ...next.gpu, ...rest };
      if (minCudaVersion !== undefined) gpu.minCudaVersion = minCudaVersion === "" ? null : minCudaVersion;
      requireOneCudaConstraint({
        allowedCudaVersions: gpu.allowedCudaVersions,
        minCudaVersion: gpu.minCudaVersion ?? undefined,
      });
      next.gpu = gpu;
    }
    const diff = releaseDiff(current, next);
    stored.record = next;
    if (next.workers.max !== current.workers.max) this.#engine.setWorkersMax(id, next.workers.max);
    if (next.type === "LOAD_BALANCER" && patch.workers !== undefined) {
      this.#engine.setWarmWorkers(id, next.workers.min); // workers.min are always on
    }
    if (diff.length > 0) {
      const version = this.#engine.version(id) + 1;
      recordRelease(stored, this.#releaseRecord(version, diff));
      this.#engine.publishRelease(id, { version, image: next.image, env: { ...next.env } });
    }
    await this.#save();
    return stored;
  }

  /** Deletes an endpoint: its jobs end and its job interface answers 404. */
  async deleteEndpoint(id: string): Promise<boolean> {
    const bound = this.#endpoints.get(id)?.record.templateId;
    if (!this.#endpoints.delete(id)) return false;
    // "Permanently deletes a serverless endpoint and its bound template" (deleteEndpoint), unless
    // another endpoint is still bound to it (the service refuses to delete a template in use).
    if (bound !== undefined && !this.listEndpoints().some((e) => e.record.templateId === bound)) {
      this.#templates.delete(bound);
    }
    const removed = this.#engine.removeEndpoint(id);
    await this.#save();
    return removed;
  }

  /** `/workers`: each running worker with its version and staleness, and counts by status. */
  workers(id: string): ServerlessWorkerList | undefined {
    const stored = this.#endpoints.get(id);
    if (!stored || !this.#engine.has(id)) return undefined;
    return workerList(stored, this.#engine.workers(id), this.#engine.version(id), this.#clock.now());
  }

  /** `/releases`: newest first, each with its worker count, and the rollout summary. */
  releases(id: string): ServerlessReleaseList | undefined {
    const stored = this.#endpoints.get(id);
    if (!stored || !this.#engine.has(id)) return undefined;
    return releaseList(stored, this.#engine.workers(id), this.#engine.version(id));
  }

  /** Every worker's log (the engine's). */
  get logs() {
    return this.#engine.logs;
  }

  /** True when the endpoint has a log for `workerId` (running, or gone and still kept). */
  hasWorkerLog(id: string, workerId: string): boolean {
    return this.#endpoints.has(id) && this.#engine.logs.has(id, workerId);
  }

  // Templates -----------------------------------------------------------------------------------

  listTemplates(): Template[] {
    return [...this.#templates.values()];
  }

  getTemplate(id: string): Template | undefined {
    return this.#templates.get(id);
  }

  async createTemplate(body: TemplateCreateBody): Promise<Template> {
    requireEnvWithinCap(body.env);
    requireRoom("templates", this.#templates.size, MAX_TEMPLATES_PER_ACCOUNT);
    let id = randomId(10);
    while (this.#templates.has(id)) id = randomId(10);
    const template = templateFromRequest(id, body);
    this.#templates.set(id, template);
    await this.#save();
    return template;
  }

  async updateTemplate(id: string, patch: TemplateUpdateBody): Promise<Template | undefined> {
    const current = this.#templates.get(id);
    if (!current) return undefined;
    requireEnvWithinCap(patch.env);
    const next = { ...current };
    for (const [key, value] of Object.entries(patch)) {
      if (value !== undefined) (next as Record<string, unknown>)[key] = structuredClone(value);
    }
    // The document's TemplateMounts: "omitting `mounts` or sending `{}` leaves the existing mount unchanged".
    if (patch.mounts !== undefined && patch.mounts.persistent === undefined) next.mounts = current.mounts;
    this.#templates.set(id, next);
    await this.#save();
    return next;
  }

  async deleteTemplate(id: string): Promise<boolean> {
    if (!this.#templates.has(id)) return false;
    const user = this.listEndpoints().find((e) => e.record.templateId === id);
    if (user) {
      throw new ServerlessConflictError(
        `template ${id} is used by endpoint ${user.record.id}; change that endpoint's templateId or delete it first`,
      );
    }
    this.#templates.delete(id);
    await this.#save();
    return true;
  }
}

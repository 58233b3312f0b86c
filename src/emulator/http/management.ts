/**
 * REST management, written once for both dialects: ONE table of resources (what each operation
 * does to the store), and one adapter per dialect (paths, status codes, list wrapping, validation
 * answers, body checks). A new v2 resource is one more table entry; a dialect that lacks it simply
 * has no wire for it.
 *
 * | | v1 (`/v1`) | v2 (`/v2`) |
 * |---|---|---|
 * | create | 200 | 201 |
 * | list | bare array | `{ <listKey>: [...] }` |
 * | schema failure | 400 `{message}` | 422 problem+json with `errors` |
 * | shrink, duplicate name, size the store refuses | 400 | 400 |
 * | deleting a volume an endpoint attaches; attaching a volume that does not exist | 400 | 400 |
 * | deleting a registry credential a pod pulls with | 400 | 400 |
 *
 * Serverless endpoints and templates (`/v2/serverless`, `/v2/templates`) are v2-only entries over
 * the {@link ServerlessStore}; their sub-resources (`/releases`, `/workers`, worker logs) are in
 * `serverlessRoutes.ts`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import {
  type ContainerRegistryAuth,
  ContainerRegistryAuthCreateInputSchema,
  type NetworkVolume,
  NetworkVolumeCreateInputSchema,
  NetworkVolumeUpdateInputSchema,
  type V2NetworkVolume,
  V2NetworkVolumeCreateRequestSchema,
  V2NetworkVolumeUpdateInputSchema,
} from "../../wire/schemas";
import {
  ServerlessEndpointCreateInputSchema,
  ServerlessEndpointUpdateInputSchema,
} from "../../wire/serverless";
import { TemplateCreateInputSchema, TemplateUpdateInputSchema } from "../../wire/templates";
import { catalogDataCenterId, DATA_CENTER_IDS } from "../catalog";
import type { PodStore } from "../pods/podStore";
import type {
  EndpointCreateBody,
  EndpointUpdateBody,
  RegistryAuthCreateBody,
  TemplateCreateBody,
  TemplateUpdateBody,
} from "../requestBodies";
import {
  ServerlessConflictError,
  ServerlessNotFoundError,
  type ServerlessStore,
  ServerlessUnsupportedError,
  ServerlessValidationError,
  type StoredEndpoint,
  type StoredTemplate,
} from "../serverless";
import {
  AccountFullError,
  DuplicateNameError,
  type ManagementStore,
  ShrinkError,
  type StoredRegistryAuth,
  type StoredVolume,
  VolumeSizeError,
} from "../store";
import { HttpError, parse, parseV2 } from "./errors";
import type { RouteMeta } from "./routeMeta";

type DialectName = "v1" | "v2";

/** How one dialect speaks: everything that differs between v1 and v2 apart from the shapes. */
interface DialectAdapter {
  name: DialectName;
  /** Path prefix. */
  base: string;
  /** Status of a successful create. */
  createdStatus: number;
  /** The request body, or a 400 when it is not what the dialect requires. */
  body(request: FastifyRequest): unknown;
  /** Parses `value` with `schema`, or throws the dialect's validation error. */
  validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S>;
  /** A list answer: v1 sends the bare array, v2 wraps it under `listKey`. */
  list(listKey: string, items: unknown[]): unknown;
}

const v1: DialectAdapter = {
  name: "v1",
  base: "/v1",
  createdStatus: 200,
  body(request) {
    if (request.body === undefined) throw new HttpError(400, "body: a JSON object is required");
    return request.body;
  },
  validate: (schema, value) => parse(schema, value, 400),
  list: (_listKey, items) => items,
};

const v2: DialectAdapter = {
  name: "v2",
  base: "/v2",
  createdStatus: 201,
  body(request) {
    const body = request.body;
    if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new HttpError(400, "the request body must be a JSON object");
    }
    return body;
  },
  // The document: 422 "The request body or parameters were syntactically valid but failed
  // validation", with the individual failures in `errors`.
  // The cross-field rules the document answers with 400 (exactly one of gpu or cpu; a CUDA set
  // and a floor) are marked in the wire schemas: a body failing only those is a 400.
  validate: parseV2,
  list: (listKey, items) => ({ [listKey]: items }),
};

/** A REST v2 request body checked against `schema`: 400 for the document's cross-field rules, else 422. */
export function validateV2Body<S extends z.ZodType>(schema: S, request: FastifyRequest): z.output<S> {
  return v2.validate(schema, v2.body(request));
}

/** A resource as one dialect shows it. `Create`/`Update` are the store's inputs. */
interface ResourceWire<Rec, Create, Update> {
  /** Path below the dialect's base: `/networkvolumes`, `/network-volumes`. */
  path: string;
  /** What the dialect calls one record in messages: `network volume`, `registry`. */
  noun: string;
  render(record: Rec, ctx: ManagementContext): unknown;
  /** The create body, parsed into the store's input. */
  create: z.ZodType<Create>;
  /** The update body, parsed into the store's input; routes are `PATCH /{id}` plus `updateAliases`. */
  update?: z.ZodType<Update>;
  /** More routes that update: v1 also takes `POST /networkvolumes/{id}/update`. */
  updateAliases?: readonly { method: "POST" | "PUT"; suffix: string }[];
}

/** The stores management routes act on. */
export interface ManagementContext {
  store: ManagementStore;
  serverless: ServerlessStore;
  pods: PodStore;
}

/** One management resource: what each operation does to the store, and its wire per dialect. */
interface ManagedResource<Rec, Create, Update> {
  /** v2's list wrapper key (`registries`, `networkVolumes`). */
  listKey: string;
  list(ctx: ManagementContext): Rec[];
  get(ctx: ManagementContext, id: string): Rec | undefined;
  create(ctx: ManagementContext, input: Create): Promise<Rec> | Rec;
  update?(ctx: ManagementContext, id: string, input: Update): Promise<Rec | undefined> | Rec | undefined;
  delete(ctx: ManagementContext, id: string): Promise<boolean> | boolean;
  wire: Partial<Record<DialectName, ResourceWire<Rec, Create, Update>>>;
}

/** Builds a table entry with its type parameters inferred and checked. */
function resource<R, C, U = never>(definition: ManagedResource<R, C, U>): ManagedResource<R, C, U> {
  return definition;
}

type VolumeCreate = Parameters<ManagementStore["createVolume"]>[0];
type VolumeUpdate = Parameters<ManagementStore["updateVolume"]>[1];

const registryRecord = (r: StoredRegistryAuth) =>
  ({ id: r.id, name: r.name }) satisfies ContainerRegistryAuth;

/** The table: every management resource the emulator serves. */
export const MANAGEMENT_RESOURCES = [
  resource<StoredRegistryAuth, RegistryAuthCreateBody>({
    listKey: "registries",
    list: ({ store }) => store.listRegistryAuths(),
    get: ({ store }, id) => store.getRegistryAuth(id),
    create: ({ store }, input) => store.createRegistryAuth(input),
    // The document (deleteRegistry): "Rejected if any pod currently uses this credential to pull
    // its image. Templates that reference it are not part of that check — they silently lose the
    // reference (`registry` becomes null)". Endpoints are in neither sentence: they keep the id.
    delete: async ({ store, serverless, pods }, id) => {
      if (store.getRegistryAuth(id) !== undefined) refuseIfPulling(pods, id);
      const deleted = await store.deleteRegistryAuth(id);
      if (deleted) await serverless.forgetRegistry(id);
      return deleted;
    },
    wire: {
      v1: {
        path: "/containerregistryauth",
        noun: "container registry auth",
        render: registryRecord,
        create: ContainerRegistryAuthCreateInputSchema,
      },
      v2: {
        path: "/registries",
        noun: "registry",
        render: registryRecord,
        create: ContainerRegistryAuthCreateInputSchema,
      },
    },
  }),
  resource<StoredVolume, VolumeCreate, VolumeUpdate>({
    listKey: "networkVolumes",
    list: ({ store }) => store.listVolumes(),
    get: ({ store }, id) => store.getVolume(id),
    create: ({ store }, input) => store.createVolume(input),
    update: ({ store }, id, input) => store.updateVolume(id, input),
    delete: ({ store, serverless }, id) => {
      if (store.getVolume(id) !== undefined) refuseIfAttached(serverless, id);
      return store.deleteVolume(id);
    },
    wire: {
      v1: {
        path: "/networkvolumes",
        noun: "network volume",
        render: (v) =>
          ({ id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenterId }) satisfies NetworkVolume,
        create: NetworkVolumeCreateInputSchema.superRefine(inCatalog("dataCenterId")).transform(
          (input): VolumeCreate => ({ ...input, dataCenterId: catalogDataCenterId(input.dataCenterId) }),
        ),
        update: NetworkVolumeUpdateInputSchema,
        updateAliases: [{ method: "POST", suffix: "/update" }],
      },
      v2: {
        path: "/network-volumes",
        noun: "network volume",
        render: (v) =>
          ({
            id: v.id,
            name: v.name,
            size: v.size,
            dataCenter: v.dataCenterId,
            type: v.type,
          }) satisfies V2NetworkVolume,
        create: V2NetworkVolumeCreateRequestSchema.superRefine(inCatalog("dataCenter")).transform(
          ({ dataCenter, ...rest }): VolumeCreate => ({
            ...rest,
            dataCenterId: catalogDataCenterId(dataCenter),
          }),
        ),
        update: V2NetworkVolumeUpdateInputSchema,
      },
    },
  }),
  resource<StoredEndpoint, EndpointCreateBody, EndpointUpdateBody>({
    listKey: "endpoints",
    list: ({ serverless }) => serverless.listEndpoints(),
    get: ({ serverless }, id) => serverless.listEndpoints().find((e) => e.record.id === id),
    create: ({ store, serverless }, input) => {
      requireVolumes(store, input.networkVolumes);
      return serverless.createEndpoint(input);
    },
    update: ({ store, serverless }, id, input) => {
      if (serverless.getEndpoint(id) !== undefined) requireVolumes(store, input.networkVolumes);
      return serverless.updateEndpoint(id, input);
    },
    delete: ({ serverless }, id) => serverless.deleteEndpoint(id),
    wire: {
      v2: {
        path: "/serverless",
        noun: "serverless endpoint",
        render: (e, { serverless }) => serverless.render(e),
        create: ServerlessEndpointCreateInputSchema,
        update: ServerlessEndpointUpdateInputSchema,
      },
    },
  }),
  resource<StoredTemplate, TemplateCreateBody, TemplateUpdateBody>({
    listKey: "templates",
    list: ({ serverless }) => serverless.listTemplates(),
    get: ({ serverless }, id) => serverless.getTemplate(id),
    create: ({ serverless }, input) => serverless.createTemplate(input),
    update: ({ serverless }, id, input) => serverless.updateTemplate(id, input),
    delete: ({ serverless }, id) => serverless.deleteTemplate(id),
    wire: {
      v2: {
        path: "/templates",
        noun: "template",
        render: (t) => t,
        create: TemplateCreateInputSchema,
        update: TemplateUpdateInputSchema,
      },
    },
  }),
] as const;

/**
 * A volume still attached to serverless endpoints cannot be deleted (both dialects answer 400,
 * naming each endpoint and what to do), as the service refuses to pull storage from under workers.
 */
function refuseIfAttached(serverless: ServerlessStore, volumeId: string): void {
  const holders = serverless.endpointsUsingVolume(volumeId);
  if (holders.length === 0) return;
  const names = holders.map((e) => `${e.record.id} ("${e.record.name}")`).join(", ");
  throw new HttpError(
    400,
    `network volume ${volumeId} is attached to serverless endpoint${holders.length === 1 ? "" : "s"} ${names}; ` +
      "detach it (remove it from the endpoint's networkVolumes) or delete the endpoint first",
  );
}

/**
 * A registry credential a pod pulls its image with cannot be deleted (both dialects answer 400,
 * the document's "Registry credential is in use by a pod and cannot be deleted", naming each pod
 * and what to do). Stopped pods count: they pull again when they start.
 */
function refuseIfPulling(pods: PodStore, registryId: string): void {
  const holders = pods.usingRegistry(registryId);
  if (holders.length === 0) return;
  const names = holders.map((p) => `${p.id} ("${p.name}")`).join(", ");
  throw new HttpError(
    400,
    `registry credential ${registryId} is in use by pod${holders.length === 1 ? "" : "s"} ${names} and cannot be deleted; ` +
      "give the pod another registry (PATCH /v2/pods/{id} with registry set to another credential or null) or delete the pod first",
  );
}

/** An endpoint may attach only volumes that exist: an unknown id is a 400 naming it. */
function requireVolumes(store: ManagementStore, ids: readonly string[] | undefined): void {
  const missing = (ids ?? []).filter((id) => store.getVolume(id) === undefined);
  if (missing.length === 0) return;
  throw new HttpError(
    400,
    `networkVolumes: no network volume ${missing.join(", ")} in this account` +
      " (attach volumes by the id GET /v2/network-volumes lists)",
  );
}

/**
 * A new volume's data centre must be one the catalog lists (`GET /v2/catalog/datacenters`), in any
 * letter case (the volume is stored with the catalog's spelling): else a validation failure of the
 * named field, so v2 answers 422 and v1 400, as each dialect answers a field its rules refuse; the
 * message lists the ids allowed.
 */
function inCatalog(field: "dataCenter" | "dataCenterId") {
  return (value: { [key in typeof field]?: string }, ctx: z.RefinementCtx) => {
    const id = value[field];
    if (id === undefined || DATA_CENTER_IDS.includes(catalogDataCenterId(id))) return;
    ctx.addIssue({
      code: "custom",
      path: [field],
      message: `unknown data center ${id}; GET /v2/catalog/datacenters lists ${DATA_CENTER_IDS.join(", ")}`,
    });
  };
}

/** Store refusals that are the caller's fault: 400 in both dialects. */
async function storeCall<T>(action: () => Promise<T> | T): Promise<T> {
  try {
    return await action();
  } catch (err) {
    if (
      err instanceof DuplicateNameError ||
      err instanceof AccountFullError ||
      err instanceof ShrinkError ||
      err instanceof VolumeSizeError ||
      err instanceof ServerlessConflictError
    ) {
      throw new HttpError(400, err.message);
    }
    if (err instanceof ServerlessUnsupportedError) throw new HttpError(501, err.message);
    if (err instanceof ServerlessNotFoundError) throw new HttpError(404, err.message);
    if (err instanceof ServerlessValidationError) throw new HttpError(422, err.message);
    throw err;
  }
}

function registerResource<R, C, U>(
  app: FastifyInstance,
  ctx: ManagementContext,
  dialect: DialectAdapter,
  res: ManagedResource<R, C, U>,
  wire: ResourceWire<R, C, U>,
): void {
  const options = { config: { dialect: dialect.name } satisfies RouteMeta };
  const collection = `${dialect.base}${wire.path}`;
  const item = `${collection}/:id`;
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const notFound = (id: string) => new HttpError(404, `${wire.noun} ${id} not found`);

  const render = (record: R) => wire.render(record, ctx);
  app.get(collection, options, async () => dialect.list(res.listKey, res.list(ctx).map(render)));

  app.post(collection, options, async (request, reply) => {
    const input = dialect.validate(wire.create, dialect.body(request));
    const created = await storeCall(() => res.create(ctx, input));
    return reply.code(dialect.createdStatus).send(render(created));
  });

  app.get(item, options, async (request) => {
    const found = res.get(ctx, idOf(request));
    if (found === undefined) throw notFound(idOf(request));
    return render(found);
  });

  const { update: updateSchema } = wire;
  const updateRecord = res.update;
  if (updateSchema && updateRecord) {
    const update = async (request: FastifyRequest) => {
      const id = idOf(request);
      const input = dialect.validate(updateSchema, dialect.body(request));
      const updated = await storeCall(() => updateRecord(ctx, id, input));
      if (updated === undefined) throw notFound(id);
      return render(updated);
    };
    app.patch(item, options, update);
    for (const alias of wire.updateAliases ?? []) {
      app.route({ method: alias.method, url: `${item}${alias.suffix}`, ...options, handler: update });
    }
  }

  app.delete(item, options, async (request, reply: FastifyReply) => {
    const id = idOf(request);
    if (!(await storeCall(() => res.delete(ctx, id)))) throw notFound(id);
    return reply.code(204).send();
  });
}

/** Registers every resource of the table in both dialects. */
export function registerManagementRoutes(app: FastifyInstance, ctx: ManagementContext): void {
  for (const dialect of [v1, v2]) {
    for (const res of MANAGEMENT_RESOURCES as readonly ManagedResource<unknown, unknown, unknown>[]) {
      const wire = res.wire[dialect.name];
      if (wire) registerResource(app, ctx, dialect, res, wire);
    }
  }
}

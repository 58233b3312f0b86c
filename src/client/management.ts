/**
 * Management resources (registry auths, network volumes) over both REST dialects:
 *
 * | | v1 (`.../v1`) | v2 (`.../v2`, the default) |
 * |---|---|---|
 * | registry auths | `/containerregistryauth`, bare array | `/registries`, `{ registries: [...] }` |
 * | network volumes | `/networkvolumes`, bare array, `dataCenterId` | `/network-volumes`, `{ networkVolumes }`, `dataCenter` |
 * | volume size | 0..4000 GB | 10..4096 GB, optional `type` |
 * | errors | `{ message }` | `application/problem+json` `{ title, status, detail, errors? }` |
 *
 * Users see one shape either way (`NetworkVolume` with `dataCenterId`). Management calls are not
 * rate limited client-side; `Retry-After` and `RateLimit` headers drive the retry delay, and an
 * answer whose `RateLimit` shows a used-up window (`r=0;t=N`) delays the next call until it resets.
 */
import { ValidationError } from "./errors";
import { path } from "./path";
import {
  type ContainerRegistryAuth,
  type ContainerRegistryAuthCreateInput,
  ContainerRegistryAuthCreateInputSchema,
  ContainerRegistryAuthListSchema,
  ContainerRegistryAuthSchema,
  type NetworkVolume,
  type NetworkVolumeCreateInput,
  NetworkVolumeCreateInputSchema,
  NetworkVolumeListSchema,
  NetworkVolumeSchema,
  type NetworkVolumeUpdateInput,
  NetworkVolumeUpdateInputSchema,
  type V2NetworkVolume,
  V2NetworkVolumeCreateInputSchema,
  V2NetworkVolumeListSchema,
  V2NetworkVolumeSchema,
  V2NetworkVolumeUpdateInputSchema,
  V2RegistryListSchema,
} from "./schemas";
import type { RequestOptions, Transport } from "./transport";
import { parseInput } from "./validate";

/** The management dialect, chosen by the version segment of `restUrl`. */
export type RestDialect = "v1" | "v2";

/** Where management calls go. */
export interface RestTarget {
  transport: Transport;
  /** Base URL including the version segment, no trailing slash. */
  restUrl: string;
  dialect: RestDialect;
}

/** Maps a v2 volume onto the user-facing shape (`dataCenter` -> `dataCenterId`). */
export function volumeFromV2(volume: V2NetworkVolume): NetworkVolume {
  const { dataCenter, ...rest } = volume;
  return { ...rest, dataCenterId: dataCenter };
}

/** Container registry credentials. Username and password are write-only. */
export class RegistryAuths {
  readonly #t: RestTarget;

  constructor(target: RestTarget) {
    this.#t = target;
  }

  private get collection(): string {
    return this.#t.dialect === "v1" ? "/containerregistryauth" : "/registries";
  }

  /**
   * Stores a credential (`POST`). Not retried after the service may have acted (a 500 or a reset):
   * list again to learn whether it was created.
   */
  async create(
    input: ContainerRegistryAuthCreateInput,
    options?: RequestOptions,
  ): Promise<ContainerRegistryAuth> {
    const body = parseInput(ContainerRegistryAuthCreateInputSchema, input, "registry auth");
    const { data } = await this.#t.transport.request({
      method: "POST",
      baseUrl: this.#t.restUrl,
      path: this.collection,
      body,
      schema: ContainerRegistryAuthSchema,
      options,
    });
    return data;
  }

  /** Every credential of the account: `[{ id, name }]`. */
  async list(options?: RequestOptions): Promise<ContainerRegistryAuth[]> {
    if (this.#t.dialect === "v1") {
      const { data } = await this.#t.transport.request({
        method: "GET",
        baseUrl: this.#t.restUrl,
        path: this.collection,
        schema: ContainerRegistryAuthListSchema,
        options,
      });
      return data;
    }
    const { data } = await this.#t.transport.request({
      method: "GET",
      baseUrl: this.#t.restUrl,
      path: this.collection,
      schema: V2RegistryListSchema,
      options,
    });
    return data.registries;
  }

  /** One credential by id; `NotFoundError` when it does not exist. */
  async get(id: string, options?: RequestOptions): Promise<ContainerRegistryAuth> {
    const { data } = await this.#t.transport.request({
      method: "GET",
      baseUrl: this.#t.restUrl,
      path: this.collection + path`/${id}`,
      schema: ContainerRegistryAuthSchema,
      options,
    });
    return data;
  }

  /** Deletes a credential (204); `NotFoundError` when it does not exist. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.transport.request({
      method: "DELETE",
      baseUrl: this.#t.restUrl,
      path: this.collection + path`/${id}`,
      options,
    });
  }
}

/** Network volumes, in one shape for both dialects. */
export class NetworkVolumes {
  readonly #t: RestTarget;

  constructor(target: RestTarget) {
    this.#t = target;
  }

  private get collection(): string {
    return this.#t.dialect === "v1" ? "/networkvolumes" : "/network-volumes";
  }

  /** Every volume of the account. */
  async list(options?: RequestOptions): Promise<NetworkVolume[]> {
    if (this.#t.dialect === "v1") {
      const { data } = await this.#t.transport.request({
        method: "GET",
        baseUrl: this.#t.restUrl,
        path: this.collection,
        schema: NetworkVolumeListSchema,
        options,
      });
      return data;
    }
    const { data } = await this.#t.transport.request({
      method: "GET",
      baseUrl: this.#t.restUrl,
      path: this.collection,
      schema: V2NetworkVolumeListSchema,
      options,
    });
    return data.networkVolumes.map(volumeFromV2);
  }

  /** One volume by id; `NotFoundError` when it does not exist. */
  async get(id: string, options?: RequestOptions): Promise<NetworkVolume> {
    return this.one("GET", id, undefined, options);
  }

  /**
   * Creates a volume. Size in GB: v1 0..4000, v2 10..4096; `type` (`STANDARD` or
   * `HIGH_PERFORMANCE`) exists only in v2. Not retried after the service may have acted.
   */
  async create(input: NetworkVolumeCreateInput, options?: RequestOptions): Promise<NetworkVolume> {
    if (this.#t.dialect === "v1") {
      const body = parseInput(NetworkVolumeCreateInputSchema, input, "network volume");
      if (body.type !== undefined) {
        throw new ValidationError(
          "type is only supported by the REST v2 interface; use a restUrl ending in /v2 or omit type",
          ["type"],
        );
      }
      const { data } = await this.#t.transport.request({
        method: "POST",
        baseUrl: this.#t.restUrl,
        path: this.collection,
        body,
        schema: NetworkVolumeSchema,
        options,
      });
      return data;
    }
    const { dataCenterId, ...rest } = parseInput(V2NetworkVolumeCreateInputSchema, input, "network volume");
    const { data } = await this.#t.transport.request({
      method: "POST",
      baseUrl: this.#t.restUrl,
      path: this.collection,
      body: { ...rest, dataCenter: dataCenterId },
      schema: V2NetworkVolumeSchema,
      options,
    });
    return volumeFromV2(data);
  }

  /**
   * Renames and/or grows a volume (`PATCH`). Sizes are checked against the dialect's bounds here;
   * that the new size is not smaller than the current one is the service's check (a
   * `BadRequestError`), since the client does not know the current size without a read.
   */
  async update(
    id: string,
    input: NetworkVolumeUpdateInput,
    options?: RequestOptions,
  ): Promise<NetworkVolume> {
    const schema =
      this.#t.dialect === "v1" ? NetworkVolumeUpdateInputSchema : V2NetworkVolumeUpdateInputSchema;
    const body = parseInput(schema, input, "network volume update");
    return this.one("PATCH", id, body, options);
  }

  /** Deletes a volume (204); `NotFoundError` when it does not exist. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.transport.request({
      method: "DELETE",
      baseUrl: this.#t.restUrl,
      path: this.collection + path`/${id}`,
      options,
    });
  }

  private async one(
    method: "GET" | "PATCH",
    id: string,
    body: unknown,
    options: RequestOptions | undefined,
  ): Promise<NetworkVolume> {
    const p = this.collection + path`/${id}`;
    if (this.#t.dialect === "v1") {
      const { data } = await this.#t.transport.request({
        method,
        baseUrl: this.#t.restUrl,
        path: p,
        body,
        schema: NetworkVolumeSchema,
        options,
      });
      return data;
    }
    const { data } = await this.#t.transport.request({
      method,
      baseUrl: this.#t.restUrl,
      path: p,
      body,
      schema: V2NetworkVolumeSchema,
      options,
    });
    return volumeFromV2(data);
  }
}

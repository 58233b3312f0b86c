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

import type { z } from "zod";
import { ValidationError } from "./errors";
import { path } from "./path";
import type { Secret } from "./redact";
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

/** What every management resource shares: the target and one way to send a call. */
export abstract class ManagementResource {
  protected readonly target: RestTarget;

  constructor(target: RestTarget) {
    this.target = target;
  }

  protected get v1(): boolean {
    return this.target.dialect === "v1";
  }

  /** Runs before every call; a resource that needs a dialect throws here, before any request. */
  protected beforeSend(): void {}

  /**
   * Sends one call to `{restUrl}{path}`; resolves to the parsed answer (nothing without a schema).
   * `bills`: the call creates something that bills, and is resent only when never sent.
   */
  protected async send<S extends z.ZodType>(
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    schema: S | undefined,
    options: RequestOptions | undefined,
    body?: unknown,
    secrets?: readonly Secret[],
    bills = false,
  ): Promise<z.output<S>> {
    this.beforeSend();
    const { data } = await this.target.transport.request({
      method,
      baseUrl: this.target.restUrl,
      path,
      body,
      schema,
      options,
      secrets,
      ...(bills ? { bills } : {}),
    });
    return data as z.output<S>;
  }
}

/** Container registry credentials. Username and password are write-only. */
export class RegistryAuths extends ManagementResource {
  private get collection(): string {
    return this.v1 ? "/containerregistryauth" : "/registries";
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
    const login = { username: body.username, password: body.password };
    return this.send("POST", this.collection, ContainerRegistryAuthSchema, options, body, [login]);
  }

  /** Every credential of the account: `[{ id, name }]`. */
  async list(options?: RequestOptions): Promise<ContainerRegistryAuth[]> {
    if (this.v1) return this.send("GET", this.collection, ContainerRegistryAuthListSchema, options);
    return (await this.send("GET", this.collection, V2RegistryListSchema, options)).registries;
  }

  /** One credential by id; `NotFoundError` when it does not exist. */
  async get(id: string, options?: RequestOptions): Promise<ContainerRegistryAuth> {
    return this.send("GET", this.collection + path`/${id}`, ContainerRegistryAuthSchema, options);
  }

  /** Deletes a credential (204); `NotFoundError` when it does not exist. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", this.collection + path`/${id}`, undefined, options);
  }
}

/** Network volumes, in one shape for both dialects. */
export class NetworkVolumes extends ManagementResource {
  private get collection(): string {
    return this.v1 ? "/networkvolumes" : "/network-volumes";
  }

  /** Every volume of the account. */
  async list(options?: RequestOptions): Promise<NetworkVolume[]> {
    if (this.v1) return this.send("GET", this.collection, NetworkVolumeListSchema, options);
    const { networkVolumes } = await this.send("GET", this.collection, V2NetworkVolumeListSchema, options);
    return networkVolumes.map(volumeFromV2);
  }

  /** One volume by id; `NotFoundError` when it does not exist. */
  async get(id: string, options?: RequestOptions): Promise<NetworkVolume> {
    return this.one("GET", id, undefined, options);
  }

  /**
   * Creates a volume. Size in GB: v1 0..4000, v2 10..4096; `type` (`STANDARD` or
   * `HIGH_PERFORMANCE`) exists only in v2. A volume bills: resent only when the request was never
   * sent; after any answer (429 and 503 included) list to learn whether it was created.
   */
  async create(input: NetworkVolumeCreateInput, options?: RequestOptions): Promise<NetworkVolume> {
    if (this.v1) {
      const body = parseInput(NetworkVolumeCreateInputSchema, input, "network volume");
      if (body.type !== undefined) {
        throw new ValidationError(
          "type is only supported by the REST v2 interface; use a restUrl ending in /v2 or omit type",
          ["type"],
        );
      }
      return this.send("POST", this.collection, NetworkVolumeSchema, options, body, undefined, true);
    }
    const { dataCenterId, ...rest } = parseInput(V2NetworkVolumeCreateInputSchema, input, "network volume");
    const body = { ...rest, dataCenter: dataCenterId };
    return volumeFromV2(
      await this.send("POST", this.collection, V2NetworkVolumeSchema, options, body, undefined, true),
    );
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
    const schema = this.v1 ? NetworkVolumeUpdateInputSchema : V2NetworkVolumeUpdateInputSchema;
    const body = parseInput(schema, input, "network volume update");
    return this.one("PATCH", id, body, options);
  }

  /** Deletes a volume (204); `NotFoundError` when it does not exist. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", this.collection + path`/${id}`, undefined, options);
  }

  /** GET or PATCH of one volume, mapped to the one user-facing shape. */
  private async one(
    method: "GET" | "PATCH",
    id: string,
    body: unknown,
    options: RequestOptions | undefined,
  ): Promise<NetworkVolume> {
    const p = this.collection + path`/${id}`;
    if (this.v1) return this.send(method, p, NetworkVolumeSchema, options, body);
    return volumeFromV2(await this.send(method, p, V2NetworkVolumeSchema, options, body));
  }
}

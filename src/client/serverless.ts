/**
 * `client.serverless`: serverless endpoints over REST v2 (`/v2/serverless`), their releases,
 * workers and worker logs. A v1 `restUrl` gets a `ValidationError` before any network call.
 *
 * ```ts
 * const { endpointVersion, rollout } = await client.serverless.releases("ep1");
 * const { workers } = await client.serverless.workers("ep1");
 * const stale = workers.filter((w) => w.isStale);
 * for await (const { source, line, ts } of client.serverless.workerLogs("ep1", workers[0].id, { tail: 50 })) {
 *   console.log(ts, source, line);
 * }
 * ```
 */

import {
  type ServerlessEndpoint,
  type ServerlessEndpointCreateInput,
  ServerlessEndpointCreateInputSchema,
  ServerlessEndpointListSchema,
  ServerlessEndpointSchema,
  type ServerlessEndpointUpdateInput,
  ServerlessEndpointUpdateInputSchema,
  type ServerlessReleaseList,
  ServerlessReleaseListSchema,
  type ServerlessWorkerList,
  ServerlessWorkerListSchema,
} from "../wire/serverless";
import type { WorkerLogEvent } from "../wire/workerLogs";
import type { RestTarget } from "./management";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { openLogStream, type SseOpener, type WorkerLogsOptions } from "./workerLogs";

/** An endpoint as answered. */
const Answer = ServerlessEndpointSchema;

/** Serverless endpoints of the account (REST v2 only). */
export class ServerlessEndpoints extends RestV2Resource {
  protected readonly label = "client.serverless";
  readonly #sse: SseOpener;

  constructor(target: RestTarget, sse: SseOpener) {
    super(target);
    this.#sse = sse;
  }

  /** Every endpoint of the account. */
  async list(options?: RequestOptions): Promise<ServerlessEndpoint[]> {
    return (await this.send("GET", "/serverless", ServerlessEndpointListSchema, options)).endpoints;
  }

  /** One endpoint by id; `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<ServerlessEndpoint> {
    return this.send("GET", path`/serverless/${id}`, ServerlessEndpointSchema, options);
  }

  /**
   * Creates an endpoint (`POST`, 201). The body is checked against the v2 document first
   * (`ValidationError` naming the field): `name`, `type` and `scaling` are required, exactly one
   * of `gpu` or `cpu`, and `image` unless `templateId`. An endpoint bills (its workers): resent
   * only when the request was never sent; after any answer (429 and 503 included) list to learn
   * whether it was created.
   */
  async create(input: ServerlessEndpointCreateInput, options?: RequestOptions): Promise<ServerlessEndpoint> {
    const what = "serverless endpoint";
    return this.write(
      "POST",
      "/serverless",
      ServerlessEndpointCreateInputSchema,
      input,
      what,
      Answer,
      options,
      true,
    );
  }

  /**
   * Changes the fields given (`PATCH`); answers the whole endpoint. Container changes (`image`,
   * `env`, `templateId`, ...) make a new release that rolls out as workers are replaced: follow
   * it with `releases(id)` and `workers(id)`.
   */
  async update(
    id: string,
    patch: ServerlessEndpointUpdateInput,
    options?: RequestOptions,
  ): Promise<ServerlessEndpoint> {
    const [p, what] = [path`/serverless/${id}`, "serverless endpoint update"];
    return this.write("PATCH", p, ServerlessEndpointUpdateInputSchema, patch, what, Answer, options);
  }

  /** Deletes an endpoint (204): its workers stop and its queued jobs are cancelled. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", path`/serverless/${id}`, undefined, options);
  }

  /**
   * Release history, newest first, with the endpoint's current `endpointVersion` and the
   * `rollout` summary (`inProgress`, `workersOnLatest`, `workersTotal`, `percentOnLatest`).
   */
  async releases(id: string, options?: RequestOptions): Promise<ServerlessReleaseList> {
    return this.send("GET", path`/serverless/${id}/releases`, ServerlessReleaseListSchema, options);
  }

  /**
   * Active workers, each with its `version` and `isStale`, the counts by status (`summary`) and
   * the endpoint's current `endpointVersion`.
   */
  async workers(id: string, options?: RequestOptions): Promise<ServerlessWorkerList> {
    return this.send("GET", path`/serverless/${id}/workers`, ServerlessWorkerListSchema, options);
  }

  /**
   * A worker's log lines as they come (Server-Sent Events): an async iterator of
   * `{ source, line, ts }`. First the last `tail` lines (or those from `since`), then live ones.
   *
   * A dropped connection is resumed with `Last-Event-ID` (no line lost or repeated), at most
   * `maxReconnects` times in a row without progress; a clean end of the stream from the service
   * ends the iteration; `signal` stops it with `APIUserAbortError`; an error answer raises its
   * typed `APIError`. Breaking out of the loop closes the connection. The REST v2 check and the
   * options are validated here, when called, before any request.
   */
  workerLogs(
    id: string,
    workerId: string,
    options: WorkerLogsOptions = {},
  ): AsyncGenerator<WorkerLogEvent, void, undefined> {
    this.requireV2();
    return openLogStream(
      this.target,
      this.#sse,
      path`/serverless/${id}/workers/${workerId}/logs`,
      options,
      "workerLogs options",
    );
  }
}

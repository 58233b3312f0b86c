/**
 * `client.pods` and `client.account`: pods over REST v2 (`/v2/pods`), their actions and logs, and
 * the account's SSH keys (`/v2/account/ssh-keys`). A v1 `restUrl` gets a `ValidationError`
 * before any network call.
 *
 * ```ts
 * const pod = await client.pods.create({ name: "dev", image: "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
 *   gpu: { id: "NVIDIA GeForce RTX 4090" }, ports: ["22/tcp"], startSsh: true });
 * await client.pods.action(pod.id, "stop");
 * for await (const { source, line } of client.pods.logs(pod.id, { tail: 50 })) console.log(source, line);
 * ```
 */

import {
  type Pod,
  type PodAction,
  PodActionInputSchema,
  type PodCreateInput,
  PodCreateInputSchema,
  PodListSchema,
  type PodLogEvent,
  PodSchema,
  type PodUpdateInput,
  PodUpdateInputSchema,
  SshKeysInputSchema,
  SshKeysSchema,
} from "../wire/pods";
import type { RestTarget } from "./management";
import { path } from "./path";
import { RestV2Resource } from "./restV2";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";
import { openLogStream, type SseOpener, type WorkerLogsOptions } from "./workerLogs";

/** Pods of the account (REST v2 only). */
export class Pods extends RestV2Resource {
  protected readonly label = "client.pods";
  readonly #sse: SseOpener;

  constructor(target: RestTarget, sse: SseOpener) {
    super(target);
    this.#sse = sse;
  }

  /** Every pod of the account (cluster members aside). */
  async list(options?: RequestOptions): Promise<Pod[]> {
    return (await this.send("GET", "/pods", PodListSchema, options)).pods;
  }

  /** One pod by id; `NotFoundError` when there is none. */
  async get(id: string, options?: RequestOptions): Promise<Pod> {
    return this.send("GET", path`/pods/${id}`, PodSchema, options);
  }

  /**
   * Creates a pod (`POST`, 201; it starts in `PROVISIONING`). The body is checked against the v2
   * document first (`ValidationError` naming the field): `name`, exactly one of `gpu` or `cpu`,
   * `image` unless `templateId`. The service places the one GPU type asked for and never falls
   * back: no capacity is a `BadRequestError` (400, no machine-readable code), a short balance a
   * 402. A pod bills: resent only when the request was never sent; after any answer (429 and 503
   * included: the service has been seen to create the pod and still answer so) list to learn
   * whether it was created.
   */
  async create(input: PodCreateInput, options?: RequestOptions): Promise<Pod> {
    return this.write("POST", "/pods", PodCreateInputSchema, input, "pod", PodSchema, options, true);
  }

  /** Changes the fields given (`PATCH`); `env`, when given, replaces the pod's env whole. */
  async update(id: string, patch: PodUpdateInput, options?: RequestOptions): Promise<Pod> {
    return this.write(
      "PATCH",
      path`/pods/${id}`,
      PodUpdateInputSchema,
      patch,
      "pod update",
      PodSchema,
      options,
    );
  }

  /** Terminates and deletes a pod (204). */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.send("DELETE", path`/pods/${id}`, undefined, options);
  }

  /**
   * A state transition: `start` (EXITED or ERROR), `stop`, `restart` (RUNNING) or `terminate`.
   * Answers the pod after the transition, or undefined for `terminate` (204). An action the
   * pod's status does not allow (its `actions`) is a `ConflictError` (409).
   */
  async action(id: string, action: PodAction, options?: RequestOptions): Promise<Pod | undefined> {
    this.requireV2();
    const body = parseInput(PodActionInputSchema, { action }, "pod action");
    const p = path`/pods/${id}/action`;
    if (body.action === "terminate") {
      await this.send("POST", p, undefined, options, body);
      return undefined;
    }
    return this.send("POST", p, PodSchema, options, body);
  }

  /**
   * The pod's log lines as they come (Server-Sent Events): an async iterator of
   * `{ source, line, ts }`, the same stream reader as `client.serverless.workerLogs` (resumes with
   * `Last-Event-ID`, `signal` stops it, breaking out closes the connection).
   */
  logs(id: string, options: WorkerLogsOptions = {}): AsyncGenerator<PodLogEvent, void, undefined> {
    this.requireV2();
    return openLogStream(this.target, this.#sse, path`/pods/${id}/logs`, options, "pods.logs options");
  }
}

/** The account's settings (REST v2 only): its SSH public keys. */
export class Account extends RestV2Resource {
  protected readonly label = "client.account";

  /** The registered SSH public keys, one authorized_keys line each. */
  async sshKeys(options?: RequestOptions): Promise<string[]> {
    return (await this.send("GET", "/account/ssh-keys", SshKeysSchema, options)).keys;
  }

  /**
   * Replaces the whole set (`PUT`): keys left out are removed, `[]` removes all. Each key is
   * checked first (`<type> <base64-key> [comment]`). Answers the set as stored.
   */
  async setSshKeys(keys: string[], options?: RequestOptions): Promise<string[]> {
    this.requireV2();
    const body = parseInput(SshKeysInputSchema, { keys }, "ssh keys");
    return (await this.send("PUT", "/account/ssh-keys", SshKeysSchema, options, body)).keys;
  }
}

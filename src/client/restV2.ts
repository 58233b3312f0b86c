/**
 * What the REST-v2-only resources (`client.serverless`, `client.templates`, `client.catalog`) share: the refusal
 * to run against a v1 `restUrl` (before any network call) and one way to send a call through
 * the client's transport (retries, typed errors, loose response parsing).
 */

import type { z } from "zod";
import { secretEnvValues } from "../wire/containerConfig";
import { ValidationError } from "./errors";
import { ManagementResource } from "./management";
import type { RequestOptions } from "./transport";
import { parseInput } from "./validate";

/** Base of the resources that exist only in the REST v2 interface. */
export abstract class RestV2Resource extends ManagementResource {
  /** How the user reaches this resource, for messages: `client.serverless`. */
  protected abstract readonly label: string;

  /** Throws `ValidationError` (path `["restUrl"]`) when the client speaks REST v1. */
  protected requireV2(): void {
    if (this.target.dialect === "v2") return;
    throw new ValidationError(
      `${this.label} needs the REST v2 interface, but restUrl ${this.target.restUrl} is REST v1 ` +
        "(retired 2026-11-15, and it never had serverless endpoints, templates or the catalog). Use a restUrl " +
        "ending in /v2, e.g. https://api.runpod.io/v2 (option restUrl or env RUNPOD_REST_API_URL)",
      ["restUrl"],
    );
  }

  /**
   * A create (`POST`) or update (`PATCH`): checks the v2 dialect, then the body strictly
   * (`ValidationError` naming the field, `what` saying whose body), then sends it with its env
   * values redacted from any error. `bills`: a create of something that bills, resent only when
   * never sent.
   */
  protected async write<S extends z.ZodType>(
    method: "POST" | "PATCH",
    p: string,
    bodySchema: z.ZodType<{ env?: Record<string, string> | undefined }>,
    input: unknown,
    what: string,
    schema: S,
    options: RequestOptions | undefined,
    bills = false,
  ): Promise<z.output<S>> {
    this.requireV2();
    const body = parseInput(bodySchema, input, what);
    return this.send(method, p, schema, options, body, envSecrets(body), bills);
  }

  /** Nothing is sent to a v1 `restUrl`: the v2 check runs before every call. */
  protected override beforeSend(): void {
    this.requireV2();
  }
}

/** Values of an `env` map, handed to the transport so an error body echoing one is redacted. */
export function envSecrets(body: { env?: Record<string, string> | undefined }): string[] {
  return secretEnvValues(body.env);
}

/**
 * How `create` makes a credential without ever duplicating one or taking over one it did not make
 * (DESIGN.md, "Registry-auth create must never duplicate or steal"): list before the POST; after a
 * failure the service may have acted on, list again, and only a name that was free before and
 * exists now is taken as this create's. Every outcome that needs the user's hand says what to do.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ContainerRegistryAuth as RegistryAuthRecord, RunpodClient } from "../../client";
import {
  APITimeoutError,
  APIUserAbortError,
  BadRequestError,
  ConflictError,
  mayHaveActed,
  RunpodError,
} from "../../client";
import { describeError } from "../common/wording";
import type { RegistryAuthInputs, RegistryAuthOutputs } from "./args";

/**
 * The body of `create` with the client given (tests pass a scripted one): list, POST, and after
 * a failure list again to tell what the service holds now.
 */
export async function createWithClient(
  client: Pick<RunpodClient, "registryAuths">,
  inputs: RegistryAuthInputs,
): Promise<pulumi.dynamic.CreateResult> {
  const before = await client.registryAuths.list();
  const taken = before.filter((r) => r.name === inputs.name);
  if (taken.length > 0) {
    if (inputs.adoptExisting === true && taken.length === 1) {
      return { id: taken[0].id, outs: { ...inputs, name: taken[0].name } };
    }
    throw nameTakenError(inputs.name, taken);
  }
  let created: RegistryAuthRecord;
  try {
    created = await client.registryAuths.create({
      name: inputs.name,
      username: inputs.username,
      password: inputs.password,
    });
  } catch (error) {
    if (error instanceof ConflictError || error instanceof BadRequestError) {
      // Both dialects answer a duplicate name with 400 (v2 may say 409): a name taken between
      // the list and the POST. The service refused this POST, so whatever exists is not ours.
      const after = await client.registryAuths.list().catch(() => undefined);
      const now = after?.filter((r) => r.name === inputs.name) ?? [];
      if (error instanceof ConflictError || now.length > 0) throw nameTakenError(inputs.name, now, error);
      throw error;
    }
    if (!mayHaveActed(error)) throw error;
    let after: RegistryAuthRecord[];
    try {
      after = await client.registryAuths.list();
    } catch (listError) {
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}) and the ` +
          `service may have stored it anyway; listing credentials to check also failed ` +
          `(${describeError(listError)}). If a credential named "${inputs.name}" exists now, this ` +
          `deploy most likely made it: set adoptExisting: true and run pulumi up again, or delete it.`,
        { cause: error },
      );
    }
    const ours = after.filter((r) => r.name === inputs.name);
    if (ours.length > 1) {
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}) and the ` +
          `service may have stored it anyway; ${ours.length} credentials named "${inputs.name}" exist now ` +
          `(id ${ours.map((r) => r.id).join(", ")}): another client created one with the same name at ` +
          `the same time. This deploy cannot tell which one is its own and recorded none. To resolve: ` +
          `delete the ones you do not want in the RunPod console (or all of them), then run pulumi up ` +
          `again, with adoptExisting: true if you kept one for this resource.`,
        { cause: error },
      );
    }
    if (ours.length === 0) {
      if (stillInFlight(error)) {
        throw new RunpodError(
          `Creating container registry auth "${inputs.name}" got no answer in time ` +
            `(${describeError(error)}). The request may still complete on the service: none named ` +
            `"${inputs.name}" exists yet, but one may appear in the next minutes, and it would be this ` +
            `deploy's. To resolve: check the credentials in the RunPod console. If "${inputs.name}" has ` +
            `appeared, the next pulumi up refuses it as not created by this stack, so set ` +
            `adoptExisting: true (or delete it) and run pulumi up again; if it has not, run pulumi up again.`,
          { cause: error },
        );
      }
      throw new RunpodError(
        `Creating container registry auth "${inputs.name}" failed (${describeError(error)}); ` +
          `the service did not store it, so nothing was created. Run pulumi up again.`,
        { cause: error },
      );
    }
    const found = ours[0];
    return {
      id: found.id,
      outs: {
        ...inputs,
        name: found.name || inputs.name,
        adoptedAfterAmbiguousCreate: true,
        adoptionNote:
          `Creating container registry auth "${inputs.name}" failed in a way the service may have acted on ` +
          `(${describeError(error)}); the name was free just before, and right after the failure one credential ` +
          `named "${inputs.name}" (id ${found.id}) exists, so this stack recorded it as its own. The service ` +
          "has no idempotency key and lists only id and name, so it may instead be one another client " +
          "created under the same name in that moment. If another stack or person uses this name, check " +
          `that credential (id ${found.id}) before destroying this resource, or rename this resource.`,
      } satisfies RegistryAuthOutputs,
    };
  }
  return { id: created.id, outs: { ...inputs, name: created.name || inputs.name } };
}

/** True when a failed request may still be processed by the service (it timed out or was cut on the wire). */
function stillInFlight(error: unknown): boolean {
  return error instanceof APITimeoutError || (error instanceof APIUserAbortError && error.sent);
}

/**
 * The error for a name taken by a credential this create did not make: which one, how it can have
 * got there, and how to resolve it. Besides another stack or person, the engine itself leaves one
 * behind when the resource has `retainOnDelete: true` and is replaced keeping its name: the delete
 * half of that delete-before-replace skips the provider (`DeleteStep.Apply`), so the old credential
 * is still there when the new one is created.
 */
function nameTakenError(name: string, taken: RegistryAuthRecord[], cause?: unknown): RunpodError {
  const ids = taken.map((r) => r.id);
  const which = ids.length > 0 ? ` (id ${ids.join(", ")})` : "";
  const deleteHint =
    ids.length > 0
      ? `delete the existing one (id ${ids[0]}) in the RunPod console or with the API (DELETE .../containerregistryauth/${ids[0]}) and run pulumi up again`
      : "delete the existing one in the RunPod console or with the API and run pulumi up again";
  return new RunpodError(
    `A container registry auth named "${name}" already exists${which} and this create did not make it; ` +
      "names are unique, so a second one cannot be created. Either another stack or person made it, or " +
      "this resource has retainOnDelete: true and is being replaced under the same name (a change of " +
      "username or password): Pulumi then keeps the old credential instead of deleting it first. " +
      `To resolve: give this resource another name; or ${deleteHint}; or, only if the existing one ` +
      "holds this resource's username and password, set adoptExisting: true to take it under this " +
      "stack (destroy will then delete it; the stored username and password cannot be verified).",
    cause === undefined ? undefined : { cause },
  );
}

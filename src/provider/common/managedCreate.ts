/**
 * Creating, reading and deleting a managed object (an endpoint, a template, a network volume) on a
 * service whose creates are not idempotent: no idempotency key, and a lost answer leaves the
 * caller not knowing whether the object exists. Endpoints and volumes cost money, so a create
 * never leaves a duplicate behind:
 *
 * 1. list the objects before the POST (their ids);
 * 2. POST once; the client never retries a POST the service may have acted on;
 * 3. after a failure the service may have acted on (`mayHaveActed`: a 500, a reset or timeout
 *    after sending, a malformed answer), list again: exactly one object with the name given that
 *    was not there before is this create's, and is recorded; none means nothing was created (or,
 *    after a timeout, that it may still appear); several means another client created one at the
 *    same moment, and the error names them all rather than guess.
 *
 * Names need not be unique on the service: objects that already existed under the same name are
 * left alone (they are not this create's), unlike `ContainerRegistryAuth`, whose names are unique.
 */
import { APITimeoutError, APIUserAbortError, mayHaveActed, NotFoundError, RunpodError } from "../../client";
import { describeError } from "./wording";

/** What {@link createReconciled} needs: the object's kind and name, and the two calls. */
export interface ReconciledCreateOptions<T extends { id: string; name?: string | null }> {
  /** The kind, for messages: `serverless endpoint`, `template`, `network volume`. */
  kind: string;
  /** The name the POST gives the object; the list after a failure is searched for it. */
  name: string;
  /** Lists every object of the kind (the account's). */
  list: () => Promise<T[]>;
  /** The POST. Called once. */
  create: () => Promise<T>;
}

/** The object created, and when it was found by listing after a failed POST, what happened. */
export interface ReconciledCreate<T> {
  record: T;
  /** Set when the POST failed ambiguously and the object was found by name right after. */
  recoveredAfter?: string;
}

/**
 * POSTs once and, after a failure the service may have acted on, lists to learn whether the
 * object was made (see the module comment). Errors say what exists and what to do.
 */
export async function createReconciled<T extends { id: string; name?: string | null }>(
  options: ReconciledCreateOptions<T>,
): Promise<ReconciledCreate<T>> {
  const { kind, name } = options;
  const before = new Set((await options.list()).map((o) => o.id));
  try {
    return { record: await options.create() };
  } catch (error) {
    if (!mayHaveActed(error)) throw error;
    const what = `Creating ${kind} "${name}" failed (${describeError(error)})`;
    let after: T[];
    try {
      after = await options.list();
    } catch (listError) {
      throw new RunpodError(
        `${what} and the service may have created it anyway; listing to check also failed ` +
          `(${describeError(listError)}). Nothing was recorded. Before running pulumi up again, look in ` +
          `the RunPod console for a ${kind} named "${name}" made just now and delete it, or the next ` +
          "up creates a second one.",
        { cause: error },
      );
    }
    const fresh = after.filter((o) => !before.has(o.id) && o.name === name);
    if (fresh.length === 1) {
      return {
        record: fresh[0],
        recoveredAfter: `${what}; the service had created it anyway (id ${fresh[0].id}, the one ${kind} named "${name}" that appeared), so it was recorded.`,
      };
    }
    if (fresh.length > 1) {
      throw new RunpodError(
        `${what} and ${fresh.length} new ${kind}s named "${name}" exist now (id ${fresh.map((o) => o.id).join(", ")}): ` +
          `another client created one at the same moment, and this deploy cannot tell which is its own, so it ` +
          "recorded none. Delete the ones you do not want in the RunPod console, then run pulumi up again.",
        { cause: error },
      );
    }
    if (error instanceof APITimeoutError || (error instanceof APIUserAbortError && error.sent)) {
      throw new RunpodError(
        `${what}: no answer in time, and no ${kind} named "${name}" exists yet, but the request may still ` +
          `complete on the service. Before running pulumi up again, wait a minute and look in the RunPod ` +
          `console: if a ${kind} named "${name}" has appeared, delete it, or the next up creates a second one.`,
        { cause: error },
      );
    }
    throw new RunpodError(
      `${what}; the service did not create it, so nothing was created. Run pulumi up again.`,
      {
        cause: error,
      },
    );
  }
}

/** GET that answers `undefined` when the object is gone (a 404): refresh then drops it from state. */
export async function readOrGone<T>(get: () => Promise<T>): Promise<T | undefined> {
  try {
    return await get();
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** DELETE that counts an object already gone (a 404) as deleted. True when this call deleted it. */
export async function deleteIfPresent(remove: () => Promise<unknown>): Promise<boolean> {
  try {
    await remove();
    return true;
  } catch (error) {
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

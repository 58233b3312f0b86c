/**
 * Creating, reading and deleting a managed object (an endpoint, a template, a network volume, a
 * pod) on a service whose creates are not idempotent: no idempotency key, and a lost answer leaves
 * the caller not knowing whether the object exists. Endpoints and volumes cost money, so a create
 * never leaves a duplicate behind, and never takes another client's object for its own:
 *
 * 1. list the objects before the POST (their ids);
 * 2. POST once; the client never retries a POST the service may have acted on;
 * 3. after a failure the service may have acted on (`mayHaveActed`: a 500, a reset or timeout
 *    after sending, a malformed answer), list again. A candidate is an object with the name given
 *    that was not there before; it is this create's only if it also holds every field the create
 *    set, compared as the service normalises them (`differences`, supplied by each resource):
 *    another stack creating an object of the same name at the same moment must not have it
 *    recorded, then PATCHed and deleted, by this one. Exactly one matching candidate is recorded;
 *    several mean this deploy cannot tell which is its own, and none is recorded;
 * 4. with no matching candidate yet, the list may lag behind the create: list again, backing off,
 *    for at most `relistWindowMs` ({@link RELIST_WINDOW_MS} unless the resource passes another
 *    bound). If the object still has not appeared, the error never says that nothing was created
 *    (the service cannot tell us): it says it may exist and names what to look for, so that
 *    following its advice never makes a second object.
 *
 * An object that bills (a pod, a network volume, an endpoint: `bills`) is never POSTed twice blind.
 * The service has been seen to create it and still answer 429 or 503, the answers that say "did
 * nothing", so the client does not resend such a create, and neither does this one without
 * looking: after a 429 or 503 it waits (`Retry-After`, capped, else 1, 2, 4 s), lists, and
 * records the object if a new one holding what was sent is there; a list may lag behind the
 * create, so only when {@link SETTLE_LISTS} lists 0.5 s and 1 s apart show none does it POST again,
 * at most `tries` POSTs in all. A list that fails stops it: no second POST, and an error saying the
 * object may exist. The cost: one list before the first POST and up to three before each POST
 * that follows a 429 or 503 (a create that tries several bodies, a pod's GPU types, shares one
 * {@link CreateLedger} so the first list serves all of them).
 *
 * Names need not be unique on the service: objects that already existed under the same name are
 * left alone (they are not this create's), unlike `ContainerRegistryAuth`, whose names are unique.
 */
import {
  type APIError,
  mayHaveActed,
  NotFoundError,
  RunpodError,
  saidNotActed,
  serverDelayMs,
} from "../../client";
import { CANCELLED } from "../clock";
import { boundEntry, describeError } from "./wording";

/**
 * How long a create keeps re-listing after an ambiguous failure before saying the object may
 * exist: 10 s, a fixed short bound (a list that lags behind a create catches up in about a second
 * on the service; the bound keeps a failed `up` from hanging). A resource may pass its own bound.
 */
export const RELIST_WINDOW_MS = 10_000;
/** The first pause between re-lists; each next pause doubles, within {@link RELIST_WINDOW_MS}. */
const RELIST_FIRST_PAUSE_MS = 500;
/**
 * The pause, in ms, before {@link settle}'s first list after a 429 or 503 that named no wait of its
 * own (`Retry-After`): 1 s, doubling with each earlier settle of the same create, to 4 s at most.
 */
export const SETTLE_FIRST_PAUSE_MS = 1000;
/** Candidates named in a message at most (a list from the service may be long). */
const NAMED_AT_MOST = 5;
/**
 * Lists {@link settle} reads after a 429 or 503 before taking it as "made nothing": 3, the first
 * after the answer's wait, then 0.5 s and 1 s apart (a list may lag behind a create by about a
 * second; one list that missed the object would send a second POST and make a second one).
 */
export const SETTLE_LISTS = 3;
/** POSTs of an object that bills, in all, while the service answers 429 or 503 (see the module comment). */
export const BILLED_CREATE_TRIES = 3;

/**
 * What one create of an object that bills has learnt so far, shared by every POST it sends (a
 * pod's GPU types): the ids listed before the first POST, and a 429 or 503 not yet settled by a
 * list.
 */
export interface CreateLedger {
  /** Ids of the objects of the kind listed before the first POST. */
  readonly before: ReadonlySet<string>;
  /** The last POST's 429 or 503 answer, until a list shows the POST made nothing. */
  unsettled?: APIError;
  /** 429 or 503 answers settled so far (each followed by a list that showed nothing made). */
  settled: number;
}

/** Lists once and opens a {@link CreateLedger}: the ids there before the first POST. */
export async function openLedger<T extends { id: string }>(list: () => Promise<T[]>): Promise<CreateLedger> {
  return { before: new Set((await list()).map((o) => o.id)), settled: 0 };
}

/** What {@link createReconciled} needs: the object's kind and name, the two calls and the match. */
export interface ReconciledCreateOptions<T extends { id: string; name?: string | null }> {
  /** The kind, for messages: `serverless endpoint`, `template`, `network volume`. */
  kind: string;
  /** The name the POST gives the object; the list after a failure is searched for it. */
  name: string;
  /** Lists every object of the kind (the account's). */
  list: () => Promise<T[]>;
  /** The POST. Called once, or with `bills` up to `tries` times, each after a list showed nothing made. */
  create: () => Promise<T>;
  /**
   * The fields the create set that `listed` (a new object of the same name) does not hold,
   * compared as the service normalises them; empty when it holds everything sent. Only field
   * names: values may be secrets (`env`).
   */
  differences: (listed: T) => string[];
  /**
   * The object bills: a 429 or 503 answer is not taken as "did nothing" (see the module comment).
   * @default false
   */
  bills?: boolean;
  /** POSTs in all while the service answers 429 or 503 (`bills` only). @default {@link BILLED_CREATE_TRIES} */
  tries?: number;
  /**
   * The create's ledger when it POSTs more than one body (a pod's GPU types): opened once with
   * {@link openLedger} before the first. @default one opened here (a list before the POST)
   */
  ledger?: CreateLedger;
  /** How long to keep re-listing for a lagging list, in ms. @default {@link RELIST_WINDOW_MS} */
  relistWindowMs?: number;
  /** Waits between re-lists (tests pass one that advances a fake clock). @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** The clock the re-list window is measured on, in ms. @default Date.now */
  now?: () => number;
  /**
   * The deployment's cancellation (`RunpodSettings.signal`): once it aborts no POST is sent, a
   * first nor a resend after a 429 or 503 (the lists that settle an earlier POST still run).
   */
  signal?: AbortSignal;
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
  const ledger = options.ledger ?? (await openLedger(options.list));
  const tries = options.bills ? (options.tries ?? BILLED_CREATE_TRIES) : 1;
  let refused: APIError | undefined;
  for (let attempt = 1; ; attempt++) {
    const found = await settle(options, ledger);
    if (found) return found;
    if (options.signal?.aborted === true) throw notSentCancelled(options.kind, options.name, refused);
    try {
      return { record: await options.create() };
    } catch (error) {
      if (options.bills && saidNotActed(error)) {
        ledger.unsettled = refused = error as APIError;
        if (attempt < tries) continue;
        throw error;
      }
      if (!mayHaveActed(error)) throw error;
      return await reconcile(options, ledger.before, error);
    }
  }
}

/**
 * Before a POST that follows a 429 or 503 (`ledger.unsettled`): waits as the answer asks, lists
 * (up to {@link SETTLE_LISTS} times while none shows it: a list may lag), and answers the object
 * when the earlier POST made it after all (`undefined` when it did not, or nothing is unsettled). A list that fails throws: the object may exist, and nothing is resent.
 */
export async function settle<T extends { id: string; name?: string | null }>(
  options: Pick<ReconciledCreateOptions<T>, "kind" | "name" | "list" | "differences" | "sleep">,
  ledger: CreateLedger,
): Promise<ReconciledCreate<T> | undefined> {
  const error = ledger.unsettled;
  if (error === undefined) return undefined;
  const { kind, name } = options;
  // Not cancellable: these pauses find out whether a create landed; stopping could orphan a paid object.
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  await sleep(serverDelayMs(error.headers) ?? SETTLE_FIRST_PAUSE_MS * 2 ** Math.min(ledger.settled, 2));
  const what = `Creating ${kind} "${name}" was answered ${error.status}`;
  const listFailed = (listError: unknown) =>
    new RunpodError(
      `${what}, and the service may have created it anyway (it has been seen to act on a create it answered ` +
        `429 or 503 to); listing to check before sending it again failed (${describeError(listError)}). It was ` +
        `not sent again and nothing was recorded. ${lookFor(kind, name)}`,
      { cause: error },
    );
  let after: T[];
  try {
    after = await options.list();
  } catch (listError) {
    throw listFailed(listError);
  }
  let matching: T[] = [];
  for (let lists = 1; ; lists++) {
    const fresh = after.filter((o) => !ledger.before.has(o.id) && o.name === name);
    matching = fresh.filter((o) => options.differences(o).length === 0);
    if (matching.length > 0 || lists >= SETTLE_LISTS) break;
    // A list may lag behind a create: look again before taking the answer as "made nothing".
    await sleep(RELIST_FIRST_PAUSE_MS * 2 ** (lists - 1));
    try {
      after = await options.list();
    } catch (listError) {
      throw listFailed(listError);
    }
  }
  if (matching.length === 1) {
    ledger.unsettled = undefined;
    return {
      record: matching[0],
      recoveredAfter: `${what}, but the service had created it anyway (id ${boundEntry(matching[0].id)}, the one new ${kind} named "${name}" holding what was sent), so it was recorded and not created again.`,
    };
  }
  if (matching.length > 1) {
    throw new RunpodError(
      `${what} and ${matching.length} new ${kind}s named "${name}" exist now (id ${idsOf(matching)}): ` +
        "this deploy cannot tell which is its own, so it recorded none and created no other. Delete the ones you " +
        "do not want in the RunPod console, then run pulumi up again.",
      { cause: error },
    );
  }
  ledger.unsettled = undefined;
  ledger.settled++;
  return undefined;
}

/**
 * The error of a create the deployment's cancellation stopped before a POST: nothing made, since
 * `refused` (a 429 or 503 answered to the last POST) was settled by a list showing none.
 */
export function notSentCancelled(kind: string, name: string, refused?: APIError): RunpodError {
  const why =
    refused === undefined
      ? `${CANCELLED} before it was sent; nothing was sent to RunPod`
      : `RunPod answered ${refused.status}, a list shows that made none, and ${CANCELLED} before it was ` +
        "sent again; nothing was created";
  const what = kind.charAt(0).toUpperCase() + kind.slice(1);
  return new RunpodError(`${what} "${name}" was not created: ${why}. Run pulumi up again to create it.`);
}

/** What a failed create's error tells the user to do before the next `up`. */
function lookFor(kind: string, name: string): string {
  return (
    `Before running pulumi up again, look in the RunPod console for a ${kind} named "${name}" made just ` +
    "now: if it is there, delete it, or the next up creates a second one."
  );
}

/** Steps 3 and 4 of the module comment, after the POST failed with `error`. */
async function reconcile<T extends { id: string; name?: string | null }>(
  options: ReconciledCreateOptions<T>,
  before: ReadonlySet<string>,
  error: unknown,
): Promise<ReconciledCreate<T>> {
  const { kind, name } = options;
  // Not cancellable: these pauses find out whether a create landed; stopping could orphan a paid object.
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = options.now ?? Date.now;
  const windowMs = options.relistWindowMs ?? RELIST_WINDOW_MS;
  const what = `Creating ${kind} "${name}" failed (${describeError(error)})`;
  const started = now();
  let pause = RELIST_FIRST_PAUSE_MS;
  let lists = 0;
  let listError: unknown;
  let others: { object: T; fields: string[] }[] = [];
  for (;;) {
    let after: T[] | undefined;
    try {
      after = await options.list();
      lists++;
    } catch (caught) {
      listError = caught;
      if (lists === 0 && now() - started + pause > windowMs) break;
    }
    if (after !== undefined) {
      const fresh = after.filter((o) => !before.has(o.id) && o.name === name);
      const judged = fresh.map((object) => ({ object, fields: options.differences(object) }));
      const matching = judged.filter((c) => c.fields.length === 0).map((c) => c.object);
      others = judged.filter((c) => c.fields.length > 0);
      if (matching.length === 1) {
        const left =
          others.length === 0
            ? ""
            : ` Another new ${kind} of that name, ${describeOthers(others)}, is not this create's and was left alone.`;
        return {
          record: matching[0],
          recoveredAfter: `${what}; the service had created it anyway (id ${boundEntry(matching[0].id)}, the one ${kind} named "${name}" that appeared), so it was recorded.${left}`,
        };
      }
      if (matching.length > 1) {
        throw new RunpodError(
          `${what} and ${matching.length} new ${kind}s named "${name}" exist now (id ${idsOf(matching)}): ` +
            `another client created one at the same moment, and this deploy cannot tell which is its own, so it ` +
            "recorded none. Delete the ones you do not want in the RunPod console, then run pulumi up again.",
          { cause: error },
        );
      }
    }
    if (now() - started + pause > windowMs) break;
    await sleep(pause);
    pause *= 2;
  }
  if (lists === 0) {
    throw new RunpodError(
      `${what} and the service may have created it anyway; listing to check also failed ` +
        `(${describeError(listError)}). Nothing was recorded. ${lookFor(kind, name)}`,
      { cause: error },
    );
  }
  const seconds = Math.round((now() - started) / 100) / 10;
  const foreign =
    others.length === 0
      ? ""
      : ` A new ${kind} of that name did appear, ${describeOthers(others)}: it does not hold what this ` +
        "create sent, so it is another client's and was neither recorded nor changed.";
  throw new RunpodError(
    `${what}. The service may or may not have created it: no new ${kind} named "${name}" holding what was ` +
      `sent has appeared in ${lists} list${lists === 1 ? "" : "s"} over ${seconds} s, but a list may lag behind ` +
      `a create, so it may still exist or appear.${foreign} Nothing was recorded. ${lookFor(kind, name)}`,
    { cause: error },
  );
}

/** `id a, b, c and 4 more`. */
function idsOf(objects: readonly { id: string }[]): string {
  const shown = objects.slice(0, NAMED_AT_MOST).map((o) => boundEntry(o.id));
  const more = objects.length - shown.length;
  return shown.join(", ") + (more > 0 ? ` and ${more} more` : "");
}

/** The new namesakes that differ from what was sent: `id x (differs in size), id y (...)`. */
function describeOthers(others: readonly { object: { id: string }; fields: string[] }[]): string {
  const shown = others
    .slice(0, NAMED_AT_MOST)
    .map((o) => `id ${boundEntry(o.object.id)} (differs in ${o.fields.slice(0, 10).join(", ")})`);
  const more = others.length - shown.length;
  return shown.join(", ") + (more > 0 ? ` and ${more} more` : "");
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

/**
 * A read by id for refresh or for `X.get`: the object, or `undefined` when a refresh finds it gone
 * (the resource then leaves the state). When adopting (`X.get`: no recorded outputs) a 404 is an
 * error with `notFound`: a wrong id names itself, not an empty resource.
 */
export async function readForRefresh<T>(
  get: () => Promise<T>,
  adopting: boolean,
  notFound: string,
): Promise<T | undefined> {
  const live = await readOrGone(get);
  if (live === undefined && adopting) throw new RunpodError(notFound);
  return live;
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

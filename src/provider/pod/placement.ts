/**
 * Creating a pod with fallback: the service places one GPU type per request and never falls back,
 * so the provider tries `gpu.id` then each of `fallbackGpuIds` as the v2 document's loop says (400:
 * the next; 402: stop; 403: skip; 429 and 503: back off and retry the same), each POST reconciled
 * by listing after a lost answer. Never a second pod: the service has been seen to create a pod and
 * answer 429 or 503, so every POST after such an answer, a retry or the next candidate's, first
 * lists and records the pod if an earlier POST made it (`createReconciled` with one ledger for
 * all candidates: one list before the first POST; after a 429 or 503, up to three lists, 0.5 s and
 * 1 s apart since a list may lag behind the create, before the next POST or before saying no pod
 * was created). When no candidate lands, one error names what each answered
 * and the catalog's stock now.
 */
import { isDeepStrictEqual } from "node:util";
import type { Pod, PodCreateInput, RunpodClient } from "../../client";
import {
  APIError,
  BadRequestError,
  describeBody,
  PermissionDeniedError,
  RunpodError,
  saidNotActed,
} from "../../client";
import { CANCELLED } from "../clock";
import {
  type CreateLedger,
  createReconciled,
  notSentCancelled,
  openLedger,
  settle,
} from "../common/managedCreate";
import { redact } from "../common/redaction";
import { describeError, printable } from "../common/wording";
import { createBodyOf, type PodInputs } from "./args";

/** POSTs of one candidate while the service answers 429 or 503 (the client does not resend a pod's create). */
const SAME_CANDIDATE_TRIES = 3;

/** What a test may replace: the waits between tries (default a timer). */
export interface PlacementOptions {
  sleep?: (ms: number) => Promise<void>;
  /**
   * The deployment's cancellation (`RunpodSettings.signal`): once it aborts no further POST is
   * sent, the next candidate's nor a resend (an earlier 429 or 503 is still settled by listing).
   */
  signal?: AbortSignal;
}

/** The GPU types to try in order: `gpu.id`, then `fallbackGpuIds`, without repeats. */
export function candidatesOf(inputs: PodInputs): (string | undefined)[] {
  if (!inputs.gpu) return [undefined];
  return [...new Set([inputs.gpu.id, ...(inputs.fallbackGpuIds ?? [])])];
}

/** Places the pod on the first candidate the service takes; one error naming each when none does. */
export async function placePod(
  client: RunpodClient,
  inputs: PodInputs,
  secrets: readonly string[],
  options: PlacementOptions = {},
): Promise<Pod> {
  const said: { candidate: string; answer: string }[] = [];
  const candidates = candidatesOf(inputs);
  const list = () => client.pods.list();
  const ledger: CreateLedger = await openLedger(list);
  /** Every body POSTed so far: a pod an earlier candidate's 429 or 503 made is this create's too. */
  const sent: Record<string, unknown>[] = [];
  const differences = (listed: Pod, body: Record<string, unknown>) =>
    sent.some((earlier) => podDifferences(listed, earlier).length === 0) ? [] : podDifferences(listed, body);
  let cancelledAt: number | undefined;
  for (const [index, candidate] of candidates.entries()) {
    if (options.signal?.aborted === true) {
      cancelledAt = index;
      break;
    }
    const body = createBodyOf(inputs);
    if (candidate !== undefined) body.gpu = { ...(inputs.gpu ?? {}), id: candidate };
    sent.push(body);
    try {
      const { record, recoveredAfter } = await createReconciled<Pod>({
        kind: "pod",
        name: inputs.name,
        list,
        create: () => client.pods.create(body as PodCreateInput),
        differences: (listed) => differences(listed, body),
        bills: true,
        tries: SAME_CANDIDATE_TRIES,
        ledger,
        ...(options.sleep ? { sleep: options.sleep } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (recoveredAfter) process.stderr.write(`warning: ${redact(recoveredAfter, secrets)}\n`);
      if (said.length > 0) {
        const tried = said.map((s) => `${s.candidate}: ${s.answer}`).join("; ");
        process.stderr.write(
          `${redact(`pod "${inputs.name}" placed on ${candidate} after ${tried}`, secrets)}\n`,
        );
      }
      return record;
    } catch (error) {
      const name = candidate ?? inputs.cpu?.id ?? "cpu";
      if (error instanceof APIError && error.status === 402) {
        const before = said.map((s) => `${s.candidate}: ${s.answer}`).join("; ");
        throw new RunpodError(
          redact(
            `RunPod refused to create pod "${inputs.name}" on ${name}: the account's balance is too low (402` +
              `${describeBody(error.body) ? `: ${describeBody(error.body)}` : ""}).` +
              (before ? ` Tried before it: ${before}.` : "") +
              " No other GPU type was tried after it: none would succeed. Add funds in the RunPod console, " +
              "then run pulumi up again.",
            secrets,
          ),
        );
      }
      if (error instanceof BadRequestError || error instanceof PermissionDeniedError) {
        const answer = `${error.status} ${printable(describeBody(error.body) || error.message, 300)}`;
        said.push({
          candidate: name,
          answer: error.status === 403 ? `${answer} (skipped: no access)` : answer,
        });
        continue;
      }
      if (saidNotActed(error)) {
        // createReconciled sent it SAME_CANDIDATE_TRIES times, listing before each resend.
        said.push({
          candidate: name,
          answer: `${(error as APIError).status} after ${SAME_CANDIDATE_TRIES} tries`,
        });
        continue;
      }
      throw error; // a lost answer the listing could not settle, a 401, a 422: never try another
    }
  }
  // The last POST's 429 or 503 may have made the pod: "no pod was created" only once a list shows none.
  const late = await settle<Pod>(
    {
      kind: "pod",
      name: inputs.name,
      list,
      differences: (listed) => differences(listed, sent[sent.length - 1] ?? {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    },
    ledger,
  );
  if (late) {
    process.stderr.write(`warning: ${redact(late.recoveredAfter ?? "", secrets)}\n`);
    return late.record;
  }
  if (cancelledAt !== undefined)
    throw cancelledPlacement(inputs, said, candidates.slice(cancelledAt), secrets);
  throw await noCandidateLanded(client, inputs, said, ledger.settled > 0);
}

/** The error when the deployment was cancelled between candidates: what each tried answered, and those not tried. */
function cancelledPlacement(
  inputs: PodInputs,
  said: readonly { candidate: string; answer: string }[],
  untried: readonly (string | undefined)[],
  secrets: readonly string[],
): Error {
  if (said.length === 0) return notSentCancelled("pod", inputs.name);
  const tried = said.map((s) => `${s.candidate}: ${s.answer}`).join("; ");
  const left = untried.map((c) => c ?? "cpu").join(", ");
  return new RunpodError(
    redact(
      `Pod "${inputs.name}" was not created: RunPod refused ${tried}; then ${CANCELLED}, so ${left} ` +
        `${untried.length === 1 ? "was" : "were"} not tried and nothing was created. Run pulumi up again to create it.`,
      secrets,
    ),
  );
}

/** The error when no candidate landed: each one with what the service said, and the catalog's stock now. */
async function noCandidateLanded(
  client: RunpodClient,
  inputs: PodInputs,
  said: readonly { candidate: string; answer: string }[],
  listedAfter429or503: boolean,
): Promise<Error> {
  let stock: string;
  try {
    const gpus = await client.catalog.gpus({
      include: ["AVAILABILITY"],
      product: ["POD"],
      ...(inputs.cloud ? { cloud: inputs.cloud } : {}),
    } as never);
    const inStock = gpus.filter((g) => g.availability !== undefined && g.availability !== "NONE");
    stock =
      inStock.length === 0
        ? "The catalog shows no GPU type with pod stock now."
        : `The catalog shows pod stock now for: ${inStock
            .slice(0, 12)
            .map(
              (g) =>
                `${g.id} (${g.availability}${
                  g.dataCenters?.length
                    ? ` in ${g.dataCenters
                        .filter((d) => d.availability !== "NONE")
                        .map((d) => d.id)
                        .join(", ")}`
                    : ""
                })`,
            )
            .join("; ")}${inStock.length > 12 ? ` and ${inStock.length - 12} more` : ""}.`;
  } catch (error) {
    stock = `The catalog could not be read for current stock (${describeError(error)}).`;
  }
  const every400 = said.length > 0 && said.every((s) => s.answer.startsWith("400"));
  const hint = every400
    ? " Every candidate answered 400: if the service's words above name a rule rather than capacity, the request itself is at fault."
    : "";
  return new RunpodError(
    `No GPU type could be placed for pod "${inputs.name}"; no pod was created` +
      (listedAfter429or503 ? " (the pod lists after the last 429 or 503 answer show none)" : "") +
      `. Tried in order: ` +
      `${said.map((s) => `${s.candidate}: ${s.answer}`).join("; ")}. ${stock}${hint} Add a GPU type with ` +
      "stock to fallbackGpuIds (or change gpu.id), or try again later.",
  );
}

/** Fields the create sent that the pod `listed` does not hold (names only: values may be secrets). */
export function podDifferences(listed: Pod, sent: Record<string, unknown>): string[] {
  const out: string[] = [];
  const gpu = sent.gpu as PodInputs["gpu"];
  if (gpu && (listed.gpu?.id !== gpu.id || (listed.gpu?.count ?? 1) !== (gpu.count ?? 1))) out.push("gpu");
  const cpu = sent.cpu as PodInputs["cpu"];
  if (cpu && (listed.cpu?.id !== cpu.id || listed.cpu?.vcpuCount !== cpu.vcpuCount)) out.push("cpu");
  for (const key of ["image", "args", "disk", "ports", "registry"] as const) {
    if (sent[key] !== undefined && !isDeepStrictEqual(listed[key], sent[key])) out.push(key);
  }
  if (sent.cloud !== undefined && listed.cloud !== undefined && listed.cloud !== sent.cloud)
    out.push("cloud");
  const env = (sent.env ?? {}) as Record<string, string>;
  if (Object.entries(env).some(([k, v]) => listed.env?.[k] !== v)) out.push("env");
  return out;
}

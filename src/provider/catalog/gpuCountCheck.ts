/**
 * `check`'s judgement of a pod's `gpu.count` against the catalog: a pod runs on one machine, and
 * the catalog's `maxCount` of a GPU type (per cloud) is the GPU count of the largest machine of
 * that type the service runs, so a count over it can never be placed. Each type the pod may land
 * on (`gpu.id`, then `fallbackGpuIds`) must hold the count; a type the catalog does not list, or
 * lists with no `maxCount` for the cloud (not offered there), is left to the service.
 *
 * The same read and the same courtesy as the data-centre judgement (`dataCenterCheck.ts`): over
 * REST v2 only, one read of `GET /v2/catalog/gpus` per provider host (shared with the price of
 * the preview), one try with a short timeout; when it cannot be read, check says nothing more
 * and the static bound of `args.ts` (`MAX_GPUS_PER_POD`) is the only one. Not judged (no read):
 * no `gpu.count` or a count of 1, a value unknown in a preview, and a count and candidates the
 * previous inputs already had (a catalog that shrank later must not block every update).
 */
import { isUnknown } from "../common/unknown";
import type { RunpodSettings } from "../config";
import type { CheckFailure } from "../cost/budget";
import { catalogGpus } from "../cost/catalog";
import { speaksV2 } from "../cost/endpoint";

type Props = Record<string, unknown>;

/** The count and GPU types a pod's arguments name, or undefined when there is nothing to judge. */
function countAndCandidates(args: Props): { count: number; candidates: string[] } | undefined {
  const gpu = args.gpu as { id?: unknown; count?: unknown } | undefined | null;
  if (gpu === undefined || gpu === null || typeof gpu !== "object") return undefined;
  const count = gpu.count;
  if (typeof count !== "number" || count <= 1 || isUnknown(gpu.id)) return undefined;
  const fallbacks = Array.isArray(args.fallbackGpuIds) ? args.fallbackGpuIds : [];
  const candidates = [gpu.id, ...fallbacks].filter(
    (id): id is string => typeof id === "string" && id !== "" && !isUnknown(id),
  );
  return { count, candidates: [...new Set(candidates)] };
}

/** The pod's cloud as the catalog's `maxCount` keys it: `community` or `secure` (the default). */
function cloudOf(args: Props): "secure" | "community" {
  return typeof args.cloud === "string" && args.cloud.toUpperCase() === "COMMUNITY" ? "community" : "secure";
}

/**
 * The failure of `gpu.count` when it is over the catalog's `maxCount` of a GPU type the pod may
 * land on, in the pod's cloud; `olds` are the previous inputs.
 */
export async function checkGpuCount(
  settings: RunpodSettings | undefined,
  news: Props,
  olds: Props = {},
): Promise<CheckFailure[]> {
  const asked = countAndCandidates(news);
  if (asked === undefined || asked.candidates.length === 0) return [];
  const before = countAndCandidates(olds);
  if (
    before !== undefined &&
    before.count === asked.count &&
    cloudOf(olds) === cloudOf(news) &&
    asked.candidates.every((id) => before.candidates.includes(id))
  ) {
    return [];
  }
  if (settings?.apiKey === undefined || !speaksV2(settings)) return [];
  let catalog: readonly unknown[];
  try {
    catalog = await catalogGpus(settings);
  } catch {
    return [];
  }
  const cloud = cloudOf(news);
  const over: string[] = [];
  for (const id of asked.candidates) {
    const entry = catalog.find((g) => (g as { id?: unknown }).id === id) as
      | { maxCount?: { secure?: unknown; community?: unknown } }
      | undefined;
    const max = entry?.maxCount?.[cloud];
    if (typeof max === "number" && max > 0 && asked.count > max)
      over.push(`${JSON.stringify(id)} at most ${max}`);
  }
  if (over.length === 0) return [];
  return [
    {
      property: "gpu",
      reason:
        `gpu.count ${asked.count} is more GPUs than one ${cloud.toUpperCase()} machine holds: the catalog's ` +
        `maxCount (GET /v2/catalog/gpus) gives ${over.join(", ")}. Lower gpu.count, or name GPU types ` +
        "whose machines hold that many (getGpuTypes() lists maxCount per cloud).",
    },
  ];
}

/**
 * `diff`'s one read, for a guarded endpoint only: which release the endpoint serves. The one
 * exception to "no reads beyond the catalog in check and diff" (DESIGN.md, fact 6), because a
 * guarded release is the one place where a stale state hides an untested production release: a
 * provider host killed mid-gate (Ctrl-C twice, a cancelled CI job) leaves the release it was
 * testing serving, while the engine keeps the old outputs (the old `version`), so the next preview
 * of the same program would say "no changes".
 *
 * Only when the state has an id and both the state and the program give a `smokeTest`; one GET of
 * the endpoint's releases (what refresh's `read` uses for `version`), bounded as check's catalog
 * read is, with the client's own retries and no more. A newer version than the state knows fails
 * the diff (the preview) saying what to do; a read that fails says so in one line on the host's
 * stderr and the diff goes on as before; a 404 (the endpoint is gone) is refresh's to handle.
 */
import {
  APIError,
  NotFoundError,
  RunpodError,
  type ServerlessRelease,
  type ServerlessReleaseList,
} from "../../client";
import { DATA_CENTER_READ_TIMEOUT_MS } from "../catalog/dataCenterCheck";
import { CANCELLED, systemClock } from "../clock";
import { labelOf } from "../common/host";
import { clientFromSettings, type RunpodSettings } from "../config";
import { speaksV2 } from "../cost/endpoint";
import { releaseOrigin } from "./smokeTest";

type Props = Record<string, unknown>;

/** How long the one read of the serving release may take, retries included: check's catalog bound. */
export const SERVING_READ_TIMEOUT_MS = DATA_CENTER_READ_TIMEOUT_MS;

/** The newest version the state knows: its outputs' `version`, or the last smoke test's. */
function knownVersion(olds: Props): number | undefined {
  const last = olds.lastSmokeTest as { version?: unknown } | undefined | null;
  const versions = [olds.version, last?.version].filter((v): v is number => typeof v === "number");
  return versions.length === 0 ? undefined : Math.max(...versions);
}

/** What went wrong with the read, in a few words: an error code and status, never a message or body. */
function readFailure(error: unknown): string {
  if (!(error instanceof RunpodError)) return "unexpected error";
  if (error.code === "aborted") return `no usable answer within ${SERVING_READ_TIMEOUT_MS / 1000} s`;
  return error instanceof APIError ? `${error.code}, HTTP ${error.status}` : error.code;
}

/** The failure of a diff that finds a release serving that the state does not know. */
export function unknownReleaseMessage(
  label: string,
  serving: number,
  known: number,
  release: ServerlessRelease | undefined,
): string {
  const origin = release === undefined ? "" : ` (${releaseOrigin(release)})`;
  return (
    `ServerlessEndpoint ${label} serves version ${serving}, which this stack's state does not know ` +
    `(version ${known}): a deploy was cut short before its smoke test ended, or someone else deployed${origin}. ` +
    "Run `pulumi up --refresh` to read it and smoke-test it (or `pulumi refresh`, then `pulumi up`)."
  );
}

/**
 * Throws when the guarded endpoint `id` serves a newer release than `olds` (the state's outputs)
 * records; otherwise returns, having made at most one request (none when the endpoint is not
 * guarded, the state has no id or no version, or there are no settings or no REST v2).
 */
export async function checkServingRelease(
  settings: RunpodSettings | undefined,
  id: string,
  olds: Props,
  news: Props,
): Promise<void> {
  if (id === "" || olds.smokeTest === undefined || news.smokeTest === undefined) return;
  if (settings?.apiKey === undefined || !speaksV2(settings)) return;
  const known = knownVersion(olds);
  if (known === undefined) return;
  const label = labelOf(typeof olds.name === "string" ? olds.name : undefined, id);
  let releases: ServerlessReleaseList;
  // The bound covers the client's retries too, on the operations' clock (a test moves it by hand).
  const clock = settings.clock ?? systemClock;
  const bound = new AbortController();
  const timer = clock.setTimeout(() => bound.abort(), SERVING_READ_TIMEOUT_MS);
  // The deployment's cancellation ends the read too.
  const signal =
    settings.signal === undefined ? bound.signal : AbortSignal.any([bound.signal, settings.signal]);
  try {
    const client = clientFromSettings(settings, { timeoutMs: SERVING_READ_TIMEOUT_MS });
    releases = await client.serverless.releases(id, { signal });
  } catch (error) {
    if (error instanceof NotFoundError) return;
    const why = settings.signal?.aborted === true ? CANCELLED : readFailure(error);
    process.stderr.write(
      `warning: ServerlessEndpoint ${label}: could not check which release it serves (${why}); ` +
        "the diff goes on from the state.\n",
    );
    return;
  } finally {
    clock.clearTimeout(timer);
  }
  const serving = releases.endpointVersion;
  if (typeof serving !== "number" || serving <= known) return;
  const release = releases.releases.find((r) => r.version === serving);
  throw new RunpodError(unknownReleaseMessage(label, serving, known, release));
}

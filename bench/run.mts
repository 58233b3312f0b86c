/**
 * `npm run bench`: builds, then measures the package against its peers and the targets of
 * DESIGN.md in one run, prints ONE table (Markdown, on stdout) and writes the same figures to
 * `bench/results.json` (an array of `{ name, value, unit, peer?, peerValue?, ratio?, target?, meetsTarget? }`).
 * Progress goes to stderr. Everything runs on 127.0.0.1; the whole run takes a few minutes (about
 * 50 s of it `rollout.mts` waiting out rolling updates).
 *
 * Sections (each module's comment says exactly what it measures and how):
 * - `latency.mts`: JobRun detection latency and requests per job, ours vs runpod-sdk vs 1 s polling.
 * - `rollout.mts`: JobRun's rollout wait (`rollout: "wait"`) vs the same wait polling every 5 s:
 *   how soon the end of a rolling update is noticed and at how many reads per second; and what
 *   the check adds to one JobRun when nothing rolls out.
 * - `endpointRollout.mts`: ServerlessEndpoint's rollout wait (create/update) vs the same wait
 *   polling every 5 s: how soon the end of a release's rollout is noticed, at how many reads a second.
 * - `sharedPoll.mts`: worker reads per second with 64 rollout waits on one endpoint in one process
 *   (one shared read loop) vs 64 independent pollers.
 * - `podReadiness.mts`: Pod's readiness wait vs a fixed 5 s poll: how soon a pod's RUNNING is
 *   noticed and at how many reads a second.
 * - `gateOverhead.mts`: a ServerlessEndpoint update with `smokeTest` vs the same update without
 *   one followed by a bare JobRun on the release; and the gate alone vs a JobRun alone.
 * - `gateRollback.mts`: a failed gate's verdict → the previous configuration on every worker, vs
 *   a plain update's PATCH → its release on every worker (target: + 1 s at most).
 * - `throughput.mts`: client overhead vs raw undici; emulator throughput vs a bare node:http server.
 * - `scale.mts`: 100 and 500 JobRuns at once under the service's limits, vs the bound (client only).
 * - `deployScale.mts`: N JobRuns in one deploy through the deploy harness and the real provider host,
 *   at the default `--parallel` and at 64, vs `max(ceil(N / min(P, W)) × T, N × Check round trip + T)`
 *   with the round trip the engine floor measures (Checks to a host running up to P creates), and
 *   beside that floor's own span.
 * - `previewCost.mts`: catalog requests while one provider host checks many priced resources
 *   (the preview's prices): at most one per catalog route.
 * - `providerSize.mts`: `__provider` size per resource type from the installed package.
 * - `importCost.mts`: the package's require time beside @pulumi/pulumi alone, and the registration
 *   cost per resource under mocks.
 * - `pluginStart.mts`: the native plugin's start (spawn to port line) beside the dynamic-provider
 *   host's, a Check over gRPC vs the operations' check called directly, and the install size with
 *   and without the plugin.
 */
import { writeFile } from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { benchDeployScale } from "./deployScale.mts";
import { benchEndpointRollout } from "./endpointRollout.mts";
import { benchGateOverhead } from "./gateOverhead.mts";
import { benchGateRollback } from "./gateRollback.mts";
import { benchImportCost } from "./importCost.mts";
import { benchLatency } from "./latency.mts";
import { fmt, progress, REPO_DIR, type ResultRow, renderTable, round } from "./lib.mts";
import { benchPluginStart } from "./pluginStart.mts";
import { benchPodReadiness } from "./podReadiness.mts";
import { benchPreviewCost } from "./previewCost.mts";
import { benchProviderSize } from "./providerSize.mts";
import { benchRollout } from "./rollout.mts";
import { benchScale } from "./scale.mts";
import { benchSharedPoll } from "./sharedPoll.mts";
import { benchThroughput } from "./throughput.mts";

const started = performance.now();
const rows: ResultRow[] = [];
for (const section of [
  benchLatency,
  benchRollout,
  benchEndpointRollout,
  benchSharedPoll,
  benchPodReadiness,
  benchGateOverhead,
  benchGateRollback,
  benchThroughput,
  benchScale,
  benchDeployScale,
  benchPreviewCost,
  benchProviderSize,
  benchImportCost,
  benchPluginStart,
]) {
  rows.push(...(await section()));
}
const seconds = (performance.now() - started) / 1000;

const rounded = rows.map((r) => ({
  ...r,
  value: round(r.value, 2),
  ...(r.peerValue === undefined ? {} : { peerValue: round(r.peerValue, 2) }),
  ...(r.ratio === undefined ? {} : { ratio: round(r.ratio, 3) }),
}));
await writeFile(path.join(REPO_DIR, "bench", "results.json"), `${JSON.stringify(rounded, null, 2)}\n`);

const missed = rows.filter((r) => r.meetsTarget === false);
process.stdout.write(
  `\nBenchmarks, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ` +
    `${os.cpus().length} CPU(s) (${os.cpus()[0]?.model.trim() ?? "unknown"}), ${fmt(seconds)} s\n\n`,
);
process.stdout.write(`${renderTable(rows)}\n\n`);
process.stdout.write(
  `Targets: ${rows.filter((r) => r.meetsTarget === true).length} met, ${missed.length} missed` +
    `${missed.length ? `: ${missed.map((r) => r.name).join("; ")}` : ""}.\n`,
);
progress(`wrote bench/results.json (${rows.length} rows) in ${fmt(seconds)} s`);

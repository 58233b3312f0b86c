/**
 * What the package costs a Pulumi program before it does anything ("What a program pays
 * per resource"): every `pulumi preview` and `pulumi up` runs the program, so this is paid on
 * every deploy. Measured from the packed package installed into a temp project
 * (`test/support/packedPackage.mts`), the way users get it, in fresh Node processes (the Node that
 * runs the bench, so 24 under `npm run bench`):
 *
 * - Import: in each of {@link IMPORT_RUNS} fresh processes, the time of `require("@pulumi/pulumi")`
 *   and then of `require("pulumi-runpod-dynamic")` (what the package adds on top: @pulumi/pulumi
 *   is loaded already, as in any Pulumi program), medians, plus the CommonJS modules the package
 *   adds (`require.cache`). Timed inside the process, so process start-up is not counted; on a busy
 *   machine @pulumi/pulumi's own time varies by hundreds of milliseconds between processes, which
 *   is why the package's cost is measured after it in the same process rather than as a difference
 *   of two medians. Target: at most 40 ms over `@pulumi/pulumi`.
 * - Registration: 100 of each resource of the resource table (`src/provider/resources.ts`, read
 *   from the installed package) constructed under
 *   `pulumi.runtime.setMocks` until every id resolved, each beside 100 `pulumi.dynamic.Resource`s
 *   sharing one one-method provider, given the SAME arguments (the same values, its secret argument
 *   marked secret as ours marks it) and as many properties in all (what any dynamic resource
 *   of that shape pays: the engine round trip per property and the provider's serialization, which
 *   Pulumi caches per provider object), in alternating processes, medians of
 *   {@link REGISTER_RUNS}; the property count is read from one constructed resource (its
 *   `Output` fields other than `id`, `urn` and `__provider`), so it follows the classes. A second row per
 *   resource gives the difference (the median of the back-to-back pairs' differences). Target: at
 *   most 1 ms per resource over that peer. The target is "at most
 *   1 ms per resource"; under mocks a plain dynamic resource of ONE property already costs about
 *   3 ms here (a row shows that floor), and each property adds to it, so the package's own cost is
 *   the difference from a plain resource of the same shape.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import * as path from "node:path";
import { promisify } from "node:util";
import { installPackedPackage } from "../test/support/packedPackage.mts";
import { median, progress, type ResultRow } from "./lib.mts";

const execFileAsync = promisify(execFile);

/** Fresh processes per contender for the import rows. */
export const IMPORT_RUNS = 15;
/** Fresh processes per contender for the registration rows. */
export const REGISTER_RUNS = 5;
/** Resources registered per process. */
export const RESOURCES = 100;
/** The targets (DESIGN.md, Targets). */
export const IMPORT_TARGET_MS = 40;
export const PER_RESOURCE_TARGET_MS = 1;

/** Prints `{ pulumiMs, packageMs, modules }`: the two requires' times, modules the package added. */
const IMPORT_CHILD = `
const t0 = performance.now();
require("@pulumi/pulumi");
const t1 = performance.now();
const before = Object.keys(require.cache).length;
require("pulumi-runpod-dynamic");
const t2 = performance.now();
process.stdout.write(JSON.stringify({ pulumiMs: t1 - t0, packageMs: t2 - t1, modules: Object.keys(require.cache).length - before }));
`;

/**
 * argv[1] = a resource's class name or "dynamic", argv[2] = N, argv[3] = properties of each "dynamic"
 * resource (its name and that many less one unset outputs). Prints `{ ms, props }`: the time until
 * every id resolved, and the properties the first resource registers (its `Output` fields other
 * than `id`, `urn` and `__provider`, which every dynamic resource has).
 */
const REGISTER_CHILD = `
const pulumi = require("@pulumi/pulumi");
const [kind, n, props] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3] ?? 1)];
pulumi.runtime.setMocks(
  { newResource: (a) => ({ id: a.name + "-id", state: a.inputs }), call: (a) => a.inputs },
  "bench", "dev", false,
);
const pkg = require("pulumi-runpod-dynamic");
class Plain { async create(inputs) { return { id: "x", outs: inputs }; } }
const plain = new Plain();
// The arguments each resource is given; its peer registers the same values (env secret, as ours
// stores it), so the difference is what the package adds: output slots, secret marking, __urn.
const ARGS = {
  ContainerRegistryAuth: (i) => ({ name: "auth-" + i, username: "bot", password: "pw-" + i }),
  JobRun: (i) => ({ endpointId: "echo", input: { prompt: "ping " + i } }),
  ServerlessEndpoint: (i) => ({ name: "ep-" + i, type: "QUEUE", image: "acme/api:" + i, env: { TOKEN: "t-" + i }, gpu: { pools: ["ADA_24"] }, scaling: { type: "QUEUE_DELAY", queueDelay: 4 } }),
  Template: (i) => ({ name: "tmpl-" + i, image: "acme/api:" + i, env: { TOKEN: "t-" + i }, serverless: true }),
  NetworkVolume: (i) => ({ name: "vol-" + i, size: 10 + i, dataCenterId: "EU-RO-1" }),
  Pod: (i) => ({ name: "pod-" + i, image: "runpod/pytorch:" + i, gpu: { id: "NVIDIA GeForce RTX 4090" }, env: { TOKEN: "t-" + i } }),
  SshKey: (i) => ({ publicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBench" + i + " bench@" + i }),
  Cluster: (i) => ({ name: "cluster-" + i, type: "TRAINING", compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 }, image: "runpod/pytorch:" + i, env: { TOKEN: "t-" + i } }),
  EcrDelegation: (i) => ({ resource: "arn:aws:ecr:us-east-2:418399314813:repository/bench/app:" + i, name: "deleg-" + i }),
};
// Its secret arguments and secret outputs, as the resource table says and its class marks them.
const row = process.argv[4] && require("pulumi-runpod-dynamic/dist/provider/resources.js").RESOURCES[process.argv[4]];
const make =
  kind === "dynamic"
    ? (i) => {
        const inputs = row ? { ...ARGS[row.className](i) } : { name: "plain-" + i };
        for (const secret of row ? row.secretInputs : []) if (inputs[secret] !== undefined) inputs[secret] = pulumi.secret(inputs[secret]);
        for (let k = Object.keys(inputs).length; k < props; k++) inputs["out" + k] = undefined;
        const secretOutputs = row ? row.additionalSecretOutputs : [];
        return new pulumi.dynamic.Resource(plain, "plain" + i, inputs, secretOutputs.length > 0 ? { additionalSecretOutputs: [...secretOutputs] } : undefined);
      }
    : (i) => new pkg[kind](kind + i, ARGS[kind](i));
const t0 = performance.now();
const resources = [];
for (let i = 0; i < n; i++) resources.push(make(i));
const own = ["id", "urn", "__provider"];
const registered = Object.keys(resources[0]).filter((k) => !own.includes(k) && pulumi.Output.isInstance(resources[0][k])).length;
pulumi.all(resources.map((r) => r.id)).apply(() => {
  process.stdout.write(JSON.stringify({ ms: performance.now() - t0, props: registered }));
});
`;

async function child<T>(projectDir: string, script: string, args: string[]): Promise<T> {
  const { stdout } = await execFileAsync(process.execPath, ["-e", script, ...args], {
    cwd: projectDir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as T;
}

export async function benchImportCost(): Promise<ResultRow[]> {
  progress("import and registration cost: packing and installing the package into a temp project");
  const installed = await installPackedPackage({ build: false });
  try {
    const runs: Array<{ pulumiMs: number; packageMs: number; modules: number }> = [];
    for (let i = 0; i < IMPORT_RUNS; i++) runs.push(await child(installed.projectDir, IMPORT_CHILD, []));
    const packageMs = median(runs.map((r) => r.packageMs));
    const rows: ResultRow[] = [
      {
        name: `Import: require pulumi-runpod-dynamic after @pulumi/pulumi, median of ${IMPORT_RUNS} processes`,
        value: packageMs,
        unit: "ms",
        peer: "require @pulumi/pulumi (same processes)",
        peerValue: median(runs.map((r) => r.pulumiMs)),
        target: `<= ${IMPORT_TARGET_MS} ms`,
        meetsTarget: packageMs <= IMPORT_TARGET_MS,
      },
      {
        name: "Import: CommonJS modules the package adds over @pulumi/pulumi",
        value: median(runs.map((r) => r.modules)),
        unit: "modules",
      },
    ];

    progress(`registration: ${RESOURCES} resources per process under mocks, ${REGISTER_RUNS} processes each`);
    const perResource = async (kind: string, props = 1, shape?: string) => {
      const args = [kind, String(RESOURCES), String(props), ...(shape === undefined ? [] : [shape])];
      const result = await child<{ ms: number; props: number }>(installed.projectDir, REGISTER_CHILD, args);
      return { ms: result.ms / RESOURCES, props: result.props };
    };
    // Each resource beside a plain dynamic resource registering as many properties (arguments and
    // declared outputs: Pulumi's cost under mocks grows with them), measured in alternation.
    // Every resource of the table, as the installed package has it; each needs its `ARGS` entry.
    const table = createRequire(path.join(installed.projectDir, "package.json"))(
      "pulumi-runpod-dynamic/dist/provider/resources.js",
    ) as typeof import("../src/provider/resources.ts");
    for (const { className: kind } of table.RESOURCE_ROWS) {
      const ours: number[] = [];
      const plain: number[] = [];
      const diffs: number[] = [];
      let props = 0;
      for (let i = 0; i < REGISTER_RUNS; i++) {
        const mine = await perResource(kind);
        props = mine.props;
        const peer = (await perResource("dynamic", props, kind)).ms;
        ours.push(mine.ms);
        plain.push(peer);
        diffs.push(mine.ms - peer);
      }
      const peerLabel = `pulumi.dynamic.Resource with the same arguments (secrets marked alike) and ${props} properties in all, one shared one-method provider`;
      rows.push({
        name: `Registration under mocks, ${RESOURCES} ${kind}s: time per resource, median of ${REGISTER_RUNS}`,
        value: median(ours),
        unit: "ms",
        peer: peerLabel,
        peerValue: median(plain),
      });
      const over = median(diffs);
      rows.push({
        name: `Registration under mocks, ${kind}: time per resource over the plain resource, median of ${REGISTER_RUNS} back-to-back pairs`,
        value: over,
        unit: "ms",
        target: `<= ${PER_RESOURCE_TARGET_MS} ms`,
        meetsTarget: over <= PER_RESOURCE_TARGET_MS,
      });
    }
    const floor: number[] = [];
    for (let i = 0; i < REGISTER_RUNS; i++) floor.push((await perResource("dynamic", 1)).ms);
    rows.push({
      name: `Registration under mocks, ${RESOURCES} pulumi.dynamic.Resources of one property: time per resource (the floor), median of ${REGISTER_RUNS}`,
      value: median(floor),
      unit: "ms",
    });
    return rows;
  } finally {
    await installed.cleanup();
  }
}

/** `node bench/importCost.mts` runs this section alone and prints its rows. */
if (import.meta.main) {
  const { renderTable } = await import("./lib.mts");
  process.stdout.write(`${renderTable(await benchImportCost())}\n`);
}

/**
 * The exact `__provider` string `pulumi.dynamic.Resource` stores for a provider, produced from the
 * INSTALLED package (the temp project of `packedPackage.mts`), the way a user's program makes it.
 *
 * ```ts
 * import { serializedProvider } from "../support/serializedProvider.mts";
 * const projectDir = inject("installedProjectDir");
 * const __provider = await serializedProvider(projectDir, "ContainerRegistryAuth");
 * await host.create(urnFor("ContainerRegistryAuth", "a"), { name: "x", ..., __provider });
 * ```
 *
 * How: a child Node process with cwd = projectDir requires
 * `pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/resource.js` (or `jobRun/resource.js`), takes
 * the provider the resource class shares (`ContainerRegistryAuth.provider`), and serializes it with the
 * function @pulumi/pulumi's dynamic module uses: `serializeFunction(() => provider,
 * { allowSecrets: true })` from `runtime/closure/serializeClosure` (no engine or runtime settings
 * needed). A fresh process per provider means no other module state leaks into the closure.
 * Results are cached per (projectDir, module, export) for the life of this process, and, for the
 * package's own modules (`pulumi-runpod-dynamic/...`, which do not change while the project
 * exists), on disk in `projectDir/.serialized-providers/`, so the test files of one run, each in
 * a fresh worker, serialize each kind once between them instead of once each (a child costs about
 * half a second of CPU to load @pulumi/pulumi).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The dynamic resource kinds this package ships. */
export type ProviderKind =
  | "ContainerRegistryAuth"
  | "JobRun"
  | "NetworkVolume"
  | "ServerlessEndpoint"
  | "Template"
  | "Pod"
  | "SshKey"
  | "EcrDelegation"
  | "Cluster";

/**
 * Where each kind's resource class lives in the installed package; its static `provider` is the
 * object `pulumi.dynamic.Resource` serializes.
 */
export const PROVIDER_MODULES: Record<ProviderKind, { module: string; exportName: string }> = {
  ContainerRegistryAuth: {
    module: "pulumi-runpod-dynamic/dist/provider/containerRegistryAuth/resource.js",
    exportName: "ContainerRegistryAuth",
  },
  JobRun: { module: "pulumi-runpod-dynamic/dist/provider/jobRun/resource.js", exportName: "JobRun" },
  NetworkVolume: {
    module: "pulumi-runpod-dynamic/dist/provider/networkVolume/resource.js",
    exportName: "NetworkVolume",
  },
  ServerlessEndpoint: {
    module: "pulumi-runpod-dynamic/dist/provider/serverlessEndpoint/resource.js",
    exportName: "ServerlessEndpoint",
  },
  SshKey: { module: "pulumi-runpod-dynamic/dist/provider/sshKey/resource.js", exportName: "SshKey" },
  Template: {
    module: "pulumi-runpod-dynamic/dist/provider/template/resource.js",
    exportName: "Template",
  },
  Pod: { module: "pulumi-runpod-dynamic/dist/provider/pod/resource.js", exportName: "Pod" },
  EcrDelegation: {
    module: "pulumi-runpod-dynamic/dist/provider/ecrDelegation/resource.js",
    exportName: "EcrDelegation",
  },
  Cluster: { module: "pulumi-runpod-dynamic/dist/provider/cluster/resource.js", exportName: "Cluster" },
};

/** A serialized provider: the `__provider` text and whether the closure captured a secret. */
export interface SerializedProvider {
  text: string;
  /** True when the closure captured a `pulumi.secret` (the engine then stores `__provider` as secret). */
  containsSecrets: boolean;
}

/** Runs in the child: argv = [moduleSpecifier, resource class name]. Prints one JSON line. */
const CHILD_SCRIPT = `
const path = require("node:path");
const { createRequire } = require("node:module");
const req = createRequire(path.join(process.cwd(), "package.json"));
const [spec, exportName] = process.argv.slice(1);
const mod = req(spec);
const Exported = mod[exportName];
if (typeof Exported !== "function") {
  throw new Error(spec + " has no exported class " + exportName + " (a resource class with a static provider, or a provider class; exports: " + Object.keys(mod).join(", ") + ")");
}
// The package's resource classes expose the provider they hand to pulumi.dynamic.Resource; a
// test fixture may export a provider class of its own instead.
const provider = typeof Exported.provider === "object" ? Exported.provider : new Exported();
const sc = req("@pulumi/pulumi/runtime/closure/serializeClosure");
sc.serializeFunction(() => provider, { allowSecrets: true }).then((sf) => {
  process.stdout.write(JSON.stringify({ text: sf.text, containsSecrets: sf.containsSecrets }));
});
`;

const cache = new Map<string, Promise<SerializedProvider>>();

/** Modules whose serialization is kept on disk: the installed package's own. */
const DISK_CACHED = /^pulumi-runpod-dynamic\//;

/** Where the serialization of `key` is kept in `projectDir` (see the module comment). */
function diskCachePath(projectDir: string, key: string): string {
  const name = createHash("sha256").update(key).digest("hex").slice(0, 32);
  return path.join(projectDir, ".serialized-providers", `${name}.json`);
}

/** The serialization kept on disk, or undefined when there is none (or it cannot be read). */
async function readDiskCache(file: string): Promise<SerializedProvider | undefined> {
  try {
    const kept = JSON.parse(await fs.readFile(file, "utf8")) as SerializedProvider;
    return typeof kept.text === "string" && typeof kept.containsSecrets === "boolean" ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `value` at `file`, written whole (a temp file renamed), so a concurrent reader never sees half. */
async function writeDiskCache(file: string, value: SerializedProvider): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(temp, JSON.stringify(value));
  await fs.rename(temp, file);
}

/** Serializes in a fresh child process (see the module comment). */
function serializeInChild(
  projectDir: string,
  moduleSpecifier: string,
  exportName: string,
): Promise<SerializedProvider> {
  return execFileAsync(process.execPath, ["-e", CHILD_SCRIPT, moduleSpecifier, exportName], {
    cwd: projectDir,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => JSON.parse(stdout) as SerializedProvider,
    (err: { stderr?: string; message: string }) => {
      throw new Error(
        `Serializing ${exportName} from ${moduleSpecifier} in ${projectDir} failed:\n${err.stderr || err.message}`,
      );
    },
  );
}

/**
 * Serializes `require(moduleSpecifier)[exportName].provider` (or, for a provider class, an instance
 * of it) as resolved from `projectDir`.
 * Rejects with the child's stderr when the module or class is missing or serialization fails.
 */
export function serializeProviderFrom(
  projectDir: string,
  moduleSpecifier: string,
  exportName: string,
): Promise<SerializedProvider> {
  const key = JSON.stringify([projectDir, moduleSpecifier, exportName]);
  let pending = cache.get(key);
  if (!pending) {
    if (DISK_CACHED.test(moduleSpecifier)) {
      const file = diskCachePath(projectDir, key);
      pending = readDiskCache(file).then(async (kept) => {
        if (kept) return kept;
        const made = await serializeInChild(projectDir, moduleSpecifier, exportName);
        await writeDiskCache(file, made);
        return made;
      });
    } else {
      pending = serializeInChild(projectDir, moduleSpecifier, exportName);
    }
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

/** The `__provider` string for one of this package's resource kinds, from the installed package. */
export async function serializedProvider(projectDir: string, kind: ProviderKind): Promise<string> {
  const where = PROVIDER_MODULES[kind];
  if (!where) {
    throw new Error(`kind must be one of ${Object.keys(PROVIDER_MODULES).join(", ")}; got ${String(kind)}`);
  }
  return (await serializeProviderFrom(projectDir, where.module, where.exportName)).text;
}

/**
 * The one dynamic provider class every resource of this package uses.
 *
 * A resource class does not make it itself: it extends `RunpodResource` (`./resource.ts`) and
 * gives its row of the resource table (`../resources.ts`), which names the package path of its
 * operations module; the base class hands `providerFor(row.operationsModule)` to
 * `pulumi.dynamic.Resource`:
 *
 * ```ts
 * export class Pod extends ServiceObjectResource<PodArgs> {
 *   protected static override readonly spec = resourceSpec<PodArgs>({
 *     row: RESOURCES.Pod,
 *     // inputs, outputs ...
 *   });
 * }
 * ```
 *
 * The operations module exports `operations`, made with `defineOperations` (`./operations.ts`):
 * check, diff, create, read, update and delete, each taking the host's settings first.
 *
 * Why it looks like this (DESIGN.md facts 1 to 3): the provider object is serialized into every
 * resource's state (`__provider`) and run later in Pulumi's dynamic-provider host. Its methods
 * therefore capture nothing but the module path: each one `require`s the operations module by
 * package name (a relative path would resolve against the host's working directory) and
 * delegates. No schema, client, agent, timer or credential is captured; the API key arrives in
 * `configure` and lives on the instance in the host process only. This file is loaded in the
 * program, so it imports types only.
 *
 * States keep the text they were written with: operations modules keep their paths, and the
 * per-operation exports older texts call by name (`checkRegistryAuth`, ...) keep existing.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ConfigSource, RunpodSettings } from "../config";

/** The settings `configure` resolved (undefined outside the provider host). */
type Settings = RunpodSettings | undefined;
/** Inputs or outputs as the engine passes them. */
type Props = Record<string, unknown>;

/**
 * What an operations module exports as `operations`: the work of each provider method. Every
 * method gets the settings `configure` resolved (undefined outside the provider host).
 */
export interface ResourceOperations {
  /** Settings from the configure request's `runpod:*` config, the environment as fallback. */
  configure(config: ConfigSource | undefined): RunpodSettings;
  check(settings: Settings, olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult>;
  diff(settings: Settings, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult>;
  create(settings: Settings, inputs: Props): Promise<pulumi.dynamic.CreateResult>;
  read(settings: Settings, id: string, props: Props | undefined): Promise<pulumi.dynamic.ReadResult>;
  update(settings: Settings, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult>;
  delete(settings: Settings, id: string, props: Props): Promise<void>;
}

/**
 * A resource's dynamic provider: loads `operationsModule` (a package path) in the provider host
 * and delegates every method to its `operations` export. Make it with {@link providerFor}.
 */
export class RunpodProvider implements pulumi.dynamic.ResourceProvider {
  /** Settings from `configure`; set only inside the provider host, never serialized. */
  declare private settings: RunpodSettings | undefined;

  /** @param operationsModule package path of the operations module, stored in every `__provider`. */
  constructor(readonly operationsModule: string) {}

  /** Reads `runpod:*` stack config (environment fallback) for this host process. */
  async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
    this.settings = this.operations().configure(req.config);
  }

  async check(olds: Record<string, unknown>, news: Record<string, unknown>) {
    return this.operations().check(this.settings, olds, news);
  }

  async diff(id: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    return this.operations().diff(this.settings, id, olds, news);
  }

  async create(inputs: Record<string, unknown>) {
    return this.operations().create(this.settings, inputs);
  }

  async read(id: string, props?: Record<string, unknown>) {
    return this.operations().read(this.settings, id, props);
  }

  async update(id: string, olds: Record<string, unknown>, news: Record<string, unknown>) {
    return this.operations().update(this.settings, id, olds, news);
  }

  async delete(id: string, props: Record<string, unknown>) {
    return this.operations().delete(this.settings, id, props);
  }

  /** The operations module, from the installed package (Node caches it after the first call). */
  private operations(): ResourceOperations {
    return require(this.operationsModule).operations;
  }
}

const providers = new Map<string, RunpodProvider>();

/**
 * The provider of the resource whose operations live at `operationsModule`: one instance per
 * module in a program, because Pulumi serializes a provider once per object (every resource of
 * a kind then shares one `__provider` text).
 */
export function providerFor(operationsModule: string): RunpodProvider {
  let provider = providers.get(operationsModule);
  if (provider === undefined) {
    provider = new RunpodProvider(operationsModule);
    providers.set(operationsModule, provider);
  }
  return provider;
}

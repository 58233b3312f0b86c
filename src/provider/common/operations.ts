/**
 * `defineOperations`: what an operations module exports as `operations` for the shared provider
 * class (`./dynamicProvider.ts`), with the check and diff preamble every resource shares.
 *
 * The preamble: check and diff see the program's values without `__provider` (the serialized
 * provider the engine keeps in inputs and outputs); check's failures are made to read well
 * where the engine prints them (`forEngine`), with the secret inputs never printed as values.
 * Values unknown in a preview reach check and diff as Pulumi's sentinel (`./unknown.ts`): the
 * resource's own rules skip them. Create, read, update and delete get what the host passed.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { RunpodSettings } from "../config";
import type { ResourceOperations } from "./dynamicProvider";
import { forEngine } from "./engineText";
import { settingsFromConfigure, withoutProvider } from "./host";

type Settings = RunpodSettings | undefined;
type Props = Record<string, unknown>;

/** A resource's operations, as written in its `operations.ts`. */
export interface OperationsSpec {
  /** Top-level inputs whose values are secret: a check failure never prints them. */
  secretInputs?: readonly string[];
  /** Field-level validation, no network; `olds` and `news` come without `__provider`. */
  check(
    settings: Settings,
    olds: Props,
    news: Props,
  ): pulumi.dynamic.CheckResult | Promise<pulumi.dynamic.CheckResult>;
  /** Old outputs against new inputs, both without `__provider`. */
  diff(settings: Settings, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult>;
  create: ResourceOperations["create"];
  read: ResourceOperations["read"];
  update: ResourceOperations["update"];
  delete: ResourceOperations["delete"];
}

/** The `operations` export of an operations module: `spec` behind the shared preamble. */
export function defineOperations(spec: OperationsSpec): ResourceOperations {
  const secretInputs = spec.secretInputs ?? [];
  return {
    configure: settingsFromConfigure,
    async check(settings, olds, news) {
      const given = withoutProvider(news);
      const checked = await spec.check(settings, withoutProvider(olds ?? {}), given);
      return { ...checked, failures: forEngine(checked.failures ?? [], given, secretInputs) };
    },
    diff: (settings, id, olds, news) =>
      spec.diff(settings, id, withoutProvider(olds ?? {}), withoutProvider(news)),
    create: spec.create,
    read: spec.read,
    update: spec.update,
    delete: spec.delete,
  };
}

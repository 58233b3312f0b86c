/**
 * `RunpodResource`: the base class of every resource class of this package, and `ResourceSpec`,
 * what a resource class says about itself. What differs between resources is data: their row of
 * the resource table (`../resources.ts`: class name, type token, operations module, secret
 * fields) and their property names; this class turns it into the registration
 * `pulumi.dynamic.Resource` expects. A resource whose id is the service's own id (every one but
 * `JobRun`, whose id is its own UUID) extends {@link ServiceObjectResource}, which adds the
 * `static get(name, id, opts)` that reads an existing object by that id:
 *
 * ```ts
 * export class SshKey extends ServiceObjectResource<SshKeyArgs> {
 *   protected static override readonly spec = resourceSpec<SshKeyArgs>({
 *     row: RESOURCES.SshKey, // type token, operations module, secret fields (`../resources.ts`)
 *     inputs: ["publicKey"],
 *     outputs: ["fingerprint", "type", "comment"],
 *   });
 *   declare readonly publicKey: pulumi.Output<string>; // and one per output (DESIGN.md fact 10)
 * }
 * ```
 *
 * A class with arguments to transform first (a secret only in some cases) writes its own
 * constructor and passes the transformed arguments on. What `get` reads of a particular object
 * (which outputs stay unknown, what its id is) is said in the class's doc comment.
 *
 * Loaded in the program whenever the package root is: `@pulumi/pulumi` and type imports only. The
 * provider object is the package's one provider class (`./dynamicProvider.ts`), one per
 * operations module; nothing of this file is serialized into `__provider`.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ResourceRow } from "../resources";
import { providerFor, type RunpodProvider } from "./dynamicProvider";

/** What a resource class registers, by name. `Args` is its argument type, for the names' checks. */
export interface ResourceSpec<Args = Record<string, unknown>> {
  /**
   * Its row of the resource table: the class name (last part of the type token), the operations
   * module the provider loads in the provider host (stored in every `__provider` text), the
   * arguments stored as secrets (wrapped in `pulumi.secret` when given) and the secret outputs.
   */
  row: ResourceRow;
  /**
   * The arguments registered, each present (as undefined when not given) so that its Output
   * exists; other keys of the arguments object are dropped. Absent: the keys given, as given.
   */
  inputs?: readonly (keyof Args & string)[];
  /** What the provider fills in: each registered as undefined, or its Output would not exist. */
  outputs?: readonly string[];
  /** Registers `__urn`, the resource's URN, for the stack budget's sum in check (one per resource). */
  urn?: boolean;
}

/** `spec`, with its property names checked against `Args`. */
export function resourceSpec<Args>(spec: ResourceSpec<Args>): ResourceSpec {
  return spec as ResourceSpec;
}

/** A RunPod resource: a `pulumi.dynamic.Resource` registered as its class's `spec` says. */
export abstract class RunpodResource<Args extends object = object> extends pulumi.dynamic.Resource {
  /** What the class registers; each resource class sets its own. */
  declare protected static readonly spec: ResourceSpec;

  /** The provider object every instance shares (exposed for tests and benchmarks). */
  static get provider(): RunpodProvider {
    return providerFor(this.spec.row.operationsModule);
  }

  constructor(name: string, args: Args, opts?: pulumi.CustomResourceOptions) {
    const { spec } = new.target as unknown as { spec: ResourceSpec };
    const { row } = spec;
    const given = args as Record<string, unknown>;
    const props: Record<string, unknown> = {};
    if (spec.inputs === undefined) Object.assign(props, given);
    else for (const key of spec.inputs) props[key] = given[key];
    for (const key of row.secretInputs) if (props[key] !== undefined) props[key] = pulumi.secret(props[key]);
    if (spec.urn) props.__urn = urnOf(name, row.typeToken, opts?.parent);
    for (const key of spec.outputs ?? []) props[key] = undefined;
    const secretOutputs = row.additionalSecretOutputs;
    const options =
      secretOutputs.length > 0
        ? pulumi.mergeOptions(opts, { additionalSecretOutputs: [...secretOutputs] })
        : opts;
    // Registers the type token `pulumi-nodejs:dynamic/runpod:<Class>` (`row.typeToken`).
    super(providerFor(row.operationsModule), name, props, options, "runpod", row.className);
  }
}

/**
 * The resource's URN, as `pulumi.createUrn` makes it: a plain string for a resource without a
 * parent (the stack's child: `urn:pulumi:<stack>::<project>::<type>::<name>`), which spares
 * each registration an Output to resolve; an Output when the parent's URN decides the prefix.
 */
function urnOf(name: string, type: string, parent: pulumi.Resource | pulumi.Input<string> | undefined) {
  if (parent === undefined)
    return `urn:pulumi:${pulumi.getStack()}::${pulumi.getProject()}::${type}::${name}`;
  return pulumi.createUrn(name, type, parent);
}

/** A resource class that can be constructed (not an abstract base), as `get` calls it. */
type ConcreteResourceClass<R> = new (name: string, args: never, opts?: pulumi.CustomResourceOptions) => R;

/**
 * A RunPod resource whose id is the service's id of the object it manages, so that an existing
 * object can be read into the program by that id ({@link ServiceObjectResource.get}).
 */
export abstract class ServiceObjectResource<Args extends object = object> extends RunpodResource<Args> {
  /**
   * Reads an existing object into the program by its service id, without managing it: the stack
   * neither changes nor deletes it (`pulumi import` does not work for dynamic resources). The
   * class's doc comment says what the read gives.
   */
  static get<R>(
    this: ConcreteResourceClass<R>,
    name: string,
    id: pulumi.Input<pulumi.ID>,
    opts?: pulumi.CustomResourceOptions,
  ): R {
    return new this(name, {} as never, { ...opts, id });
  }
}

/**
 * Runs Pulumi program code under `@pulumi/pulumi/testing` mocks and records what it registers,
 * including each resource's options (mocks ignore `additionalSecretOutputs`, so the options are
 * read through a stack transformation registered inside `runInPulumiStack`: DESIGN.md fact 11).
 *
 * ```ts
 * const mocked = useMockedProgram((args) => ({ ...args.inputs, status: "COMPLETED" }));
 * await mocked.run(() => new JobRun("smoke", {...}));
 * const reg = await mocked.registration("smoke");  // { type, name, inputs }
 * mocked.options.get("smoke")?.additionalSecretOutputs;
 * ```
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll } from "vitest";

/** Pulumi's special signature key and the value marking a secret (`runtime/rpc.ts`). */
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
export const SECRET_VALUE_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** One resource as the mocks saw it registered. */
export interface Registered {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  /** The id asked for when the program read an existing resource (`Resource.get`). */
  id?: string;
}

export interface MockedProgram {
  /** Every resource registered so far, in order. */
  readonly registered: Registered[];
  /** The options each resource was registered with, by name. */
  readonly options: Map<string, pulumi.CustomResourceOptions>;
  /** Runs `program` as a stack; resolves to what it returned. */
  run<T>(program: () => T): Promise<T>;
  /** The registration of `name`, once the mocks have seen it. */
  registration(name: string): Promise<Registered>;
}

/**
 * Installs the mocks in a `beforeAll` of the calling test file. `state` gives the outputs the
 * engine would return for a resource (default: its inputs).
 */
export function useMockedProgram(
  state: (args: pulumi.runtime.MockResourceArgs) => Record<string, unknown> = (args) => args.inputs,
): MockedProgram {
  const registered: Registered[] = [];
  const options = new Map<string, pulumi.CustomResourceOptions>();
  beforeAll(async () => {
    await pulumi.runtime.setMocks(
      {
        newResource: (args) => {
          registered.push({
            type: args.type,
            name: args.name,
            inputs: args.inputs,
            id: args.id || undefined,
          });
          return { id: args.id || `id-${args.name}`, state: state(args) };
        },
        call: () => ({}),
      },
      "project",
      "stack",
      false,
    );
  });
  return {
    registered,
    options,
    async run<T>(program: () => T): Promise<T> {
      let result: T | undefined;
      await pulumi.runtime.runInPulumiStack(async () => {
        pulumi.runtime.registerStackTransformation((args) => {
          options.set(args.name, args.opts as pulumi.CustomResourceOptions);
          return undefined;
        });
        result = program();
        return {};
      });
      return result as T;
    },
    async registration(name: string): Promise<Registered> {
      for (let i = 0; i < 1000 && !registered.some((r) => r.name === name); i++) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      const found = registered.find((r) => r.name === name);
      if (!found) throw new Error(`resource ${name} was never registered`);
      return found;
    },
  };
}

/** The value of an Output, for assertions. */
export function outputValue<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

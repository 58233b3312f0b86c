/**
 * `InputsOf<T>`: the arguments of a resource as a program passes them, from the plain shape its
 * provider receives (the `z.input` of its argument schema): every field, at every depth, may be
 * a value, a promise or a `pulumi.Output`. Doc comments of the schema's fields carry over to the
 * resulting type (TypeScript keeps them through mapped types), so one schema documents both.
 * Types only: nothing here exists at run time.
 */
import type * as pulumi from "@pulumi/pulumi";

type Primitive = string | number | boolean | bigint | symbol | null | undefined;

/**
 * One value as an input: primitives (and unions of them, kept whole so an `Output<"a" | "b">`
 * fits) as `Input<T>`; arrays and objects as inputs of inputs.
 */
export type InputOf<T> = [T] extends [Primitive]
  ? pulumi.Input<T>
  : T extends readonly (infer Item)[]
    ? pulumi.Input<InputOf<Item>[]>
    : T extends Primitive
      ? pulumi.Input<T>
      : T extends object
        ? pulumi.Input<{ [K in keyof T]: InputOf<T[K]> }>
        : pulumi.Input<T>;

/** Every field of `T` as an input (optional fields stay optional). */
export type InputsOf<T> = { [K in keyof T]: InputOf<T[K]> };

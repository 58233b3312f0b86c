/**
 * The Pulumi-facing side of the job arguments JobRun and the endpoint's `smokeTest` share: their
 * input type in a program, and the rule that keeps an http probe's headers secret.
 */
import * as pulumi from "@pulumi/pulumi";

export type { JobRunArgs } from "./jobArgs.generated";

/**
 * `value` as a secret when it holds an http probe's `headers` (`http` itself, or a `smokeTest`
 * holding `http`), else as given: header values are credentials, and the engine keeps an output
 * secret when the input of the same name is. Judged once the value is known, so an `http` given
 * as an output is handled alike.
 */
export function secretWhenHeaders<T>(value: pulumi.Input<T>): pulumi.Output<T> {
  return pulumi.output(value).apply((known) => {
    const plain = known as { headers?: unknown; http?: { headers?: unknown } } | undefined;
    const headers = plain?.headers ?? plain?.http?.headers;
    return (headers === undefined || headers === null ? known : pulumi.secret(known)) as T;
  }) as pulumi.Output<T>;
}

/**
 * Every output whose shape is known is typed with it, so a program reads `pod.ssh` or
 * `endpoint.lastSmokeTest` without a cast. Type-level: `npm run typecheck` (tsc over `test/`)
 * fails when an output goes back to `Record<string, unknown>`; vitest runs the file so it is
 * listed with the others.
 */
import type * as pulumi from "@pulumi/pulumi";
import { describe, expectTypeOf, it } from "vitest";
import type {
  ContainerRegistryAuth,
  JobRun,
  NetworkVolume,
  Pod,
  PodRuntime,
  PodSsh,
  ServerlessEndpoint,
  SshKey,
  Template,
} from "../../src";

/** The value an output carries. */
type Out<T> = T extends pulumi.OutputInstance<infer U> ? U : never;
/** True for an object typed only as "any keys, unknown values". */
type IsLooseRecord<U> = string extends keyof NonNullable<U>
  ? unknown extends NonNullable<U>[string & keyof NonNullable<U>]
    ? true
    : false
  : false;
/** The outputs of a resource class typed as `Record<string, unknown>` (or with null/undefined). */
type LooseOutputs<C> = { [K in keyof C]: IsLooseRecord<Out<C[K]>> extends true ? K : never }[keyof C];

describe("output types", () => {
  it("types a pod's SSH endpoints and runtime, so the page's example needs no cast", () => {
    expectTypeOf<Out<Pod["ssh"]>>().toEqualTypeOf<PodSsh | undefined>();
    expectTypeOf<Out<Pod["runtime"]>>().toEqualTypeOf<PodRuntime | null | undefined>();
    const command = (s: Out<Pod["ssh"]>) => s?.direct?.command ?? s?.proxy?.command;
    expectTypeOf(command).returns.toEqualTypeOf<string | undefined>();
  });

  it("types an endpoint's smoke test as given", () => {
    expectTypeOf<NonNullable<Out<ServerlessEndpoint["smokeTest"]>>>().toHaveProperty("timeoutMs");
    expectTypeOf<NonNullable<Out<ServerlessEndpoint["lastSmokeTest"]>>>().toHaveProperty("passed");
  });

  it("leaves no output of any resource typed as Record<string, unknown>", () => {
    expectTypeOf<IsLooseRecord<Record<string, unknown> | undefined>>().toEqualTypeOf<true>();
    expectTypeOf<LooseOutputs<Pod>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<ServerlessEndpoint>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<Template>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<NetworkVolume>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<ContainerRegistryAuth>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<SshKey>>().toEqualTypeOf<never>();
    expectTypeOf<LooseOutputs<JobRun>>().toEqualTypeOf<never>();
  });
});

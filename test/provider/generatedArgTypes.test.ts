/**
 * The documented argument types (`*.generated.ts`) are written from the argument schemas by
 * `scripts/gen-types.mts`: they must match the schemas as they are now, and accept exactly what the
 * schema-derived types accept.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import type * as pulumi from "@pulumi/pulumi";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { ClusterArgsInput } from "../../src/provider/cluster/args";
import type { ClusterArgs } from "../../src/provider/cluster/resource";
import type { RegistryAuthArgsInput } from "../../src/provider/containerRegistryAuth/args";
import type { ContainerRegistryAuthArgs } from "../../src/provider/containerRegistryAuth/resource";
import type { EcrDelegationArgsInput } from "../../src/provider/ecrDelegation/args";
import type { EcrDelegationArgs } from "../../src/provider/ecrDelegation/resource";
import type { InputsOf } from "../../src/provider/inputsOf";
import type { NetworkVolumeArgsInput } from "../../src/provider/networkVolume/args";
import type { NetworkVolumeArgs } from "../../src/provider/networkVolume/resource";
import type { PodArgsInput } from "../../src/provider/pod/args";
import type { PodArgs, PodWaitFor } from "../../src/provider/pod/resource";
import { RESOURCE_ROWS } from "../../src/provider/resources";
import type { ServerlessEndpointArgsInput } from "../../src/provider/serverlessEndpoint/args";
import type { ServerlessEndpointArgs, SmokeTestArgs } from "../../src/provider/serverlessEndpoint/resource";
import type { JobRunInputs } from "../../src/provider/smokeTestJob/jobArgs";
import type { JobRunArgs } from "../../src/provider/smokeTestJob/jobInputs";
import type { SshKeyArgsInput } from "../../src/provider/sshKey/args";
import type { SshKeyArgs } from "../../src/provider/sshKey/resource";
import type { TemplateArgsInput } from "../../src/provider/template/args";
import type { TemplateArgs } from "../../src/provider/template/resource";

const execFileAsync = promisify(execFile);
const REPO_DIR = path.resolve(__dirname, "..", "..");

/** True when every `A` is a `B` (plain assignability, as a program's argument object meets it). */
type Assignable<A, B> = [A] extends [B] ? true : false;

describe("generated argument types", () => {
  it("are what the argument schemas give today (npm run gen:types was run)", async () => {
    const run = execFileAsync(process.execPath, ["scripts/gen-types.mts", "--check"], { cwd: REPO_DIR });
    await expect(run).resolves.toBeDefined();
  }, 60_000);

  it("accept exactly the values the schema-derived input types accept", () => {
    type DerivedJobRunArgs = InputsOf<Omit<JobRunInputs, "secretOutput">> & { secretOutput?: boolean };
    expectTypeOf<Assignable<JobRunArgs, DerivedJobRunArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<DerivedJobRunArgs, JobRunArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<NetworkVolumeArgs, InputsOf<NetworkVolumeArgsInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<NetworkVolumeArgsInput>, NetworkVolumeArgs>>().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<ContainerRegistryAuthArgs, InputsOf<RegistryAuthArgsInput>>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<InputsOf<RegistryAuthArgsInput>, ContainerRegistryAuthArgs>
    >().toEqualTypeOf<true>();
    expectTypeOf<Assignable<TemplateArgs, InputsOf<TemplateArgsInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<TemplateArgsInput>, TemplateArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<SshKeyArgs, InputsOf<SshKeyArgsInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<SshKeyArgsInput>, SshKeyArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<EcrDelegationArgs, InputsOf<EcrDelegationArgsInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<EcrDelegationArgsInput>, EcrDelegationArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<ClusterArgs, InputsOf<ClusterArgsInput>>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<ClusterArgsInput>, ClusterArgs>>().toEqualTypeOf<true>();
    // A union with an object arm is one input as a whole (an `Output` of the union fits), as the
    // hand-written `Input<PodWaitFor>` was; its object arm's members are inputs too.
    type WaitFor = NonNullable<PodArgsInput["waitFor"]>;
    type DerivedPodArgs = Omit<InputsOf<PodArgsInput>, "waitFor"> & {
      waitFor?:
        | pulumi.Input<Exclude<WaitFor, object> | InputsOf<Extract<WaitFor, object>>>
        | pulumi.Input<undefined>;
    };
    expectTypeOf<Assignable<PodArgs, DerivedPodArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<DerivedPodArgs, PodArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<InputsOf<PodArgsInput>, PodArgs>>().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<{ waitFor?: pulumi.Input<PodWaitFor> }, Pick<PodArgs, "waitFor">>
    >().toEqualTypeOf<true>();
    // A discriminated union of objects is one input as a whole too, each arm spelled out; the
    // derived type's form (an input per arm) still fits.
    type Scaling = ServerlessEndpointArgsInput["scaling"];
    type DerivedEndpointArgs = Omit<InputsOf<ServerlessEndpointArgsInput>, "scaling"> & {
      scaling: pulumi.Input<
        | InputsOf<Extract<Scaling, { type: "QUEUE_DELAY" }>>
        | InputsOf<Extract<Scaling, { type: "REQUEST_COUNT" }>>
      >;
    };
    expectTypeOf<Assignable<ServerlessEndpointArgs, DerivedEndpointArgs>>().toEqualTypeOf<true>();
    expectTypeOf<Assignable<DerivedEndpointArgs, ServerlessEndpointArgs>>().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<InputsOf<ServerlessEndpointArgsInput>, ServerlessEndpointArgs>
    >().toEqualTypeOf<true>();
    // An arm takes only its own fields: a queue delay is not a request count.
    expectTypeOf<
      Assignable<{ type: "REQUEST_COUNT"; queueDelay: number }, ServerlessEndpointArgs["scaling"]>
    >().toEqualTypeOf<false>();
    // `SmokeTestArgs` stays the object form of `smokeTest`: JobRun's job arguments plus the gate's.
    type JobArgsOfSmokeTest = Omit<
      JobRunArgs,
      "endpointId" | "triggers" | "rollout" | "collectStream" | "s3Config" | "redact"
    >;
    expectTypeOf<Assignable<JobArgsOfSmokeTest, SmokeTestArgs>>().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<SmokeTestArgs, InputsOf<NonNullable<ServerlessEndpointArgsInput["smokeTest"]>>>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<{ runs: 3; maxFailures: 1; onFailure: "keep" }, SmokeTestArgs>
    >().toEqualTypeOf<true>();
    expectTypeOf<Assignable<{ endpointId: string }, SmokeTestArgs>>().toEqualTypeOf<false>();
    // The check can fail: a type missing a required argument is not accepted.
    expectTypeOf<Assignable<Omit<JobRunArgs, "endpointId">, JobRunArgs>>().toEqualTypeOf<false>();
  });

  describe("reference facts (docs/reference/facts.json)", () => {
    interface Fact {
      path: string;
      type: string;
      required: boolean;
      description: string;
      default?: string;
      change: string;
    }
    const facts = JSON.parse(
      readFileSync(path.join(REPO_DIR, "docs/reference/facts.json"), "utf8"),
    ) as Record<string, Fact[]>;
    const fact = (resource: string, at: string) => facts[resource]?.find((f) => f.path === at);

    it("describe every argument of every generated resource, nested ones included", () => {
      expect(Object.keys(facts)).toEqual(RESOURCE_ROWS.map((row) => row.className));
      for (const list of Object.values(facts)) {
        for (const f of list) expect(f.description, f.path).not.toBe("");
      }
      expect(fact("Template", "mounts.persistent.size")).toMatchObject({ type: "number", required: true });
      expect(fact("Pod", "mounts.network[].volumeId")).toMatchObject({ type: "string", required: true });
      expect(fact("Pod", "waitFor.port")).toMatchObject({ type: "number", required: true });
      // Every arm of a discriminated union: its fields under the union's path, the shared
      // discriminator once, a field of one arm required only with that arm's tag.
      expect(facts.ServerlessEndpoint?.filter((f) => f.path === "scaling.type")).toEqual([
        expect.objectContaining({ type: '"QUEUE_DELAY" | "REQUEST_COUNT"', required: true }),
      ]);
      expect(fact("ServerlessEndpoint", "scaling.queueDelay")).toMatchObject({
        type: "number",
        required: false,
        description: expect.stringMatching(/^With `type: "QUEUE_DELAY"`, required\. /),
      });
      expect(fact("ServerlessEndpoint", "scaling.requestCount")).toMatchObject({
        type: "number",
        required: false,
        description: expect.stringMatching(/^With `type: "REQUEST_COUNT"`, required\. /),
      });
      expect(fact("ServerlessEndpoint", "cpu[].vcpuCount")).toMatchObject({ type: "number", required: true });
      expect(fact("ServerlessEndpoint", "smokeTest.onFailure")).toMatchObject({ default: '"rollback"' });
    });

    it("give the type, whether required, the default and whether a change replaces", () => {
      expect(fact("NetworkVolume", "dataCenterId")).toMatchObject({
        type: "string",
        required: true,
        change: "replaces",
      });
      expect(fact("NetworkVolume", "size")).toMatchObject({ change: "updates in place" });
      expect(fact("NetworkVolume", "type")).toMatchObject({
        type: '"STANDARD" | "HIGH_PERFORMANCE"',
        required: false,
      });
      expect(fact("Pod", "waitFor")).toMatchObject({ default: '"running"', required: false });
      expect(fact("Pod", "cloud")).toMatchObject({ default: '"SECURE"', change: "replaces" });
      expect(fact("ServerlessEndpoint", "type")).toMatchObject({ required: true, change: "replaces" });
      expect(fact("ServerlessEndpoint", "gpu")?.change).toBe("replaces when it is switched to `cpu`");
      expect(fact("ServerlessEndpoint", "workers.max")).toMatchObject({ default: "3", required: false });
      expect(fact("SshKey", "publicKey")?.change).toMatch(/^replaces when the key itself changes/);
      expect(fact("ContainerRegistryAuth", "adoptExisting")).toMatchObject({
        default: "false",
        change: "updates in place",
      });
    });
  });
});

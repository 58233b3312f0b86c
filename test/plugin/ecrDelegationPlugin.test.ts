/**
 * The native plugin serving EcrDelegation, driven over gRPC against the emulator through what a
 * program's preview, up, refresh, change and destroy produce: an unknown ARN passes Check and plans a
 * replacement without a request; a change of `name` replaces (the service cannot change a
 * delegation), naming the field; a delegation revoked outside Pulumi reads as gone. Needs the build
 * (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient } from "../../src/client";
import type { RunningEmulator } from "../../src/emulator";
import { type PluginRig, pb, resourceCalls, secret, startPluginRig, UNKNOWN } from "./pluginKit";

const API_KEY = "plugin-ecr-key-3d71a9";
const TYPE = "runpod-native:index:EcrDelegation";
const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";
const D = pb.DiffResponse.DiffChanges;
const K = pb.PropertyDiff.Kind;

describe("pulumi-resource-runpod-native: EcrDelegation over gRPC", () => {
  let rig: PluginRig;
  let emu: RunningEmulator;
  let service: RunpodClient;

  beforeAll(async () => {
    rig = await startPluginRig({ apiKeys: [API_KEY], rateLimits: false });
    emu = rig.emu;
    service = new RunpodClient({ apiKey: API_KEY, restUrl: emu.restUrlV2, maxRetries: 0 });
    await rig.configure({ apiKey: secret(API_KEY), restUrl: emu.restUrlV2 });
  });

  afterAll(async () => {
    const { stderr, logs } = await rig.close();
    expect(stderr).not.toContain(API_KEY);
    expect(JSON.stringify(logs)).not.toContain(API_KEY);
  });

  const managementRequests = () => emu.stats().requestsByInterface.management;

  it("preview with an unknown, create, refresh, a renaming replacement, a revoked one gone, destroy", async () => {
    const deleg = resourceCalls(rig.rpc, TYPE, "deploy");
    const before = managementRequests();

    // preview: the ARN not known yet (another resource's output) passes Check; a first create is
    // previewed without a write.
    const previewed = await deleg.check({ resource: UNKNOWN, name: "deploy" });
    expect(previewed).toEqual({ inputs: { resource: UNKNOWN, name: "deploy" }, failures: [] });
    expect(await deleg.create(previewed.inputs, true)).toEqual({ id: "", outs: previewed.inputs });
    expect(managementRequests()).toBe(before);

    // A malformed ARN fails Check, naming the field, before any request.
    expect((await deleg.check({ resource: "arn:aws:s3:::bucket" })).failures).toEqual([
      {
        property: "resource",
        reason:
          "resource must be an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], " +
          "e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
      },
    ]);
    expect(managementRequests()).toBe(before);

    // up: created; the outputs are the delegation as listed, with the ARN given.
    const { inputs } = await deleg.check({ resource: ARN, name: "deploy" });
    expect(inputs).toEqual({ resource: ARN, name: "deploy" });
    const made = await deleg.create(inputs);
    const [listed] = await service.registries.delegations.list();
    expect(listed).toBeDefined();
    expect(made.id).toBe(listed!.id);
    expect(made.outs).toEqual({
      resource: ARN,
      name: "deploy",
      delegatorUserId: listed!.delegatorUserId,
      awsUser: "418399314813",
      repository: "runpod/deployment",
      tag: "latest",
      awsRegion: "us-east-2",
      dockerRegistryUri: listed!.dockerRegistryUri,
      createdAt: listed!.createdAt,
    });

    // refresh: the same delegation.
    expect(await deleg.read(made.id, made.outs, inputs)).toEqual({ id: made.id, props: made.outs });

    // Unchanged: nothing planned. A preview whose ARN is unknown again: a replacement named by the field.
    expect((await deleg.diff(made.id, made.outs, inputs, inputs)).changes).toBe(D.DIFF_NONE);
    const requestsBeforeUnknown = managementRequests();
    expect(await deleg.diff(made.id, made.outs, { resource: UNKNOWN, name: "deploy" }, inputs)).toEqual({
      changes: D.DIFF_SOME,
      replaces: ["resource"],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { resource: K.UPDATE_REPLACE },
    });
    expect(managementRequests()).toBe(requestsBeforeUnknown);

    // A new name: the service cannot rename one, so a replacement naming `name`, the new created
    // before the old is revoked.
    const renamed = (await deleg.check({ resource: ARN, name: "deploy-2" }, inputs)).inputs;
    expect(await deleg.diff(made.id, made.outs, renamed, inputs)).toEqual({
      changes: D.DIFF_SOME,
      replaces: ["name"],
      deleteBeforeReplace: false,
      hasDetailedDiff: true,
      detailed: { name: K.UPDATE_REPLACE },
    });
    const replacement = await deleg.create(renamed);
    expect(replacement.id).not.toBe(made.id);
    expect(replacement.outs.name).toBe("deploy-2");
    await deleg.delete(made.id, made.outs);
    expect((await service.registries.delegations.list()).map((d) => d.id)).toEqual([replacement.id]);

    // Revoked outside Pulumi: a refresh answers an empty id (the engine drops it from the state).
    await service.registries.delegations.revoke(replacement.id);
    expect(await deleg.read(replacement.id, replacement.outs, renamed)).toEqual({ id: "", props: {} });

    // destroy of one already gone: done, nothing left.
    await deleg.delete(replacement.id, replacement.outs);
    expect(await service.registries.delegations.list()).toEqual([]);
  });
});

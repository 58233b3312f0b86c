/**
 * EcrDelegation's pieces without a provider host: check's wording, what reconciling a lost create
 * compares (`delegationDifferences`), and the `getEcrDelegations` lookup against the emulator.
 */
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunpodClient, ValidationError } from "../../src/client";
import { type RunningEmulator, startEmulator } from "../../src/emulator";
import { checkEcrDelegationArgs } from "../../src/provider/ecrDelegation/args";
import { getEcrDelegations, getEcrDelegationsOutput } from "../../src/provider/ecrDelegation/lookup";
import { delegationDifferences } from "../../src/provider/ecrDelegation/operations";

const ARN = "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment";
const LISTED = {
  id: "deleg_1",
  name: "deploy",
  delegatorUserId: "u",
  awsUser: "418399314813",
  repository: "runpod/deployment",
  tag: "latest",
  awsRegion: "us-east-2",
  createdAt: "2026-03-13T20:00:00Z",
};

describe("checkEcrDelegationArgs", () => {
  it("passes an ARN with and without a tag, in every partition, and no name", () => {
    for (const resource of [
      ARN,
      `${ARN}:v1.2-rc_3`,
      "arn:aws-cn:ecr:cn-north-1:123456789012:repository/app",
      "arn:aws-us-gov:ecr:us-gov-west-1:123456789012:repository/a.b/c-d/e_f",
    ]) {
      expect(checkEcrDelegationArgs(undefined, { resource }), resource).toEqual({
        inputs: { resource },
        failures: [],
      });
    }
  });

  it("refuses what is no ECR repository ARN, naming resource and the form it takes", () => {
    for (const resource of [
      "arn:aws:ecr:us-east-2:418399314813:repository/",
      "arn:aws:ecr:us-east-2:41839931481:repository/app",
      "arn:aws:s3:::bucket",
      "arn:aws:ecr:us-east-2:418399314813:repository/App",
      `${ARN}:`,
      `${ARN}\n`,
    ]) {
      const { failures } = checkEcrDelegationArgs(undefined, { resource });
      expect(failures, JSON.stringify(resource)).toEqual([
        {
          property: "resource",
          reason:
            "resource must be an ECR repository ARN, arn:aws:ecr:<region>:<12-digit account>:repository/<name>[:<tag>], " +
            "e.g. arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
        },
      ]);
    }
  });
});

describe("delegationDifferences (which new delegation a lost create made)", () => {
  it("holds what was sent: same name, account, region, repository; any tag when the ARN names none", () => {
    expect(delegationDifferences(LISTED, { resource: ARN, name: "deploy" })).toEqual([]);
    expect(delegationDifferences({ ...LISTED, tag: "v9" }, { resource: ARN, name: "deploy" })).toEqual([]);
    expect(
      delegationDifferences({ ...LISTED, tag: "v9" }, { resource: `${ARN}:v9`, name: "deploy" }),
    ).toEqual([]);
    expect(delegationDifferences({ ...LISTED, name: null }, { resource: ARN })).toEqual([]);
  });

  it("names the field a namesake does not hold", () => {
    expect(delegationDifferences(LISTED, { resource: `${ARN}:v2`, name: "deploy" })).toEqual(["resource"]);
    expect(
      delegationDifferences({ ...LISTED, awsRegion: "eu-west-1" }, { resource: ARN, name: "deploy" }),
    ).toEqual(["resource"]);
    expect(delegationDifferences({ ...LISTED, awsUser: "1" }, { resource: ARN, name: "deploy" })).toEqual([
      "resource",
    ]);
    expect(delegationDifferences(LISTED, { resource: ARN })).toEqual(["name"]);
  });
});

describe("getEcrDelegations", () => {
  let emu: RunningEmulator;
  let client: RunpodClient;
  beforeAll(async () => {
    emu = await startEmulator({ port: 0, rateLimits: false });
    client = new RunpodClient({ apiKey: emu.apiKey, restUrl: emu.restUrlV2, env: {}, rateLimits: false });
  });
  afterAll(async () => {
    await emu.close();
  });

  it("lists the account's delegations as the service answers them, empty when none", async () => {
    expect(await getEcrDelegations({}, { client })).toEqual([]);
    const made = await client.registries.delegations.create({ resource: ARN, name: "deploy" });
    expect(await getEcrDelegations({}, { client })).toEqual([made]);
    const output = getEcrDelegationsOutput({}, { client });
    const seen = await new Promise((resolve) => output.apply(resolve));
    expect(seen).toEqual([made]);
    expect(pulumi.Output.isInstance(output)).toBe(true);
  });

  it("takes no arguments, naming one given, before any request", async () => {
    const e = (await getEcrDelegations({ repository: "x" } as never, { client }).catch(
      (x: unknown) => x,
    )) as Error;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.message).toBe("getEcrDelegations takes no arguments; got repository");
  });
});

/**
 * The bounds every resource's `check` shares (a name's length and characters, env names, port
 * entries, absolute mount paths) and the endpoint's worker bounds, the probe body's size and the
 * template's disk wording: each bad value fails with one line naming the field and what is allowed,
 * with no network (the check functions take no client) and no env value in the text.
 */
import { describe, expect, it } from "vitest";
import { checkClusterArgs } from "../../src/provider/cluster/args";
import { NAME_MAX_LENGTH } from "../../src/provider/common/checkArgs";
import { checkRegistryAuthArgs } from "../../src/provider/containerRegistryAuth/args";
import { checkEcrDelegationArgs } from "../../src/provider/ecrDelegation/args";
import { checkNetworkVolumeArgs } from "../../src/provider/networkVolume/args";
import { checkPodArgs } from "../../src/provider/pod/args";
import { loadArgsSchema, RESOURCE_ROWS } from "../../src/provider/resources";
import { checkEndpointArgs } from "../../src/provider/serverlessEndpoint/args";
import { checkJobRunArgs } from "../../src/provider/smokeTestJob/jobArgsCheck";
import { checkTemplateArgs } from "../../src/provider/template/args";

const ENV_SECRET = "env-secret-value-31c9";
const endpoint = {
  name: "api",
  type: "QUEUE",
  image: "acme/api:1",
  gpu: { pools: ["ADA_24"] },
  scaling: { type: "QUEUE_DELAY", queueDelay: 4 },
};
const template = { name: "tpl", image: "acme/api:1" };
const pod = { name: "box", image: "acme/api:1", gpu: { id: "NVIDIA GeForce RTX 4090" } };
const volume = { name: "data", size: 20, dataCenterId: "US-TX-3" };
const registryAuth = { name: "ghcr", username: "u", password: "p" };
const ecrDelegation = {
  resource: "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment",
  name: "d",
};

const cluster = {
  name: "c",
  type: "TRAINING",
  compute: { gpuTypeId: "NVIDIA H100 80GB HBM3", gpuCountPerPod: 8, podCount: 2 },
};

type Failure = { property: string; reason: string };
/** Every reason of `failures`, one string each; also asserts each is one short line. */
function reasons(given: Failure[] | undefined): string[] {
  const failures = given ?? [];
  for (const f of failures) {
    expect(f.reason).not.toMatch(/\n/);
    expect(f.reason.length).toBeLessThan(400);
  }
  return failures.map((f) => f.reason);
}

const checks: Array<[string, (args: Record<string, unknown>) => Failure[], Record<string, unknown>]> = [
  ["ServerlessEndpoint", (a) => checkEndpointArgs(a).failures ?? [], endpoint],
  ["Template", (a) => checkTemplateArgs(undefined, a).failures ?? [], template],
  ["Pod", (a) => checkPodArgs(undefined, a).failures ?? [], pod],
  ["Cluster", (a) => checkClusterArgs(undefined, a).failures ?? [], cluster],
  ["NetworkVolume", (a) => checkNetworkVolumeArgs(a).failures ?? [], volume],
  ["ContainerRegistryAuth", (a) => checkRegistryAuthArgs(a).failures ?? [], registryAuth],
  ["EcrDelegation", (a) => checkEcrDelegationArgs(undefined, a).failures ?? [], ecrDelegation],
];

/** The first rows of `checks` are the resources that take `env`. */
const TAKING_ENV = 4;

it("checks the name of every resource of the table that takes one, and the env names of every one with env", async () => {
  const shapes = await Promise.all(
    RESOURCE_ROWS.map(
      async (row) => [row.className, Object.keys((await loadArgsSchema(row)).shape)] as const,
    ),
  );
  const taking = (field: string) =>
    shapes.filter(([, fields]) => fields.includes(field)).map(([kind]) => kind);
  expect(checks.map(([kind]) => kind).sort()).toEqual(taking("name").sort());
  expect(
    checks
      .slice(0, TAKING_ENV)
      .map(([kind]) => kind)
      .sort(),
  ).toEqual(taking("env").sort());
});

describe.each(checks)("%s name", (_kind, check, good) => {
  it("passes a name of the longest allowed length", () => {
    expect(check({ ...good, name: "n".repeat(NAME_MAX_LENGTH) })).toEqual([]);
  });
  it("refuses a 1 MB name, saying the limit and the length given", () => {
    const text = reasons(check({ ...good, name: "n".repeat(1_000_000) }));
    expect(text).toEqual([`name must be at most ${NAME_MAX_LENGTH} characters, got 1000000`]);
  });
  it.each([
    ["NUL", "a\u0000b"],
    ["newline", "a\nb"],
    ["escape", "a\u001b[31mb"],
  ])("refuses a name with a %s", (_what, name) => {
    expect(reasons(check({ ...good, name }))).toEqual([
      "name must not contain control characters (NUL, newline, tab, ...)",
    ]);
  });
});

describe.each(checks.slice(0, TAKING_ENV))("%s env names", (_kind, check, good) => {
  it.each([
    ["empty", ""],
    ["with =", "KEY=1"],
    ["with a newline", "A\nB"],
  ])("refuses a name %s, saying the rule and which name, never a value", (_what, key) => {
    const text = reasons(check({ ...good, env: { OK: ENV_SECRET, [key]: ENV_SECRET } }));
    expect(text).toHaveLength(1);
    expect(text[0]).toContain('env names must be non-empty, without "=" or control characters');
    expect(text[0]).toContain("name 2 of 2");
    expect(text[0]).not.toContain(ENV_SECRET);
  });
  it("passes ordinary names, lower case and dots included", () => {
    expect(check({ ...good, env: { MODEL_ID: "x", "spring.profile": "y", _x1: "z" } })).toEqual([]);
  });
});

describe("ports without a protocol", () => {
  it.each([
    ["ServerlessEndpoint", (a: Record<string, unknown>) => checkEndpointArgs(a).failures ?? [], endpoint],
    ["Template", (a: Record<string, unknown>) => checkTemplateArgs(undefined, a).failures ?? [], template],
    ["Pod", (a: Record<string, unknown>) => checkPodArgs(undefined, a).failures ?? [], pod],
  ] as const)("%s refuses 8000 and says the form", (_kind, check, good) => {
    const text = reasons(check({ ...good, ports: ["8000/http", "8000"] }));
    expect(text).toHaveLength(1);
    expect(text[0]).toContain('ports entries must be "<port>/http" or "<port>/tcp"');
  });
});

describe("ServerlessEndpoint workers", () => {
  it("refuses min above max, naming both", () => {
    expect(reasons(checkEndpointArgs({ ...endpoint, workers: { min: 5, max: 2 } }).failures)).toEqual([
      "workers.min: min must be at most max (got min 5, max 2): the fewest workers kept cannot exceed the most allowed",
    ]);
  });
  it("refuses max 1e7, saying the largest allowed", () => {
    const text = reasons(checkEndpointArgs({ ...endpoint, workers: { max: 1e7 } }).failures);
    expect(text).toHaveLength(1);
    expect(text[0]).toMatch(/^workers\.max: max must be at most 10000 .*got 10000000$/);
  });
  it("passes min equal to max", () => {
    expect(checkEndpointArgs({ ...endpoint, workers: { min: 2, max: 2 } }).failures).toEqual([]);
  });
});

describe("mount paths", () => {
  it("Template refuses a relative persistent mount path", () => {
    const failures = checkTemplateArgs(undefined, {
      ...template,
      mounts: { persistent: { size: 20, path: "relative" } },
    }).failures;
    expect(reasons(failures)).toEqual([
      'mounts.persistent.path must be an absolute path inside the container, starting with "/", e.g. "/workspace"',
    ]);
  });
  it("Pod refuses a relative network mount path", () => {
    const failures = checkPodArgs(undefined, {
      ...pod,
      gpu: undefined,
      cpu: { id: "cpu3c", vcpuCount: 2 },
      mounts: { network: [{ volumeId: "v1", path: "data" }] },
    }).failures;
    expect(reasons(failures).some((r) => r.includes("mounts.network.path must be an absolute path"))).toBe(
      true,
    );
  });
});

describe("Template disk", () => {
  it("refuses 1.5 saying a whole number of GB is needed", () => {
    expect(reasons(checkTemplateArgs(undefined, { ...template, disk: 1.5 }).failures)).toEqual([
      "disk must be a whole number of GB (at least 1), not a fraction",
    ]);
  });
});

describe("probe body", () => {
  const lb = {
    ...endpoint,
    type: "LOAD_BALANCER",
    scaling: { type: "REQUEST_COUNT", requestCount: 4 },
  };
  const twoMb = { text: "x".repeat(2_000_000) };
  it("JobRun refuses a 2 MB http.body, saying the limit", () => {
    const text = reasons(checkJobRunArgs({ endpointId: "lb", http: { path: "/", body: twoMb } }));
    expect(text).toEqual(["http.body must be at most 1000000 bytes (1 MB) as JSON, got 2000011"]);
  });
  it("ServerlessEndpoint refuses a 2 MB smokeTest.http.body, naming where it sits", () => {
    const text = reasons(
      checkEndpointArgs({ ...lb, smokeTest: { http: { path: "/", body: twoMb } } }).failures,
    );
    expect(text).toHaveLength(1);
    expect(text[0]).toContain("smokeTest.http.body");
    expect(text[0]).toContain("at most 1000000 bytes (1 MB)");
  });
});

describe("expect.outputSchema errors in our words", () => {
  const failureFor = (outputSchema: unknown) =>
    reasons(checkJobRunArgs({ endpointId: "ep", input: {}, expect: { outputSchema } }));
  it("names the keyword's place and the allowed types for a misspelt type", () => {
    expect(failureFor({ properties: { n: { type: "integr" } } })).toEqual([
      "expect.outputSchema: properties.n.type must be one of array, boolean, integer, null, number, object, string (or an array of them) (JSON Schema draft 2020-12)",
    ]);
  });
  it("says what a keyword's value must be", () => {
    expect(failureFor({ required: "a" })).toEqual([
      "expect.outputSchema: required must be an array (JSON Schema draft 2020-12)",
    ]);
  });
  it("says a $ref names no part of the schema", () => {
    expect(failureFor({ $ref: "#/nope" })[0]).toMatch(
      /^expect\.outputSchema has a \$ref to #\/nope, which names no part/,
    );
  });
});

/**
 * The package schema of every resource in the table (served or not yet), as `GetSchema` would send
 * it, with every lookup as a function: valid against Pulumi's package metaschema (the copy in
 * test/fixtures), every property (of functions too) with a description, secrets marked, nested
 * arguments as named types, `waitFor` and `scaling` as unions.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { beforeAll, describe, expect, it } from "vitest";
import { servedResources } from "../../src/plugin/resources";
import { packageSchema, RESERVED_PROPERTY_NAMES } from "../../src/plugin/schema";
import { RESOURCE_ROWS, RESOURCES, type ResourceName } from "../../src/provider/resources";

const tok = (name: string) => `runpod-native:index:${name}`;
type Prop = Record<string, any>;

describe("the package schema of every resource in the table", () => {
  let schema: Record<string, any>;
  beforeAll(async () => {
    schema = JSON.parse(await packageSchema(servedResources(Object.keys(RESOURCES) as ResourceName[])));
  });

  it("is valid against Pulumi's package metaschema and names every resource", () => {
    const metaschema = JSON.parse(
      readFileSync(path.join(__dirname, "../fixtures/pulumi-package-metaschema.json"), "utf8"),
    );
    const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(
      metaschema,
    );
    expect(validate(schema), JSON.stringify(validate.errors)).toBe(true);
    expect(Object.keys(schema.resources)).toEqual(Object.keys(RESOURCES).map(tok));
  });

  it("gives every property a description, and every $ref a type in the schema", () => {
    const undocumented: string[] = [];
    const dangling: string[] = [];
    const visit = (where: string, p: Prop) => {
      for (const t of [p, p.items, p.additionalProperties, ...(p.oneOf ?? [])]) {
        if (t?.$ref?.startsWith("#/types/") && !(t.$ref.slice(8) in schema.types))
          dangling.push(`${where}: ${t.$ref}`);
      }
    };
    const props = (where: string, ps: Record<string, Prop>) => {
      for (const [name, p] of Object.entries(ps)) {
        if (!p.description) undocumented.push(`${where}.${name}`);
        visit(`${where}.${name}`, p);
      }
    };
    for (const [token, r] of Object.entries<any>(schema.resources)) {
      props(token, r.inputProperties);
      props(token, r.properties);
    }
    for (const [token, t] of Object.entries<any>(schema.types)) {
      if (!t.description) undocumented.push(token);
      props(token, t.properties);
    }
    for (const [token, f] of Object.entries<any>(schema.functions)) {
      if (!f.description) undocumented.push(token);
      props(`${token}.inputs`, f.inputs.properties);
      props(`${token}.outputs`, f.outputs.properties);
    }
    expect(undocumented).toEqual([]);
    expect(dangling).toEqual([]);
  });

  it("marks the secret arguments, and only those", () => {
    const secrets = Object.entries<any>(schema.resources).flatMap(([token, r]) =>
      Object.entries<Prop>(r.inputProperties)
        .filter(([, p]) => p.secret)
        .map(([name]) => `${token}.${name}`),
    );
    expect(secrets).toEqual([
      `${tok("JobRun")}.s3Config`,
      `${tok("JobRun")}.redact`,
      `${tok("ContainerRegistryAuth")}.password`,
      `${tok("Template")}.env`,
      `${tok("Pod")}.env`,
      `${tok("ServerlessEndpoint")}.env`,
      `${tok("Cluster")}.env`,
    ]);
    expect(schema.resources[tok("Template")].inputProperties.env).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
      description: expect.any(String),
      secret: true,
    });
  });

  it("maps nested arguments to named types, arrays and maps", () => {
    const pod = schema.resources[tok("Pod")].inputProperties;
    expect(pod.gpu.$ref).toBe(`#/types/${tok("PodGpu")}`);
    expect(schema.types[tok("PodGpu")]).toMatchObject({
      type: "object",
      required: ["id"],
      properties: { id: { type: "string" }, count: { type: "integer" } },
    });
    expect(schema.types[tok("PodMounts")].properties.network).toMatchObject({
      type: "array",
      items: { $ref: `#/types/${tok("PodMountsNetworkItem")}` },
    });
    // `registry: string | null` is a string; a value of any shape is Pulumi's Any.
    expect(pod.registry.type).toBe("string");
    expect(schema.types[tok("ServerlessEndpointSmokeTest")].properties.input).toMatchObject({
      type: "object",
      additionalProperties: { $ref: "pulumi.json#/Any" },
    });
    // Only an argument that always replaces gets the SDK's replaceOnChanges; `gpu` replaces on some changes only.
    expect(pod.cpu.replaceOnChanges).toBe(true);
    expect(pod.gpu.replaceOnChanges).toBeUndefined();
    expect(schema.resources[tok("SshKey")].inputProperties.publicKey.replaceOnChanges).toBeUndefined();
  });

  it("describes each output beyond the arguments by its class's declaration, the one its page lists", () => {
    // The doc comment above each `declare readonly <name>: pulumi.Output<...>` of the class, as
    // TypeScript renders it (text flattened, tags such as `@integer` left out). The reference page
    // lists the same declarations (test/package/referencePages.test.ts).
    const docsOf = (file: string) =>
      new Map(
        [
          ...readFileSync(path.join(__dirname, "../..", file), "utf8").matchAll(
            /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*declare readonly (\w+)\??:/g,
          ),
        ].map((m) => [
          m[2] as string,
          (m[1] as string)
            .replace(/^\s*\* ?/gm, "")
            .replace(/@\w+/g, "")
            .replace(/\s+/g, " ")
            .trim(),
        ]),
      );
    const differing: string[] = [];
    let compared = 0;
    for (const row of RESOURCE_ROWS) {
      const declared = docsOf(`src/provider/${row.folder}/resource.ts`);
      const r = schema.resources[tok(row.className)];
      for (const [name, p] of Object.entries<Prop>(r.properties)) {
        if (name in r.inputProperties && name !== "globalNetworking") continue;
        compared += 1;
        if (p.description !== declared.get(name)) differing.push(`${row.className}.${name}`);
      }
    }
    expect(differing).toEqual([]);
    expect(compared).toBeGreaterThan(50);
    // The pod's `globalNetworking`: a boolean given, the service's object read back.
    expect(schema.resources[tok("Pod")].properties.globalNetworking.description).toBe(
      "Global networking, as the service reports it (`enabled`); the argument is a boolean.",
    );
  });

  it("gives no resource a property name Pulumi reserves (id, urn, pulumi): the resource's own id and URN", () => {
    // pulumi/pulumi pkg/codegen/schema/reserved_keywords.go: `urn` on every resource, `id` on a custom
    // resource, `pulumi` everywhere; a pod's and a template's operations output `id`, never listed.
    expect(RESERVED_PROPERTY_NAMES).toEqual(["id", "urn", "pulumi"]);
    const reserved: string[] = [];
    for (const [token, r] of Object.entries<any>(schema.resources)) {
      for (const name of [...Object.keys(r.properties), ...Object.keys(r.inputProperties)]) {
        if (RESERVED_PROPERTY_NAMES.includes(name)) reserved.push(`${token}.${name}`);
      }
    }
    expect(reserved).toEqual([]);
  });

  it("types the pod's outputs where their shape is known", () => {
    const pod = schema.resources[tok("Pod")].properties;
    expect([pod.ssh.$ref, pod.hourlyCost.$ref, pod.runtime.$ref, pod.requestedGpu.$ref]).toEqual([
      `#/types/${tok("PodSsh")}`,
      `#/types/${tok("HourlyCost")}`,
      `#/types/${tok("PodRuntime")}`,
      `#/types/${tok("PodGpu")}`,
    ]);
    // The argument is a boolean, the output the service's object.
    expect(schema.resources[tok("Pod")].inputProperties.globalNetworking.type).toBe("boolean");
    expect(pod.globalNetworking.$ref).toBe(`#/types/${tok("PodGlobalNetworking")}`);
    expect(schema.types[tok("PodSsh")].properties.proxy.$ref).toBe(`#/types/${tok("PodSshEndpoint")}`);
    expect(Object.keys(schema.types[tok("HourlyCost")].properties)).toEqual([
      "floorUsd",
      "ceilingUsd",
      "ratePerWorkerUsd",
      "note",
    ]);
  });

  it("types the endpoint's and the JobRun's outputs where their shape is known", () => {
    const endpoint = schema.resources[tok("ServerlessEndpoint")].properties;
    expect([endpoint.lastSmokeTest.$ref, endpoint.hourlyCost.$ref, endpoint.version.type]).toEqual([
      `#/types/${tok("SmokeTestRecord")}`,
      `#/types/${tok("HourlyCost")}`,
      "integer",
    ]);
    expect(endpoint.requestUrls).toMatchObject({ type: "object", additionalProperties: { type: "string" } });
    // `version` is null when unknown (`number | null` in its declaration): not required.
    expect(schema.types[tok("SmokeTestRecord")].required).toEqual([
      "passed",
      "jobIds",
      "failures",
      "timeline",
    ]);
    const job = schema.resources[tok("JobRun")].properties;
    expect([job.passed.type, job.timeline.items.$ref, job.output.$ref, job.endpointVersion.type]).toEqual([
      "boolean",
      `#/types/${tok("JobRunTimelineEntry")}`,
      "pulumi.json#/Any",
      "integer",
    ]);
    // A JobRun's http probe and an endpoint's smokeTest are secret only with headers: Check marks them.
    expect(schema.resources[tok("JobRun")].inputProperties.http.secret).toBeUndefined();
    expect(schema.resources[tok("ServerlessEndpoint")].inputProperties.smokeTest.secret).toBeUndefined();
  });

  it("documents the unions: waitFor a word or an HTTP probe, scaling discriminated by its type", () => {
    const pod = schema.resources[tok("Pod")].inputProperties;
    expect(pod.waitFor).toEqual({
      oneOf: [{ type: "string" }, { $ref: `#/types/${tok("PodWaitForObject")}` }],
      description: expect.stringContaining("ssh"),
    });
    expect(schema.types[tok("PodWaitForObject")].required).toEqual(["port"]);
    const scaling = schema.resources[tok("ServerlessEndpoint")].inputProperties.scaling;
    expect(scaling).toMatchObject({
      oneOf: [
        { $ref: `#/types/${tok("ServerlessEndpointScalingQueueDelay")}` },
        { $ref: `#/types/${tok("ServerlessEndpointScalingRequestCount")}` },
      ],
      discriminator: {
        propertyName: "type",
        mapping: {
          QUEUE_DELAY: `#/types/${tok("ServerlessEndpointScalingQueueDelay")}`,
          REQUEST_COUNT: `#/types/${tok("ServerlessEndpointScalingRequestCount")}`,
        },
      },
    });
    expect(schema.types[tok("ServerlessEndpointScalingQueueDelay")].required).toEqual(["type", "queueDelay"]);
  });
});

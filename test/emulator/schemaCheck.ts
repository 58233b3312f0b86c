/**
 * Checks values against the REST v2 document's serverless, template and pod schemas
 * (fixtures/rest-v2.serverless.schemas.json, copied unchanged from rest-v2.openapi.json), and
 * against the project's zod shape of the same name (src/wire/serverless.ts, the one the client parses with), so that the
 * emulator, the document and the zod shapes agree on every value a test checks.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import type { z } from "zod";
import {
  EcrDelegationCreateInputSchema,
  EcrDelegationListSchema,
  EcrDelegationSchema,
} from "../../src/wire/ecrDelegations";
import { PodCreateInputSchema, PodListSchema, PodSchema, SshKeysSchema } from "../../src/wire/pods";
import { V2ProblemSchema } from "../../src/wire/schemas";
import {
  ServerlessEndpointCreateInputSchema,
  ServerlessEndpointListSchema,
  ServerlessEndpointSchema,
  ServerlessReleaseListSchema,
  ServerlessWorkerListSchema,
} from "../../src/wire/serverless";
import { TemplateCreateInputSchema, TemplateListSchema, TemplateSchema } from "../../src/wire/templates";

/** The zod shape checked next to each document schema. */
const ZOD: Record<string, z.ZodType> = {
  CreateEndpointRequest: ServerlessEndpointCreateInputSchema,
  CreateTemplateRequest: TemplateCreateInputSchema,
  Endpoint: ServerlessEndpointSchema,
  ListEndpointsResponse: ServerlessEndpointListSchema,
  Template: TemplateSchema,
  ListTemplatesResponse: TemplateListSchema,
  ListEndpointWorkersResponse: ServerlessWorkerListSchema,
  ListEndpointReleasesResponse: ServerlessReleaseListSchema,
  ErrorResponse: V2ProblemSchema,
  Pod: PodSchema,
  ListPodsResponse: PodListSchema,
  CreatePodRequest: PodCreateInputSchema,
  SshKeys: SshKeysSchema,
  EcrDelegation: EcrDelegationSchema,
  CreateDelegationRequest: EcrDelegationCreateInputSchema,
  ListDelegationsResponse: EcrDelegationListSchema,
};

const schemas = JSON.parse(
  readFileSync(path.join(__dirname, "fixtures/rest-v2.serverless.schemas.json"), "utf8"),
) as { $id: string; $defs: Record<string, Record<string, unknown>> };
// Ajv 8 drops the properties evaluated by a sibling `allOf` when a top-level `if` fails and there is
// no `else`, so it refuses every QUEUE body of CreateEndpointRequest ("must NOT have unevaluated
// properties": name, type, ...). Moving that `if`/`then` into one more `allOf` member means the same
// in JSON Schema 2020-12 (both apply to the same instance, and a failed `if` contributes nothing
// either way) and Ajv evaluates it correctly.
for (const schema of Object.values(schemas.$defs)) {
  if ("if" in schema && !("else" in schema) && Array.isArray(schema.allOf)) {
    // biome-ignore lint/suspicious/noThenProperty: a JSON Schema keyword, handed only to Ajv
    schema.allOf.push({ if: schema.if, then: schema.then });
    delete schema.if;
    delete schema.then;
  }
}
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("uri", (v: string) => URL.canParse(v));
ajv.addFormat("date-time", (v: string) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d\d-\d\dT/.test(v));
ajv.addFormat("float", () => true);
ajv.addFormat("double", () => true);
ajv.addSchema(schemas);

/** The errors of `value` against the document's schema `name` and its zod twin (empty when both accept it). */
export function check(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`${schemas.$id}#/$defs/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  const errors = validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  const shape = ZOD[name];
  const parsed = shape?.safeParse(value);
  if (parsed && !parsed.success) {
    errors.push(...parsed.error.issues.map((i) => `zod ${i.path.join(".")}: ${i.message}`));
  }
  return errors;
}

/**
 * Checks a value against one named schema of the REST v2 document
 * (`test/fixtures/openapi/rest-v2.schemas.json`, the document's `$defs`) with ajv (draft 2020-12).
 *
 * ```ts
 * expect(checkV2Schema("NetworkVolume", body)).toEqual([]);   // [] or "<path> <message>" lines
 * ```
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020";

const schemas = JSON.parse(
  readFileSync(path.join(__dirname, "../fixtures/openapi/rest-v2.schemas.json"), "utf8"),
) as { $id: string };
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addSchema(schemas);

/** Validates `value` against the document schema `name`; returns the error list (empty when valid). */
export function checkV2Schema(name: string, value: unknown): string[] {
  const validate = ajv.getSchema(`${schemas.$id}#/$defs/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
